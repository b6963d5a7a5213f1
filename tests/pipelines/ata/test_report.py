"""The metrics dict, the results table and the claims, on hand-made inputs."""

import numpy as np
import pandas as pd
import pytest

from paper_pipelines.common.claims import evaluate_claims
from paper_pipelines.pipelines.ata import figures
from paper_pipelines.pipelines.ata.metrics import policy_summary, ratio, sandwich_allocations
from paper_pipelines.pipelines.ata.report import CLAIMS, METRICS, build_metrics, build_results


def round_log() -> pd.DataFrame:
    """Two policies, 10 rounds: FTA takes 1 per round (busy 2), ATA takes 2 then 1 (busy 3 then 2)."""
    k = np.arange(1, 11)
    fta = pd.DataFrame(
        {"policy": "FTA", "k": k, "round_time": 1.0, "worker_time": 2.0, "proxy_ratio": 1.0}
    )
    ata = pd.DataFrame(
        {
            "policy": "ATA",
            "k": k,
            "round_time": np.where(k <= 5, 2.0, 1.0),
            "worker_time": np.where(k <= 5, 3.0, 2.0),
            "proxy_ratio": np.where(k <= 5, 2.0, 1.0),
        }
    )
    log = pd.concat([fta, ata], ignore_index=True)
    log["workers_used"] = 2
    return log


def test_policy_summary_by_hand():
    table = policy_summary(round_log(), 0.2)
    by = table.set_index("policy")
    assert by.loc["ATA", "runtime"] == 15.0 and by.loc["FTA", "runtime"] == 10.0
    assert by.loc["ATA", "runtime_over_fta"] == 1.5
    assert by.loc["ATA", "worker_time_over_fta"] == 25.0 / 20.0
    assert by.loc["ATA", "proxy_ratio_first"] == 2.0 and by.loc["ATA", "proxy_ratio_last"] == 1.0
    assert by.loc["ATA", "frac_optimal_last"] == 1.0
    assert ratio(table, "ATA", "FTA", "runtime") == 1.5
    assert ratio(table, "GTA", "FTA", "runtime") is None


def test_results_one_row_per_policy_with_method_first():
    trajectory = pd.DataFrame({"k": [0, 10], "train_loss": [2.0, 0.5], "holdout_acc": [0.1, 0.9]})
    results = build_results(policy_summary(round_log(), 0.2), trajectory)
    assert list(results.columns)[0] == "method"
    assert results["method"].tolist() == ["FTA", "ATA"]
    assert (results["final_train_loss"] == 0.5).all()


def test_metrics_contract_is_enforced():
    trajectory = pd.DataFrame({"k": [0, 10], "train_loss": [2.0, 0.5], "holdout_acc": [0.1, 0.9]})
    meta = {"n": 2, "B": 2, "family": "shifted_exponential", "alpha": 1.0, "eta": 0.5}
    meta["proxy_star"] = 2.0
    sandwich = {"a_star": {"holds": True}}
    # only FTA and ATA simulated: the GTA / UTA / ATA_EMP ratios are None, but every key is present
    metrics = build_metrics(
        policy_summary(round_log(), 0.2), trajectory, sandwich, meta, 3.0, 10, 0.2
    )
    assert set(METRICS) <= set(metrics)
    assert metrics["runtime_ratio_ata_over_fta"] == 1.5
    assert metrics["runtime_ratio_gta_over_fta"] is None
    assert metrics["final_loss_over_initial"] == 0.25
    assert metrics["instance"]["K"] == 10 and metrics["sandwich_holds"] is True


def test_claims_hold_on_the_specs_prototype_numbers():
    """The spec's prototype (K = 20 000) passes checks 1-5; ATA-Emp costs more worker time than ATA."""
    prototype = {
        "worker_time_ratio_gta_over_ata_emp": 5.2,
        "worker_time_ratio_uta_over_ata_emp": 7.2,
        "worker_time_ratio_ata_over_fta": 1.01,
        "worker_time_ratio_ata_emp_over_fta": 1.20,
        "runtime_ratio_ata_emp_over_fta": 1.31,
        "runtime_ratio_ata_over_fta": 1.78,
        "runtime_ratio_uta_over_fta": 7.9,
        "runtime_ratio_gta_over_fta": 0.63,
        "proxy_ratio_last20_ata_emp": 1.11,
        "proxy_ratio_first20_ata_emp": 2.60,
        "proxy_ratio_last20_ata": 1.61,
        "proxy_ratio_first20_ata": 3.61,
        "sandwich_holds": True,
        "final_loss_over_initial": 0.055 / 2.31,
    }
    table = evaluate_claims(CLAIMS, prototype, "ata").set_index("claim")
    assert table.loc[table["gates"], "holds"].all()
    assert not table.loc["ata_emp_cheaper_than_ata", "holds"]
    # one threshold crossed flips its claim
    slow = {**prototype, "runtime_ratio_ata_over_fta": 2.3}
    assert (
        not evaluate_claims(CLAIMS, slow, "ata")
        .set_index("claim")
        .loc["near_oracle_speed", "holds"]
    )
    flat = {**prototype, "proxy_ratio_last20_ata": 3.7}
    assert (
        not evaluate_claims(CLAIMS, flat, "ata")
        .set_index("claim")
        .loc["learns_allocation", "holds"]
    )


def test_sandwich_allocations_hand_out_B_tasks():
    allocations = sandwich_allocations([2, 1, 0], 3, 3, seed=0)
    assert allocations["a_star"].tolist() == [2, 1, 0]
    assert allocations["uniform"].tolist() == [1, 1, 1]
    assert allocations["random"].sum() == 3


@pytest.mark.parametrize("draw", [figures.loss_vs_runtime, figures.loss_vs_worker_time])
def test_loss_figures_have_one_curve_per_policy_in_distinct_colours(draw):
    stamped = pd.DataFrame(
        {
            "policy": np.repeat(["FTA", "GTA", "UTA", "ATA", "ATA_EMP"], 2),
            "runtime": np.tile([0.0, 1.0], 5),
            "worker_time": np.tile([0.0, 2.0], 5),
            "train_loss": np.tile([2.0, 1.0], 5),
        }
    )
    ax = draw(stamped).axes[0]
    labels = [line.get_label() for line in ax.get_lines()]
    assert labels == ["FTA: Optimal", "GTA", "UTA", "ATA", "ATA-Empirical"]
    assert len({line.get_color() for line in ax.get_lines()}) == 5


def test_regret_figure_skips_fta_and_gta():
    log = round_log()
    gta = log[log.policy == "FTA"].assign(policy="GTA", proxy_ratio=np.nan)
    ax = figures.proxy_regret(pd.concat([log, gta], ignore_index=True)).axes[0]
    assert [line.get_label() for line in ax.get_lines()] == ["ATA"]
    # cumulative regret of ATA: 1 per round for 5 rounds, then flat
    assert ax.get_lines()[0].get_ydata()[-1] == 5.0


def test_sandwich_allocations_come_from_their_own_stream():
    # stream (seed, 3): the even spread's random extra tasks first, then one multinomial draw
    allocations = sandwich_allocations([3, 1, 0, 0], 4, 6, seed=5)
    rng = np.random.default_rng([5, 3])
    extra = rng.permutation(4)[:2]
    even = np.ones(4, dtype=int)
    even[extra] += 1
    assert allocations["uniform"].tolist() == even.tolist()
    assert allocations["random"].tolist() == rng.multinomial(6, [0.25] * 4).tolist()
