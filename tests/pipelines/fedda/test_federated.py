"""The federated protocol: FedAvg weights, what is averaged, what stays local (spec check 6)."""

import pytest
import torch

from paper_pipelines.pipelines.fedda.federated import (
    Client,
    LocalTraining,
    Model,
    aggregate,
    batches,
    evaluate,
    fedavg,
    fedavg_weights,
    init_state,
    local_update,
    make_optimizer,
    personalise,
    run_federated,
)
from paper_pipelines.pipelines.fedda.methods import SPECS, spec

CLASSES = ("zero", "one", "two")


def test_fedavg_weights_are_data_sizes_over_their_sum():
    assert torch.allclose(fedavg_weights([1, 3]), torch.tensor([0.25, 0.75]))
    assert torch.allclose(fedavg_weights([2, 2, 4]), torch.tensor([0.25, 0.25, 0.5]))


def test_fedavg_and_aggregate_average_only_the_shared_keys():
    a = {"global_ctx": torch.tensor([0.0, 4.0]), "personal_ctx": torch.tensor([1.0])}
    b = {"global_ctx": torch.tensor([4.0, 0.0]), "personal_ctx": torch.tensor([9.0])}
    w = torch.tensor([0.25, 0.75])
    assert torch.equal(fedavg([a["global_ctx"], b["global_ctx"]], w), torch.tensor([3.0, 1.0]))
    avg = aggregate([a, b], w, ["global_ctx"])
    assert set(avg) == {"global_ctx"}
    mine = personalise(a, avg)
    assert torch.equal(mine["global_ctx"], torch.tensor([3.0, 1.0]))
    assert torch.equal(mine["personal_ctx"], torch.tensor([1.0]))
    mine["personal_ctx"] += 1  # a copy: the client's trained state is not changed
    assert torch.equal(a["personal_ctx"], torch.tensor([1.0]))


def test_method_specs_share_what_the_paper_shares():
    assert spec("fedda").shared == ("global_ctx", "shared_adapter.w1", "shared_adapter.w2")
    assert spec("fedda").layout == "middle_link" and spec("fedda").vda
    assert spec("fedda_no_vda").shared == ("global_ctx",) and not spec("fedda_no_vda").vda
    assert spec("fedda_no_tpd").layout == "front_concat" and spec("fedda_no_tpd").vda
    assert spec("promptfl").shared == ("ctx",) and spec("local_coop").shared == ()
    assert spec("dual_prompt").layout == "dual_separate" and not spec("dual_prompt").vda
    assert spec("dual_prompt_vda").vda
    assert not spec("zero_shot").trains and spec("local_coop").trains
    assert dict(spec("promptfl").blocks) == {"ctx": 2}  # one block of 2L, as many vectors as G + P
    with pytest.raises(ValueError, match="unknown method 'fedprox'"):
        spec("fedprox")
    assert len(SPECS) == 8


def test_init_state_shapes_and_scale():
    state = init_state(spec("fedda"), 3, 8, 6, 2, 0.02, seed=0)
    assert state["global_ctx"].shape == (3, 8) and state["personal_ctx"].shape == (3, 8)
    assert state["shared_adapter.w1"].shape == (3, 6) and state["gate.w"].shape == (3, 6)
    assert 0.01 < float(state["global_ctx"].std()) < 0.03
    assert not torch.equal(state["global_ctx"], state["personal_ctx"])
    coop = init_state(spec("promptfl"), 3, 8, 6, 2, 0.02, seed=0)
    assert set(coop) == {"ctx"} and coop["ctx"].shape == (6, 8)
    again = init_state(spec("fedda"), 3, 8, 6, 2, 0.02, 0)
    assert all(torch.equal(again[k], state[k]) for k in state)  # the seed alone decides the draw


def test_batches_steps_and_epochs():
    gen = torch.Generator().manual_seed(0)
    steps = batches(10, LocalTraining(batch=4, steps=3), gen)
    assert [len(b) for b in steps] == [4, 4, 4]
    assert all(len(set(b.tolist())) == 4 for b in steps)
    epochs = batches(10, LocalTraining(batch=4, steps=None, epochs=2), gen)
    assert [len(b) for b in epochs] == [4, 4, 2, 4, 4, 2]
    assert sorted(torch.cat(epochs[:3]).tolist()) == list(range(10))
    assert [len(b) for b in batches(3, LocalTraining(batch=8, steps=2), gen)] == [3, 3]
    first = batches(10, LocalTraining(batch=4, steps=None), torch.Generator().manual_seed(5))
    second = batches(10, LocalTraining(batch=4, steps=None), torch.Generator().manual_seed(5))
    assert all(torch.equal(a, b) for a, b in zip(first, second, strict=True))


def test_make_optimizer_picks_the_released_sgd():
    p = [torch.zeros(2, requires_grad=True)]
    sgd = make_optimizer(p, LocalTraining("sgd", 0.1, 0.9, 5e-4))
    assert isinstance(sgd, torch.optim.SGD)
    assert sgd.defaults["momentum"] == 0.9 and sgd.defaults["weight_decay"] == 5e-4
    assert sgd.defaults["lr"] == 0.1
    adam = make_optimizer(p, LocalTraining("adam", 0.01))
    assert isinstance(adam, torch.optim.Adam) and adam.defaults["lr"] == 0.01


def _clients(dim, sizes, gen):
    out = []
    for k, n in enumerate(sizes):
        y = torch.arange(n) % len(CLASSES)
        x = torch.randn(n, dim, generator=gen) + 2 * torch.nn.functional.one_hot(y, dim)[:, :dim]
        out.append(Client(f"c{k}", x, y, x[: max(1, n // 2)], y[: max(1, n // 2)]))
    return out


def _model(tiny_text, name):
    return Model(spec(name), tiny_text, CLASSES, 2, 10.0, "with a style of", "the digit {}")


def test_one_round_averages_g_and_shared_adapter_only_with_size_weights(tiny_text):
    gen = torch.Generator().manual_seed(1)
    clients = _clients(8, [6, 18], gen)
    model = _model(tiny_text, "fedda")
    init = init_state(model.method, 2, 8, 8, 4, 0.02, seed=3)
    local = LocalTraining("adam", 0.05, batch=4, steps=2)
    rows, final = run_federated(model, clients, init, 1, local, seed=7)
    # the same local runs by hand: clients in order, one generator, both from the initial state
    replay = torch.Generator().manual_seed(7)
    trained = [local_update(model, init, c, local, replay) for c in clients]
    for key in ("global_ctx", "shared_adapter.w1", "shared_adapter.w2"):
        expected = 0.25 * trained[0][key] + 0.75 * trained[1][key]
        assert torch.allclose(final[0][key], expected, atol=1e-6)
        assert torch.equal(final[0][key], final[1][key])
    for key in ("personal_ctx", "specific_adapter.w1", "specific_adapter.w2", "gate.w"):
        assert torch.allclose(final[0][key], trained[0][key])
        assert torch.allclose(final[1][key], trained[1][key])
        assert not torch.allclose(final[0][key], final[1][key])
    assert [(r["round"], r["client"]) for r in rows] == [(1, "c0"), (1, "c1")]
    assert {"gate_raw", "gate_specific", "gate_shared"} <= set(rows[0])


def test_later_rounds_start_from_the_personalised_state(tiny_text):
    gen = torch.Generator().manual_seed(2)
    clients = _clients(8, [6, 6], gen)
    model = _model(tiny_text, "fedda_no_vda")
    init = init_state(model.method, 2, 8, 8, 4, 0.02, seed=3)
    local = LocalTraining("sgd", 0.5, 0.0, 0.0, batch=6, steps=1)
    _, two = run_federated(model, clients, init, 2, local, seed=5)
    replay = torch.Generator().manual_seed(5)
    w = fedavg_weights([6, 6])
    state = [init, init]
    for _ in range(2):
        trained = [local_update(model, state[k], c, local, replay) for k, c in enumerate(clients)]
        avg = aggregate(trained, w, ["global_ctx"])
        state = [personalise(t, avg) for t in trained]
    for k in range(2):
        for key in ("global_ctx", "personal_ctx"):
            assert torch.allclose(two[k][key], state[k][key], atol=1e-6)


def test_local_update_is_one_sgd_step_on_cross_entropy(tiny_text):
    gen = torch.Generator().manual_seed(0)
    (client,) = _clients(8, [6], gen)
    model = _model(tiny_text, "promptfl")
    init = init_state(model.method, 2, 8, 8, 4, 0.02, seed=0)
    local = LocalTraining("sgd", 0.3, 0.0, 0.0, batch=6, steps=1)
    new = local_update(model, init, client, local, torch.Generator().manual_seed(0))
    ctx = init["ctx"].clone().requires_grad_(True)
    loss = torch.nn.functional.cross_entropy(
        model.logits(client.train_x, {"ctx": ctx}), client.train_y
    )
    loss.backward()
    assert torch.allclose(new["ctx"], init["ctx"] - 0.3 * ctx.grad, atol=1e-6)
    assert not torch.equal(new["ctx"], init["ctx"])


def test_logits_are_scale_times_cosine(tiny_text):
    model = _model(tiny_text, "fedda_no_vda")
    state = init_state(model.method, 2, 8, 8, 4, 0.02, seed=0)
    v = torch.randn(4, 8)
    t = model.text(state)
    expected = 10.0 * torch.nn.functional.normalize(v, dim=-1) @ t.T
    assert torch.allclose(model.logits(v, state), expected, atol=1e-5)
    assert torch.allclose(t.norm(dim=1), torch.ones(3))


def test_evaluate_scores_the_client_test_split(tiny_text):
    model = _model(tiny_text, "fedda_no_vda")
    state = init_state(model.method, 2, 8, 8, 4, 0.02, seed=0)
    t = model.text(state).detach()
    # test images equal to the text features of their class (v = t_c): every one is right
    client = Client("c", t, torch.arange(3), torch.cat([t, t[:1]]), torch.tensor([0, 1, 2, 1]))
    assert evaluate(model, state, client)["accuracy"] == 0.75


def test_zero_shot_never_trains_and_scores_every_round(tiny_text):
    gen = torch.Generator().manual_seed(0)
    clients = _clients(8, [6, 6], gen)
    model = _model(tiny_text, "zero_shot")
    rows, final = run_federated(model, clients, {}, 3, LocalTraining(), seed=0)
    assert final == [{}, {}]
    assert [r["round"] for r in rows] == [1, 1, 2, 2, 3, 3]
    assert len({r["accuracy"] for r in rows if r["client"] == "c0"}) == 1
