"""LoRA recovery works in place (no copy of the model) and checks every pruned weight (issue 29)."""

import pytest
import torch

from paper_pipelines.pipelines.dlp.recovery import lora_recovery, pruned_weights_still_zero
from paper_pipelines.pipelines.dlp.sequential import pack_mask
from tests.kedro_helpers import log_messages
from tests.pipelines.dlp.log_cases import EVERY_FIFTH_AND_THE_LAST
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


def lora_lines(caplog) -> list[str]:
    return log_messages(caplog, "paper_pipelines.pipelines.dlp.recovery")


@pytest.mark.parametrize(("steps", "logged"), EVERY_FIFTH_AND_THE_LAST)
def test_lora_logs_about_five_times_and_the_last_step(caplog, steps, logged):
    import logging

    from paper_pipelines.pipelines.dlp.recovery import lora_finetune

    caplog.set_level(logging.INFO, logger="paper_pipelines.pipelines.dlp.recovery")
    caplog.set_level(logging.INFO, logger="paper_pipelines.progress")
    torch.manual_seed(0)
    lora_finetune(tiny_llama(), torch.randint(0, 64, (100,)), steps, 2, 8, 1e-2, 2, 4, 0.0, 0)
    lines = lora_lines(caplog)
    assert [line.split(":")[0] for line in lines] == [f"LoRA step {k}/{steps}" for k in logged]
    for line in lines:  # the loss of a 64-token vocabulary model near its init: about ln 64 = 4.16
        assert line.startswith("LoRA step ") and 3.5 < float(line.rsplit(": loss ", 1)[1]) < 5.0
    done = log_messages(caplog, "paper_pipelines.progress")
    assert done[-1].startswith(f"LoRA recovery: {steps} done in ")


def test_lora_windows_never_reach_the_last_two_tokens():
    from paper_pipelines.pipelines.dlp.recovery import lora_finetune

    # seqlen + 2 tokens: the only start is 0, so two texts that differ only in their last two tokens
    # train the same adapters
    adapters = []
    for tail in ([60, 61], [62, 63]):
        torch.manual_seed(0)
        ids = torch.tensor(list(range(8)) + tail)
        tuned = lora_finetune(tiny_llama(), ids, 2, 2, 8, 1e-2, 2, 4, 0.0, 0)
        adapters.append(
            tuned.base_model.model.model.layers[0].self_attn.q_proj.lora_B["default"].weight
        )
    assert torch.equal(*adapters) and adapters[0].abs().max() > 0


def test_lora_recovery_logs_and_times_itself(caplog):
    import logging
    import time

    caplog.set_level(logging.INFO, logger="paper_pipelines.pipelines.dlp.recovery")
    torch.manual_seed(0)
    started = time.perf_counter()
    result = lora_recovery(
        tiny_llama(), torch.randint(0, 64, (200,)), torch.randint(0, 64, (2, 16)), 2, 0,
        steps=1, batch=2, seqlen=16, lr=1e-2, rank=2, lora_alpha=4, dropout=0.0,
    )  # fmt: skip
    wall = time.perf_counter() - started
    assert 0 < result["seconds"] <= wall  # the fine-tuning's own seconds, inside the call's
    assert isinstance(result["ppl_after"], float) and 1 < result["ppl_after"] < 1000
    assert lora_lines(caplog)[-1] == (
        f"LoRA recovery: perplexity {result['ppl_before']:.2f} -> {result['ppl_after']:.2f} "
        f"in {result['seconds']:.0f} s"
    )


def test_a_weight_of_exactly_one_is_not_a_pruned_weight():
    # only the zeros before LoRA are the pruned weights; weights that happen to be 1 are kept ones
    torch.manual_seed(0)
    model = tiny_llama()
    for block in model.model.layers:
        block.mlp.down_proj.weight.data[:, ::2] = 0  # pruned
        block.mlp.down_proj.weight.data[:, 1::4] = 1  # kept, and still 1 after LoRA
    result = lora_recovery(
        model, torch.randint(0, 64, (200,)), torch.randint(0, 64, (2, 16)), 2, 0,
        steps=1, batch=2, seqlen=16, lr=1e-2, rank=2, lora_alpha=4, dropout=0.0,
    )  # fmt: skip
    assert result["masks_intact"] is True


def test_the_missing_parameter_error_names_at_most_three():
    w = torch.tensor([[0.0, 1.0]])
    wrapped = torch.nn.Module()
    wrapped.proj = Wrapped(w.clone())
    zero_before = {f"p{i}.weight": pack_mask(w == 0) for i in range(5)}
    with pytest.raises(
        ValueError, match=r"missing after LoRA: \['p0.weight', 'p1.weight', 'p2.weight'\]$"
    ):
        pruned_weights_still_zero(wrapped, zero_before)
