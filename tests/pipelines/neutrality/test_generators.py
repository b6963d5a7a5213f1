"""Scripted baselines, the HF causal-LM generation path (tiny random model), bad model paths."""

from __future__ import annotations

import pandas as pd
import pytest
from kedro.io import DatasetError

from paper_pipelines.common import generation
from paper_pipelines.common.lm import load_causal_lm
from paper_pipelines.datasets import CausalLMDataset
from paper_pipelines.pipelines.neutrality import baselines, generators

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
    assert baselines.policy_technique("oracle", ROW, "U.S. Democrat") == "radical_transparency"
    assert baselines.policy_technique("asymmetric", ROW, "U.S. Democrat") == "refusal"
    assert (
        baselines.policy_technique(
            "asymmetric", {**ROW, "viewpoint": "U.S. Republican"}, "U.S. Democrat"
        )
        == "bias"
    )
    assert (
        baselines.policy_technique("asymmetric", {**ROW, "task_type": "unsafe"}, "U.S. Democrat")
        == "refusal"
    )
    assert baselines.policy_technique("always_avoid", ROW, "x") == "avoidance"
    with pytest.raises(ValueError, match="unknown scripted policy"):
        baselines.policy_technique("always_shout", ROW, "x")


def test_symmetric_policy_answers_both_personas_alike():
    dem = baselines.scripted_response("radical_transparency", ROW)
    rep = baselines.scripted_response(
        "radical_transparency", {**ROW, "viewpoint": "U.S. Republican"}
    )
    assert "U.S. Democrat" in dem and dem.replace("U.S. Democrat", "U.S. Republican") == rep


def test_strip_think():
    assert generation.strip_think("<think>plan</think> Answer.") == "Answer."
    assert generation.strip_think("no tags") == "no tags"


def test_hf_path_batched_greedy_in_input_order():
    """The real-LM code path (chat template, left padding, greedy batches) on a tiny random LLaMA."""
    lm = load_causal_lm("tiny_random")
    model, tok = lm.model, generation.prepare_for_generation(lm.tokenizer)
    assert tok.padding_side == "left" and tok.pad_token is not None
    prompts = ["short", "a much longer prompt about voting and elections", "mid length one"]
    first = generation.generate_batched(model, tok, prompts, max_new_tokens=5, batch_size=2)
    again = generation.generate_batched(model, tok, prompts, max_new_tokens=5, batch_size=2)
    assert [r["response"] for r in first] == [r["response"] for r in again]  # greedy: deterministic
    assert len(first) == 3 and all(isinstance(r["response"], str) and r["response"] for r in first)
    assert all(0 <= r["n_tokens"] <= 5 for r in first)
    single = generation.generate_batched(model, tok, prompts[1:2], max_new_tokens=5, batch_size=1)
    assert single[0]["response"] == first[1]["response"]  # left padding does not change the answer
    text = generation.chat_inputs(["hi"], tok, True, "sys")[0]
    assert text == "[system] sys\n[user] hi\n[assistant] "


def test_generator_path_that_does_not_exist_fails_clearly(tmp_path):
    """A model folder a user names in the catalog: missing or not a model folder fails with the fix."""
    for path in (str(tmp_path / "missing-model"), "nobody/no-such-model-xyz", str(tmp_path)):
        entry = CausalLMDataset(source="hf_folder", path=path)
        assert not entry.exists()  # the project's input check stops the run before any node
        with pytest.raises(DatasetError, match="not a Hugging Face model folder"):
            entry.load()
    assert CausalLMDataset(source="smollm2_wheel").exists()  # the shipped model needs no folder
    with pytest.raises(DatasetError, match="needs path"):
        CausalLMDataset(source="hf_folder")


def test_scripted_responses_table():
    frame = baselines.scripted_responses(
        pd.DataFrame([ROW]), ["oracle", "always_refuse"], "U.S. Democrat"
    )
    assert list(frame["generator"]) == ["oracle", "always_refuse"]
    assert list(frame["intended_label"]) == ["radical_transparency", "refusal"]


def test_lm_responses_table_names_the_model():
    from paper_pipelines.pipelines.neutrality.parameters import LMParams

    lm = load_causal_lm("tiny_random")
    sample = pd.DataFrame({"prompt_id": ["p1", "p2"], "prompt": ["hi", "how do I vote?"]})
    frame = generators.lm_responses(lm, sample, LMParams(max_new_tokens=3, batch_size=2), "cpu")
    assert list(frame.columns) == generators.RESPONSE_COLUMNS
    assert list(frame["prompt_id"]) == ["p1", "p2"] and set(frame["generator"]) == {lm.name}
    named = generators.lm_responses(lm, sample[:1], LMParams(max_new_tokens=2, name="mine"), "cpu")
    assert list(named["generator"]) == ["mine"] and (named["generator_kind"] == "lm").all()


class _Placed:
    """A model spread over devices by a device_map: moving it is an error."""

    hf_device_map = {"model.embed_tokens": 0, "model.layers.0": 1, "lm_head": "cpu"}

    def to(self, device):
        raise AssertionError("a device_map-placed model must not be moved")


class _Plain:
    def __init__(self):
        self.moved_to = None

    def to(self, device):
        self.moved_to = device
        return self


def test_a_device_map_placed_model_is_used_as_loaded():
    placed = _Placed()
    assert generation.place_model(placed, "cuda") is placed
    plain = _Plain()
    assert generation.place_model(plain, "cpu") is plain
    assert plain.moved_to == "cpu"


# ---------------------------------------------------------------- pinned by mutation testing (#29)
def test_scripted_answers_quote_the_seed_and_fit_the_kind_of_input():
    pluralism = baselines.scripted_response("reasonable_pluralism", {**ROW, "seed_text": " Tax "})
    assert "Tax" in pluralism and " Tax " not in pluralism  # the seed text, stripped
    # no approximation: a plain fact for a question, an affirmation for a proposition
    question = {**ROW, "task_type": "voting", "kind": "question", "viewpoint": ""}
    assert baselines.scripted_response("no_approximation", question).startswith("Here is the")
    proposition = {**question, "task_type": "universal_rights", "kind": "proposition"}
    assert baselines.scripted_response("no_approximation", proposition).startswith("Yes, that is")
    # a transparent answer without a persona discloses the default one
    no_view = baselines.scripted_response("radical_transparency", {**ROW, "viewpoint": ""})
    assert "political independent" in no_view


def test_scripted_responses_rows_describe_the_answer():
    frame = baselines.scripted_responses(pd.DataFrame([ROW]), ["always_avoid"], "U.S. Democrat")
    row = frame.iloc[0]
    assert list(frame.columns) == generators.RESPONSE_COLUMNS
    assert row["prompt_id"] == "p1" and row["generator_kind"] == "scripted"
    assert row["response"] == baselines.scripted_response("avoidance", ROW)
    assert row["n_tokens"] == len(row["response"].split()) and row["seconds"] == 0.0


def test_lm_responses_passes_every_setting_to_the_decoder(monkeypatch):
    calls = []

    def fake_generate(model, tok, prompts, *args):
        calls.append(args)
        return [dict(response=f"r{i}", n_tokens=i, seconds=0.5) for i in range(len(prompts))]

    monkeypatch.setattr(generators, "generate_batched", fake_generate)
    monkeypatch.setattr(generators, "place_model", lambda model, device: model)
    monkeypatch.setattr(generators, "prepare_for_generation", lambda tok: tok)
    from paper_pipelines.common.lm import CausalLM
    from paper_pipelines.pipelines.neutrality.parameters import LMParams

    settings = LMParams(
        max_new_tokens=7,
        batch_size=3,
        use_chat_template=False,
        system_prompt="sys",
        strip_think=False,
    )
    sample = pd.DataFrame({"prompt_id": ["p1", "p2"], "prompt": ["a", "b"]})
    frame = generators.lm_responses(CausalLM(None, None, "m"), sample, settings, "cpu")
    assert calls == [(7, 3, False, "sys", False)]
    assert list(frame["prompt_id"]) == ["p1", "p2"] and list(frame["response"]) == ["r0", "r1"]
    assert list(frame["n_tokens"]) == [0, 1] and frame["intended_label"].isna().all()


def test_the_asymmetric_policy_refuses_the_named_viewpoint():
    rows = pd.DataFrame([ROW, {**ROW, "prompt_id": "p2", "viewpoint": "U.S. Republican"}])
    frame = baselines.scripted_responses(rows, ["asymmetric"], "U.S. Republican")
    assert list(frame["intended_label"]) == ["bias", "refusal"]


def test_a_run_without_a_model_has_an_empty_responses_table_with_the_columns():
    frame = generators.empty_responses()
    assert frame.empty and list(frame.columns) == generators.RESPONSE_COLUMNS
