"""fedda end to end in the fast environment, through a real KedroSession in a project copy."""

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

SLUG = "fedda"


@pytest.fixture(scope="module")
def fast_run(tmp_path_factory):
    """One fast run shared by the checks below, with sockets blocked (the MiniLM is in its wheel)."""
    project = make_project_copy(tmp_path_factory.mktemp(SLUG) / "project")
    with block_network() as attempts:
        run_session(project, SLUG, env="fast")
    assert attempts == [], f"the fast run tried to reach the network: {attempts}"
    return project


def _latest(path):
    return pd.read_parquet(path / versions_of(path)[-1] / path.name)


def test_fast_run_writes_versioned_outputs(fast_run):
    root = fast_run / "data/fast"
    for name in (
        "08_reporting/fedda/metrics.json",
        "08_reporting/fedda/results.parquet",
        "08_reporting/fedda/claims.parquet",
        "08_reporting/fedda/accuracy_curves_plot.png",
        "08_reporting/fedda/client_accuracy_plot.png",
        "08_reporting/fedda/gate_weights_plot.png",
        "07_model_output/fedda/runs_table.parquet",
        "07_model_output/fedda/official_sgd_runs_table.parquet",
        "07_model_output/fedda/label_skew_runs_table.parquet",
        "07_model_output/fedda/partition_stats_table.parquet",
        "07_model_output/fedda/tower_report.json",
        "06_models/fedda/image_tower_model.pt",
        "05_model_input/fedda/client_data.npz",
        "05_model_input/fedda/client_features.npz",
        "05_model_input/fedda/final_states.npz",
    ):
        assert len(versions_of(root / name)) == 1, name


def test_runs_cover_every_method_round_and_client(fast_run):
    runs = _latest(fast_run / "data/fast/07_model_output/fedda/runs_table.parquet")
    assert set(runs["method"]) == {
        "zero_shot", "local_coop", "promptfl", "dual_prompt", "dual_prompt_vda",
        "fedda_no_tpd", "fedda_no_vda", "fedda",
    }  # fmt: skip
    assert len(runs) == 8 * 2 * 2  # methods x rounds x clients (conf/fast)
    assert set(runs["client"]) == {"photo", "sketch"}
    assert runs["accuracy"].between(0, 1).all()
    fedda = runs[runs["method"] == "fedda"]
    gates = fedda[["gate_raw", "gate_specific", "gate_shared"]].sum(axis=1)
    assert ((gates - 1).abs() < 1e-5).all()
    skew = _latest(fast_run / "data/fast/07_model_output/fedda/label_skew_runs_table.parquet")
    assert set(skew["method"]) == {"promptfl", "fedda"} and set(skew["setting"]) == {"label_skew"}


def test_metrics_results_and_claims(fast_run):
    from paper_pipelines.pipelines.fedda.report import CLAIMS, METRICS

    root = fast_run / "data/fast/08_reporting/fedda"
    metrics = latest_json(root / "metrics.json")
    assert set(METRICS) <= set(metrics)
    assert all(0 <= metrics[k] <= 1 for k in METRICS)
    assert metrics["rounds"] == 2 and metrics["clients"] == 2 and metrics["repeats"] == 1
    assert metrics["acc_fedda_official_sgd"] is not None
    results = _latest(root / "results.parquet")
    main = results[results["setting"] == "main"].set_index("method")
    assert main.loc["fedda", "accuracy"] == pytest.approx(metrics["acc_fedda"])
    assert {"acc_photo", "acc_sketch"} <= set(results.columns)
    assert set(results["setting"]) == {"main", "official_sgd", "label_skew"}
    claims = _latest(root / "claims.parquet")
    assert list(claims["claim"]) == [c.id for c in CLAIMS]
    assert claims["holds"].dtype == bool and list(claims["gates"]) == [c.gates for c in CLAIMS]


def test_final_states_keep_personal_parts_local(fast_run):
    import torch

    from paper_pipelines.datasets import ArrayTreeDataset

    path = fast_run / "data/fast/05_model_input/fedda/final_states.npz"
    from kedro.io.core import Version

    states = ArrayTreeDataset(filepath=str(path), version=Version(None, None)).load()
    fedda = states["fedda@main_0"]
    photo, sketch = fedda["photo"], fedda["sketch"]
    assert torch.equal(torch.as_tensor(photo["global_ctx"]), torch.as_tensor(sketch["global_ctx"]))
    assert torch.equal(
        torch.as_tensor(photo["shared_adapter.w1"]), torch.as_tensor(sketch["shared_adapter.w1"])
    )
    for key in ("personal_ctx", "specific_adapter.w2", "gate.w"):
        assert not torch.equal(torch.as_tensor(photo[key]), torch.as_tensor(sketch[key]))
    assert set(states) == {f"{m}@main_0" for m in (
        "zero_shot", "local_coop", "promptfl", "dual_prompt", "dual_prompt_vda",
        "fedda_no_tpd", "fedda_no_vda", "fedda",
    )}  # fmt: skip


@pytest.mark.parametrize(
    ("block", "model", "value", "message"),
    [
        ("study", "StudyParams", {"methods": ["fedda", "fedprox"]}, r"fedda\.study\.methods\.1"),
        (
            "data",
            "DataParams",
            {"domains": ["photo", "cartoon"]},
            r"fedda\.data\.domains: \['cartoon'\] cannot be rendered",
        ),
        ("prompt", "PromptParams", {"n_ctx": 0}, r"fedda\.prompt\.n_ctx = 0"),
        ("backbone", "BackboneParams", {"text_layers": 7}, r"fedda\.backbone\.text_layers = 7"),
        ("backbone", "BackboneParams", {"text_layers": 0}, r"fedda\.backbone\.text_layers = 0"),
        ("data", "DataParams", {"beta": -0.5}, r"fedda\.data\.beta = -0\.5"),
    ],
)
def test_bad_values_name_the_key(block, model, value, message):
    """The issue's bad inputs, each refused by its block's model with the key in the message (the
    generic tests/test_bad_input.py shows that such an error stops a run before anything is written)."""
    from paper_pipelines.common.params import validate_params
    from paper_pipelines.pipelines.fedda import parameters

    with pytest.raises(ParameterError, match=message):
        validate_params(getattr(parameters, model), value, f"fedda.{block}")


@pytest.mark.parametrize(
    ("override", "message"),
    [
        (
            {"fedda.data.n_source_digits": 1785, "fedda.data.train_frac": 0.95},
            r"client 'photo' would get \d+ training and 0 test",
        ),
        ({"fedda.study.methods": ["fedda"]}, r"metrics contract.*'zero_shot'"),
    ],
)
def test_bad_input_fails_clearly_and_writes_nothing(fast_run, override, message):
    before = {p: p.stat().st_mtime_ns for p in files_under(fast_run / "data")}
    with pytest.raises(Exception, match=message) as info:
        run_session(fast_run, SLUG, env="fast", runtime_params=override)
    assert isinstance(info.value, (ParameterError, ValueError))
    assert "nothing was run or written" in str(info.value)
    assert all(p.stat().st_mtime_ns == t for p, t in before.items())
    new = {p.relative_to(fast_run) for p in files_under(fast_run / "data") - set(before)}
    assert all("fedda" not in str(p) for p in new), new
