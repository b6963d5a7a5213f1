"""The dataset of datasets: tasks as resamplings set by three shift magnitudes and a size (Sec. 3.1).

A task's training split has four groups g = 2y + a (y the label, a the attribute) with counts
(n00, n01, n10, n11). Three numbers fix their shares: spurious correlation sc = P(y == a), class
imbalance ci = P(y = 0) and attribute imbalance ai = P(a = 0). With the total n they are the four
equations of the official ``group_matrix``; sc = ci = ai = 0.5 is the balanced (unshifted) case.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

# Rows: n00 + n11 = sc n; n00 + n10 = ai n; n00 + n01 = ci n; n00 + n01 + n10 + n11 = n.
GROUP_MATRIX = np.array([[1, 0, 0, 1], [1, 0, 1, 0], [1, 1, 0, 0], [1, 1, 1, 1]], dtype=float)
# (y, a) of each group, in the order of the counts above (g = 2y + a).
GROUPS = ((0, 0), (0, 1), (1, 0), (1, 1))
MIN_PER_GROUP = 2


def group_fractions(sc: float, ci: float, ai: float) -> np.ndarray:
    """Solve GROUP_MATRIX p = (sc, ai, ci, 1) for the group shares p = (p00, p01, p10, p11)."""
    return np.linalg.solve(GROUP_MATRIX, np.array([sc, ai, ci, 1.0]))


def is_valid_shift(sc: float, ci: float, ai: float) -> bool:
    """All four group shares strictly positive: sc+ci+ai > 1, sc > ci+ai-1, ci > sc+ai-1, ai > sc+ci-1."""
    return bool(sc + ci + ai > 1 and sc > ci + ai - 1 and ci > sc + ai - 1 and ai > sc + ci - 1)


def group_counts(sc: float, ci: float, ai: float, n: int) -> np.ndarray:
    """Integer group counts summing to n, closest to n * group_fractions (largest remainders).

    The official generator truncates each count with int(), which can lose up to 3 samples; rounding
    by largest remainders keeps the total at n and every share within 1/n of the solved one.
    """
    exact = group_fractions(sc, ci, ai) * n
    counts = np.floor(exact + 1e-9).astype(int)
    short = int(n - counts.sum())
    if short > 0:
        order = np.argsort(-(exact - counts), kind="stable")
        counts[order[:short]] += 1
    return counts


def check_shift(sc: float, ci: float, ai: float, n: int) -> np.ndarray:
    """Group counts of a valid triple at size n; ValueError naming the triple when it is unusable."""
    if not is_valid_shift(sc, ci, ai):
        raise ValueError(
            f"shift (sc={sc}, ci={ci}, ai={ai}) is invalid: some group would have a share <= 0 "
            "(need sc+ci+ai > 1, sc > ci+ai-1, ci > sc+ai-1, ai > sc+ci-1)"
        )
    counts = group_counts(sc, ci, ai, n)
    if counts.min() < MIN_PER_GROUP:
        raise ValueError(
            f"shift (sc={sc}, ci={ci}, ai={ai}) leaves a group with {counts.min()} < "
            f"{MIN_PER_GROUP} samples at n={n} (counts n00,n01,n10,n11 = {counts.tolist()}); "
            "use a milder shift or a larger n"
        )
    return counts


def sample_valid_shifts(k: int, min_n: int, rng: np.random.Generator) -> list[tuple]:
    """Rejection sampler (generate_valid_dist_shifts): sc, ci, ai ~ U(0, 1) rounded to 2 decimals,
    kept when the triple is valid and every group has >= 2 samples at the smallest size min_n."""
    found: list[tuple] = []
    while len(found) < k:
        sc, ci, ai = (round(float(v), 2) for v in rng.uniform(0, 1, 3))
        if is_valid_shift(sc, ci, ai):
            counts = group_counts(sc, ci, ai, min_n)
            if counts.min() >= MIN_PER_GROUP:
                found.append((sc, ci, ai))
    return found


def single_shift_families(values: Iterable[float]) -> list[tuple]:
    """The three single-shift families: one of sc, ci, ai set to each value, the other two at 0.5."""
    values = [float(v) for v in values]
    return (
        [(v, 0.5, 0.5) for v in values]
        + [(0.5, v, 0.5) for v in values]
        + [(0.5, 0.5, v) for v in values]
    )


def realised_shift(y: np.ndarray, a: np.ndarray) -> tuple[float, float, float]:
    """(sc, ci, ai) measured on labels y and attributes a (both 0/1)."""
    y, a = np.asarray(y), np.asarray(a)
    return float(np.mean(y == a)), float(np.mean(y == 0)), float(np.mean(a == 0))


def task_grid(
    sources: list[str],
    triples: list[tuple],
    sizes: dict[str, list[int]],
    synth_var_causal: list[float],
    synth_d_feat: list[int],
    rng: np.random.Generator,
) -> list[dict]:
    """Every (source, triple, size) as one task row; synthetic tasks draw (var_c, d) from their lists."""
    rows = []
    for source in sources:
        kind = source.split(":")[0]
        for sc, ci, ai in triples:
            for n in sizes[kind]:
                check_shift(sc, ci, ai, n)
                row = {"source": source, "n": int(n), "sc": sc, "ci": ci, "ai": ai}
                if kind == "synth":
                    row["var_causal"] = float(rng.choice(synth_var_causal))
                    row["d_feat"] = int(rng.choice(synth_d_feat))
                rows.append(row)
    for k, row in enumerate(rows):
        row["task_id"] = k
    return rows
