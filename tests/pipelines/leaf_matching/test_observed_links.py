"""The scarce-links split and the data generators on small graphs."""

import numpy as np
import pytest

from paper_pipelines.pipelines.leaf_matching import data
from paper_pipelines.pipelines.leaf_matching.observed_links import (
    deduplicate,
    observed_split,
    validation_carve_out,
)


def test_deduplicate_drops_repeats_directions_and_loops():
    edges = np.array([[1, 0], [0, 1], [2, 2], [2, 3]])
    assert deduplicate(edges).tolist() == [[0, 1], [2, 3]]


def test_split_follows_the_official_rules():
    raw = data.small_graph("les_miserables").to_numpy()
    edges = deduplicate(raw)
    split = observed_split(raw, 0.4, 5, np.random.default_rng(0))
    n = split["n_nodes"]
    assert len(split["train"]) == int(0.4 * len(edges))
    assert n == len(np.unique(split["train"]))  # relabelled to the observed nodes
    assert split["test_pos"].max() < n and split["test_neg"].max() < n
    assert len(split["test_neg"]) == 5 * len(split["test_pos"])
    assert len(split["train"]) + len(split["test_pos"]) <= len(edges)
    # negatives are edges nowhere: not observed, not test
    known = {tuple(sorted(e)) for e in np.concatenate([split["train"], split["test_pos"]]).tolist()}
    assert not any(tuple(sorted(e)) in known for e in split["test_neg"].tolist())
    assert np.all(split["test_neg"][:, 0] != split["test_neg"][:, 1])


def test_negatives_avoid_unobserved_true_edges():
    # a 6-cycle plus chords: with everything but one edge observed, that edge is never a negative
    edges = np.array([[0, 1], [1, 2], [2, 3], [3, 4], [4, 5], [5, 0], [0, 3]])
    for seed in range(5):
        split = observed_split(edges, 0.9, 5, np.random.default_rng(seed))
        train = {tuple(sorted(e)) for e in split["train"].tolist()}
        held = {tuple(sorted(e)) for e in split["test_pos"].tolist()}
        assert len(held) == 1 and not held & train
        assert all(tuple(sorted(e)) not in held for e in split["test_neg"].tolist())


@pytest.mark.parametrize("mu", [0.0, 1.0, 0.01])
def test_split_without_observed_links_fails_clearly(mu):
    edges = data.small_graph("karate").to_numpy()
    with pytest.raises(ValueError, match=r"mu"):
        observed_split(edges, mu, 5, np.random.default_rng(0))


def test_validation_carve_out_keeps_ids_and_holds_out_a_tenth():
    split = observed_split(
        data.small_graph("les_miserables").to_numpy(), 0.8, 5, np.random.default_rng(1)
    )
    val = validation_carve_out(split["train"], split["n_nodes"], 0.1, 5, np.random.default_rng(2))
    assert len(val["train"]) == len(split["train"]) - round(0.1 * len(split["train"]))
    assert val["n_nodes"] == split["n_nodes"] and len(val["test_neg"]) == 5 * len(val["test_pos"])
    degree = np.bincount(val["train"].ravel(), minlength=val["n_nodes"])
    assert np.all(degree[val["test_pos"]] > 0)


def test_hsbm_has_the_target_mean_degree_and_hierarchy():
    edges = data.hierarchical_sbm(512, 4, 4.0, 12.0, np.random.default_rng(0)).to_numpy()
    assert 2 * len(edges) / 512 == pytest.approx(12.0, rel=0.05)
    blocks = edges * 16 // 512
    level = data.block_level(blocks[:, 0], blocks[:, 1])
    counts = np.bincount(level, minlength=5)
    # pairs per level grow 2x per level while probability falls 4x: edges halve per level
    assert counts[0] > counts[1] > counts[2] > counts[3] > counts[4]


def test_block_level_by_hand():
    assert data.block_level(np.array([0, 0, 0, 5]), np.array([0, 1, 2, 6])).tolist() == [0, 1, 2, 2]


def test_pubmed_is_read_from_the_wheel():
    edges = deduplicate(data.read_pubmed().to_numpy())
    assert len(edges) == 44324 and edges.max() < 19717


def test_graph_sources_and_bad_source():
    assert len(data.small_graph("karate")) == 78
    er = data.erdos_renyi(400, 5.0, np.random.default_rng(0))
    assert 2 * len(er) / 400 == pytest.approx(5.0, rel=0.15)
    with pytest.raises(ValueError, match="user_edges"):
        data.load_graph("user_edges", None, np.random.default_rng(0))
    with pytest.raises(ValueError, match="unknown data source"):
        data.load_graph("cora", None, np.random.default_rng(0))
