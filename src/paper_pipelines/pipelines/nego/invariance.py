"""Environment-enhanced invariance (spec step 4): intervene on the inferred environment.

Within a mini-batch the environment embeddings are permuted (detached), the masks and prediction are
recomputed with the swapped environments, and the prediction must not change (KL to the unpermuted
one) and must stay correct (CE). Optionally V-REx over k-means pseudo-environments of e_G; V-REx over
given environments is also the oracle baseline.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor


def permute_environment(
    env: Tensor, generator: torch.Generator | None = None
) -> tuple[Tensor, Tensor]:
    """(e' = sg(e)[pi], pi): a random permutation of the batch's environment embeddings, detached."""
    perm = torch.randperm(len(env), generator=generator, device="cpu").to(env.device)
    return env.detach()[perm], perm


def intervention_loss(logits_swapped: Tensor, logits: Tensor, y: Tensor) -> Tensor:
    """L_inv = KL(softmax(y') || sg softmax(y)) + CE(y', y); KL(p'||p) = sum p' (log p' - log p)."""
    logp_swapped = F.log_softmax(logits_swapped, dim=-1)
    logp = F.log_softmax(logits.detach(), dim=-1)
    kl = (logp_swapped.exp() * (logp_swapped - logp)).sum(-1).mean()
    return kl + F.cross_entropy(logits_swapped, y)


def environment_risks(losses: Tensor, env: Tensor) -> Tensor:
    """Mean loss of each environment present in the batch (per-sample ``losses``, integer ``env``)."""
    return torch.stack([losses[env == e].mean() for e in torch.unique(env)])


def vrex_penalty(losses: Tensor, env: Tensor) -> Tensor:
    """V-REx (Krueger et al., 2021): the variance of the per-environment risks (0 for one environment)."""
    risks = environment_risks(losses, env)
    if len(risks) < 2:
        return losses.sum() * 0.0
    return risks.var(unbiased=False)


def pseudo_environments(env: Tensor, k: int, seed: int) -> Tensor:
    """k-means (scikit-learn) of the batch's environment embeddings into at most k pseudo-environments."""
    from sklearn.cluster import KMeans

    points = env.detach().cpu().numpy()
    k = min(k, len(points))
    labels = KMeans(n_clusters=k, n_init=1, random_state=seed).fit_predict(points)
    return torch.as_tensor(labels, device=env.device)
