"""LoRA recovery works in place (no copy of the model) and checks every pruned weight (issue 29)."""

import pytest
import torch

from paper_pipelines.pipelines.dlp.recovery import lora_recovery, pruned_weights_still_zero
from paper_pipelines.pipelines.dlp.sequential import pack_mask
from tests.pipelines.dlp.test_calibration import tiny_llama


class Wrapped(torch.nn.Module):
    """The shape of a peft LoRA layer: the pruned linear as `base_layer`, adapters beside it."""

    def __init__(self, weight: torch.Tensor) -> None:
        super().__init__()
        self.base_layer = torch.nn.Linear(weight.shape[1], weight.shape[0], bias=False)
        self.base_layer.weight.data = weight
        self.lora_A = torch.nn.Linear(weight.shape[1], 1, bias=False)


def test_pruned_weight_check_reads_the_wrapped_linears():
    w = torch.tensor([[0.0, 1.0], [2.0, 0.0]])
    zero_before = {"proj.weight": pack_mask(w == 0)}
    wrapped = torch.nn.Module()
    wrapped.proj = Wrapped(w.clone())
    assert pruned_weights_still_zero(wrapped, zero_before)
    wrapped.proj.base_layer.weight.data[0, 0] = 0.5  # a pruned weight came back
    assert not pruned_weights_still_zero(wrapped, zero_before)


def test_lora_recovery_leaves_the_pruned_model_as_it_came():
    torch.manual_seed(0)
    model = tiny_llama()
    for block in model.model.layers:
        block.mlp.down_proj.weight.data[:, ::2] = 0
    before = {n: p.clone() for n, p in model.state_dict().items()}
    ids = torch.randint(0, 64, (200,))
    result = lora_recovery(
        model, ids, torch.randint(0, 64, (2, 16)), 2, 0,
        steps=2, batch=2, seqlen=16, lr=1e-2, rank=2, lora_alpha=4, dropout=0.0,
    )  # fmt: skip
    assert result["masks_intact"] is True and result["ppl_after"] != result["ppl_before"]
    assert not any("lora" in n for n, _ in model.named_parameters())
    assert all(p.requires_grad for p in model.parameters())
    for name, tensor in model.state_dict().items():
        assert torch.equal(tensor, before[name]), name


# ---------------------------------------------------------------- pinned by mutation testing (#29)
def test_lora_adapters_wrap_every_block_linear_with_the_settings():
    from paper_pipelines.pipelines.dlp.recovery import LLAMA_LINEARS, lora_finetune

    torch.manual_seed(0)
    model = tiny_llama()
    tuned = lora_finetune(
        model, torch.randint(0, 64, (100,)), steps=1, batch=2, seqlen=8, lr=1e-2,
        rank=2, lora_alpha=6, dropout=0.25, seed=0,
    )  # fmt: skip
    assert not tuned.training
    wrapped = {n.rsplit(".", 1)[-1] for n, m in tuned.named_modules() if hasattr(m, "lora_A")}
    assert wrapped == set(LLAMA_LINEARS)
    q = tuned.base_model.model.model.layers[0].self_attn.q_proj
    assert q.lora_A["default"].weight.shape == (2, 32)  # rank 2
    assert q.scaling["default"] == 6 / 2  # lora_alpha / rank
    assert q.lora_dropout["default"].p == 0.25
    assert q.base_layer.bias is None  # bias="none": no bias trained or added
    trainable = {n for n, p in tuned.named_parameters() if p.requires_grad}
    assert trainable and all("lora_" in n for n in trainable)  # the sparse base stays frozen
    # one AdamW step at lr 1e-2 moved the B matrices away from their zero init
    assert q.lora_B["default"].weight.abs().max() > 0


def test_lora_training_is_seeded():
    from paper_pipelines.pipelines.dlp.recovery import lora_finetune

    ids = torch.randint(0, 64, (100,))
    runs = []
    for seed in (0, 0, 1):
        torch.manual_seed(0)  # the same adapter init; only the window draws follow `seed`
        tuned = lora_finetune(tiny_llama(), ids, 2, 2, 8, 1e-2, 2, 4, 0.0, seed)
        runs.append(
            tuned.base_model.model.model.layers[0].self_attn.q_proj.lora_B["default"].weight
        )
    assert torch.equal(runs[0], runs[1]) and not torch.equal(runs[0], runs[2])


def test_a_parameter_lost_by_lora_is_an_error():
    w = torch.tensor([[0.0, 1.0]])
    wrapped = torch.nn.Module()
    wrapped.proj = Wrapped(w.clone())
    with pytest.raises(ValueError, match=r"parameters missing after LoRA: \['other.weight'\]"):
        pruned_weights_still_zero(wrapped, {"other.weight": pack_mask(w == 0)})


def test_lora_recovery_reports_its_settings():
    torch.manual_seed(0)
    model = tiny_llama()
    result = lora_recovery(
        model, torch.randint(0, 64, (200,)), torch.randint(0, 64, (2, 16)), 2, 0,
        steps=1, batch=2, seqlen=16, lr=1e-2, rank=2, lora_alpha=4, dropout=0.0,
    )  # fmt: skip
    assert set(result) == {"enabled", "ppl_before", "ppl_after", "steps", "seconds", "masks_intact"}
    assert result["enabled"] is True and result["steps"] == 1 and result["seconds"] > 0
    assert result["masks_intact"] is True  # nothing was zero before: trivially intact


def test_lora_windows_may_start_at_the_first_token():
    from paper_pipelines.pipelines.dlp.recovery import lora_finetune

    # seqlen + 2 tokens: the only start is 0 (randint(0, 1)), as the released sampler allows
    tuned = lora_finetune(tiny_llama(), torch.arange(10), 1, 1, 8, 1e-2, 2, 4, 0.0, 0)
    assert not tuned.training
