"""The paper's measures: perplexity, the sparsity reached, and the optional zero-shot accuracy."""

import math
import sys
import types

import pytest
import torch

from paper_pipelines.pipelines.dlp.metrics import perplexity, prunable_sparsity, zero_shot_accuracy
from tests.kedro_helpers import log_messages
from tests.pipelines.dlp.test_calibration import tiny_llama


class Uniform(torch.nn.Module):
    """Equal logits over a vocabulary of 8: every next token has probability 1/8, perplexity 8."""

    def __init__(self) -> None:
        super().__init__()
        self.anchor = torch.nn.Parameter(torch.zeros(1))

    def forward(self, ids, use_cache=False):
        return types.SimpleNamespace(logits=torch.zeros(*ids.shape, 8) + self.anchor)


def test_perplexity_of_a_uniform_model_is_the_vocabulary_size():
    windows = torch.randint(0, 8, (3, 5))
    assert perplexity(Uniform(), windows, batch_size=2) == pytest.approx(8.0)


def test_perplexity_is_the_token_weighted_mean_over_uneven_batches():
    """exp of the mean next-token NLL over ALL windows: the same in one batch or in batches of 2 + 1,
    and equal to exp of the model's own shifted cross-entropy loss."""
    model = tiny_llama()
    windows = torch.randint(0, 64, (3, 12))
    with torch.no_grad():
        loss = model(windows, labels=windows).loss
    whole = perplexity(model, windows, batch_size=3)
    assert whole == pytest.approx(math.exp(float(loss)), rel=1e-5)
    assert perplexity(model, windows, batch_size=2) == pytest.approx(whole, rel=1e-6)
    assert perplexity(model, windows, batch_size=1) == pytest.approx(whole, rel=1e-6)


def test_prunable_sparsity_counts_only_block_linears():
    model = tiny_llama()
    assert prunable_sparsity(model) == 0.0
    model.model.layers[0].self_attn.q_proj.weight.data[:16] = (
        0  # 512 of the 3 * 10240 block weights
    )
    model.model.embed_tokens.weight.data.zero_()  # not a block linear
    assert prunable_sparsity(model) == 512 / (3 * 10240)


def test_zero_shot_without_tasks_or_harness_is_skipped_with_the_reason(monkeypatch):
    assert zero_shot_accuracy(None, None, []) == {
        "skipped": "no zero-shot tasks requested (dlp.evaluation.zero_shot_tasks is empty)"
    }
    monkeypatch.setitem(sys.modules, "lm_eval", None)  # not installed
    out = zero_shot_accuracy(None, None, ["piqa"])
    assert out == {
        "skipped": "lm-evaluation-harness is not installed (pip install lm-eval); zero-shot skipped"
    }


def fake_harness(monkeypatch, evaluate):
    harness = types.ModuleType("lm_eval")
    harness.simple_evaluate = evaluate
    models = types.ModuleType("lm_eval.models")
    hf = types.ModuleType("lm_eval.models.huggingface")
    hf.HFLM = lambda pretrained, tokenizer: ("hflm", pretrained, tokenizer)
    for name, module in (
        ("lm_eval", harness),
        ("lm_eval.models", models),
        ("lm_eval.models.huggingface", hf),
    ):
        monkeypatch.setitem(sys.modules, name, module)


def test_zero_shot_accuracy_is_the_mean_over_tasks(monkeypatch):
    calls = []

    def evaluate(model, tasks):
        calls.append((model, tasks))
        return {"results": {"piqa": {"acc,none": 0.5}, "boolq": {"acc,none": 1.0}}}

    fake_harness(monkeypatch, evaluate)
    out = zero_shot_accuracy("model", "tok", ["piqa", "boolq"])
    assert out == {"accuracy": {"piqa": 0.5, "boolq": 1.0}, "mean_accuracy": 0.75}
    assert calls == [(("hflm", "model", "tok"), ["piqa", "boolq"])]


def test_zero_shot_failure_is_reported_not_raised(monkeypatch):
    def evaluate(model, tasks):
        raise FileNotFoundError("no cached data for piqa")

    fake_harness(monkeypatch, evaluate)
    out = zero_shot_accuracy("model", "tok", ["piqa"])
    assert out == {
        "skipped": "zero-shot evaluation failed (FileNotFoundError: no cached data for piqa); skipped"
    }


# ---------------------------------------------------------------- pinned by mutation testing (#29)
def skip_messages(caplog) -> list[str]:
    return log_messages(caplog, "paper_pipelines.pipelines.dlp.metrics")


def test_every_skipped_zero_shot_is_logged_with_its_reason(monkeypatch, caplog):
    import logging

    caplog.set_level(logging.INFO, logger="paper_pipelines.pipelines.dlp.metrics")
    reasons = [zero_shot_accuracy(None, None, [])["skipped"]]
    monkeypatch.setitem(sys.modules, "lm_eval", None)  # not installed
    reasons.append(zero_shot_accuracy(None, None, ["piqa"])["skipped"])

    def evaluate(model, tasks):
        raise FileNotFoundError("no cached data for piqa")

    fake_harness(monkeypatch, evaluate)
    reasons.append(zero_shot_accuracy("model", "tok", ["piqa"])["skipped"])
    assert skip_messages(caplog) == [
        f"zero-shot evaluation skipped: {reasons[0]}",
        reasons[1],
        reasons[2],
    ]


def test_zero_shot_of_one_task_is_its_accuracy_and_a_task_without_one_is_nan(monkeypatch):
    fake_harness(monkeypatch, lambda model, tasks: {"results": {"piqa": {"acc,none": 0.6}}})
    assert zero_shot_accuracy("model", "tok", ["piqa"]) == {
        "accuracy": {"piqa": 0.6},
        "mean_accuracy": 0.6,
    }
    # a task that reports no accuracy (only a perplexity) is NaN, and so is the mean: never a mean
    # over fewer tasks than were asked for
    fake_harness(
        monkeypatch,
        lambda model, tasks: {
            "results": {"piqa": {"acc,none": 0.6}, "lambada": {"perplexity,none": 3.0}}
        },
    )
    out = zero_shot_accuracy("model", "tok", ["piqa", "lambada"])
    assert out["accuracy"]["piqa"] == 0.6 and math.isnan(out["accuracy"]["lambada"])
    assert math.isnan(out["mean_accuracy"])
