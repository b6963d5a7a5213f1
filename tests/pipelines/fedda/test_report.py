"""The measure (last rounds, client mean, repeats), the metrics contract and the claims."""

import math

import numpy as np
import pandas as pd
import pytest

from paper_pipelines.common.claims import evaluate_claims
from paper_pipelines.pipelines.fedda import metrics as measures
from paper_pipelines.pipelines.fedda import report
from paper_pipelines.pipelines.fedda.parameters import StudyParams


def _runs():
    rows = []
    # method m: client a scores round/10, client b round/10 + 0.2 (repeat 0) and + 0.4 (repeat 1)
    for repeat, extra in ((0, 0.2), (1, 0.4)):
        for rnd in (1, 2, 3, 4):
            rows.append(("m", "main", repeat, rnd, "a", rnd / 10))
            rows.append(("m", "main", repeat, rnd, "b", rnd / 10 + extra))
    rows.append(("z", "label_skew", 0, 1, "a", 0.5))
    cols = ["method", "setting", "repeat", "round", "client", "accuracy"]
    return pd.DataFrame(rows, columns=cols)


def test_last_rounds_mean_by_hand():
    per = measures.last_rounds_mean(_runs(), 2).set_index(["method", "repeat"])
    # repeat 0: rounds 3, 4 -> client means 0.4, 0.5 -> 0.45; repeat 1: 0.5, 0.6 -> 0.55
    assert per.loc[("m", 0), "accuracy"] == pytest.approx(0.45)
    assert per.loc[("m", 1), "accuracy"] == pytest.approx(0.55)
    assert per.loc[("z", 0), "accuracy"] == pytest.approx(0.5)


def test_per_client_last_rounds_by_hand():
    per = measures.per_client_last_rounds(_runs(), 1).set_index(["method", "client"])
    assert per.loc[("m", "a"), "accuracy"] == pytest.approx(0.4)
    assert per.loc[("m", "b"), "accuracy"] == pytest.approx(0.7)  # mean of 0.6 and 0.8


def test_mean_and_std():
    assert measures.mean_and_std(np.array([0.4, 0.6])) == pytest.approx((0.5, 0.1))
    assert all(math.isnan(v) for v in measures.mean_and_std(np.array([])))


def test_results_have_one_row_per_method_and_setting():
    results = report.build_results(_runs(), 2)
    assert list(results["method"]) == ["m", "z"]
    row = results.iloc[0]
    assert row["accuracy"] == pytest.approx(0.5) and row["accuracy_std"] == pytest.approx(0.05)
    assert row["repeats"] == 2 and row["per_repeat"] == "0.450, 0.550"
    assert row["acc_a"] == pytest.approx(0.35) and row["acc_b"] == pytest.approx(0.65)


def test_metrics_keep_the_contract_and_fill_missing_settings_with_nan():
    runs = _runs().replace({"method": {"m": "fedda"}})
    study = StudyParams(methods=list(report.METRICS_METHODS))
    metrics = report.build_metrics(runs, {"source_zero_shot_accuracy": 0.9}, 2, study)
    assert metrics["acc_fedda"] == pytest.approx(0.5)
    assert metrics["std_fedda"] == pytest.approx(0.05)
    assert metrics["acc_promptfl"] is None  # not run: NaN, written as null
    assert metrics["acc_fedda_official_sgd"] is None
    assert metrics["rounds"] == 4 and metrics["clients"] == 2
    assert set(report.METRICS) <= set(metrics)


def _metrics(**over):
    base = dict(
        acc_fedda=0.50, acc_promptfl=0.47, acc_local_coop=0.48, acc_zero_shot=0.39,
        acc_fedda_no_vda=0.48, acc_fedda_no_tpd=0.52, acc_dual_prompt_vda=0.49,
        acc_dual_prompt=0.3, acc_fedda_label_skew=0.6, acc_promptfl_label_skew=0.5,
        acc_local_coop_label_skew=0.55,
    )  # fmt: skip
    return {**base, **over}


def test_claims_thresholds_at_their_edges():
    table = evaluate_claims(report.CLAIMS, _metrics(), "fedda").set_index("claim")
    assert table["holds"].to_dict() == {
        "fedda_beats_promptfl": True,  # 0.50 >= 0.47 + 0.02
        "fedda_beats_local_coop": True,  # 0.50 >= 0.48 + 0.01
        "fedda_beats_zero_shot": True,  # 0.50 >= 0.39 + 0.10 (rounding aside)
        "vda_adds_to_prompts": True,
        "tpd_no_harm": True,  # 0.50 >= 0.52 - 0.02
        "tpd_beats_concatenated": False,
        "tpd_beats_feature_level": True,
        "fedda_beats_dual_prompt": True,
        "fedda_beats_promptfl_label_skew": True,
        "zero_shot_useful": True,
    }
    worse = _metrics(
        acc_promptfl=0.485, acc_local_coop=0.495, acc_zero_shot=0.41, acc_fedda_no_vda=0.495,
        acc_fedda_no_tpd=0.53, acc_local_coop_label_skew=0.61, acc_dual_prompt=0.5,
    )  # fmt: skip
    table = evaluate_claims(report.CLAIMS, worse, "fedda").set_index("claim")
    assert not table["holds"][
        ["fedda_beats_promptfl", "fedda_beats_local_coop", "fedda_beats_zero_shot",
         "vda_adds_to_prompts", "tpd_no_harm", "fedda_beats_promptfl_label_skew",
         "fedda_beats_dual_prompt"]
    ].any()  # fmt: skip
    gates = {c.id for c in report.CLAIMS if c.gates}
    assert gates == {
        "fedda_beats_promptfl", "fedda_beats_local_coop", "fedda_beats_zero_shot",
        "vda_adds_to_prompts", "tpd_no_harm",
    }  # fmt: skip
    low = evaluate_claims(report.CLAIMS, _metrics(acc_zero_shot=0.25), "fedda")
    assert not low.set_index("claim").loc["zero_shot_useful", "holds"]


def test_measures_keep_the_order_methods_first_appear_in():
    rows = [(m, "main", 0, r, "a", 0.5) for m in ("zeta", "alpha") for r in (1, 2)]
    runs = pd.DataFrame(
        rows, columns=["method", "setting", "repeat", "round", "client", "accuracy"]
    )
    assert list(measures.client_mean_by_round(runs)["method"]) == ["zeta", "zeta", "alpha", "alpha"]
    assert list(measures.last_rounds_mean(runs, 1)["method"]) == ["zeta", "alpha"]
    assert list(measures.per_client_last_rounds(runs, 1)["method"]) == ["zeta", "alpha"]
