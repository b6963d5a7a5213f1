"""vilamp end to end in the fast environment, through a real KedroSession in a project copy."""

import copy
import functools

import pandas as pd
import pytest

from paper_pipelines.common.params import ParameterError, check_parameters
from paper_pipelines.pipeline_registry import paper_slugs
from tests.kedro_helpers import (
    block_network,
    latest_json,
    make_project_copy,
    run_session,
    versions_of,
)

SLUG = "vilamp"
METHODS = [
    "uniform",
    "relevance_topk",
    "dks_drop",
    "dks_meanpool",
    "dks_respool",
    "vilamp",
    "dense",
]


@pytest.fixture(scope="module")
def fast_run(tmp_path_factory):
    """One fast run shared by the checks below (a few seconds of pipeline time), sockets blocked."""
    project = make_project_copy(tmp_path_factory.mktemp(SLUG) / "project")
    with block_network() as attempts:
        run_session(project, SLUG, env="fast")
    assert attempts == [], f"the fast run tried to reach the network: {attempts}"
    return project


def _latest(project, relative):
    path = project / "data/fast" / relative
    return pd.read_parquet(path / versions_of(path)[-1] / path.name)


def test_fast_run_writes_versioned_outputs(fast_run):
    root = fast_run / "data/fast"
    for name in (
        "08_reporting/vilamp/metrics.json",
        "08_reporting/vilamp/results.parquet",
        "08_reporting/vilamp/claims.parquet",
        "08_reporting/vilamp/accuracy_plot.png",
        "08_reporting/vilamp/scaling_plot.png",
        "08_reporting/vilamp/llm_memory_plot.png",
        "07_model_output/vilamp/predictions_table.parquet",
        "07_model_output/vilamp/scaling_table.parquet",
        "07_model_output/vilamp/train_videos.json",
        "07_model_output/vilamp/eval_videos.json",
        "07_model_output/vilamp/caption_pairs_table.parquet",
        "06_models/vilamp/selector_model.pt",
        "06_models/vilamp/reader_model.pt",
    ):
        assert len(versions_of(root / name)) == 1, name


def test_metrics_keep_the_contract(fast_run):
    from paper_pipelines.pipelines.vilamp.report import METRICS

    metrics = latest_json(fast_run / "data/fast/08_reporting/vilamp/metrics.json")
    assert set(METRICS) <= set(metrics)
    assert metrics["scale_frames"] == 512  # conf/fast
    # the projection is analytic: the same numbers at every scale of the run
    assert 7_100 < metrics["dense_frames_to_fill_gpu"] < 7_150
    assert metrics["projected_memory_ratio_dense_over_vilamp_10k"] > 50
    assert 0 <= metrics["needle_recall_dks_10k"] <= 1


def test_results_have_one_row_per_method(fast_run):
    results = _latest(fast_run, "08_reporting/vilamp/results.parquet")
    assert list(results["method"]) == METHODS


def test_every_method_sees_the_same_videos_with_the_promised_tokens(fast_run):
    predictions = _latest(fast_run, "07_model_output/vilamp/predictions_table.parquet")
    short = predictions[predictions.n_frames == 128]
    counts = short.groupby(["task", "question", "method"]).size().unstack()
    assert (counts.fillna(0) == counts.iloc[:, :1].values).all().all()
    m = 16
    for row in short.itertuples():
        k = row.keyframe_budget
        expected = {
            "uniform": k * m + 1,
            "relevance_topk": k * m + 1,
            "dks_drop": k * m + 1,
            "dks_meanpool": k * m + 128 - k + 1,
            "dks_respool": k * m + 128 - k + 1,
            "vilamp": k * m + 128 - k + 1,
            "dense": 128 * m + 1,
        }[row.method]
        assert row.visual_tokens == expected, row
    assert set(predictions[predictions.n_frames == 512].method) == {"uniform", "dks_drop", "vilamp"}


def test_every_claim_is_checked(fast_run):
    from paper_pipelines.pipelines.vilamp.report import CLAIMS

    claims = _latest(fast_run, "08_reporting/vilamp/claims.parquet")
    assert list(claims["claim"]) == [c.id for c in CLAIMS]
    assert claims["holds"].dtype == bool
    assert claims.set_index("claim").loc["projected_llm_memory", "holds"]


@functools.cache
def _loaded_fast_params():
    from kedro.config import OmegaConfigLoader

    from tests.kedro_helpers import PROJECT_ROOT

    loader = OmegaConfigLoader(
        str(PROJECT_ROOT / "conf"), base_env="base", default_run_env="fast",
        merge_strategy={"parameters": "soft"},
    )  # fmt: skip
    return loader["parameters"][SLUG]


def _fast_params():
    """A fresh copy of the fast parameters (the config is loaded once per module: ~0.5 s a load)."""
    return copy.deepcopy(_loaded_fast_params())


@pytest.mark.parametrize(
    ("block", "key", "value", "named"),
    [
        ("dks", "max_keyframes", 0, "vilamp.dks.max_keyframes"),
        ("dks", "tau", 1.5, "vilamp.dks.tau"),
        ("data", "patch_size", 7, "vilamp.data.patch_size"),
        ("data", "train_frames", [0, 10], "vilamp.data.train_frames"),
        ("evaluation", "n_frames", [0, 128], "vilamp.evaluation.n_frames"),
        ("evaluation", "methods", ["vilamp", "llama_vid"], "vilamp.evaluation.methods"),
        ("evaluation", "tasks", ["captioning"], "vilamp.evaluation.tasks"),
        ("dks", "max_keyframes", 200, "vilamp.dks.max_keyframes"),
    ],
)
def test_bad_input_is_refused_naming_the_key(block, key, value, named):
    from paper_pipelines.pipelines.vilamp import create_pipeline

    params = _fast_params()
    params[block][key] = value
    with pytest.raises(ParameterError) as failure:
        check_parameters({SLUG: params}, [create_pipeline()], paper_slugs())
    assert named in str(failure.value)
