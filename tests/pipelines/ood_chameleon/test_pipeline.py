"""ood_chameleon end to end in the fast environment, through a real KedroSession in a project copy."""

import pandas as pd
import pytest

from paper_pipelines.common.params import ParameterError
from paper_pipelines.datasets import ArrayTreeDataset
from tests.kedro_helpers import (
    block_network,
    files_under,
    latest_json,
    make_project_copy,
    run_session,
    versions_of,
)

SLUG = "ood_chameleon"
CONTRACT = {
    "wg_err_chameleon",
    "wg_err_random",
    "wg_err_erm",
    "soft01_acc",
    "transfer_wg_err_chameleon",
    "transfer_wg_err_best_fixed",
    "transfer_gap_closure",
}


@pytest.fixture(scope="module")
def fast_run(tmp_path_factory):
    """One fast run shared by the checks below (a few seconds of pipeline time), sockets blocked."""
    project = make_project_copy(tmp_path_factory.mktemp(SLUG) / "project")
    with block_network() as attempts:
        run_session(project, SLUG, env="fast")
    assert attempts == [], f"the fast run tried to reach the network: {attempts}"
    return project


def _latest(fast_run, name):
    path = next((fast_run / "data/fast").glob(f"*/{SLUG}/{name}"))
    return path / versions_of(path)[-1] / path.name


def _parquet(fast_run, name):
    return pd.read_parquet(_latest(fast_run, name))


def test_fast_run_writes_versioned_outputs(fast_run):
    for name in (
        "metrics.json", "results.parquet", "claims.parquet", "selection_table.parquet",
        "selection_error_plot.png", "win_rate_plot.png", "tree_plot.png", "task_grid_table.parquet",
        "task_index.npz", "descriptors_table.parquet", "algorithm_results_table.parquet",
        "meta_dataset_table.parquet", "selectors.pkl", "tree_rules.txt",
    ):  # fmt: skip
        path = next((fast_run / "data/fast").glob(f"*/{SLUG}/{name}"))
        assert len(versions_of(path)) == 1, name


def test_zoo_results_cover_every_task_and_algorithm(fast_run):
    grid = _parquet(fast_run, "task_grid_table.parquet")
    zoo = _parquet(fast_run, "algorithm_results_table.parquet")
    assert len(grid) == 24  # 8 triples x 1 size x 3 sources (conf/fast)
    assert len(zoo) == 5 * len(grid)
    assert set(zoo.algorithm) == {"ERM", "GroupDRO", "oversample", "remax-margin", "undersample"}
    assert zoo.wga_te_err.between(0, 1).all() and (zoo.wga_te_err >= zoo.avg_te_err - 1e-9).all()
    assert (zoo.steps <= 150).all()


def test_task_index_stores_pool_indices_not_arrays(fast_run):
    records = ArrayTreeDataset(filepath=str(_latest(fast_run, "task_index.npz"))).load()
    digits = [r for r in records if r["source"].startswith("digits")]
    assert digits and all(len(r["idx_tr"]) == r["n"] for r in digits)
    assert not any("x_tr" in r for r in records)


def test_meta_dataset_marks_winners_within_the_margin(fast_run):
    meta = _parquet(fast_run, "meta_dataset_table.parquet")
    algs = ["ERM", "GroupDRO", "oversample", "remax-margin", "undersample"]
    errors = meta[[f"err_{a}" for a in algs]].to_numpy()
    winners = meta[[f"win_{a}" for a in algs]].to_numpy()
    assert ((errors <= errors.min(1, keepdims=True) + 0.05 + 1e-9) == winners.astype(bool)).all()
    assert {"c_intra", "a_intra", "sc_", "a_inter_n"} <= set(meta.columns)


def test_results_and_metrics_keep_the_contract(fast_run):
    from paper_pipelines.pipelines.ood_chameleon.report import CLAIMS, METRICS

    metrics = latest_json(fast_run / f"data/fast/08_reporting/{SLUG}/metrics.json")
    assert set(METRICS) <= set(metrics) and set(metrics) >= CONTRACT
    results = _parquet(fast_run, "results.parquet").set_index("method")
    assert {"chameleon", "ERM", "random", "global_best", "oracle", "chameleon_tree"} <= set(
        results.index
    )
    assert results.loc["chameleon", "random_split_wg_err"] == pytest.approx(
        metrics["wg_err_chameleon"]
    )
    assert (
        results.loc["oracle", "transfer_parity_wg_err"]
        <= results.loc["random", "transfer_parity_wg_err"]
    )
    fixed = results.loc[["ERM", "GroupDRO", "oversample", "remax-margin", "undersample"]]
    assert metrics["transfer_wg_err_best_fixed"] == pytest.approx(
        fixed.transfer_parity_wg_err.min()
    )
    claims = _parquet(fast_run, "claims.parquet")
    assert list(claims.claim) == [c.id for c in CLAIMS]
    assert claims.holds.dtype == bool and list(claims.gates) == [c.gates for c in CLAIMS]


def test_tree_rules_are_saved_as_text(fast_run):
    text = _latest(fast_run, "tree_rules.txt").read_text()
    assert text.startswith("# tree fit for transfer_parity") and "|--- " in text
    assert "winners: " in text


def test_same_seed_same_metrics(fast_run, tmp_path):
    other = make_project_copy(tmp_path / "project")
    run_session(other, SLUG, env="fast")
    first = latest_json(fast_run / f"data/fast/08_reporting/{SLUG}/metrics.json")
    second = latest_json(other / f"data/fast/08_reporting/{SLUG}/metrics.json")
    first.pop("zoo_seconds"), second.pop("zoo_seconds")
    assert first == second


@pytest.mark.parametrize(
    ("override", "message"),
    [
        (
            {f"{SLUG}.shifts.extra_triples": [[0.2, 0.2, 0.2]]},
            r"ood_chameleon\.shifts\.extra_triples.*invalid",
        ),
        (
            {f"{SLUG}.shifts.single_shift_values": [0.01]},
            r"single_shift_values entry 0\.01.*1 < 2 samples",
        ),
        ({f"{SLUG}.zoo.algorithms": ["ERM", "IRM"]}, r"ood_chameleon\.zoo\.algorithms\.1"),
        ({f"{SLUG}.data.sources": ["synth", "digits:mnist"]}, r"ood_chameleon\.data\.sources\.1"),
        ({f"{SLUG}.selector.features": ["n", "entropy"]}, r"ood_chameleon\.selector\.features\.1"),
        ({f"{SLUG}.meta.margin": 1.0}, r"ood_chameleon\.meta\.margin = 1\.0"),
        (
            {
                f"{SLUG}.evaluation.transfers": [
                    {
                        "name": "leak",
                        "train_sources": ["synth", "digits:ge5"],
                        "test_sources": ["digits:ge5"],
                    }
                ]
            },
            r"\['digits:ge5'\] are also training sources",
        ),  # fmt: skip
    ],
)
def test_bad_input_fails_clearly_and_writes_nothing(fast_run, override, message):
    before = {p: p.stat().st_mtime_ns for p in files_under(fast_run / "data")}
    with pytest.raises((ParameterError, ValueError), match=message):
        run_session(fast_run, SLUG, env="fast", runtime_params=override)
    assert all(p.stat().st_mtime_ns == t for p, t in before.items())
    new = {p.relative_to(fast_run) for p in files_under(fast_run / "data") - set(before)}
    assert all(SLUG not in str(p) for p in new), new


def test_metadata_csv_without_labels_fails_before_anything_is_written(fast_run):
    env = fast_run / "conf/bad_real"
    (env / "catalog").mkdir(parents=True, exist_ok=True)
    (env / "parameters").mkdir(exist_ok=True)
    csv = fast_run / "meta.csv"
    csv.write_text("filename,label\nimg0.png,1\n")
    (env / "catalog" / f"{SLUG}.yml").write_text(
        f"{SLUG}.real_metadata:\n  type: pandas.CSVDataset\n  filepath: {csv}\n"
    )
    (env / "parameters" / f"{SLUG}.yml").write_text(
        f"{SLUG}:\n  data:\n    sources: [synth, real]\n  evaluation:\n    transfers:\n"
        "      - {name: to_real, train_sources: [synth], test_sources: [real]}\n"
    )
    (env / "globals.yml").write_text((fast_run / "conf/fast/globals.yml").read_text())
    before = files_under(fast_run / "data")
    with pytest.raises(Exception, match=r"real_metadata lacks column\(s\) \['y', 'a'\]"):
        run_session(fast_run, SLUG, env="bad_real")
    new = {p.relative_to(fast_run) for p in files_under(fast_run / "data") - before}
    assert all(SLUG not in str(p) for p in new), new
