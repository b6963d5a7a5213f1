"""DLP's per-block sparsity allocation (Chen et al. 2025, steps 4-5); the map onto densities is shared
with OWL (baselines.py)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from paper_pipelines.common.params import ParameterError


def relative_importance(block_scores: Sequence[float]) -> np.ndarray:
    """DLP step 4: I_l = 1 - U_l / sum_k U_k (a larger typical score means a less important block)."""
    u = np.asarray(block_scores, dtype=np.float64)
    if u.ndim != 1 or u.size < 2:
        raise ValueError(f"need a score for each of at least 2 blocks, got shape {u.shape}")
    if not np.all(np.isfinite(u)) or np.any(u < 0) or u.sum() <= 0:
        raise ValueError(f"block scores must be finite, non-negative and not all zero, got {u}")
    return 1.0 - u / u.sum()


def spread_to_mean(values: np.ndarray, target: float, spread: float) -> np.ndarray:
    """Min-max scale `values` onto [0, 2*spread], then shift so the mean density is 1 - S.

    Returns per-block densities (keep ratios); shared by DLP (spread alpha) and OWL (spread lambda).
    A constant vector (no spread to measure) maps to the uniform allocation.
    """
    v = np.asarray(values, dtype=np.float64)
    width = v.max() - v.min()
    scaled = np.zeros_like(v) if width == 0 else (v - v.min()) / width * (2.0 * spread)
    return scaled - scaled.mean() + (1.0 - target)


def to_sparsities(
    densities: np.ndarray, target: float, name: str, key: str, min_sparsity: float
) -> np.ndarray:
    """Block sparsities 1 - d_l; a spread that leaves [0, 1) is an error naming ``dlp.allocation.<key>``."""
    sparsities = 1.0 - densities
    if np.any(sparsities >= 1.0) or np.any(sparsities < 0.0):
        raise ParameterError(
            f"parameter dlp.allocation.{key} is too large for target_sparsity={target}: {name} would give "
            f"block sparsities in [{sparsities.min():.3f}, {sparsities.max():.3f}], outside [0, 1). "
            f"Use {key} <= {min(target, 1 - target):.3f} or a target sparsity nearer 0.5."
        )
    # The released code lifts a block whose sparsity is not positive to 0.01.
    return np.where(sparsities <= 0.0, min_sparsity, sparsities)


def dlp_sparsities(
    block_scores: Sequence[float], target: float, alpha: float, min_sparsity: float = 0.01
) -> np.ndarray:
    """DLP step 5: densities spread by 2*alpha in order of relative importance, mean density 1 - S."""
    densities = spread_to_mean(relative_importance(block_scores), target, alpha)
    return to_sparsities(densities, target, "DLP", "dlp.alpha", min_sparsity)
