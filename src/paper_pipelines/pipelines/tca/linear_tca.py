"""LinearTCA and LinearTCA+ (You, Lu & Huang, ICML 2025): test-time correlation alignment.

Given the embeddings Z (N x d) and logits L (N x C) that a source model (LinearTCA) or any test-time
adaptation method (LinearTCA+) produced on the whole target set, TCA
  1. picks the high-certainty instances: per predicted class, the lowest-entropy ones (pseudo-source),
  2. estimates the pseudo-source mean/covariance (mu_s, C_s) and the target's (mu_t, C_t),
  3. finds a linear map W with W^T C_t W ~= C_s (correlation alignment, CORAL),
  4. transforms z' = (z - mu_t) W + mu_s (instance + correlation alignment) and classifies z' with the
     unchanged linear head. No network weight changes and nothing is back-propagated through the backbone.
The steps follow the official `TCA.calculate` (youlj109/TCA, `adapt_algorithm.py`); the exact
eigendecomposition solver is the closed form of step 3, the iterative Adam solver is the official one.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

logger = logging.getLogger(__name__)

W_SOLVERS = ("auto", "eig", "adam", "identity")
PROPORTIONS = ("uniform", "predicted", "oracle")


@dataclass
class TCAResult:
    """Output of :func:`linear_tca`: new logits, the map, and the statistics it used."""

    logits: torch.Tensor
    W: torch.Tensor
    mu_s: torch.Tensor
    mu_t: torch.Tensor
    support_index: torch.Tensor
    info: dict = field(default_factory=dict)


def softmax_entropy(logits: torch.Tensor) -> torch.Tensor:
    """Certainty score (Sec. 4, official code): H_i = -sum_c softmax(L_i)_c log softmax(L_i)_c."""
    return -(logits.softmax(1) * logits.log_softmax(1)).sum(1)


def class_proportions(
    kind: str,
    num_classes: int,
    logits: torch.Tensor | None = None,
    labels: torch.Tensor | None = None,
) -> torch.Tensor:
    """Per-class proportion vector r used to size the pseudo-source (floor(K * r_c) per class).

    ``uniform``: r = 1 (what the official ratio gives on balanced sets such as CIFAR-10-C);
    ``oracle``: the official r_c = n_c / n_0 from ground-truth test labels (a label leak, kept for parity);
    ``predicted``: r_c = C * nhat_c / N from pseudo-label counts (label-free, mean 1).
    """
    if kind == "uniform":
        return torch.ones(num_classes)
    if kind == "oracle":
        if labels is None:
            raise ValueError("proportions='oracle' needs the ground-truth labels")
        counts = torch.bincount(labels.cpu().long(), minlength=num_classes).double()
        if counts[0] == 0:
            raise ValueError("proportions='oracle' divides by the count of class 0, which is 0")
        r = torch.zeros(num_classes)
        r[0] = 1.0
        for c in range(1, num_classes):
            r[c] = counts[c].item() / counts[0].item()
        return r
    if kind == "predicted":
        if logits is None:
            raise ValueError("proportions='predicted' needs the logits")
        counts = torch.bincount(logits.argmax(1).cpu(), minlength=num_classes).double()
        return (num_classes * counts / counts.sum()).float()
    raise ValueError(f"unknown proportions {kind!r}; use one of {', '.join(PROPORTIONS)}")


def select_pseudo_source(
    logits: torch.Tensor, num_classes: int, filter_k: int, proportion: torch.Tensor
) -> torch.Tensor:
    """Step 1: indices of the floor(K * r_c) lowest-entropy samples of each predicted class c (K = -1: all)."""
    n = logits.shape[0]
    if filter_k == -1:
        return torch.arange(n, device=logits.device)
    entropy = softmax_entropy(logits)
    y_hat = logits.argmax(dim=1)
    all_index = torch.arange(n, device=logits.device)
    chosen = []
    for c in range(num_classes):
        members = y_hat == c
        order = torch.sort(entropy[members]).indices
        keep = math.floor(filter_k * float(proportion[c]))
        chosen.append(all_index[members][order][:keep])
    return torch.cat(chosen)


def covariance(x: torch.Tensor) -> torch.Tensor:
    """Step 2: unbiased covariance (X - mean)^T (X - mean) / (m - 1), as the official code computes it."""
    centred = x - x.mean(dim=0, keepdim=True)
    return centred.t() @ centred / (x.size(0) - 1)


def chunked_mean_covariance(
    z: torch.Tensor, chunk: int | None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Step 2 for the target: mean and unbiased covariance.

    ``chunk=None`` is the official one-shot formula (bit-identical results); an integer accumulates
    over row chunks, the same value up to float summation order without the centred N x d copy.
    """
    mu = z.mean(dim=0, keepdim=True)
    if chunk is None:
        return mu, covariance(z)
    cov = torch.zeros(z.shape[1], z.shape[1], dtype=z.dtype, device=z.device)
    for i in range(0, z.shape[0], chunk):
        part = z[i : i + chunk] - mu
        cov.addmm_(part.t(), part)
    return mu, cov / (z.shape[0] - 1)


def _regularised_eigh(
    cov: torch.Tensor, eps: float, name: str
) -> tuple[torch.Tensor, torch.Tensor, int]:
    """Eigendecomposition of the shrunk covariance C + eps * tr(C)/d * I, eigenvalues clamped > 0.

    A rank-deficient covariance (dead ReLU channels, fewer pseudo-source rows than dimensions) is not
    an error: the shrinkage makes it invertible, and the event is logged (INFO here; callers that
    run TCA many times summarise the count at WARNING). Returns (eigenvalues, eigenvectors, n_singular).
    """
    d = cov.shape[0]
    scale = float(torch.trace(cov)) / d
    if not math.isfinite(scale) or scale <= 0.0:
        scale = 1.0
    evals, evecs = torch.linalg.eigh(cov.double())
    floor = max(eps * scale, 1e-12)
    n_small = int((evals <= 1e-7 * max(float(evals[-1]), 1e-30)).sum())
    if n_small:
        logger.info(
            "%s covariance is singular or near-singular (%d of %d eigenvalues ~0); regularised with "
            "shrinkage eps * tr(C)/d = %.3g",
            name,
            n_small,
            d,
            floor,
        )
    evals = torch.clamp(evals + floor, min=floor)
    return evals, evecs, n_small


def solve_w_eig(
    c_t: torch.Tensor, c_s: torch.Tensor, eps: float, info: dict | None = None
) -> torch.Tensor:
    """Step 3, closed form (CORAL whitening + re-colouring): W = C_t^{-1/2} C_s^{1/2}, so W^T C_t W = C_s."""
    lt, ut, singular_t = _regularised_eigh(c_t, eps, "target")
    ls, us, singular_s = _regularised_eigh(c_s, eps, "pseudo-source")
    if info is not None:
        info.update(singular_target=singular_t, singular_pseudo_source=singular_s)
    inv_sqrt_t = (ut * lt.rsqrt()) @ ut.t()
    sqrt_s = (us * ls.sqrt()) @ us.t()
    return (inv_sqrt_t @ sqrt_s).to(c_t.dtype)


def pseudo_source_shrinkage(m: int, d: int) -> float:
    """Weight lambda of the target covariance in the pseudo-source's, set by the rows-to-dimensions ratio.

    m pseudo-source rows span at most m - 1 of the d directions. With m - 1 >= d the sample covariance
    can be full rank and lambda = 0 (the exact eig solver). Otherwise lambda = 1 - (m - 1) / d, the share
    of directions the pseudo-source cannot see: there C_s is replaced by C_t, so W leaves them as they
    are instead of shrinking the target onto the pseudo-source's (m - 1)-dimensional span.
    """
    return max(0.0, 1.0 - (m - 1) / d)


def shrink_towards_target(c_s: torch.Tensor, c_t: torch.Tensor, lam: float) -> torch.Tensor:
    """(1 - lambda) C_s + lambda C_t: the pseudo-source covariance shrunk towards the target's."""
    return c_s if lam == 0.0 else (1.0 - lam) * c_s + lam * c_t


def coral_loss(c_a: torch.Tensor, c_b: torch.Tensor) -> torch.Tensor:
    """Objective of step 3: ||C_a - C_b||_F^2."""
    return torch.norm(c_a - c_b, p="fro") ** 2


def solve_w_adam(c_t: torch.Tensor, c_s: torch.Tensor, iterations: int, lr: float) -> torch.Tensor:
    """Step 3, official solver: W from I by `iterations` Adam steps on ||W^T C_t W - C_s||_F^2."""
    W = torch.eye(c_t.shape[0], dtype=c_t.dtype, device=c_t.device)
    W.requires_grad = True
    optimiser = torch.optim.Adam([W], lr=lr)
    c_t, c_s = c_t.detach(), c_s.detach()
    with torch.enable_grad():
        for _ in range(iterations):
            optimiser.zero_grad()
            loss = coral_loss(W.T @ c_t @ W, c_s)
            loss.backward()
            optimiser.step()
    return W.detach()


def check_features(z: torch.Tensor, logits: torch.Tensor, num_classes: int) -> None:
    """Reject inputs TCA cannot use, with the reason and the fix."""
    if z.ndim != 2 or logits.ndim != 2 or z.shape[0] != logits.shape[0]:
        raise ValueError(
            f"TCA needs embeddings (N, d) and logits (N, C) with the same N, got {tuple(z.shape)} "
            f"and {tuple(logits.shape)}"
        )
    if logits.shape[1] != num_classes:
        raise ValueError(f"logits have {logits.shape[1]} classes, expected {num_classes}")
    if z.shape[0] < num_classes:
        raise ValueError(
            f"TCA got {z.shape[0]} test samples but the model has {num_classes} classes: the "
            f"pseudo-source (lowest-entropy samples per predicted class) and the target covariance "
            f"cannot be estimated from fewer samples than classes; apply TCA to a larger test set"
        )
    bad = ~torch.isfinite(z).all(dim=1) | ~torch.isfinite(logits).all(dim=1)
    if bool(bad.any()):
        raise ValueError(
            f"TCA got non-finite embeddings or logits (NaN/inf) in {int(bad.sum())} of {z.shape[0]} "
            f"rows; the backbone or the adaptation method diverged - fix that upstream (e.g. a smaller "
            f"TTA learning rate) before aligning"
        )


def linear_tca(
    z: torch.Tensor,
    logits: torch.Tensor,
    classifier: Callable[[torch.Tensor], torch.Tensor],
    num_classes: int,
    *,
    filter_k: int = 20,
    proportion: torch.Tensor | None = None,
    w_solver: str = "auto",
    w_iters: int = 20,
    w_lr: float = 1e-3,
    eig_eps: float = 1e-3,
    chunk: int = 256,
) -> TCAResult:
    """Steps 1-4: LinearTCA when (z, logits) come from the source model, LinearTCA+ when from a TTA method.

    ``classifier`` is the unchanged linear head; it is only called forward, in chunks of ``chunk`` rows.
    ``w_solver="auto"`` is the closed form on a pseudo-source covariance shrunk towards the target's by
    :func:`pseudo_source_shrinkage` (the plain ``eig`` solver while the pseudo-source has more rows than
    dimensions); plain ``eig`` collapses the target onto the pseudo-source's span when d >> m.
    """
    if w_solver not in W_SOLVERS:
        raise ValueError(f"unknown w_solver {w_solver!r}; use one of {', '.join(W_SOLVERS)}")
    check_features(z, logits, num_classes)
    with torch.no_grad():
        z = z.detach()
        logits = logits.detach()
        if proportion is None:
            proportion = torch.ones(num_classes)
        support = select_pseudo_source(logits, num_classes, filter_k, proportion)
        s = z[support]
        # The official one-shot covariance: the Adam solver amplifies float summation-order
        # differences (its steps are ~sign(grad)), and parity with the official numbers matters more
        # than the transient N x d copy.
        mu_t, c_t = chunked_mean_covariance(z, None)
        d = z.shape[1]
        info = {"n_support": int(len(support)), "d": int(d), "n": int(z.shape[0])}
        if len(support) < 2:
            # A covariance needs two rows; fall back to mean alignment only and say so.
            logger.warning(
                "only %d pseudo-source sample(s) selected (filter_k=%d): covariance undefined, "
                "using mean alignment only (W = I)",
                len(support),
                filter_k,
            )
            mu_s = s.mean(dim=0, keepdim=True) if len(support) else mu_t
            w_solver = "identity"
            c_s = c_t
        else:
            mu_s = s.mean(dim=0, keepdim=True)
            c_s = covariance(s)
    if w_solver == "auto":
        lam = pseudo_source_shrinkage(len(support), d)
        info["shrinkage"] = lam
        W = solve_w_eig(c_t, shrink_towards_target(c_s, c_t, lam), eig_eps, info)
    elif w_solver == "eig":
        W = solve_w_eig(c_t, c_s, eig_eps, info)
    elif w_solver == "adam":
        W = solve_w_adam(c_t, c_s, w_iters, w_lr)
    else:
        W = torch.eye(d, dtype=z.dtype, device=z.device)
    with torch.no_grad():
        out = []
        for i in range(0, z.shape[0], chunk):
            out.append(classifier((z[i : i + chunk] - mu_t) @ W + mu_s))
        new_logits = torch.cat(out)
        info["w_solver"] = w_solver
        info["coral_residual"] = float(coral_loss(W.T @ c_t @ W, c_s).sqrt())
        info["coral_before"] = float(coral_loss(c_t, c_s).sqrt())
    return TCAResult(new_logits, W, mu_s, mu_t, support, info)


def transform_embeddings(
    z: torch.Tensor, W: torch.Tensor, mu_t: torch.Tensor, mu_s: torch.Tensor
) -> torch.Tensor:
    """Step 4: z' = (z - mu_t) W + mu_s."""
    return (z - mu_t) @ W + mu_s
