"""NeGo-R: the negative-inference graph OOD framework as reconstructed in the spec (steps 1-5).

One model covers NeGo-R and its ablations by switches: ``use_prompts`` (-NP: e_G = 0, no prompt
losses), ``condition`` (-EE: ``none``, the extractor ignores e_G) and ``intervention`` (-INV: no
environment swap). GSAT-lite is NeGo-R with -NP and -INV.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from . import extractor as ext
from . import invariance as inv
from . import prompts as neg


@dataclass(frozen=True)
class Variant:
    """Which NeGo-R components are on (the ablation switches)."""

    use_prompts: bool = True
    condition: str = "concat"
    intervention: bool = True


def variant_of(method: str, condition: str = "concat") -> Variant:
    """The component switches of each extractor method (nego_r and its -NP / -EE / -INV ablations)."""
    table = {
        "nego_r": Variant(True, condition, True),
        "nego_r_no_np": Variant(False, "none", True),
        "nego_r_no_ee": Variant(True, "none", True),
        "nego_r_no_inv": Variant(True, condition, False),
        "gsat_lite": Variant(False, "none", False),
    }
    if method not in table:
        raise ValueError(f"{method!r} is not an extractor method; choose one of {sorted(table)}")
    return table[method]


def gin(
    in_dim: int, hidden: int, layers: int, dropout: float, norm: str | None = None
) -> nn.Module:
    """The GIN backbone (torch-geometric's GIN: GINConv layers with 2-layer MLPs, ReLU and optional
    batch norm between layers, as GOOD's GIN)."""
    from torch_geometric.nn.models import GIN

    return GIN(
        in_dim, hidden, layers, dropout=dropout, norm=None if norm in (None, "none") else norm
    )


def pool(h: Tensor, batch: Tensor, kind: str, size: int) -> Tensor:
    """Graph read-out of node embeddings: mean, sum or max over each graph's nodes."""
    from torch_geometric.nn import global_add_pool, global_max_pool, global_mean_pool

    fn = {"mean": global_mean_pool, "sum": global_add_pool, "max": global_max_pool}[kind]
    return fn(h, batch, size)


def head(hidden: int, num_classes: int, kind: str = "mlp") -> nn.Module:
    """Read-out to logits: ``mlp`` Linear-ReLU-Linear, ``linear`` one Linear (GOOD's, GSAT's GIN)."""
    if kind == "linear":
        return nn.Sequential(nn.Linear(hidden, num_classes))
    if kind != "mlp":
        raise ValueError(f"head must be mlp or linear, got {kind!r}")
    return nn.Sequential(nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, num_classes))


class NeGoR(nn.Module):
    """Extractor GIN -> (prompt environment e_G) -> conditioned edge masks -> masked classifier GIN."""

    def __init__(
        self,
        in_dim: int,
        num_classes: int,
        hidden: int,
        layers: int,
        variant: Variant,
        num_prompts: int = 8,
        residual: bool = False,
        encoder: str = "separate",
        pool_kind: str = "mean",
        dropout: float = 0.0,
        sampling: str = "concrete",
        temperature: float = 1.0,
        symmetric: bool = True,
        norm: str | None = None,
        head_kind: str = "mlp",
    ) -> None:
        super().__init__()
        self.variant, self.hidden, self.pool_kind = variant, hidden, pool_kind
        self.sampling, self.temperature, self.symmetric = sampling, temperature, symmetric
        self.extractor = gin(in_dim, hidden, layers, dropout, norm)
        self.scorer = ext.EdgeScorer(hidden, variant.condition)
        self.classifier = gin(in_dim, hidden, layers, dropout, norm)
        self.head = head(hidden, num_classes, head_kind)
        self.env_encoder = None
        self.prompts = None
        if variant.use_prompts:
            if encoder == "separate":
                self.env_encoder = gin(in_dim, hidden, layers, dropout, norm)
            self.prompts = neg.PromptBank(hidden, num_prompts, residual)
            self.env_head = head(hidden, num_classes)
            self.cov_c = nn.Linear(hidden, hidden, bias=False)
            self.cov_e = nn.Linear(hidden, hidden, bias=False)

    def environment(
        self, x: Tensor, edge_index: Tensor, batch: Tensor, h: Tensor, size: int
    ) -> Tensor:
        """e_G from the prompt bank (zeros under -NP), read from a separate or a detached shared encoder."""
        if self.prompts is None:
            return h.new_zeros(size, self.hidden)
        henv = self.env_encoder(x, edge_index) if self.env_encoder is not None else h.detach()
        env, _ = self.prompts(pool(henv, batch, "mean", size))
        return env

    def edge_mask(
        self, h: Tensor, edge_index: Tensor, batch: Tensor, env: Tensor, generator=None
    ) -> Tensor:
        """m_uv = sigmoid(MLP([h_u; h_v; e_G])), sampled (binary concrete) in training, symmetrised."""
        logits = self.scorer(h, edge_index, env[batch])
        if self.training and self.sampling == "concrete":
            mask = ext.concrete_sample(logits, self.temperature, generator)
        else:
            mask = torch.sigmoid(logits)
        return ext.symmetrise(edge_index, mask) if self.symmetric else mask

    def classify(
        self, x: Tensor, edge_index: Tensor, batch: Tensor, mask: Tensor, size: int
    ) -> tuple[Tensor, Tensor]:
        """(y_hat, h_c): the masked GIN's read-out h_c = pool(f_c(G_c)) and y_hat = g_c(h_c)."""
        hc = pool(
            ext.masked_forward(self.classifier, x, edge_index, mask), batch, self.pool_kind, size
        )
        return self.head(hc), hc

    def forward(
        self, data, env_override: Tensor | None = None, generator=None
    ) -> dict[str, Tensor]:
        size = int(data.num_graphs)
        h = self.extractor(data.x, data.edge_index)
        summary = pool(h, data.batch, "mean", size)
        env = self.environment(data.x, data.edge_index, data.batch, h, size)
        used = env if env_override is None else env_override
        mask = self.edge_mask(h, data.edge_index, data.batch, used, generator)
        logits, hc = self.classify(data.x, data.edge_index, data.batch, mask, size)
        return {
            "logits": logits,
            "mask": mask,
            "env": env,
            "summary": summary,
            "causal": hc,
            "h": h,
        }

    def swapped_logits(self, data, out: dict, env_swapped: Tensor, generator=None) -> Tensor:
        """y_hat' with the permuted environments e' (extractor embeddings reused, masks recomputed)."""
        size = int(data.num_graphs)
        mask = self.edge_mask(out["h"], data.edge_index, data.batch, env_swapped, generator)
        logits, _ = self.classify(data.x, data.edge_index, data.batch, mask, size)
        return logits


@dataclass(frozen=True)
class LossWeights:
    lambda_neg: float = 1.0
    lambda_inv: float = 1.0
    lambda_ib: float = 0.5
    lambda_cov: float = 0.1
    lambda_div: float = 0.01
    vrex: bool = False
    lambda_vrex: float = 1.0
    num_pseudo_envs: int = 3
    r: float = 0.5
    neg_mode: str = "adversarial"


def total_loss(
    model: NeGoR,
    data,
    weights: LossWeights,
    generator: torch.Generator | None = None,
    seed: int = 0,
) -> tuple[Tensor, dict[str, float]]:
    """L = CE + l_neg L_neg + l_inv L_inv + l_ib L_ib + l_cov L_cov + l_div L_div (+ l_vrex V-REx)."""
    out = model(data, generator=generator)
    y = data.y
    per_sample = F.cross_entropy(out["logits"], y, reduction="none")
    terms: dict[str, Tensor] = {"ce": per_sample.mean()}
    terms["ib"] = ext.bernoulli_kl(out["mask"], weights.r)
    if model.prompts is not None:
        negative = (
            neg.adversarial_negative_loss
            if weights.neg_mode == "adversarial"
            else neg.entropy_negative_loss
        )
        terms["neg"] = negative(model.env_head, out["env"], y)
        terms["cov"] = neg.coverage_loss(
            out["summary"], out["causal"], out["env"], model.cov_c, model.cov_e
        )
        terms["div"] = neg.diversity_loss(model.prompts.prompts)
    if model.variant.intervention:
        swapped, _ = inv.permute_environment(out["env"], generator)
        terms["inv"] = inv.intervention_loss(
            model.swapped_logits(data, out, swapped, generator), out["logits"], y
        )
    if weights.vrex and model.prompts is not None:
        envs = inv.pseudo_environments(out["env"], weights.num_pseudo_envs, seed)
        terms["vrex"] = inv.vrex_penalty(per_sample, envs)
    scale = {
        "ce": 1.0,
        "ib": weights.lambda_ib,
        "neg": weights.lambda_neg,
        "cov": weights.lambda_cov,
        "div": weights.lambda_div,
        "inv": weights.lambda_inv,
        "vrex": weights.lambda_vrex,
    }
    loss = sum(scale[k] * v for k, v in terms.items())
    return loss, {k: float(v.detach()) for k, v in terms.items()}
