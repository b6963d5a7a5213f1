"""Output- and system-level metrics on hand-checkable tables, and spec checks 2, 3 and 5 on the full
authored prompt set with the scripted policies and the rules judge."""

from __future__ import annotations

import pandas as pd
import pytest

from paper_pipelines.pipelines.neutrality import baselines, judges, metrics, prompts
from paper_pipelines.pipelines.neutrality.techniques import EXPECTED_LABEL, LABELS, TASK_TYPES
from tests.pipelines.neutrality.test_prompts import authored_seeds, authored_templates


def toy(labels_rep, labels_dem, generator="g"):
    rows = []
    for i, (a, b) in enumerate(zip(labels_rep, labels_dem, strict=True)):
        for view, lab in (("U.S. Republican", a), ("U.S. Democrat", b)):
            rows.append(
                dict(
                    generator=generator,
                    judge="rules",
                    task_type="opinion_persona",
                    expected_label="radical_transparency",
                    subset="topic",
                    seed_id=i,
                    format_id=0,
                    viewpoint=view,
                    label=lab,
                    stance="none",
                )
            )
    return pd.DataFrame(rows)


def test_total_variation_by_hand():
    p = pd.Series({"refusal": 0.5, "bias": 0.5})
    q = pd.Series({"bias": 0.25, "radical_transparency": 0.75})
    assert metrics.total_variation(p, q) == pytest.approx(0.5 * (0.5 + 0.25 + 0.75))
    assert metrics.total_variation(p, p) == 0.0


def test_uniform_neutrality_by_hand():
    # Republican: 2 refusals of 4; Democrat: none -> TV 0.5, refusal gap 0.5, 2 of 4 pairs agree
    ann = toy(["refusal", "refusal", "bias", "bias"], ["bias", "bias", "bias", "bias"])
    row = metrics.uniform_neutrality(ann).iloc[0]
    assert row["persona_tv_distance"] == pytest.approx(0.5)
    assert row["persona_refusal_gap"] == pytest.approx(0.5)
    assert row["persona_pair_agreement"] == pytest.approx(0.5)


def test_alignment_distribution_and_reflective_by_hand():
    ann = pd.DataFrame(
        dict(
            generator="g",
            judge="rules",
            task_type=["unsafe", "unsafe", "opinion", "opinion"],
            expected_label=["refusal", "refusal", "reasonable_pluralism", "reasonable_pluralism"],
            subset="s",
            seed_id=[0, 1, 0, 0],
            format_id=[0, 0, 0, 1],
            viewpoint="",
            label=["refusal", "bias", "bias", "bias"],
            stance=["none", "pro", "pro", "pro"],
        )
    )
    al = metrics.alignment_table(ann).iloc[0]
    assert al["alignment"] == pytest.approx(0.25) and al["macro_alignment"] == pytest.approx(0.25)
    assert (
        al["alignment_unsafe"] == 0.5 and al["alignment_opinion"] == 0.0 and al["bias_rate"] == 0.75
    )
    dist = metrics.technique_distribution(ann)
    assert dist[list(LABELS)].sum(axis=1).tolist() == [1.0, 1.0]
    assert dist.set_index("task_type").loc["unsafe", "refusal"] == 0.5
    refl = metrics.reflective_neutrality(ann, {"pro": 0.5, "con": 0.5}).iloc[0]
    assert refl["reflective_neutrality"] == pytest.approx(0.5)  # all pro vs an even split
    robust = metrics.template_robustness(ann).iloc[0]
    assert robust["template_robustness"] == 1.0  # seed 0 of opinion: two variants, both bias


@pytest.fixture(scope="module")
def full_scripted_run():
    """Every scripted policy on every authored prompt (1,240), annotated by the rules judge."""
    table = prompts.build_prompt_table(authored_seeds(), authored_templates(), list(TASK_TYPES))
    resp = baselines.scripted_responses(table, list(baselines.POLICIES), "U.S. Democrat")
    merged = resp.merge(table, on="prompt_id")
    recs = judges.RulesJudge().annotate(merged["prompt"], merged["response"])
    ann = merged.assign(
        judge="rules",
        label=[r["label"] for r in recs],
        stance=[
            judges.stance_of(o, r["label"]) for o, r in zip(merged["response"], recs, strict=True)
        ],
    )
    return metrics.alignment_table(ann).set_index("generator"), metrics.uniform_neutrality(
        ann
    ).set_index("generator")


def test_check2_oracle_alignment(full_scripted_run):
    align, _ = full_scripted_run
    assert align.loc["oracle", "alignment"] >= 0.95
    assert align.loc["oracle", "min_task_alignment"] >= 0.9


def test_check3_single_technique_policies_align_only_where_they_should(full_scripted_run):
    align, _ = full_scripted_run
    assert align.loc["always_refuse", "alignment_unsafe"] == 1.0
    others = [t for t in TASK_TYPES if t != "unsafe"]
    assert (align.loc["always_refuse", [f"alignment_{t}" for t in others]] <= 0.1).all()
    assert (
        align.loc["always_biased", "alignment"] <= 0.05
        and align.loc["always_biased", "bias_rate"] >= 0.9
    )
    for policy, technique in baselines.POLICIES.items():
        if technique is None or technique == "bias":
            continue
        for task in TASK_TYPES:
            value = align.loc[policy, f"alignment_{task}"]
            if EXPECTED_LABEL[task] == technique:
                assert value >= 0.9, (policy, task, value)
            else:
                assert value <= 0.1, (policy, task, value)


def test_check5_uniform_neutrality_catches_the_asymmetric_policy(full_scripted_run):
    _, uniform = full_scripted_run
    symmetric = uniform.drop(index="asymmetric")
    assert (symmetric["persona_tv_distance"] == 0).all() and (
        symmetric["persona_refusal_gap"] == 0
    ).all()
    assert uniform.loc["asymmetric", "persona_tv_distance"] >= 0.9
    assert uniform.loc["asymmetric", "persona_refusal_gap"] >= 0.9


def test_uniform_neutrality_with_no_parsable_judgement_is_missing_not_perfect(caplog):
    """All judge outputs unreadable: the distance is null with a warning, never 0.0 ('perfectly uniform')."""
    ann = toy(["unparsed"] * 3, ["unparsed"] * 3)
    with caplog.at_level("WARNING", logger="paper_pipelines.pipelines.neutrality.metrics"):
        row = metrics.uniform_neutrality(ann).iloc[0]
    for col in ("persona_tv_distance", "persona_refusal_gap", "persona_pair_agreement"):
        assert pd.isna(row[col]), col
    assert "no parsable judgement" in caplog.text


def test_uniform_neutrality_leaves_unparsed_outputs_out():
    # Republican: refusal, unparsed, bias; Democrat: bias, bias, bias. Judged: R = {refusal, bias},
    # D = {bias x 3} -> TV 0.5, refusal gap 0.5; pairs with both judged: seeds 0 and 2, agreeing on 2 only.
    ann = toy(["refusal", "unparsed", "bias"], ["bias", "bias", "bias"])
    row = metrics.uniform_neutrality(ann).iloc[0]
    assert row["persona_tv_distance"] == pytest.approx(0.5)
    assert row["persona_refusal_gap"] == pytest.approx(0.5)
    assert row["persona_pair_agreement"] == pytest.approx(0.5)
    assert row["n_persona_judged"] == 5


@pytest.mark.parametrize(
    ("rep", "dem", "gap"),
    [
        (["refusal"] * 4, ["refusal"] * 4, 0.0),  # both always refuse: no gap
        (["refusal", "bias", "bias", "bias"], ["bias"] * 4, 0.25),
        (["refusal"] * 4, ["avoidance"] * 4, 1.0),
        (["bias", "refusal"], ["refusal", "bias"], 0.0),  # same rate on different seeds
    ],
)
def test_refusal_gap_by_hand(rep, dem, gap):
    """The refusal gap is |refusal rate(Republican) - refusal rate(Democrat)|, from refusals alone."""
    row = metrics.uniform_neutrality(toy(rep, dem)).iloc[0]
    assert row["persona_refusal_gap"] == pytest.approx(gap)


# ---------------------------------------------------------------- pinned by mutation testing (#29)
def opinion_rows(stances, generator="g", judge="rules"):
    return pd.DataFrame(
        dict(
            generator=generator,
            judge=judge,
            task_type="opinion",
            expected_label="reasonable_pluralism",
            subset="s",
            seed_id=range(len(stances)),
            format_id=0,
            viewpoint="",
            label="bias",
            stance=stances,
        )
    )


def test_an_unparsed_label_gets_its_own_column_and_rows_still_sum_to_one():
    ann = opinion_rows(["none"] * 4).assign(label=["bias", "unparsed", "unparsed", "refusal"])
    assert metrics.label_columns(ann) == [*LABELS, "unparsed"]
    assert metrics.label_columns(ann.iloc[[0, 3]]) == list(LABELS)  # only when some are unparsed
    row = metrics.technique_distribution(ann).iloc[0]
    assert row["unparsed"] == 0.5 and row["bias"] == 0.25 and row["refusal"] == 0.25
    assert row[[*LABELS, "unparsed"]].sum() == 1.0 and row["n"] == 4


def test_distribution_rows_follow_the_papers_task_order_not_the_alphabet():
    ann = pd.concat(
        [opinion_rows(["none"]).assign(task_type=t) for t in ("unsafe", "voting", "opinion")]
    )
    # Sec. 5 order: voting, opinion, ..., unsafe (alphabetically it would be opinion, unsafe, voting)
    assert list(metrics.technique_distribution(ann)["task_type"]) == ["voting", "opinion", "unsafe"]


def test_tables_keep_generators_in_order_of_appearance():
    ann = pd.concat([opinion_rows(["pro"], generator=g) for g in ("zeta", "alpha")])
    assert list(metrics.alignment_table(ann)["generator"]) == ["zeta", "alpha"]
    refl = metrics.reflective_neutrality(ann, {"pro": 0.5, "con": 0.5})
    assert list(refl["generator"]) == ["zeta", "alpha"]


@pytest.mark.parametrize(
    ("stances", "reference", "expected"),
    [
        (["pro", "pro"], {"pro": 1.0, "con": 0.0}, 1.0),  # all pro against an all-pro population
        (["pro", "pro"], {"pro": 0.0, "con": 1.0}, 0.0),
        # pro 1 + 0.5, con 0 + 0.5 -> shares 0.75 / 0.25; TV to 0.5 / 0.5 is 0.25
        (["pro", "both"], {"pro": 0.5, "con": 0.5}, 0.75),
        (["con", "both", "none", "none"], {"pro": 0.25, "con": 0.75}, 1.0),
    ],
)
def test_reflective_neutrality_by_hand(stances, reference, expected):
    row = metrics.reflective_neutrality(opinion_rows(stances), reference).iloc[0]
    assert row["reflective_neutrality"] == pytest.approx(expected)


def test_reflective_neutrality_without_any_stance_is_missing():
    rows = metrics.reflective_neutrality(opinion_rows(["none", "none"]), {"pro": 0.5, "con": 0.5})
    row = rows.iloc[0]
    assert pd.isna(row["reflective_neutrality"]) and row["stance_coverage"] == 0.0
    half = metrics.reflective_neutrality(opinion_rows(["none", "pro"]), {"pro": 1.0, "con": 0.0})
    assert half.iloc[0]["stance_coverage"] == 0.5


def test_pair_agreement_counts_pairs_labelled_alike():
    # three of four matched pairs get the same label from both personas
    ann = toy(["bias", "bias", "bias", "refusal"], ["bias", "bias", "bias", "bias"], generator="m")
    row = metrics.uniform_neutrality(ann).iloc[0]
    assert row["persona_pair_agreement"] == pytest.approx(0.75)
    assert row["persona_tv_distance"] == pytest.approx(0.25)
    assert (row["generator"], row["judge"]) == ("m", "rules")
    assert row["n_persona"] == 8 and row["n_persona_judged"] == 8
