"""Visual Dynamic Adaptation on hand-checkable vectors."""

import math

import torch

from paper_pipelines.pipelines.fedda.adaptation import (
    adapter,
    dynamic_adaptation,
    gate,
    init_vda,
    linear_init,
)


def test_adapter_is_relu_of_w2_relu_of_w1_without_bias():
    x = torch.tensor([[1.0, 2.0], [-3.0, 1.0]])
    w1 = torch.tensor([[1.0, -1.0]])  # (hidden 1, d 2): h = relu(x0 - x1) = [0, 0] then [.., 4]
    w2 = torch.tensor([[2.0], [-1.0]])  # (d 2, hidden 1)
    # row 0: relu(1 - 2) = 0 -> relu([0, 0]) = [0, 0]; row 1: relu(-3 - 1) = 0 as well
    assert torch.equal(adapter(x, w1, w2), torch.zeros(2, 2))
    x = torch.tensor([[3.0, 1.0]])  # h = relu(2) = 2 -> relu([4, -2]) = [4, 0]
    assert torch.equal(adapter(x, w1, w2), torch.tensor([[4.0, 0.0]]))


def test_gate_is_a_softmax_over_three_experts():
    v = torch.tensor([[1.0, 0.0], [0.0, 2.0]])
    assert torch.allclose(gate(v, torch.zeros(3, 2)), torch.full((2, 3), 1 / 3))
    wg = torch.tensor([[math.log(2.0), 0.0], [0.0, 0.0], [0.0, 0.0]])
    assert torch.allclose(gate(v[:1], wg), torch.tensor([[0.5, 0.25, 0.25]]))


def _state(wg, spec_w1, spec_w2, sh_w1, sh_w2):
    return {
        "gate.w": wg,
        "specific_adapter.w1": spec_w1,
        "specific_adapter.w2": spec_w2,
        "shared_adapter.w1": sh_w1,
        "shared_adapter.w2": sh_w2,
    }


def test_dynamic_adaptation_mixes_raw_specific_and_shared_then_normalises():
    v = torch.tensor([[3.0, 4.0]])
    eye = torch.eye(2)
    # specific adapter = identity on positive inputs; shared adapter = swap of the coordinates
    swap = torch.tensor([[0.0, 1.0], [1.0, 0.0]])
    wg = torch.zeros(3, 2)  # pi = 1/3 each
    out = dynamic_adaptation(v, _state(wg, eye, eye, eye, swap))
    mixed = (v + v + torch.tensor([[4.0, 3.0]])) / 3
    assert torch.allclose(out, mixed / mixed.norm())
    # a gate that picks the shared adapter only: v' = A_s(v) / ||A_s(v)||
    wg = torch.tensor([[0.0, 0.0], [0.0, 0.0], [50.0, 50.0]])
    out = dynamic_adaptation(v, _state(wg, eye, eye, eye, swap))
    assert torch.allclose(out, torch.tensor([[0.8, 0.6]]), atol=1e-6)
    # the specific adapter only
    wg = torch.tensor([[0.0, 0.0], [50.0, 50.0], [0.0, 0.0]])
    out = dynamic_adaptation(v, _state(wg, eye, 2 * swap, eye, eye))
    assert torch.allclose(out, torch.tensor([[0.8, 0.6]]), atol=1e-6)
    # the raw feature only
    wg = torch.tensor([[50.0, 50.0], [0.0, 0.0], [0.0, 0.0]])
    out = dynamic_adaptation(v, _state(wg, eye, swap, eye, swap))
    assert torch.allclose(out, torch.tensor([[0.6, 0.8]]), atol=1e-6)


def test_linear_init_is_torch_default_uniform():
    gen = torch.Generator().manual_seed(0)
    w = linear_init(200, 16, gen)
    assert w.shape == (200, 16)
    assert w.abs().max() <= 0.25 and w.abs().max() > 0.24  # bound 1/sqrt(16)
    assert abs(float(w.mean())) < 0.01 and w.min() < -0.24


def test_init_vda_shapes_follow_the_reduction():
    state = init_vda(8, 4, torch.Generator().manual_seed(0))
    assert state["shared_adapter.w1"].shape == (2, 8)
    assert state["shared_adapter.w2"].shape == (8, 2)
    assert state["specific_adapter.w1"].shape == (2, 8)
    assert state["specific_adapter.w2"].shape == (8, 2)
    assert state["gate.w"].shape == (3, 8)
    assert state["gate.w"].abs().max() <= 8**-0.5
    assert state["shared_adapter.w2"].abs().max() <= 2**-0.5
    assert state["shared_adapter.w2"].abs().max() > 8**-0.5  # bound from in_dim 2, not 8
    assert not torch.equal(state["shared_adapter.w1"], state["specific_adapter.w1"])


def test_dynamic_adaptation_normalises_each_row():
    v = torch.tensor([[3.0, 4.0], [0.0, 2.0]])
    eye = torch.eye(2)
    out = dynamic_adaptation(v, _state(torch.zeros(3, 2), eye, eye, eye, eye))
    assert torch.allclose(out, torch.tensor([[0.6, 0.8], [0.0, 1.0]]), atol=1e-6)
