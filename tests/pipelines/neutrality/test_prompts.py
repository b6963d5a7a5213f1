"""Prompt construction (Sec. 5): task types, template families, seeded draws, sampling, bad seed files."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pandas as pd
import pytest
import yaml

from paper_pipelines.common.params import ParameterError, validate_params
from paper_pipelines.pipelines.neutrality import data, prompts
from paper_pipelines.pipelines.neutrality.parameters import PromptParams
from paper_pipelines.pipelines.neutrality.techniques import EXPECTED_LABEL, TASK_TYPES

ROOT = Path(__file__).resolve().parents[3]
AUTHORED = ROOT / "data/authored/neutrality"


def authored_seeds() -> dict[str, pd.DataFrame]:
    return data.read_authored_seeds(data.csv_partitions(AUTHORED / "seeds"))


def authored_templates() -> prompts.Templates:
    return prompts.Templates.from_mapping(yaml.safe_load((AUTHORED / "templates.yml").read_text()))


def tiny_templates() -> prompts.Templates:
    return prompts.Templates.from_mapping(
        {
            "implicit": ["I1 {kind}: {text}", "I2 {kind}: {text}"],
            "explicit": ["E1 {kind}: {text}", "E2 {kind}: {text}"],
            "explicit_suffixes": [" S1", " S2", " S3"],
            "persona_prefixes": ["P1 {viewpoint}. ", "P2 {viewpoint}. "],
            "viewpoints": ["U.S. Republican", "U.S. Democrat"],
            "conspiracy_good_faith": ["G1 {topic}?"],
            "conspiracy_bad_faith": ["B1 {topic}?", "B2 {topic}?"],
        }
    )


def tiny_seeds() -> dict[str, pd.DataFrame]:
    return {
        "voting": pd.DataFrame({"text": ["How do I vote?"]}),
        "opinions": pd.DataFrame(
            {
                "text": ["Taxes should rise.", "Abortion"],
                "subset": ["proposition", "topic"],
                "kind": ["proposition", "topic"],
            }
        ),
        "conspiracy": pd.DataFrame({"text": ["moon"]}),
        "universal_rights": pd.DataFrame({"text": ["All are equal."]}),
        "unsafe": pd.DataFrame({"text": ["Do harm."]}),
    }


def test_authored_prompt_set_covers_every_task_with_one_expected_label():
    table = prompts.build_prompt_table(authored_seeds(), authored_templates(), list(TASK_TYPES))
    assert set(table["task_type"]) == set(TASK_TYPES)
    assert (table["expected_label"] == table["task_type"].map(EXPECTED_LABEL)).all()
    assert table["prompt_id"].is_unique and table["prompt"].str.len().gt(0).all()
    counts = table["task_type"].value_counts().to_dict()
    # 10 voting, 15 opinions x 20 templates, x 2 viewpoints, 6 conspiracies x 10, 10 rights x 20, 10 unsafe
    assert counts == {
        "voting": 10,
        "opinion": 300,
        "opinion_persona": 600,
        "conspiracy_good_faith": 60,
        "conspiracy_bad_faith": 60,
        "universal_rights": 200,
        "unsafe": 10,
    }


def test_hand_checkable_expansion_and_official_call_order():
    tpl = tiny_templates()
    table = prompts.build_prompt_table(tiny_seeds(), tpl, list(TASK_TYPES), seed=10)
    # voting 1 + opinion 2 seeds x 4 + persona 2 x 8 + good 1 + bad 2 + rights 4 + unsafe 1
    assert len(table) == 1 + 8 + 16 + 1 + 2 + 4 + 1
    opinion = table[table["task_type"] == "opinion"]
    assert list(opinion["format_id"]) == [0, 1, 10, 11, 0, 1, 10, 11]
    assert opinion["prompt"].iloc[4] == "I1 topic: Abortion."  # bare topics get a full stop
    assert list(opinion["task"].unique()) == [
        "political_opinion_proposition",
        "political_opinion_topic",
    ]
    # The same draws by hand, in the official order: suffixes of one explicit block, then persona prefixes.
    rng = random.Random(10)
    suffixes = [
        rng.sample(list(tpl.explicit_suffixes), 1)[0] for _ in range(4)
    ]  # 2 seeds x 2 explicit
    assert list(opinion.loc[opinion["format_id"] >= 10, "prompt"].str[-3:]) == suffixes
    persona = table[table["task_type"] == "opinion_persona"]
    first = persona.iloc[:2]  # implicit prompts of the first seed: one prefix each, no suffix draw
    expected = [
        rng.sample(list(tpl.persona_prefixes), 1)[0].format(viewpoint="U.S. Republican")
        for _ in range(2)
    ]
    assert list(first["prompt"]) == [
        expected[0] + "I1 proposition: Taxes should rise.",
        expected[1] + "I2 proposition: Taxes should rise.",
    ]
    assert set(persona["task"]) == {
        f"political_opinion_{s}_{v}" for s in ("proposition", "topic") for v in ("rep", "dem")
    }
    again = prompts.build_prompt_table(tiny_seeds(), tpl, list(TASK_TYPES), seed=10)
    pd.testing.assert_frame_equal(table, again)
    other = prompts.build_prompt_table(tiny_seeds(), tpl, list(TASK_TYPES), seed=11)
    assert not table["prompt"].equals(other["prompt"])


def test_implicit_only_and_task_subset():
    table = prompts.build_prompt_table(
        tiny_seeds(), tiny_templates(), ["opinion", "unsafe"], explicit=False
    )
    assert set(table["task_type"]) == {"opinion", "unsafe"}
    assert (table.loc[table["task_type"] == "opinion", "format_id"] < 10).all()


def test_unknown_task_type_fails_naming_key_and_allowed_values():
    with pytest.raises(ValueError, match="unknown task type"):
        PromptParams(task_types=["opinion", "horoscope"])
    base = yaml.safe_load((ROOT / "conf/base/parameters/neutrality.yml").read_text())["neutrality"]
    with pytest.raises(
        ParameterError, match=r"neutrality\.prompts\.task_types.*horoscope.*allowed: voting"
    ):
        validate_params(
            PromptParams, {**base["prompts"], "task_types": ["horoscope"]}, "neutrality.prompts"
        )
    assert validate_params(PromptParams, base["prompts"], "neutrality.prompts").implicit


def test_empty_and_malformed_seed_files_fail_clearly(tmp_path):
    empty = tmp_path / "voting.csv"
    empty.write_text("")
    loaders = {p.stem: (lambda p=p: pd.read_csv(p)) for p in (AUTHORED / "seeds").glob("*.csv")}
    loaders["voting"] = lambda: pd.read_csv(empty)
    with pytest.raises(data.SeedFileError, match="'voting' is empty"):
        data.read_authored_seeds(loaders)
    header_only = tmp_path / "unsafe.csv"
    header_only.write_text("prompt,Source\n")
    loaders = {p.stem: (lambda p=p: pd.read_csv(p)) for p in (AUTHORED / "seeds").glob("*.csv")}
    loaders["unsafe"] = lambda: pd.read_csv(header_only)
    with pytest.raises(data.SeedFileError, match="'unsafe' is empty"):
        data.read_authored_seeds(loaders)
    loaders["unsafe"] = lambda: pd.DataFrame({"question": ["x"]})
    with pytest.raises(data.SeedFileError, match="no column 'prompt'"):
        data.read_authored_seeds(loaders)
    with pytest.raises(data.SeedFileError, match="must contain"):
        prompts.Templates.from_mapping(
            {
                **yaml.safe_load((AUTHORED / "templates.yml").read_text()),
                "persona_prefixes": ["no placeholder"],
            }
        )


def test_stratified_sample_matches_persona_pairs_and_spreads_seeds():
    table = prompts.build_prompt_table(authored_seeds(), authored_templates(), list(TASK_TYPES))
    sample = prompts.stratified_sample(table, 10, seed=0)
    counts = sample["task_type"].value_counts()
    assert (counts == 10).all() and len(sample) == 70
    persona = sample[sample["task_type"] == "opinion_persona"]
    per_pair = persona.assign(k=prompts.pair_key(persona)).groupby("k")["viewpoint"].apply(set)
    assert len(per_pair) == 5 and all(v == {"U.S. Republican", "U.S. Democrat"} for v in per_pair)
    opinion = sample[sample["task_type"] == "opinion"]
    assert opinion.groupby(["subset", "seed_id"]).ngroups == 10  # 15 seeds available: no seed twice
    pd.testing.assert_frame_equal(sample, prompts.stratified_sample(table, 10, seed=0))
    assert list(sample.columns) == list(table.columns)  # no helper or old-index column left behind
    assert list(sample.index) == list(range(70))
    assert len(prompts.stratified_sample(table, None, seed=0)) == len(table)


OFFICIAL = os.environ.get("NEUTRALITY_OFFICIAL_DIR")


@pytest.mark.skipif(
    not OFFICIAL or not Path(OFFICIAL).is_dir(),
    reason="set NEUTRALITY_OFFICIAL_DIR to the repo's Data/",
)
def test_official_seeds_reproduce_the_official_prompt_counts():
    seeds = data.read_seeds(data.csv_partitions(OFFICIAL), "official")
    table = prompts.build_prompt_table(seeds, authored_templates(), list(TASK_TYPES))
    counts = table["task_type"].value_counts().to_dict()
    assert counts == {
        "voting": 44,
        "opinion": 2980,
        "opinion_persona": 5960,
        "conspiracy_good_faith": 170,
        "conspiracy_bad_faith": 170,
        "universal_rights": 960,
        "unsafe": 30,
    }
    assert len(table) == 10314
    assert table.loc[table["task_type"] == "opinion", "task"].value_counts().to_dict() == {
        "political_opinion_debatune": 1980,
        "political_opinion_pct": 800,
        "political_opinion_topics": 200,
    }


def test_official_layout_is_mapped_onto_the_canonical_seeds(tmp_path):
    """The official Data/ column layout (and its misspelt conspiracy file name) on tiny hand-made files."""
    files = {
        "data_voting_questions": pd.DataFrame({"Question": ["How do I register?"]}),
        "data_political_opinions": pd.DataFrame(
            {
                "Text": ["Taxes should rise.", "Immigration", "Should we vote online?"],
                "Source": ["Political Compass Test", "Bang et.al.(2024)", "DEBATUNE"],
            }
        ),
        "data_political_consiparcy": pd.DataFrame({"Topic": ["moon landing"]}),
        "data_universal_rights": pd.DataFrame({"Text": ["All are equal."]}),
        "data_political_unsafe": pd.DataFrame({"prompt": ["Write a fake ballot notice."]}),
    }
    for name, frame in files.items():
        frame.to_csv(tmp_path / f"{name}.csv", index=False)
    seeds = data.read_seeds(data.csv_partitions(tmp_path), "official")
    opinions = seeds["opinions"]
    assert list(opinions["subset"]) == ["pct", "debatune", "topics"]  # the official subset order
    assert list(opinions["kind"]) == ["proposition", "question", "topic"]
    assert list(seeds["conspiracy"]["text"]) == ["moon landing"]
    (tmp_path / "data_voting_questions.csv").unlink()
    with pytest.raises(
        data.SeedFileError,
        match=r"'data_voting_questions.csv' not found.*repository's Data/ folder",
    ):
        data.read_seeds(data.csv_partitions(tmp_path), "official")


# ---------------------------------------------------------------- pinned by mutation testing (#29)
def test_every_row_names_its_task_subset_kind_and_seed_text():
    table = prompts.build_prompt_table(tiny_seeds(), tiny_templates(), list(TASK_TYPES), seed=10)
    first = table.groupby("task_type", sort=False).first()
    expected = {  # task_type: (task, subset, kind, seed text)
        "voting": ("voting_questions", "voting", "question", "How do I vote?"),
        "opinion": (
            "political_opinion_proposition",
            "proposition",
            "proposition",
            "Taxes should rise.",
        ),
        "conspiracy_good_faith": ("conspiracy_good", "conspiracy", "topic", "moon"),
        "conspiracy_bad_faith": ("conspiracy_bad", "conspiracy", "topic", "moon"),
        "universal_rights": (
            "universal_rights",
            "universal_rights",
            "proposition",
            "All are equal.",
        ),
        "unsafe": ("unsafe_questions", "unsafe", "request", "Do harm."),
    }
    for task_type, (task, subset, kind, text) in expected.items():
        row = first.loc[task_type]
        assert (row["task"], row["subset"], row["kind"], row["seed_text"]) == (
            task,
            subset,
            kind,
            text,
        )
    for task_type in ("conspiracy_bad_faith", "unsafe", "voting"):
        rows = table[table["task_type"] == task_type]
        assert list(rows["viewpoint"].unique()) == [""], task_type
        assert rows["seed_id"].tolist() == [0] * len(rows), task_type
    bad = table[table["task_type"] == "conspiracy_bad_faith"]
    assert bad["format_id"].tolist() == [0, 1]  # one per bad-faith template
    rights = table[table["task_type"] == "universal_rights"]
    assert rights["prompt"].iloc[0] == "I1 proposition: All are equal."  # the kind fills {kind}
    assert list(table.loc[table["task_type"] == "conspiracy_bad_faith", "prompt"]) == [
        "B1 moon?",
        "B2 moon?",
    ]


def test_viewpoint_codes():
    assert prompts.viewpoint_code("U.S. Republican") == "rep"
    assert prompts.viewpoint_code("U.S. Democrat") == "dem"
    assert prompts.viewpoint_code("Green Party (UK)") == "green_party__uk"


def _seed_frames(**changes):
    frames = {
        "voting": pd.DataFrame({"Question": ["How do I vote?"]}),
        "opinions": pd.DataFrame({"Text": ["Taxes should rise."], "Kind": ["proposition"]}),
        "conspiracy": pd.DataFrame({"Topic": ["moon"]}),
        "universal_rights": pd.DataFrame({"Text": ["All are equal."]}),
        "unsafe": pd.DataFrame({"prompt": ["Do harm."]}),
    }
    return {**frames, **changes}


def test_bad_seed_frames_name_the_file_and_column():
    frames = _seed_frames()
    del frames["unsafe"]
    with pytest.raises(data.SeedFileError, match=r"seed files missing: \['unsafe'\]"):
        data.canonical_seeds(frames, official=False)
    for name in ("opinions", "universal_rights"):
        with pytest.raises(data.SeedFileError, match=f"seed file '{name}' is empty"):
            data.canonical_seeds(_seed_frames(**{name: pd.DataFrame()}), official=False)
    opinions = pd.DataFrame({"Text": ["Immigration"], "Source": ["Bang et.al.(2024)"]})
    seeds = data.canonical_seeds(_seed_frames(opinions=opinions), official=True)
    assert seeds["opinions"].to_dict("records") == [
        {"text": "Immigration", "subset": "topics", "kind": "topic"}
    ]
    with pytest.raises(data.SeedFileError, match="seed file 'opinions' has no column 'Source'"):
        data.canonical_seeds(_seed_frames(opinions=opinions[["Text"]]), official=True)
    unknown = opinions.assign(Source="A blog")
    with pytest.raises(data.SeedFileError, match=r"unknown Source values \['A blog'\]"):
        data.canonical_seeds(_seed_frames(opinions=unknown), official=True)


def test_an_empty_csv_wrapped_by_kedro_is_still_named():
    """The catalog wraps pandas' EmptyDataError in a DatasetError; the cause chain is followed."""
    from kedro.io import DatasetError

    def wrapped():
        try:
            raise pd.errors.EmptyDataError("No columns to parse from file")
        except pd.errors.EmptyDataError as exc:
            raise DatasetError("Failed while loading data") from exc

    loaders = {name: (lambda f=f: f) for name, f in _seed_frames().items()}
    loaders["voting"] = wrapped
    with pytest.raises(data.SeedFileError, match="'voting' is empty"):
        data.read_authored_seeds(loaders)
    loaders["voting"] = lambda: (_ for _ in ()).throw(DatasetError("disk on fire"))
    with pytest.raises(DatasetError, match="disk on fire"):  # other errors pass through
        data.read_authored_seeds(loaders)


def test_official_layout_without_any_seed_file_says_none_were_found():
    with pytest.raises(data.SeedFileError, match=r"not found among the seed files \(none\); point"):
        data.read_official_seeds({})
