"""Training plumbing on a tiny graph: transitions, new-edge masks, optimisers, a short run, the
non-finite-loss stop, scoring; and the static GAE baseline."""

import math

import numpy as np
import pytest
import torch

from paper_pipelines.pipelines.cross_geometric import baselines, training
from paper_pipelines.pipelines.cross_geometric.snapshots import evaluation_edges

EDGES = [np.array([[0, 1], [1, 2], [2, 3]]), np.array([[0, 1], [2, 3], [3, 4]]),
         np.array([[1, 2], [3, 4], [4, 5]]), np.array([[0, 1], [4, 5], [0, 5]]),
         np.array([[1, 2], [2, 3], [0, 5]])]  # fmt: skip
SNAPS = {"edges": EDGES, "num_nodes": 6, "regions": np.array(["unknown"] * 6, dtype=object)}
TREE = np.zeros((5, 6), np.float32)


def test_transitions():
    assert training.transitions(3, "next") == [(0, 1), (1, 2)]
    assert training.transitions(2, "same") == [(0, 0), (1, 1)]


def test_new_edge_masks():
    masks = training.new_edge_masks(EDGES[:3], 6)
    assert [m.tolist() for m in masks] == [[True] * 3, [False, False, True], [False, False, True]]


def test_normalised_graph_is_symmetric_gcn_propagation():
    edge_index, weight = training.normalised_graph(np.array([[0, 1]]), 3, "cpu")
    dense = torch.zeros(3, 3)
    dense[edge_index[0], edge_index[1]] = weight
    # degrees with self-loops 2, 2, 1: off-diagonal 1/2, diagonal 1/2, 1/2, 1
    assert torch.allclose(dense, torch.tensor([[0.5, 0.5, 0], [0.5, 0.5, 0], [0, 0, 1.0]]))


def test_optimisers_split_ball_and_flat_parameters():
    model = training.CGDynR(6, training.Settings(mode="hyperbolic", dim=4))
    opts = training.make_optimisers(model, 0.01, 0.0)
    assert type(opts[0]).__name__ == "Adam" and type(opts[1]).__name__ == "RiemannianAdam"
    assert len(opts[1].param_groups[0]["params"]) == 2  # the two HGCN biases live on the ball
    flat = training.make_optimisers(training.CGDynR(6, training.Settings(mode="euclid", dim=4)), 0.01, 0.0)  # fmt: skip  # noqa: E501
    assert len(flat) == 1


@pytest.mark.parametrize("mode", ["euclid", "hybrid_gate"])
def test_short_training_lowers_the_loss_and_scores_links(mode):
    s = training.Settings(mode=mode, dim=4, epochs=15, lr=0.05, window=2)
    model, log = training.train_cgdyn(SNAPS, TREE, 3, s, seed=0)
    assert len(log) == 15 and log[-1]["loss"] < log[0]["loss"]
    states, alphas = training.final_state(model, SNAPS, TREE, 3, "cpu")
    assert states.shape == (3, 6, 4) and alphas.shape == (3, 6)
    probs = training.link_probabilities(model, states[-1], alphas[-1], np.array([[0, 1], [2, 5]]), "cpu")  # fmt: skip  # noqa: E501
    assert probs.shape == (2,) and ((probs > 0) & (probs < 1)).all()
    assert training.link_probabilities(model, states[-1], alphas[-1], np.zeros((0, 2), int), "cpu").size == 0  # fmt: skip  # noqa: E501


def test_patience_stops_early_and_same_seed_repeats():
    s = training.Settings(mode="euclid", dim=4, epochs=30, lr=0.0, patience=3)
    _, log = training.train_cgdyn(SNAPS, TREE, 3, s, seed=1)
    assert len(log) < 30
    s = training.Settings(mode="euclid", dim=4, epochs=3)
    assert training.train_cgdyn(SNAPS, TREE, 3, s, seed=2)[1] == training.train_cgdyn(SNAPS, TREE, 3, s, seed=2)[1]  # fmt: skip  # noqa: E501


def test_non_finite_loss_names_the_run_and_epoch():
    s = training.Settings(mode="hyperbolic", dim=4, epochs=5, lr=float("inf"))
    with pytest.raises(FloatingPointError, match=r"mixed, seed 0 \(hyperbolic\).*epoch 1"):
        training.train_cgdyn(SNAPS, TREE, 3, s, seed=0, label="mixed, seed 0")


def test_step_loss_terms_switch_off():
    torch.manual_seed(0)
    base = dict(mode="hybrid_gate", dim=4, window=2)
    keys = [training.edge_keys(e, 6) for e in EDGES[:3]]
    masks = training.new_edge_masks(EDGES[:3], 6)
    values = {}
    for name, extra in {
        "full": {},
        "no_node": {"lambda_node": 0.0},
        "no_chg": {"lambda_chg": 0.0},
    }.items():  # noqa: E501
        torch.manual_seed(0)
        model = training.CGDynR(6, training.Settings(**base, **extra))
        states, alphas = model(
            [training.normalised_graph(e, 6, "cpu") for e in EDGES[:3]], torch.zeros(3, 6)
        )
        loss = training.step_loss(model, states, alphas, EDGES[:3], masks, keys, [None] * 3, 6, np.random.default_rng(0), "cpu")  # fmt: skip  # noqa: E501
        values[name] = float(loss)
    assert values["full"] > values["no_node"] and values["full"] > values["no_chg"]


def test_train_and_score_keys_and_rows():
    tests = {"g": evaluation_edges(SNAPS, 2, 1, np.random.default_rng(0))}
    s = training.Settings(mode="hybrid_gate", dim=4, epochs=2, window=2)
    states, log, scored = training.train_and_score({"g": SNAPS}, {"g": TREE}, tests, s, [("g", 0, 5), ("g", 1, 6)], 2)  # fmt: skip  # noqa: E501
    assert any(k.startswith("g.seed1.") for k in states) and len(log) == 4
    assert [(e["source"], e["seed"], e["method"]) for e in scored] == [("g", 0, "hybrid_gate"), ("g", 1, "hybrid_gate")]  # fmt: skip  # noqa: E501
    assert scored[0]["alpha"].shape == (3, 6) and len(scored[0]["tests"]) == 2
    assert len(scored[0]["tests"][0]["pos"]) == len(tests["g"][0]["pos"])


def test_static_gae_on_the_union_graph():
    union = baselines.union_edge_index([np.array([[0, 1]]), np.array([[0, 1], [1, 2]])])
    assert union.shape == (2, 4)
    tests = {"g": evaluation_edges(SNAPS, 2, 1, np.random.default_rng(0))}
    states, scored = baselines.fit_and_score_gae({"g": SNAPS}, tests, [("g", 0, 3)], 4, 5, 0.01, 2)
    assert any(k.startswith("g.seed0.") for k in states)
    p = scored[0]["tests"][0]["pos"]
    assert scored[0]["method"] == "static_gae" and ((p > 0) & (p < 1)).all()


def _same_results(a: list, b: list) -> None:
    for x, y in zip(a, b, strict=True):
        assert (x["method"], x["source"], x["seed"]) == (y["method"], y["source"], y["seed"])
        for tx, ty in zip(x["tests"], y["tests"], strict=True):
            for key in ("pos", "neg", "new_pos", "new_neg"):
                np.testing.assert_array_equal(tx[key], ty[key])


def test_runs_on_two_workers_equal_the_runs_in_process():
    """Each run seeds its own generators, so worker processes give bit-identical results."""
    tests = {"g": evaluation_edges(SNAPS, 2, 1, np.random.default_rng(0))}
    s = training.Settings(mode="hybrid_gate", dim=4, epochs=2, window=2)
    runs = [("g", 0, 5), ("g", 1, 6)]
    serial = training.train_and_score({"g": SNAPS}, {"g": TREE}, tests, s, runs, 2, n_jobs=1)
    parallel = training.train_and_score({"g": SNAPS}, {"g": TREE}, tests, s, runs, 2, n_jobs=2)
    assert serial[0].keys() == parallel[0].keys()
    assert all(torch.equal(serial[0][k], parallel[0][k]) for k in serial[0])
    assert serial[1] == parallel[1]
    _same_results(serial[2], parallel[2])
    gae_serial = baselines.fit_and_score_gae({"g": SNAPS}, tests, runs, 4, 3, 0.01, 2, n_jobs=1)
    gae_parallel = baselines.fit_and_score_gae({"g": SNAPS}, tests, runs, 4, 3, 0.01, 2, n_jobs=2)
    _same_results(gae_serial[1], gae_parallel[1])


def test_the_static_gae_is_reproducible_whatever_pythons_random_state():
    """PyG's negative sampling draws from Python's `random`: the fit seeds it and restores it."""
    import random

    edges = EDGES[:3]
    random.seed(1)
    first = baselines.train_static_gae(edges, 6, 4, 5, 0.01, seed=3).state_dict()
    after = random.random()
    random.seed(2)
    second = baselines.train_static_gae(edges, 6, 4, 5, 0.01, seed=3).state_dict()
    assert all(torch.equal(first[k], second[k]) for k in first)
    random.seed(1)
    assert random.random() == after  # the caller's stream is untouched by the fit
    other = baselines.train_static_gae(edges, 6, 4, 5, 0.01, seed=4).state_dict()
    assert not all(torch.equal(first[k], other[k]) for k in first)


def _sp(x: float) -> float:
    """softplus: the BCE of a logit -x with label 1, or of x with label 0."""
    return math.log1p(math.exp(x))


def _step_loss(settings, states, alphas, edges=EDGES[:3], seed=0):
    model = training.CGDynR(6, settings)
    keys = [training.edge_keys(e, 6) for e in edges]
    masks = training.new_edge_masks(edges, 6)
    rng = np.random.default_rng(seed)
    return float(
        training.step_loss(
            model, states, alphas, edges, masks, keys, [None] * len(edges), 6, rng, "cpu"
        )
    )


@pytest.mark.parametrize(("neg_ratio", "n_neg"), [(1.0, 3), (2.0, 6), (0.1, 1)])
def test_step_loss_by_hand_with_every_state_equal(neg_ratio, n_neg):
    # every state 0: every distance is 0, every logit r / t = 2, so each BCE is a weighted mean of
    # softplus(-2) over the 3 positives and softplus(2) over the round(neg_ratio * 3) negatives (at least
    # one); both transitions (0 -> 1, 1 -> 2) have one new edge, scored against one persisting non-edge
    s = training.Settings(
        mode="euclid", dim=2, lambda_node=0.1, lambda_chg=0.5, neg_ratio=neg_ratio
    )
    bce = (3 * _sp(-2.0) + n_neg * _sp(2.0)) / (3 + n_neg)
    change = (_sp(-2.0) + _sp(2.0)) / 2
    loss = _step_loss(s, torch.zeros(3, 6, 2), torch.zeros(3, 6))
    assert loss == pytest.approx(2 * (bce + 0.5 * change), rel=1e-6)
    s0 = training.Settings(mode="euclid", dim=2, lambda_chg=0.0, neg_ratio=neg_ratio)
    assert _step_loss(s0, torch.zeros(3, 6, 2), torch.zeros(3, 6)) == pytest.approx(
        2 * bce, rel=1e-6
    )
    # reconstructing the same snapshot: three transitions, the first (tau = 0) without the change term
    same = training.Settings(mode="euclid", dim=2, target="same", neg_ratio=neg_ratio)
    assert _step_loss(same, torch.zeros(3, 6, 2), torch.zeros(3, 6)) == pytest.approx(
        3 * bce + 2 * 0.5 * change, rel=1e-6
    )


@pytest.mark.parametrize(("gate", "factor"), [(0.0, 1.0), (1.0, 4.0), (0.5, 2.5)])
def test_step_loss_smoothness_by_hand(gate, factor):
    # all nodes share one state per snapshot, so every logit is still 2; the state moves 0 -> v -> v
    # (|v| = 0.3): only the step 1 -> 2 (state time t = 1) adds lambda_node D(s^1, s^0), with
    # D = |v|^2 in the Euclidean view and d_B(0, exp_0 v)^2 = (2 |v|)^2 on the ball (c = 1)
    v = torch.tensor([0.3, 0.0])
    states = torch.stack([torch.zeros(6, 2), v.expand(6, 2), v.expand(6, 2)])
    alphas = torch.full((3, 6), gate)
    s = training.Settings(mode="hybrid_gate", dim=2, lambda_node=0.1, lambda_chg=0.0)
    base = 2 * (3 * _sp(-2.0) + 3 * _sp(2.0)) / 6
    smooth = factor * 0.09  # (1 - a) |v|^2 + a (2 |v|)^2
    assert _step_loss(s, states, alphas) == pytest.approx(base + 0.1 * smooth, rel=1e-5)
    off = training.Settings(mode="hybrid_gate", dim=2, lambda_node=0.0, lambda_chg=0.0)
    assert _step_loss(off, states, alphas) == pytest.approx(base, rel=1e-6)


def test_a_constant_loss_stops_after_patience_epochs():
    # identical snapshots on 4 nodes with 5 edges leave one non-edge, the only negative (neg_ratio 0.2),
    # and no new edge after the first: with lr 0 the loss is the same every epoch, so training stops
    # once `patience` epochs have passed without a lower loss (1 + patience epochs logged)
    edges = [np.array([[0, 1], [0, 2], [0, 3], [1, 2], [1, 3]])] * 4
    snaps = {"edges": edges, "num_nodes": 4}
    s = training.Settings(mode="euclid", dim=2, epochs=20, lr=0.0, patience=3, neg_ratio=0.2)
    _, log = training.train_cgdyn(snaps, np.zeros((4, 4), np.float32), 3, s, seed=0)
    assert len(log) == 4 and len({row["loss"] for row in log}) == 1
    assert [row["epoch"] for row in log] == [0, 1, 2, 3]


def test_node_features_start_small():
    # 0.1 * N(0, 1) features keep exp_0 well inside the ball at the start
    torch.manual_seed(0)
    model = training.CGDynR(500, training.Settings(mode="euclid", dim=16))
    std = float(model.features.detach().std())
    assert 0.095 < std < 0.105 and model.features.shape == (500, 16)


def test_a_learned_curvature_gets_a_gradient_and_a_fixed_one_is_a_float():
    s = training.Settings(mode="hyperbolic", dim=4, window=2, learn_curvature=True, curvature=2.0)
    torch.manual_seed(0)
    model = training.CGDynR(6, s)
    c = model.curvature()
    assert isinstance(c, torch.Tensor) and float(c.detach()) == pytest.approx(2.0)
    graphs = [training.normalised_graph(e, 6, "cpu") for e in EDGES[:3]]
    states, alphas = model(graphs, torch.zeros(3, 6))
    keys = [training.edge_keys(e, 6) for e in EDGES[:3]]
    masks = training.new_edge_masks(EDGES[:3], 6)
    loss = training.step_loss(model, states, alphas, EDGES[:3], masks, keys, [None] * 3, 6, np.random.default_rng(0), "cpu")  # fmt: skip  # noqa: E501
    loss.backward()
    grad = model.ball.isp_c.grad
    assert grad is not None and float(grad.abs()) > 0
    fixed = training.CGDynR(6, training.Settings(mode="hyperbolic", dim=4, curvature=2.0))
    assert fixed.curvature() == 2.0 and isinstance(fixed.curvature(), float)


def test_gae_encoder_starts_from_small_features_through_2d_then_d_channels():
    torch.manual_seed(0)
    enc = baselines.GCNEncoder(500, 16)
    std = float(enc.features.detach().std())
    assert 0.095 < std < 0.105 and float(enc.features.detach().abs().max()) < 1.0
    assert (enc.conv1.in_channels, enc.conv1.out_channels) == (16, 32)
    assert (enc.conv2.in_channels, enc.conv2.out_channels) == (32, 16)
    assert enc(torch.tensor([[0, 1], [1, 0]])).shape == (500, 16)


def _count_steps(monkeypatch):
    """Wrap every optimiser's step so a test can count the steps one epoch takes."""
    made = training.make_optimisers
    counter = {"steps": 0}

    def counted(*args, **kwargs):
        optimisers = made(*args, **kwargs)
        first = optimisers[0]
        original = first.step

        def step(*a, **k):
            counter["steps"] += 1
            return original(*a, **k)

        first.step = step
        return optimisers

    monkeypatch.setattr(training, "make_optimisers", counted)
    return counter


@pytest.mark.parametrize(("target", "steps"), [("same", 4), ("next", 3)])
def test_per_snapshot_takes_one_step_per_scored_snapshot(monkeypatch, target, steps):
    counter = _count_steps(monkeypatch)
    s = training.Settings(mode="hyperbolic", dim=4, epochs=2, window=2, target=target,
                          schedule="per_snapshot")  # fmt: skip
    _, log = training.train_cgdyn(SNAPS, TREE, 4, s, seed=0)
    assert len(log) == 2 and counter["steps"] == 2 * steps  # HTGN: one step per training snapshot


def test_the_sequence_schedule_takes_one_step_per_epoch(monkeypatch):
    counter = _count_steps(monkeypatch)
    s = training.Settings(mode="hyperbolic", dim=4, epochs=3, window=2)
    training.train_cgdyn(SNAPS, TREE, 4, s, seed=0)
    assert counter["steps"] == 3


def test_per_snapshot_loss_is_the_mean_of_its_steps_and_history_is_detached(monkeypatch):
    s = training.Settings(mode="hyperbolic", dim=4, epochs=1, window=2, target="same",
                          schedule="per_snapshot", lr=0.0)  # fmt: skip
    seen = []
    original = training.transition_loss

    def spy(model, current, previous, *rest):
        seen.append(previous is None or not previous[0].requires_grad)
        return original(model, current, previous, *rest)

    monkeypatch.setattr(training, "transition_loss", spy)
    model, log = training.train_cgdyn(SNAPS, TREE, 3, s, seed=0)
    assert len(seen) == 3 and all(seen)  # s^{t-1} enters each step without a gradient path
    # with lr 0 the model is unchanged, so each step's loss can be recomputed from the final states
    monkeypatch.setattr(training, "transition_loss", original)
    states, alphas = training.final_state(model, SNAPS, TREE, 3, "cpu")
    rng = np.random.default_rng(0)
    keys = [training.edge_keys(e, 6) for e in EDGES[:3]]
    masks = training.new_edge_masks(EDGES[:3], 6)
    per_step = [
        float(original(model, (states[t], alphas[t], None), None if t == 0 else (states[t - 1], None),
                       t, EDGES[:3], masks, keys, training.seen_nodes(EDGES[:3]), 6, rng, "cpu"))
        for t in range(3)
    ]  # fmt: skip
    assert log[0]["loss"] == pytest.approx(np.mean(per_step), rel=1e-5)


def test_feed_state_reads_the_previous_state():
    s = training.Settings(mode="hyperbolic", dim=4, window=2, feed_state=True)
    torch.manual_seed(0)
    model = training.CGDynR(6, s)
    assert model.geometry.hyper[0].weight.shape == (4, 8)  # [x ; s^{t-1}] into the first layer
    graph = training.normalised_graph(EDGES[0], 6, "cpu")
    with torch.no_grad():
        a, _ = model.step(*graph, torch.zeros(6), [torch.zeros(6, 4)], 1.0)
        b, _ = model.step(*graph, torch.zeros(6), [torch.ones(6, 4)], 1.0)
        off = training.CGDynR(6, training.Settings(mode="hyperbolic", dim=4, window=2))
        assert off.geometry.hyper[0].weight.shape == (4, 4)
    assert not torch.allclose(a, b)


@pytest.mark.parametrize("negatives", ["seen", "all"])
def test_training_non_edges_come_from_the_nodes_that_exist(monkeypatch, negatives):
    # EDGES[:3]: nodes 0-3 exist at t = 0, node 4 joins at t = 1 and node 5 at t = 2
    drawn = {}
    original = training.sample_non_edges

    def spy(n_nodes, exclude, count, rng, nodes=None):
        out = original(n_nodes, exclude, count, rng, nodes)
        drawn.setdefault(None if nodes is None else tuple(nodes.tolist()), []).append(out)
        return out

    monkeypatch.setattr(training, "sample_non_edges", spy)
    s = training.Settings(mode="euclid", dim=4, epochs=4, window=2, target="same",
                          lambda_chg=0.0, negatives=negatives)  # fmt: skip
    training.train_cgdyn(SNAPS, TREE, 3, s, seed=0)
    if negatives == "all":
        assert list(drawn) == [None]
        assert len(drawn[None]) == 12  # 3 snapshots x 4 epochs, all from all six nodes
        assert any(
            (p == 5).any() for p in drawn[None][:4]
        )  # at seed 0 node 5 is drawn before it exists
        return
    assert set(drawn) == {(0, 1, 2, 3), (0, 1, 2, 3, 4), (0, 1, 2, 3, 4, 5)}
    # at t = 0 only nodes 0-3 exist: the non-edges of the path 0-1-2-3 there are 0-2, 0-3, 1-3
    for pairs in drawn[(0, 1, 2, 3)]:
        assert sorted(map(tuple, pairs.tolist())) == [(0, 2), (0, 3), (1, 3)]
    assert all(int(p.max()) <= 4 for p in drawn[(0, 1, 2, 3, 4)])
