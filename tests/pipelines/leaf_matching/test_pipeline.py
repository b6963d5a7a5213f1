"""leaf_matching end to end in the fast environment, through a real KedroSession in a project copy."""

import functools

import pandas as pd
import pytest

from paper_pipelines.common.params import ParameterError
from tests.kedro_helpers import (
    block_network,
    files_under,
    latest_json,
    make_project_copy,
    run_session,
    versions_of,
)

SLUG = "leaf_matching"
ROOT = "data/fast"


@pytest.fixture(scope="module")
def fast_run(tmp_path_factory):
    """One fast run shared by the checks below (a few seconds of pipeline time), sockets blocked."""
    project = make_project_copy(tmp_path_factory.mktemp(SLUG) / "project")
    with block_network() as attempts:
        run_session(project, SLUG, env="fast")
    assert attempts == [], f"the fast run tried to reach the network: {attempts}"
    return project


def _latest(project, relative):
    path = project / ROOT / relative
    return pd.read_parquet(path / versions_of(path)[-1] / path.name)


def test_fast_run_writes_versioned_outputs(fast_run):
    root = fast_run / ROOT
    for name in (
        "08_reporting/leaf_matching/metrics.json",
        "08_reporting/leaf_matching/results.parquet",
        "08_reporting/leaf_matching/claims.parquet",
        "08_reporting/leaf_matching/data_efficiency_plot.png",
        "08_reporting/leaf_matching/scaling_plot.png",
        "01_raw/leaf_matching/hierarchy_edges.parquet",
        "01_raw/leaf_matching/real_edges.parquet",
        "01_raw/leaf_matching/scaling_graphs.parquet",
        "05_model_input/leaf_matching/link_splits.npz",
        "05_model_input/leaf_matching/leaf_coordinates.npz",
        "05_model_input/leaf_matching/tuned_coordinates.npz",
        "05_model_input/leaf_matching/baseline_scores.npz",
        "07_model_output/leaf_matching/training_log_table.parquet",
        "07_model_output/leaf_matching/link_metrics_table.parquet",
        "07_model_output/leaf_matching/tuning_table.parquet",
        "07_model_output/leaf_matching/scaling_table.parquet",
    ):
        assert len(versions_of(root / name)) == 1, name


def test_results_cover_every_method_study_and_mu(fast_run):
    results = _latest(fast_run, "08_reporting/leaf_matching/results.parquet")
    hierarchy = results[results.study == "hierarchy"]
    assert sorted(hierarchy.mu.unique()) == [0.1, 0.3, 0.6]
    expected = {
        "leaf_matching_T8", "leaf_matching_T16", "leaf_matching_T16_tuned", "euclidean_d8",
        "euclidean_d16", "euclidean_d32", "poincare_d8", "deepwalk", "gae",
        "preferential_attachment", "adamic_adar",
    }  # fmt: skip
    for mu in (0.1, 0.3, 0.6):
        assert set(hierarchy[hierarchy.mu == mu].method) == expected
    real = results[results.study == "real"]
    assert set(real.mu) == {0.3} and "leaf_matching_T4" in set(real.method)
    assert (
        results[["auc", "ap", "f1", "mrr", "hits@50"]].apply(lambda c: c.between(0, 1)).all().all()
    )
    # more observed links, more training edges; fixed negatives per positive
    assert (results.n_test_neg == 5 * results.n_test_pos).all()


def test_metrics_keep_the_contract_and_every_claim_is_checked(fast_run):
    from paper_pipelines.pipelines.leaf_matching.report import CLAIMS, METRICS

    metrics = latest_json(fast_run / ROOT / "08_reporting/leaf_matching/metrics.json")
    assert set(METRICS) <= set(metrics)
    assert all(metrics[k] is not None for k in METRICS)
    claims = _latest(fast_run, "08_reporting/leaf_matching/claims.parquet")
    assert list(claims["claim"]) == [c.id for c in CLAIMS]
    assert claims["holds"].dtype == bool and list(claims["gates"]) == [c.gates for c in CLAIMS]
    assert claims.gates.sum() == 3


def test_leaves_are_the_model_and_tuning_selects_one_pair_per_split(fast_run):
    from paper_pipelines.datasets import ArrayTreeDataset

    path = fast_run / ROOT / "05_model_input/leaf_matching/leaf_coordinates.npz"
    fits = ArrayTreeDataset(filepath=str(path / versions_of(path)[-1] / path.name)).load()
    fit = fits["hierarchy/mu=0.3/leaf_matching_T8"]
    assert fit["leaves"].shape[1] == 8 and fit["leaves"].max() < 2**8
    tuning = _latest(fast_run, "07_model_output/leaf_matching/tuning_table.parquet")
    assert len(tuning) == 3 * 2 and tuning.groupby("split").selected.sum().eq(1).all()
    log = _latest(fast_run, "07_model_output/leaf_matching/training_log_table.parquet")
    assert set(log.epoch) == {0, 1, 2, 3} or set(log.epoch) >= {0, 1, 2}


def test_same_seed_same_metrics(fast_run, tmp_path):
    other = make_project_copy(tmp_path / "again")
    run_session(other, SLUG, env="fast")
    first = latest_json(fast_run / ROOT / "08_reporting/leaf_matching/metrics.json")
    second = latest_json(other / ROOT / "08_reporting/leaf_matching/metrics.json")
    drop = ("scaling_time_per_edge_ratio",)  # a timing
    assert {k: v for k, v in first.items() if k not in drop} == {
        k: v for k, v in second.items() if k not in drop
    }


@functools.cache
def _fast_parameters() -> dict:
    """leaf_matching's parameters as the fast environment resolves them (base soft-merged with fast)."""
    from kedro.config import OmegaConfigLoader

    from tests.kedro_helpers import PROJECT_ROOT

    loader = OmegaConfigLoader(
        str(PROJECT_ROOT / "conf"),
        base_env="base",
        default_run_env="fast",
        merge_strategy={"parameters": "soft"},
    )
    return loader["parameters"][SLUG]


PARAMETER_CASES = [
    ({"model.real.height": 0}, r"leaf_matching\.model\.real\.height"),
    ({"model.hierarchy.height": 40}, r"leaf_matching\.model\.hierarchy\.height"),
    ({"model.real.trees": [0]}, r"leaf_matching\.model\.real\.trees\.0"),
    ({"split.hierarchy_mu": [0.3, 1.0]}, r"leaf_matching\.split\.hierarchy_mu\.1"),
    ({"split.real_mu": [0.0]}, r"leaf_matching\.split\.real_mu\.0"),
    ({"data.real.source": "cora"}, r"leaf_matching\.data\.real\.source"),
    ({"baselines.methods": ["seal"]}, r"leaf_matching\.baselines\.methods\.0"),
    ({"model.hierarchy.alpha": 0}, r"leaf_matching\.model\.hierarchy\.alpha"),
    ({"model.real.gamma": -1}, r"leaf_matching\.model\.real\.gamma"),
    ({"evaluation.matched_dim": 5}, r"leaf_matching\.evaluation\.matched_dim"),
    ({"data.hierarchy.levels": 9}, r"2\^levels = 512 HSBM blocks"),
]


@pytest.mark.parametrize(("override", "message"), PARAMETER_CASES)
def test_bad_parameter_is_refused_before_any_node(override, message):
    """The check the project context runs before the first node (tests/test_bad_input.py's way)."""
    import copy

    from paper_pipelines.common.params import check_parameters
    from paper_pipelines.pipeline_registry import paper_slugs
    from paper_pipelines.pipelines.leaf_matching import create_pipeline

    params = {SLUG: copy.deepcopy(_fast_parameters())}
    for key, value in override.items():
        *parents, leaf = key.split(".")
        node = params[SLUG]
        for part in parents:
            node = node[part]
        node[leaf] = value
    with pytest.raises(ParameterError, match=message):
        check_parameters(params, [create_pipeline()], paper_slugs())


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ({"data.real.source": "user_edges"}, r"leaf_matching\.user_edges"),
        ({"data.hierarchy.mean_degree": 1e-9}, r"data\.hierarchy has no edges"),
        ({"split.real_mu": [0.001]}, r"leaf_matching\.split\.real_mu \[0\.001\]"),
    ],
)
def test_unusable_graph_fails_in_the_first_node(override, message):
    from paper_pipelines.pipelines.leaf_matching import nodes
    from paper_pipelines.pipelines.leaf_matching.parameters import DataParams, SplitParams

    params = _fast_parameters()
    blocks = {"data": dict(params["data"]), "split": dict(params["split"])}
    for key, value in override.items():
        block, *path = key.split(".")
        node = blocks[block]
        for part in path[:-1]:
            node[part] = dict(node[part])
            node = node[part]
        node[path[-1]] = value
    data, split = DataParams(**blocks["data"]), SplitParams(**blocks["split"])
    with pytest.raises(ValueError, match=message):
        nodes.load_graphs(data, split, 0, None)


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ({"leaf_matching.model.real.height": 0}, r"leaf_matching\.model\.real\.height"),
        ({"leaf_matching.data.hierarchy.mean_degree": 1e-9}, r"data\.hierarchy has no edges"),
    ],
)
def test_bad_input_in_a_session_writes_nothing(fast_run, override, message):
    before = {p: p.stat().st_mtime_ns for p in files_under(fast_run / "data")}
    with pytest.raises(Exception, match=message) as info:
        run_session(fast_run, SLUG, env="fast", runtime_params=override)
    assert isinstance(info.value, (ParameterError, ValueError))
    assert all(p.stat().st_mtime_ns == t for p, t in before.items())
    new = {p.relative_to(fast_run) for p in files_under(fast_run / "data") - set(before)}
    assert all("09_tracking" in str(p) for p in new), new
