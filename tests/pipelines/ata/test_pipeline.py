"""End-to-end: the ata pipeline in the fast environment through a real KedroSession."""

import pandas as pd
import pytest

from paper_pipelines.common.params import ParameterError
from tests.kedro_helpers import files_under, latest_json, run_session, versions_of

CONTRACT = (
    "worker_time_ratio_gta_over_ata_emp",
    "worker_time_ratio_uta_over_ata_emp",
    "runtime_ratio_ata_emp_over_fta",
    "runtime_ratio_ata_over_fta",
    "proxy_ratio_last20_ata_emp",
    "final_loss_over_initial",
)


def test_fast_run(project_copy):
    run_session(project_copy, "ata", env="fast")
    out = project_copy / "data/fast"
    metrics = latest_json(out / "08_reporting/ata/metrics.json")
    for key in CONTRACT:
        assert isinstance(metrics[key], float), key
    # Fast-scale acceptance checks (6): ordering, sandwich, learning, optimisation.
    assert metrics["runtime_ratio_ata_emp_over_fta"] >= 1.0
    assert metrics["runtime_ratio_gta_over_fta"] < 1.0 < metrics["runtime_ratio_uta_over_fta"]
    assert metrics["sandwich_holds"] is True
    assert metrics["proxy_ratio_last20_ata_emp"] < metrics["proxy_ratio_first20_ata_emp"]
    assert metrics["proxy_ratio_last20_ata"] < metrics["proxy_ratio_first20_ata"]
    assert 0 < metrics["final_loss_over_initial"] < 1
    results_dir = out / "08_reporting/ata/results.parquet"
    results = pd.read_parquet(results_dir / versions_of(results_dir)[-1] / "results.parquet")
    assert set(results["policy"]) == {"FTA", "GTA", "UTA", "ATA", "ATA_EMP"}
    for name in (
        "loss_vs_runtime_plot.png",
        "loss_vs_worker_time_plot.png",
        "proxy_regret_plot.png",
    ):
        assert len(versions_of(out / "08_reporting/ata" / name)) == 1
    for path in (
        "07_model_output/ata/round_log_table.parquet",
        "07_model_output/ata/loss_trajectory_table.parquet",
        "07_model_output/ata/worker_profiles_table.parquet",
        "06_models/ata/trained_model.pt",
    ):
        assert len(versions_of(out / path)) == 1, path
    log_dir = out / "07_model_output/ata/round_log_table.parquet"
    log = pd.read_parquet(log_dir / versions_of(log_dir)[-1] / "round_log_table.parquet")
    assert len(log) == 5 * 300

    # Determinism: the same seeds give the same metrics.
    run_session(project_copy, "ata", env="fast")
    assert len(versions_of(out / "08_reporting/ata/metrics.json")) == 2
    assert latest_json(out / "08_reporting/ata/metrics.json") == metrics


@pytest.mark.parametrize(
    ("key", "bad", "message"),
    [
        ("workers.n", 0, "ata.workers.n = 0"),
        ("workers.scale", -1.0, "ata.workers.scale = -1.0"),
        ("workers.means", [1.0, 0.0], "every mean task time must be > 0"),
        ("workers.family", "gamma", "ata.workers.family = 'gamma'"),
        ("sim.policies", ["ATA", "OPT"], "ata.sim.policies.1 = 'OPT'"),
    ],
)
def test_bad_parameter_fails_and_writes_nothing(project_copy, key, bad, message):
    before = files_under(project_copy / "data")
    block, name = key.split(".")
    # Nested: KedroSession.create keeps a dotted runtime key as one flat name.
    with pytest.raises(ParameterError, match=message):
        run_session(project_copy, "ata", env="fast", runtime_params={"ata": {block: {name: bad}}})
    written = files_under(project_copy / "data") - before
    assert not [p for p in written if "run_record" not in str(p)]
