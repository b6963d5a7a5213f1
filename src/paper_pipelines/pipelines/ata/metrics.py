"""The paper's measures: runtime / worker-time ratios, proxy regret windows, the proxy sandwich, and the
loss curves against each policy's cumulative time."""

from __future__ import annotations

import numpy as np
import pandas as pd

from paper_pipelines.pipelines.ata.allocation import proxy_loss
from paper_pipelines.pipelines.ata.baselines import uta_allocations
from paper_pipelines.pipelines.ata.cost_model import sample_unit_noise


def expected_round_time_mc(
    a: np.ndarray,
    shift: np.ndarray,
    spread: np.ndarray,
    family: str,
    draws: int,
    rng: np.random.Generator,
    lognormal_sigma: float = 1.0,
    pareto_shape: float = 3.0,
    chunk: int = 5000,
) -> float:
    """Monte-Carlo E[C(a)] = E max_{i: a_i > 0} sum_{u <= a_i} X_i^u, drawing only the tasks a assigns."""
    workers = np.repeat(np.arange(a.size), a)
    starts = np.concatenate([[0], np.cumsum(a[a > 0])[:-1]])
    total = 0.0
    for begin in range(0, draws, chunk):
        size = min(chunk, draws - begin)
        noise = sample_unit_noise(family, (size, workers.size), rng, lognormal_sigma, pareto_shape)
        times = shift[workers] + spread[workers] * noise
        total += np.add.reduceat(times, starts, axis=1).max(axis=1).sum()
    return total / draws


def sandwich_allocations(a_star: list[int], n: int, B: int, seed: int) -> dict[str, np.ndarray]:
    """The allocations the sandwich is checked on: a*, an even spread and one uniformly random draw."""
    rng = np.random.default_rng([seed, 3])
    return {
        "a_star": np.asarray(a_star),
        "uniform": uta_allocations(n, B, 1, rng, "even")[0],
        "random": uta_allocations(n, B, 1, rng, "random")[0],
    }


def sandwich_check(
    allocations: dict[str, np.ndarray],
    shift: np.ndarray,
    spread: np.ndarray,
    family: str,
    eta: float,
    B: int,
    draws: int,
    seed: int,
    lognormal_sigma: float = 1.0,
    pareto_shape: float = 3.0,
) -> dict[str, dict[str, float]]:
    """Sec. 3 sandwich l(a, mu) <= E[C(a)] <= (1 + 4 eta ln B) l(a, mu), checked by Monte Carlo."""
    mu = shift + spread
    upper = 1.0 + 4.0 * eta * np.log(B)
    out = {}
    for idx, (name, a) in enumerate(allocations.items()):
        rng = np.random.default_rng([seed, 7, idx])
        expected = expected_round_time_mc(
            a, shift, spread, family, draws, rng, lognormal_sigma, pareto_shape
        )
        proxy = proxy_loss(a, mu)
        ratio = expected / proxy
        out[name] = {
            "proxy": proxy,
            "expected_round_time": expected,
            "ratio": ratio,
            "upper_bound": upper,
            "holds": bool(1.0 <= ratio <= upper),
        }
    return out


def policy_summary(round_log: pd.DataFrame, window: float) -> pd.DataFrame:
    """Per policy: total runtime and worker time over K rounds, ratios to FTA, proxy-ratio windows.

    ``zero_bound_share`` (ATA variants): the share of rounds in which every worker used had a lower
    bound of 0, so that the split of the B tasks came from the tie-break alone.
    """
    K = int(round_log["k"].max())
    first = round_log["k"] <= window * K
    last = round_log["k"] > (1.0 - window) * K
    rows = []
    for policy, frame in round_log.groupby("policy", sort=False):
        f_first, f_last = frame[first.loc[frame.index]], frame[last.loc[frame.index]]
        rows.append(
            {
                "policy": policy,
                "runtime": frame["round_time"].sum(),
                "worker_time": frame["worker_time"].sum(),
                "proxy_ratio_first": f_first["proxy_ratio"].mean(),
                "proxy_ratio_last": f_last["proxy_ratio"].mean(),
                "frac_optimal_last": np.isclose(f_last["proxy_ratio"], 1.0).mean()
                if f_last["proxy_ratio"].notna().any()
                else np.nan,
                "mean_workers_used": frame["workers_used"].mean(),
                "zero_bound_share": _zero_bound_share(frame),
            }
        )
    table = pd.DataFrame(rows)
    if "FTA" in set(table["policy"]):
        fta = table.set_index("policy").loc["FTA"]
        table["runtime_over_fta"] = table["runtime"] / fta["runtime"]
        table["worker_time_over_fta"] = table["worker_time"] / fta["worker_time"]
    return table


def _zero_bound_share(frame: pd.DataFrame) -> float:
    """Share of rounds with zero_bound_workers == workers_used; NaN for non-adaptive policies."""
    if "zero_bound_workers" not in frame or frame["zero_bound_workers"].isna().all():
        return float("nan")
    return float((frame["zero_bound_workers"] == frame["workers_used"]).mean())


def ratio(table: pd.DataFrame, num: str, den: str, column: str) -> float | None:
    """table[column] of policy num over policy den; None when either policy was not simulated."""
    values = table.set_index("policy")[column]
    if num not in values.index or den not in values.index:
        return None
    return float(values[num] / values[den])


def time_stamped_loss(round_log: pd.DataFrame, trajectory: pd.DataFrame) -> pd.DataFrame:
    """Attach each policy's cumulative runtime and worker time to the (shared) loss trajectory."""
    frames = []
    for policy, frame in round_log.groupby("policy", sort=False):
        frame = frame.sort_values("k")
        runtime = np.concatenate([[0.0], frame["round_time"].cumsum().to_numpy()])
        work = np.concatenate([[0.0], frame["worker_time"].cumsum().to_numpy()])
        k = trajectory["k"].to_numpy()
        frames.append(
            pd.DataFrame(
                {
                    "policy": policy,
                    "k": k,
                    "runtime": runtime[k],
                    "worker_time": work[k],
                    "train_loss": trajectory["train_loss"].to_numpy(),
                }
            )
        )
    return pd.concat(frames, ignore_index=True)
