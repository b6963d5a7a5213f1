"""Training plumbing on a tiny graph: transitions, new-edge masks, optimisers, a short run, the
non-finite-loss stop, scoring; and the static GAE baseline."""

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
        loss = training.step_loss(model, states, alphas, EDGES[:3], masks, keys, 6, np.random.default_rng(0), "cpu")  # fmt: skip  # noqa: E501
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
