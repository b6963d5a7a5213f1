"""Dataset descriptors (Sec. 3.3, official ``data_descriptor.py``): what the selector sees of a task.

Besides the known shift magnitudes (sc, ci, ai) and the size n, the training embeddings are reduced to
2-D (UMAP in the paper; PCA here by default) and summarised by how tight and how far apart the classes
and the attribute groups are; the ``*_n`` variants reduce standardised embeddings, and the inferred
statistics (``sc_``, ``ci_``, ``ai_``) come from 2-means clustering inside each class, for when group
labels are unknown.
"""

from __future__ import annotations

from typing import Any

import numpy as np

DESCRIPTORS = (
    "n", "sc", "ci", "ai",
    "c_intra", "c_inter", "a_intra", "a_inter",
    "c_intra_n", "c_inter_n", "a_intra_n", "a_inter_n",
    "sc_", "ci_", "ai_", "a_intra_i", "a_inter_i",
)  # fmt: skip


def reduce_2d(x: np.ndarray, method: str, seed: int) -> np.ndarray:
    """A 2-D projection of the embeddings: PCA (default) or UMAP (umap-learn, as data_descriptor.py)."""
    if method == "umap":
        try:
            import umap
        except ImportError as exc:  # an optional dependency: say how to get it
            raise ImportError(
                "ood_chameleon.descriptors.reducer = umap needs umap-learn (pip install umap-learn); "
                "or use reducer: pca"
            ) from exc
        return umap.UMAP(n_components=2, random_state=seed).fit_transform(x)
    from sklearn.decomposition import PCA

    return PCA(n_components=2, random_state=seed).fit_transform(x)


def spread(z: np.ndarray, labels: np.ndarray) -> tuple[float, float]:
    """utils.infer_dist: (intra, inter) = (mean over the two labels of the mean distance to their
    centroid, distance between the two centroids)."""
    c0, c1 = z[labels == 0].mean(0), z[labels == 1].mean(0)
    intra0 = np.linalg.norm(z[labels == 0] - c0, axis=1).mean()
    intra1 = np.linalg.norm(z[labels == 1] - c1, axis=1).mean()
    return float((intra0 + intra1) / 2), float(np.linalg.norm(c0 - c1))


def infer_subgroups(z: np.ndarray, attrs: np.ndarray, seed: int = 0) -> np.ndarray:
    """utils.infer_labels: 2-means inside one class, cluster ids aligned with the attribute."""
    from sklearn.cluster import KMeans

    labels = KMeans(n_clusters=2, random_state=seed, n_init="auto").fit(z).labels_
    return labels if np.mean(labels == attrs) > np.mean(labels == 1 - attrs) else 1 - labels


def inferred_shift(z: np.ndarray, y: np.ndarray, a: np.ndarray, seed: int = 0) -> dict[str, float]:
    """(sc_, ci_, ai_) from inferred sub-groups, and the attribute spread on the inferred labels."""
    z0, z1 = z[y == 0], z[y == 1]
    s0, s1 = infer_subgroups(z0, a[y == 0], seed), infer_subgroups(z1, a[y == 1], seed)
    g00, g01, g10, g11 = (s0 == 0).sum(), (s0 == 1).sum(), (s1 == 0).sum(), (s1 == 1).sum()
    total = g00 + g01 + g10 + g11
    intra, inter = spread(np.concatenate([z0, z1]), np.concatenate([s0, s1]))
    return {
        "sc_": float((g00 + g11) / total),
        "ci_": float((g00 + g01) / total),
        "ai_": float((g00 + g10) / total),
        "a_intra_i": intra,
        "a_inter_i": inter,
    }


def describe_task(
    x: np.ndarray, y: np.ndarray, a: np.ndarray, shift: dict[str, float], method: str, seed: int
) -> dict[str, Any]:
    """All descriptors of one training split (extract_data_desc), plus its n, sc, ci, ai."""
    from sklearn.preprocessing import StandardScaler

    z = reduce_2d(x, method, seed)
    zn = reduce_2d(StandardScaler().fit_transform(x), method, seed)
    out: dict[str, Any] = {"n": int(len(y)), **{k: float(shift[k]) for k in ("sc", "ci", "ai")}}
    out["c_intra"], out["c_inter"] = spread(z, y)
    out["a_intra"], out["a_inter"] = spread(z, a)
    out["c_intra_n"], out["c_inter_n"] = spread(zn, y)
    out["a_intra_n"], out["a_inter_n"] = spread(zn, a)
    out.update(inferred_shift(z, y, a, seed))
    return out
