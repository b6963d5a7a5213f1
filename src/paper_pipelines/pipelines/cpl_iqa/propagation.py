"""Stage 2, step 1 of CPL-IQA: label optimisation under the manifold assumption, and confidence.

Label propagation on the network's embeddings as in Iscen et al. (CVPR 2019), which CPL-IQA builds on:
a kNN graph with affinities [e_i . e_j]_+^p, W = A + A^T, W_n = D^-1/2 W D^-1/2, the diffusion
Z = (I - gamma W_n)^-1 Y solved by conjugate gradient per bin, negatives clipped and rows
L1-normalised. The confidence of a pseudo-label is omega = 1 - H(z) / ln K, scaled by its maximum over
the unlabelled set. A node with no edge (or whose component holds no labelled image) gets a zero row
and therefore zero confidence, with a warning.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import cg
from sklearn.neighbors import NearestNeighbors

from .labels import entropy

logger = logging.getLogger(__name__)


def l2_normalise(x: np.ndarray) -> np.ndarray:
    """Rows scaled to unit L2 norm (a zero row stays zero)."""
    x = np.asarray(x, float)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.where(norms > 0, norms, 1.0)


def knn_affinity(embeddings: np.ndarray, k: int, power: float) -> sp.csr_matrix:
    """A: a_ij = [e_i . e_j]_+^power for the k nearest neighbours j of i (self excluded), else 0."""
    e = l2_normalise(embeddings)
    n = e.shape[0]
    if k >= n:
        raise ValueError(f"knn_k={k} must be below the number of graph nodes {n}")
    # on unit vectors the Euclidean neighbours are the largest inner products (FAISS in the paper)
    search = NearestNeighbors(n_neighbors=k + 1, algorithm="brute").fit(e)
    _, idx = search.kneighbors(e)
    rows, cols = [], []
    for i in range(n):
        neighbours = [j for j in idx[i] if j != i][:k]
        rows.extend([i] * len(neighbours))
        cols.extend(neighbours)
    rows_a, cols_a = np.asarray(rows), np.asarray(cols)
    sims = np.einsum("ij,ij->i", e[rows_a], e[cols_a])
    values = np.clip(sims, 0.0, None) ** power
    return sp.csr_matrix((values, (rows_a, cols_a)), shape=(n, n))


def symmetrise(a: sp.spmatrix) -> sp.csr_matrix:
    """W = A + A^T with the diagonal removed (no self loops)."""
    w = (a + a.T).tocsr()
    w.setdiag(0.0)
    w.eliminate_zeros()
    return w


def normalise_graph(w: sp.spmatrix) -> sp.csr_matrix:
    """W_n = D^-1/2 W D^-1/2, D = diag(W 1); an isolated node (degree 0) keeps a zero row."""
    degree = np.asarray(w.sum(axis=1)).ravel()
    inv_sqrt = np.where(degree > 0, 1.0 / np.sqrt(np.where(degree > 0, degree, 1.0)), 0.0)
    d = sp.diags(inv_sqrt)
    return (d @ w @ d).tocsr()


def diffuse(w_n: sp.spmatrix, y: np.ndarray, gamma: float, iters: int, tol: float) -> np.ndarray:
    """Z solving (I - gamma W_n) Z = Y, one conjugate-gradient solve per column (bin)."""
    n = w_n.shape[0]
    system = sp.eye(n, format="csr") - gamma * w_n
    z = np.zeros_like(y, dtype=float)
    for col in range(y.shape[1]):
        if not np.any(y[:, col]):
            continue  # an empty bin diffuses to zero; CG would return zero too
        z[:, col], _ = cg(system, y[:, col], rtol=tol, maxiter=iters)
    return z


def clip_and_normalise(z: np.ndarray) -> np.ndarray:
    """Pseudo vector labels: negatives set to 0, rows L1-normalised (an all-zero row stays zero)."""
    z = np.clip(np.asarray(z, float), 0.0, None)
    sums = z.sum(axis=1, keepdims=True)
    return z / np.where(sums > 0, sums, 1.0)


def entropy_confidence(p: np.ndarray, bins: int) -> np.ndarray:
    """omega = 1 - H(p) / ln K; an all-zero row (no information reached it) gets 0."""
    omega = 1.0 - entropy(p) / np.log(bins)
    return np.where(np.asarray(p).sum(axis=1) > 0, omega, 0.0)


def scale_by_max(omega: np.ndarray) -> np.ndarray:
    """omega / max(omega) (LP-DeepSSL eq. 11); all zeros stay zeros."""
    top = float(np.max(omega)) if omega.size else 0.0
    return omega / top if top > 0 else np.zeros_like(omega)


@dataclass(frozen=True)
class Propagation:
    """Pseudo labels (n_u, K) and confidence weights (n_u,) of the unlabelled nodes."""

    labels: np.ndarray
    weights: np.ndarray
    raw_confidence: np.ndarray
    isolated: int


def propagate_labels(
    embeddings: np.ndarray,
    vector_labels: np.ndarray,
    n_labeled: int,
    k: int,
    gamma: float,
    power: float,
    iters: int,
    tol: float,
) -> Propagation:
    """Label propagation on [labelled; unlabelled] embeddings (first ``n_labeled`` rows are labelled).

    Y has the labelled vector labels in the first rows and zeros below; the unlabelled rows of Z are
    the pseudo labels. Returns them with their max-scaled entropy confidence.
    """
    n = embeddings.shape[0]
    bins = vector_labels.shape[1]
    y = np.zeros((n, bins))
    y[:n_labeled] = vector_labels
    w_n = normalise_graph(symmetrise(knn_affinity(embeddings, k, power)))
    z = clip_and_normalise(diffuse(w_n, y, gamma, iters, tol))[n_labeled:]
    raw = entropy_confidence(z, bins)
    isolated = int(np.sum(z.sum(axis=1) == 0))
    if isolated:
        logger.warning(
            "label propagation: %d unlabelled image(s) received no label mass (isolated in the "
            "kNN graph or in a component without labels); their confidence is 0",
            isolated,
        )
    return Propagation(labels=z, weights=scale_by_max(raw), raw_confidence=raw, isolated=isolated)
