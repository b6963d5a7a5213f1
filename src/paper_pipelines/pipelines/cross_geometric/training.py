"""CGDyn-R assembled and trained: learnable node features -> Dynamic Geometric Modeling per snapshot ->
Temporal State Aggregator -> Fermi-Dirac decoder, trained with the evolution-driven objective and
Riemannian Adam (geoopt; Euclidean parameters get plain Adam steps from it).
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Any

import geoopt
import numpy as np
import torch
from torch import nn
from torch_geometric.nn.conv.gcn_conv import gcn_norm

from paper_pipelines.common.parallel import run_parallel

from . import decoder, objective, poincare
from .modeling import DynamicGeometricModeling
from .snapshots import edge_keys, sample_non_edges, seen_nodes
from .temporal import TemporalStateAggregator

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Settings:
    """Everything one training run reads (built from the typed parameter blocks by the node)."""

    mode: str
    dim: int = 16
    window: int = 5
    gate_hidden: int = 8
    use_tree_score: bool = True
    use_temporal_attention: bool = True
    feed_state: bool = False
    const_gate: float = 0.5
    fd_r: float = 2.0
    fd_t: float = 1.0
    curvature: float = 1.0
    learn_curvature: bool = False
    ball_eps: float = 1e-5
    interaction: bool = False
    interaction_weight: float = 0.2
    target: str = "next"
    negatives: str = "seen"
    schedule: str = "sequence"
    lambda_node: float = 0.1
    lambda_chg: float = 0.5
    neg_ratio: float = 1.0
    epochs: int = 100
    patience: int = 50
    lr: float = 0.01
    weight_decay: float = 5e-7


class CGDynR(nn.Module):
    """Node features, the per-snapshot geometric model, the temporal aggregator and the ball."""

    def __init__(self, n_nodes: int, s: Settings):
        super().__init__()
        self.s = s
        self.ball = poincare.make_ball(s.curvature, s.learn_curvature)
        # small initial features keep exp_0 away from the boundary (HGCN initialises near 0 too)
        self.features = nn.Parameter(0.1 * torch.randn(n_nodes, s.dim))
        self.geometry = DynamicGeometricModeling(
            s.dim, s.mode, self.ball, s.ball_eps, s.gate_hidden, s.use_tree_score,
            s.const_gate, s.interaction, s.interaction_weight,
            d_in=2 * s.dim if s.feed_state else s.dim,
        )  # fmt: skip
        self.temporal = TemporalStateAggregator(s.dim, s.window, s.use_temporal_attention)

    def forward(self, graphs: list[tuple[torch.Tensor, torch.Tensor]], tree: torch.Tensor):
        """States s^t [T, N, d] and gates alpha^t [T, N] over the given snapshots, in order."""
        states, alphas = [], []
        c = self.curvature()
        for t, (edge_index, weight) in enumerate(graphs):
            state, alpha = self.step(edge_index, weight, tree[t], states, c)
            states.append(state)
            alphas.append(alpha)
        return torch.stack(states), torch.stack(alphas)

    def step(self, edge_index, weight, tree_t, history: list[torch.Tensor], c):
        """s^t and alpha^t of one snapshot from the earlier states (oldest first). With feed_state
        the geometric model reads [x ; s^{t-1}] (HTGN's input; zeros before the first snapshot)."""
        x = self.features
        if self.s.feed_state:
            x = torch.cat([x, history[-1] if history else torch.zeros_like(x)], -1)
        u, alpha = self.geometry(x, edge_index, weight, tree_t, c)
        return self.temporal(u, history), alpha

    def curvature(self) -> poincare.Curv:
        """c as a float when fixed (fewer tensor ops per call), geoopt's tensor when learned."""
        return self.ball.c if self.s.learn_curvature else float(self.s.curvature)

    def logits(self, state: torch.Tensor, alpha: torch.Tensor, pairs: torch.Tensor, y=None):
        """Fermi-Dirac logits of node pairs (y: exp_0 of the states, when already computed)."""
        s = self.s
        return decoder.edge_logits(
            state, alpha, pairs, self.curvature(), s.ball_eps, s.fd_r, s.fd_t, y
        )


def normalised_graph(edges: np.ndarray, n_nodes: int, device: str):
    """edge_index (both directions) and GCN weights D^-1/2 (A + I) D^-1/2, computed once."""
    e = torch.as_tensor(edges.T, dtype=torch.long)
    edge_index = torch.cat([e, e.flip(0)], 1)
    edge_index, weight = gcn_norm(edge_index, None, n_nodes, add_self_loops=True)
    return edge_index.to(device), weight.to(device)


def new_edge_masks(edges: list[np.ndarray], n_nodes: int) -> list[np.ndarray]:
    """For each snapshot, which of its edges appear in no earlier snapshot (newly formed)."""
    seen = np.zeros(0, np.int64)
    out = []
    for e in edges:
        keys = edge_keys(e, n_nodes)
        out.append(~np.isin(keys, seen))
        seen = np.union1d(seen, keys)
    return out


def transitions(t_train: int, target: str) -> list[tuple[int, int]]:
    """(state time, target snapshot) pairs: predict the next snapshot, or reconstruct the same."""
    if target == "next":
        return [(t, t + 1) for t in range(t_train - 1)]
    return [(t, t) for t in range(t_train)]


def step_loss(
    model: CGDynR,
    states: torch.Tensor,
    alphas: torch.Tensor,
    edges: list[np.ndarray],
    new_masks: list[np.ndarray],
    keys: list[np.ndarray],
    pools: list[np.ndarray | None],
    n_nodes: int,
    rng: np.random.Generator,
    device: str,
) -> torch.Tensor:
    """The evolution-driven objective summed over the training transitions."""
    c = model.curvature()
    # the ball view exp_0(s^t) of every state, once (smoothness reuses it; None for euclid)
    ball = None if bool((alphas == 0).all()) else poincare.expmap0(states, c, model.s.ball_eps)
    total = states.new_zeros(())
    for t, tau in transitions(states.shape[0], model.s.target):
        total = total + transition_loss(
            model,
            (states[t], alphas[t], None if ball is None else ball[t]),
            None if t == 0 else (states[t - 1], None if ball is None else ball[t - 1]),
            tau, edges, new_masks, keys, pools, n_nodes, rng, device,
        )  # fmt: skip
    return total


def transition_loss(
    model: CGDynR,
    current: tuple[torch.Tensor, torch.Tensor, torch.Tensor | None],
    previous: tuple[torch.Tensor, torch.Tensor | None] | None,
    tau: int,
    edges: list[np.ndarray],
    new_masks: list[np.ndarray],
    keys: list[np.ndarray],
    pools: list[np.ndarray | None],
    n_nodes: int,
    rng: np.random.Generator,
    device: str,
) -> torch.Tensor:
    """The objective of one transition: the state s^t (`current`: state, gate, its ball view or None)
    scores snapshot tau (BCE against sampled non-edges, plus the new-edge term), and the nodal
    smoothness ties s^t to s^{t-1} (`previous`: state and ball view; None at t = 0). Non-edges are
    drawn among pools[tau] (the nodes that exist at snapshot tau) or, where that is None, among all
    nodes."""
    s = model.s
    state, alpha, ball = current
    pos = edges[tau]
    pool = pools[tau]
    neg = sample_non_edges(n_nodes, keys[tau], max(1, round(s.neg_ratio * len(pos))), rng, pool)
    new = pos[new_masks[tau]]
    use_change = s.lambda_chg > 0 and len(new) > 0 and tau > 0
    groups = [pos, neg]
    if use_change:  # persisting non-edges: absent both before and after the change
        exclude = np.concatenate([keys[tau], keys[tau - 1]])
        groups += [new, sample_non_edges(n_nodes, exclude, len(new), rng, pool)]
    # one decoder call per step: all pairs of the step scored together
    pairs = torch.as_tensor(np.concatenate(groups), device=device)
    logits = model.logits(state, alpha, pairs, ball)
    parts = torch.split(logits, [len(g) for g in groups])
    bce = objective.link_bce(parts[0], parts[1])
    change = objective.link_bce(parts[2], parts[3]) if use_change else bce.new_zeros(())
    smooth = bce.new_zeros(())
    if s.lambda_node > 0 and previous is not None:
        prev_state, prev_ball = previous
        smooth = objective.nodal_smoothness(
            decoder.mixed_sq_distance(
                state, prev_state, alpha, model.curvature(), s.ball_eps, ball, prev_ball
            )
        )
    return objective.evolution_loss(bce, smooth, change, s.lambda_node, s.lambda_chg)


def make_optimisers(model: nn.Module, lr: float, weight_decay: float) -> list:
    """Riemannian Adam for the ball-valued parameters (geoopt ManifoldParameters), Adam otherwise."""
    params = list(model.parameters())
    on_ball = [p for p in params if isinstance(p, geoopt.ManifoldParameter)]
    flat = [p for p in params if not isinstance(p, geoopt.ManifoldParameter)]
    optimisers = [torch.optim.Adam(flat, lr=lr, weight_decay=weight_decay)]
    if on_ball:
        optimisers.append(geoopt.optim.RiemannianAdam(on_ball, lr=lr, weight_decay=weight_decay))
    return optimisers


def train_cgdyn(
    snapshots: dict[str, Any],
    tree: np.ndarray,
    t_train: int,
    settings: Settings,
    seed: int,
    device: str = "cpu",
    label: str = "",
) -> tuple[CGDynR, list[dict[str, Any]]]:
    """Train on snapshots 0..t_train-1 for up to `epochs` (stopping after `patience` epochs without a
    lower loss); a non-finite loss stops with an error naming the run and the epoch."""
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    n = snapshots["num_nodes"]
    edges = snapshots["edges"][:t_train]
    graphs = [normalised_graph(e, n, device) for e in edges]
    keys = [edge_keys(e, n) for e in edges]
    # HTGN samples a snapshot's non-edges among ids up to the largest one in it (PyG infers
    # num_nodes), i.e. among the nodes seen so far when ids follow first appearance: `seen` takes
    # that rule by membership, whatever the id order; `all` also draws nodes that first appear later
    pools = seen_nodes(edges) if settings.negatives == "seen" else [None] * len(edges)
    new_masks = new_edge_masks(edges, n)
    tree_t = torch.as_tensor(tree[:t_train], dtype=torch.float32, device=device)
    model = CGDynR(n, settings).to(device)
    optimisers = make_optimisers(model, settings.lr, settings.weight_decay)
    epoch_loss = _per_snapshot_epoch if settings.schedule == "per_snapshot" else _sequence_epoch
    log, best, stale = [], math.inf, 0
    for epoch in range(settings.epochs):
        value = epoch_loss(
            model, optimisers, graphs, tree_t, edges, new_masks, keys, pools, rng, device
        )
        _check_finite(value, label, settings.mode, epoch)
        log.append({"epoch": epoch, "loss": value})
        if value < best - 1e-4:
            best, stale = value, 0
        else:
            stale += 1
            if stale >= settings.patience:
                break
    return model, log


def _check_finite(value: float, label: str, mode: str, epoch: int) -> None:
    if not math.isfinite(value):
        raise FloatingPointError(
            f"cross_geometric: training {label} ({mode}) gave a non-finite loss "
            f"({value}) at epoch {epoch}; lower cross_geometric.train.lr or raise "
            "cross_geometric.geometry.ball_eps"
        )


def _sequence_epoch(model, optimisers, graphs, tree_t, edges, new_masks, keys, pools, rng, device):
    """One optimiser step on the objective summed over every transition, back-propagated through
    the whole snapshot sequence (the default schedule)."""
    for opt in optimisers:
        opt.zero_grad()
    states, alphas = model(graphs, tree_t)
    n = model.features.shape[0]
    loss = step_loss(model, states, alphas, edges, new_masks, keys, pools, n, rng, device)
    value = float(loss.detach())
    if math.isfinite(value):
        loss.backward()
        for opt in optimisers:
            opt.step()
    return value


def _per_snapshot_epoch(
    model, optimisers, graphs, tree_t, edges, new_masks, keys, pools, rng, device
):
    """HTGN's schedule (marlin-codes/HTGN, main.py): one optimiser step per training snapshot, the
    state s^t computed from the detached earlier states, each step's loss being the transitions that
    start at t; the epoch's loss is the mean over its steps. Under target `next` the last training
    snapshot only extends the history (it has no later training snapshot to score)."""
    s = model.s
    n = model.features.shape[0]
    history: list[torch.Tensor] = []
    balls: list[torch.Tensor | None] = []
    by_start: dict[int, list[int]] = {}
    for t, tau in transitions(len(graphs), s.target):
        by_start.setdefault(t, []).append(tau)
    values = []
    for t, (edge_index, weight) in enumerate(graphs):
        for opt in optimisers:
            opt.zero_grad()
        c = model.curvature()
        state, alpha = model.step(edge_index, weight, tree_t[t], history, c)
        ball = None if bool((alpha == 0).all()) else poincare.expmap0(state, c, s.ball_eps)
        previous = (history[-1], balls[-1]) if history else None
        if t in by_start:
            loss = sum(
                transition_loss(
                    model,
                    (state, alpha, ball),
                    previous,
                    tau,
                    edges,
                    new_masks,
                    keys,
                    pools,
                    n,
                    rng,
                    device,
                )  # fmt: skip
                for tau in by_start[t]
            )
            value = float(loss.detach())
            values.append(value)
            if not math.isfinite(value):
                return value
            loss.backward()
            for opt in optimisers:
                opt.step()
        history.append(state.detach())
        balls.append(None if ball is None else ball.detach())
    return float(np.mean(values))


@torch.no_grad()
def final_state(model: CGDynR, snapshots: dict[str, Any], tree: np.ndarray, t_train: int, device):
    """States and gates over the training snapshots (the last state scores every test snapshot)."""
    n = snapshots["num_nodes"]
    graphs = [normalised_graph(e, n, device) for e in snapshots["edges"][:t_train]]
    tree_t = torch.as_tensor(tree[:t_train], dtype=torch.float32, device=device)
    return model(graphs, tree_t)


@torch.no_grad()
def link_probabilities(model: CGDynR, state, alpha, pairs: np.ndarray, device) -> np.ndarray:
    """Fermi-Dirac link probabilities of node pairs from the last training state."""
    if len(pairs) == 0:
        return np.zeros(0)
    logits = model.logits(state, alpha, torch.as_tensor(pairs, dtype=torch.long, device=device))
    return torch.sigmoid(logits).cpu().numpy().astype(float)


def score_evaluation_edges(model: CGDynR, state, alpha, tests: list[dict], device) -> list[dict]:
    """Probabilities of every test snapshot's all-link and new-link positives and negatives."""
    return [
        {
            "t": e["t"],
            **{
                k: link_probabilities(model, state, alpha, e[k], device)
                for k in ("pos", "neg", "new_pos", "new_neg")
            },
        }
        for e in tests
    ]


def train_and_score(
    snapshots: dict[str, dict[str, Any]],
    tree_scores: dict[str, np.ndarray],
    evaluation_edges: dict[str, list[dict]],
    settings: Settings,
    runs: list[tuple[str, int, int]],
    test_length: int,
    device: str = "cpu",
    method: str | None = None,
    n_jobs: int = 1,
) -> tuple[dict[str, torch.Tensor], list[dict[str, Any]], list[dict[str, Any]]]:
    """Train one configuration for every (source, seed index, seed) in `runs`: the state dicts
    (keys `<source>.seed<k>.<param>`), the training log rows, and the scored evaluation edges with
    the gates over the training snapshots."""
    method = method or settings.mode
    jobs = [(method, settings, run) for run in runs]
    done = train_jobs(
        snapshots, tree_scores, evaluation_edges, jobs, test_length, device, n_jobs, method
    )
    states = {
        f"{r['source']}.seed{r['seed']}.{name}": value
        for r in done
        for name, value in r["state"].items()
    }
    return states, [row for r in done for row in r["log"]], [r["scored"] for r in done]


def train_jobs(
    snapshots: dict[str, dict[str, Any]],
    tree_scores: dict[str, np.ndarray],
    evaluation_edges: dict[str, list[dict]],
    jobs: list[tuple[str, Settings, tuple[str, int, int]]],
    test_length: int,
    device: str = "cpu",
    n_jobs: int = 1,
    desc: str = "runs",
) -> list[dict[str, Any]]:
    """Every (method, settings, (source, seed index, seed)) job, in order: its state dict, log rows
    and scored evaluation edges. Runs are independent (each seeds its own generators), so on the CPU
    they go to ``n_jobs`` worker processes with the same results; on a GPU one at a time."""
    args = [
        (
            method,
            st,
            source,
            k,
            seed,
            snapshots[source],
            tree_scores[source],
            evaluation_edges[source],
            test_length,
            device,
        )  # fmt: skip
        for method, st, (source, k, seed) in jobs
    ]
    workers = n_jobs if device == "cpu" else 1
    done = run_parallel(_train_one, args, workers, f"train {desc}", logger, min_jobs=2)
    for r in done:
        logger.info(
            "%s on %s, seed %d: %d epochs, final loss %.4f",
            r["scored"]["method"], r["source"], r["seed"], len(r["log"]), r["log"][-1]["loss"],
        )  # fmt: skip
    return done


def _train_one(
    method: str,
    settings: Settings,
    source: str,
    k: int,
    seed: int,
    snaps: dict[str, Any],
    tree: np.ndarray,
    tests: list[dict],
    test_length: int,
    device: str,
) -> dict[str, Any]:
    t_train = len(snaps["edges"]) - test_length
    label = f"{method} on {source}, seed {k}"
    model, rows = train_cgdyn(snaps, tree, t_train, settings, seed, device, label)
    st, al = final_state(model, snaps, tree, t_train, device)
    return {
        "source": source,
        "seed": k,
        "state": {name: value.detach().cpu() for name, value in model.state_dict().items()},
        "log": [{"method": method, "source": source, "seed": k, **r} for r in rows],
        "scored": {
            "method": method,
            "source": source,
            "seed": k,
            "tests": score_evaluation_edges(model, st[-1], al[-1], tests, device),
            "alpha": al.cpu().numpy(),
        },
    }
