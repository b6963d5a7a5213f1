"""End-to-end `tca` runs in the fast environment: contract, fast-scale acceptance checks, determinism,
and bad parameters that fail before anything is written."""

from __future__ import annotations

import json
import time

import pandas as pd
import pytest

from paper_pipelines.common.claims import claim_holds
from paper_pipelines.common.params import ParameterError
from paper_pipelines.pipelines.tca.report import CLAIMS, METRICS
from tests.kedro_helpers import (
    fast_seed_params,
    files_under,
    latest_json,
    run_session,
    versions_of,
)

CONTRACT = (
    "acc_source",
    "acc_linear_tca",
    "acc_mean_only",
    "acc_tent",
    "time_ratio_tca_over_tent",
    "corruptions_improved",
    "corruptions_not_worse",
    "gain_linear_tca_over_best_tta",
)


def test_contract_is_the_report_constant():
    assert METRICS == CONTRACT


FAST_RUN_SECONDS: list[float] = []  # wall seconds of the fixture's first fast run


@pytest.fixture(scope="module")
def fast_runs(tmp_path_factory):
    """Two fast runs of the same configuration in one isolated project copy (at the default seed, or
    at PAPER_PIPELINES_FAST_SEED: tests.kedro_helpers.fast_seed_params)."""
    from tests.kedro_helpers import make_project_copy

    project = make_project_copy(tmp_path_factory.mktemp("tca") / "project")
    start = time.perf_counter()
    run_session(project, "tca", env="fast", runtime_params=fast_seed_params("tca"))
    FAST_RUN_SECONDS.append(time.perf_counter() - start)
    first = latest_json(project / "data/fast/08_reporting/tca/metrics.json")
    run_session(project, "tca", env="fast", runtime_params=fast_seed_params("tca"))
    second = latest_json(project / "data/fast/08_reporting/tca/metrics.json")
    return project, first, second


def test_fast_run_under_a_minute(fast_runs):
    """Spec check 7: the fast configuration finishes in under 60 s (its tables: test_contract_and_outputs)."""
    assert FAST_RUN_SECONDS[-1] < 60.0, f"the fast run took {FAST_RUN_SECONDS[-1]:.1f} s"


def test_contract_and_outputs(fast_runs):
    project, metrics, _ = fast_runs
    for key in CONTRACT:
        assert metrics[key] is not None, key
    for key in ("acc_source", "acc_linear_tca", "acc_mean_only", "acc_tent"):
        assert 0.0 <= metrics[key] <= 100.0
    assert metrics["severity"] == 3 and metrics["n_corruptions"] == 3
    assert 0 <= metrics["corruptions_improved"] <= 3
    reporting = project / "data/fast/08_reporting/tca"
    for name in (
        "metrics.json",
        "results.parquet",
        "accuracy_plot.png",
        "severity_plot.png",
        "cost_plot.png",
        "claims.parquet",
    ):
        assert len(versions_of(reporting / name)) == 2, name  # versioned: one folder per run
    for path in (
        "06_models/tca/source_model.pt",
        "05_model_input/tca/corrupted_sets.npz",
        "07_model_output/tca/accuracy_table.parquet",
        "07_model_output/tca/cost_table.parquet",
        "07_model_output/tca/forgetting.json",
    ):
        assert versions_of(project / "data/fast" / path), path
    table = project / "data/fast/07_model_output/tca/accuracy_table.parquet"
    acc = pd.read_parquet(table / versions_of(table)[-1] / table.name)
    expected = {
        "source",
        "bn",
        "tent",
        "t3a",
        "source+tca",
        "source+tca_adam",
        "source+mean_only",
        "bn+tca",
        "tent+tca",
        "t3a+tca",
    }
    assert set(acc["method"]) == expected
    assert len(acc) == 3 * len(expected)  # 3 corruptions x 1 severity x methods


def test_fast_scale_acceptance_checks(fast_runs):
    """Spec checks that hold at fast scale (3 corruptions, 4 source epochs) at seeds 0-4
    (benchmarks/fast_acceptance_seeds.py); the rest are in benchmarks/tca_acceptance.py on the default
    run. Check 2 (LinearTCA >= mean-only + 1.0 pt) is not here: at fast scale it fails at seed 2
    (+0.83 pt; 0.83 to 3.22 over seeds 0-4), so its spread is on docs/papers/tca.md."""
    _, m, _ = fast_runs
    # 1 (fast form): LinearTCA improves on the source model without any backpropagation.
    assert m["acc_linear_tca"] >= m["acc_source"] + 1.5
    # 4 (time): the TCA step costs a small fraction of Tent's adaptation.
    assert m["time_ratio_tca_over_tent"] <= 0.10
    assert m["tca_peak_bytes"] < m["tent_peak_bytes"]
    # 5: no forgetting - bit-identical weights, while continual Tent changes the clean accuracy.
    assert m["weights_unchanged_by_tca"] is True
    assert m["clean_acc_after_linear_tca"] == m["clean_acc_source"]
    assert m["clean_acc_after_continual_tent"] != m["clean_acc_source"]


def test_claims_table(fast_runs):
    """One row per CLAIMS entry with a bool verdict, equal to the condition on the run's metrics;
    only the structural claim (weights untouched) must hold at fast scale."""
    project, metrics, _ = fast_runs
    path = project / "data/fast/08_reporting/tca/claims.parquet"
    assert len(versions_of(path)) == 2  # versioned: one per run
    claims = pd.read_parquet(path / versions_of(path)[-1] / path.name)
    assert list(claims["claim"]) == [c.id for c in CLAIMS]
    assert claims["holds"].dtype == bool
    held = dict(zip(claims["claim"], claims["holds"], strict=True))
    for claim in CLAIMS:
        # every key a claim reads is written, and the table's verdict is the condition's
        assert set(claim.metric_keys) <= set(metrics), claim.id
        assert held[claim.id] == claim_holds(claim, metrics, "tca"), claim.id
    assert held["no_forgetting"]
    assert list(claims["gates"]) == [c.gates for c in CLAIMS]


def test_same_seed_same_metrics(fast_runs):
    _, first, second = fast_runs
    timing = {"time_ratio_tca_over_tent", "time_ratio_linear_tca_total_over_tent"}
    assert {k: v for k, v in first.items() if k not in timing} == {
        k: v for k, v in second.items() if k not in timing
    }


@pytest.mark.parametrize(
    ("block", "key", "bad", "message"),
    [
        ("tta", "batch_size", 4, r"tca.tta.batch_size = 4 is smaller than the number of classes"),
        (
            "data",
            "corruptions",
            ["gaussian_noise", "snowstorm"],
            r"tca.data.corruptions.*snowstorm",
        ),
        ("data", "corruptions", ["snow"], r"Digits-C does not generate"),
        ("linear_tca", "w_solver", "svd", r"tca.linear_tca.w_solver = 'svd'"),
        ("linear_tca", "filter_k", 0, r"tca.linear_tca.filter_k = 0"),
        ("evaluation", "metric_severity", 5, r"tca.evaluation.metric_severity = 5 must be one of"),
    ],
)
def test_bad_parameters_fail_before_writing(project_copy, block, key, bad, message):
    before = files_under(project_copy / "data")
    with pytest.raises(ParameterError, match=message):
        run_session(project_copy, "tca", env="fast", runtime_params={"tca": {block: {key: bad}}})
    written = files_under(project_copy / "data") - before
    assert not [p for p in written if "run_record" not in str(p)], written


def test_forgetting_record(fast_runs):
    project, _, _ = fast_runs
    path = project / "data/fast/07_model_output/tca/forgetting.json"
    record = json.loads((path / versions_of(path)[-1] / "forgetting.json").read_text())
    assert record["weights_unchanged_by_tca"] is True
    assert len(record["fingerprint"]) == 64
    assert record["continual_tent_domains"] == ["gaussian_noise@3", "defocus_blur@3", "contrast@3"]
