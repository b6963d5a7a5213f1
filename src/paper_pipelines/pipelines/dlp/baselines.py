"""The baselines DLP is compared with: uniform layerwise sparsity and OWL (Yin et al., ICML 2024).

The base pruners (Wanda, SparseGPT, magnitude) are in pruners.py: each allocation runs with each.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from paper_pipelines.pipelines.dlp.allocation import spread_to_mean, to_sparsities


def uniform_sparsities(n_blocks: int, target: float) -> np.ndarray:
    """Every block pruned at the target sparsity S."""
    return np.full(n_blocks, float(target))


def owl_sparsities(
    outlier_ratios: Sequence[float], target: float, lam: float, min_sparsity: float = 0.01
) -> np.ndarray:
    """OWL: densities spread by 2*lambda in order of the outlier ratio (more outliers, keep more)."""
    lod = np.asarray(outlier_ratios, dtype=np.float64)
    densities = spread_to_mean(lod, target, lam)
    return to_sparsities(densities, target, "OWL", "owl.lam", min_sparsity)
