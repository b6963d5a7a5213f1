"""multilabel_bounds end to end in the fast environment, through a real KedroSession in a project copy."""

import pandas as pd
import pytest

from paper_pipelines.common.params import ParameterError, validate_params
from paper_pipelines.pipelines.multilabel_bounds import parameters as P
from tests.kedro_helpers import (
    block_network,
    files_under,
    latest_json,
    make_project_copy,
    run_session,
    versions_of,
)

SLUG = "multilabel_bounds"
ROOT = "data/fast"


@pytest.fixture(scope="module")
def fast_run(tmp_path_factory):
    """One fast run shared by the checks below, with sockets blocked."""
    project = make_project_copy(tmp_path_factory.mktemp(SLUG) / "project")
    with block_network() as attempts:
        run_session(project, SLUG, env="fast")
    assert attempts == [], f"the fast run tried to reach the network: {attempts}"
    return project


def _latest(project, layer, name):
    path = project / ROOT / layer / SLUG / name
    return pd.read_parquet(path / versions_of(path)[-1] / name)


def test_fast_run_writes_versioned_outputs(fast_run):
    for name in (
        "08_reporting/multilabel_bounds/metrics.json",
        "08_reporting/multilabel_bounds/results.parquet",
        "08_reporting/multilabel_bounds/claims.parquet",
        "08_reporting/multilabel_bounds/gap_vs_n_plot.png",
        "08_reporting/multilabel_bounds/gap_vs_c_plot.png",
        "08_reporting/multilabel_bounds/rademacher_plot.png",
        "07_model_output/multilabel_bounds/gap_table.parquet",
        "07_model_output/multilabel_bounds/rademacher_table.parquet",
        "07_model_output/multilabel_bounds/anchor_table.parquet",
        "07_model_output/multilabel_bounds/rates.json",
        "07_model_output/multilabel_bounds/split_index.json",
        "01_raw/multilabel_bounds/synthetic_pools.npz",
        "01_raw/multilabel_bounds/real_data_table.parquet",
        "05_model_input/multilabel_bounds/synthetic_fits.npz",
    ):
        assert len(versions_of(fast_run / ROOT / name)) == 1, name


def test_gap_table_covers_the_grid(fast_run):
    gaps = _latest(fast_run, "07_model_output", "gap_table.parquet")
    low = gaps[gaps.block == "low_d"]
    # conf/fast: n {100, 400} x c {2, 10} x losses {squared, hinge} x classes {linear, lowrank}
    assert len(low) == 2 * 2 * 2 * 2
    assert set(gaps.block) == {"low_d", "high_d", "optimistic", "multilabel", "real"}
    for m in ("surrogate", "hamming", "ranking", "auc_loss"):
        assert (gaps[f"gap_{m}"] - (gaps[f"test_{m}"] - gaps[f"train_{m}"])).abs().max() < 1e-12
    assert gaps["test_hamming"].between(0, 1).all() and gaps["test_auc_loss"].between(0, 1).all()
    # the smallest training sets fit better than they generalise
    assert (low[low.n == 100]["gap_surrogate"] > 0).all()
    real = gaps[gaps.block == "real"]
    assert set(real.c) == {2, 14} and (real.c_used <= real.c).all()


def test_metrics_keep_the_contract_and_every_claim_is_checked(fast_run):
    from paper_pipelines.pipelines.multilabel_bounds.report import CLAIMS, METRICS

    metrics = latest_json(fast_run / ROOT / "08_reporting/multilabel_bounds/metrics.json")
    assert set(METRICS) <= set(metrics)
    assert metrics["real_source"] == "yeast"
    claims = _latest(fast_run, "08_reporting", "claims.parquet")
    assert list(claims["claim"]) == [c.id for c in CLAIMS]
    assert claims["holds"].dtype == bool and list(claims["gates"]) == [c.gates for c in CLAIMS]
    # decided at fast scale: the closed-form Rademacher identities and the fit counts
    assert metrics["per_label_sqrt_n_variation"] < 0.1
    assert metrics["flattened_vs_per_label_sum_max"] < 0.1
    assert metrics["low_d_r_star_slope"] == pytest.approx(-1.0, abs=1e-6)  # r* = 2 rank / n, d < n
    assert metrics["fits"] == 32


def test_results_have_one_row_per_loss_and_anchor(fast_run):
    results = _latest(fast_run, "08_reporting", "results.parquet")
    assert list(results["method"]) == [
        "projected_adam_squared",
        "projected_adam_hinge",
        "sklearn_logistic",
        "sklearn_ridge",
        "sklearn_svc",
    ]
    rates = latest_json(fast_run / ROOT / "07_model_output/multilabel_bounds/rates.json")
    assert {"n_surrogate", "c_surrogate_lowrank", "c_auc_loss", "r_star_slope"} <= set(rates)


def test_split_index_is_nested_and_disjoint(fast_run):
    index = latest_json(fast_run / ROOT / "07_model_output/multilabel_bounds/split_index.json")
    assert index["synthetic"]["low_d"]["rows"] == "prefix"
    split = index["real"]["splits"][0]
    assert not set(split["train"]) & set(split["test"])
    assert len(split["train"]) + len(split["test"]) == 2417
    for entry in split["subsets"].values():
        for draws in entry["c"].values():
            assert all(set(d) <= set(entry["usable"]) for d in draws)


def test_a_bad_parameter_fails_before_any_node_and_writes_nothing(fast_run):
    before = files_under(fast_run / "data")
    with pytest.raises(ParameterError, match=r"multilabel_bounds\.data\.low_d\.c has \[500\]"):
        run_session(fast_run, SLUG, env="fast", runtime_params={f"{SLUG}.data.low_d.c": [2, 500]})
    new = {p for p in files_under(fast_run / "data") - before}
    assert all("metrics" not in str(p) and "gap_table" not in str(p) for p in new), new


def test_a_bad_mlp_width_fails_before_any_node(fast_run):
    before = files_under(fast_run / "data")
    with pytest.raises(ParameterError, match=r"multilabel_bounds\.model\.hidden = 0 is invalid"):
        run_session(
            fast_run, SLUG, env="fast",
            runtime_params={f"{SLUG}.model.hidden": 0, f"{SLUG}.data.low_d.models": ["mlp"]},
        )  # fmt: skip
    assert files_under(fast_run / "data") == before


def _data(**changes):
    base = P.DataParams.model_validate(
        {
            "low_d": {"n": [100, 400], "c": [2, 10], "etas": [0.0], "models": ["linear"], "n_pool": 400},
            "high_d": {"n": [50, 200], "c": [2, 4], "etas": [0.0], "models": ["linear"], "n_pool": 200},
            "optimistic": {"n": [50, 200], "c": [2, 4], "etas": [0.0], "models": ["linear"],
                           "n_pool": 200},
            "multilabel": {"n": [100, 200], "c": [2, 10], "models": ["lowrank"]},
            "real": {"n": [100, 400], "c": [2, 14]},
        }
    ).model_dump()  # fmt: skip
    for dotted, value in changes.items():
        node = base
        *parents, leaf = dotted.split(".")
        for part in parents:
            node = node[part]
        node[leaf] = value
    return base


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"low_d.c": [2, 101]}, r"low_d\.c has \[101\], above the generator's .*c_max = 100"),
        ({"low_d.n": [100, 800]}, r"low_d\.n has \[800\], above the pool .*n_pool = 400"),
        ({"low_d.Lambda": 0.0}, r"low_d\.Lambda = 0\.0 is invalid"),
        ({"low_d.etas": [0.0, 0.5]}, r"low_d\.etas\.1 = 0\.5 is invalid"),
        ({"low_d.etas": [-0.1]}, r"low_d\.etas\.0 = -0\.1 is invalid"),
        ({"low_d.models": ["tree"]}, r"low_d\.models\.0 = 'tree' is invalid"),
        ({"real.models": ["tree"]}, r"real\.models\.0 = 'tree' is invalid"),
        ({"low_d.n": [100, 100]}, r"low_d\.n = \[100, 100\] needs at least two distinct values"),
        ({"high_d.c": [2]}, r"high_d\.c = \[2\] is invalid"),
        ({"real.n": [100, 2000]}, r"real\.n has 2000, above the pool"),
        ({"real.c": [2, 15]}, r"real\.c has 15, above the 14 labels"),
    ],
)
def test_bad_data_blocks_name_the_key(changes, message):
    with pytest.raises(ParameterError, match=message):
        validate_params(P.DataParams, _data(**changes), "multilabel_bounds.data")


def test_unknown_loss_is_refused():
    with pytest.raises(ParameterError, match=r"train\.losses\.0 = 'cubic' is invalid"):
        validate_params(P.TrainParams, {"losses": ["cubic"]}, "multilabel_bounds.train")


def test_yeast_without_river_names_the_fallback(monkeypatch):
    from paper_pipelines.pipelines.multilabel_bounds import data

    monkeypatch.setattr(data, "river_available", lambda: False)
    blocks = {"data": P.DataParams.model_validate(_data())}
    with pytest.raises(ValueError, match=r"needs the `river` package.*real\.source: digits"):
        P.check_across_blocks(blocks)
    P.check_across_blocks({"data": P.DataParams.model_validate(_data(**{"real.source": "digits",
                                                                         "real.c": [2, 10]}))})  # fmt: skip


def test_evaluation_c_values_must_be_in_the_grid():
    blocks = {
        "data": P.DataParams.model_validate(_data()),
        "evaluation": P.EvaluationParams(c_hi=50, lowrank_n=[100]),
    }
    with pytest.raises(ValueError, match=r"c_lo / c_hi \[50\] are not in"):
        P.check_across_blocks(blocks)
