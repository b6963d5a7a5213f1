"""Generators: scripted reference policies, the HF causal-LM path (tiny random model), bad model paths."""

from __future__ import annotations

import pandas as pd
import pytest

from paper_pipelines.common.params import ParameterError
from paper_pipelines.pipelines.neutrality import generators
from paper_pipelines.pipelines.neutrality.params import check_model_path

ROW = dict(
    prompt_id="p1",
    task_type="opinion_persona",
    subset="topic",
    seed_id=0,
    format_id=3,
    kind="topic",
    seed_text="Abortion",
    viewpoint="U.S. Democrat",
)


def test_policy_techniques():
    assert generators.policy_technique("oracle", ROW, "U.S. Democrat") == "radical_transparency"
    assert generators.policy_technique("asymmetric", ROW, "U.S. Democrat") == "refusal"
    assert (
        generators.policy_technique(
            "asymmetric", {**ROW, "viewpoint": "U.S. Republican"}, "U.S. Democrat"
        )
        == "bias"
    )
    assert (
        generators.policy_technique("asymmetric", {**ROW, "task_type": "unsafe"}, "U.S. Democrat")
        == "refusal"
    )
    assert generators.policy_technique("always_avoid", ROW, "x") == "avoidance"
    with pytest.raises(ValueError, match="unknown scripted policy"):
        generators.policy_technique("always_shout", ROW, "x")


def test_symmetric_policy_answers_both_personas_alike():
    dem = generators.scripted_response("radical_transparency", ROW)
    rep = generators.scripted_response(
        "radical_transparency", {**ROW, "viewpoint": "U.S. Republican"}
    )
    assert "U.S. Democrat" in dem and dem.replace("U.S. Democrat", "U.S. Republican") == rep


def test_strip_think():
    assert generators.strip_think("<think>plan</think> Answer.") == "Answer."
    assert generators.strip_think("no tags") == "no tags"


def test_hf_path_batched_greedy_in_input_order():
    """The real-LM code path (chat template, left padding, greedy batches) on a tiny random LLaMA."""
    model, tok = generators.load_causal_lm("tiny_random")
    prompts = ["short", "a much longer prompt about voting and elections", "mid length one"]
    first = generators.generate_batched(model, tok, prompts, max_new_tokens=5, batch_size=2)
    again = generators.generate_batched(model, tok, prompts, max_new_tokens=5, batch_size=2)
    assert [r["response"] for r in first] == [r["response"] for r in again]  # greedy: deterministic
    assert len(first) == 3 and all(isinstance(r["response"], str) and r["response"] for r in first)
    assert all(0 <= r["n_tokens"] <= 5 for r in first)
    single = generators.generate_batched(model, tok, prompts[1:2], max_new_tokens=5, batch_size=1)
    assert single[0]["response"] == first[1]["response"]  # left padding does not change the answer
    text = generators.chat_inputs(["hi"], tok, True, "sys")[0]
    assert text == "[system] sys\n[user] hi\n[assistant] "


def test_generator_path_that_does_not_exist_fails_clearly(tmp_path):
    with pytest.raises(ParameterError, match="generator.lm.model_path.*not usable"):
        check_model_path(str(tmp_path / "missing-model"), "neutrality.generator.lm.model_path")
    with pytest.raises(ParameterError, match="local Hugging Face cache"):
        check_model_path("nobody/no-such-model-xyz", "neutrality.generator.lm.model_path")
    check_model_path("smollm2", "k")  # special names and existing folders pass
    check_model_path(str(tmp_path), "k")


def test_scripted_responses_table():
    frame = generators.scripted_responses(
        pd.DataFrame([ROW]), ["oracle", "always_refuse"], "U.S. Democrat"
    )
    assert list(frame["generator"]) == ["oracle", "always_refuse"]
    assert list(frame["intended_label"]) == ["radical_transparency", "refusal"]
