"""Ingest dispatch, the generators' exact rules and the split's edge cases, each checkable by hand."""

from types import SimpleNamespace

import networkx as nx
import numpy as np
import pandas as pd
import pytest

from paper_pipelines.pipelines.leaf_matching import data
from paper_pipelines.pipelines.leaf_matching.observed_links import (
    _keys,
    deduplicate,
    observed_split,
    sample_non_edges,
    validation_carve_out,
)

SPEC = SimpleNamespace(n_nodes=64, levels=2, beta=4.0, mean_degree=6.0)


def rng(seed: int = 3) -> np.random.Generator:
    return np.random.default_rng(seed)


@pytest.mark.parametrize(
    "source, expected",
    [
        ("hsbm", lambda: data.hierarchical_sbm(64, 2, 4.0, 6.0, rng())),
        ("er", lambda: data.erdos_renyi(64, 6.0, rng())),
        ("karate", lambda: data.small_graph("karate")),
        ("les_miserables", lambda: data.small_graph("les_miserables")),
    ],
)
def test_load_graph_builds_each_source_from_its_data_block(source, expected):
    pd.testing.assert_frame_equal(data.load_graph(source, SPEC, rng()), expected())


def test_load_graph_reads_pubmed_from_the_wheel():
    assert len(data.load_graph("pubmed", SPEC, rng())) == len(data.read_pubmed())


def test_user_edges_keep_their_first_column_as_source_whatever_the_names():
    table = pd.DataFrame({"a": [0.0, 2.0], "b": [1.0, 3.0]})
    out = data.load_graph("user_edges", SPEC, rng(), user_edges=table)
    assert list(out.columns) == ["src", "dst"]
    assert out["src"].tolist() == [0, 2] and out["dst"].tolist() == [1, 3]
    assert out.dtypes.tolist() == [np.int64, np.int64]
    with pytest.raises(ValueError, match="needs the catalog entry leaf_matching.user_edges"):
        data.load_graph("user_edges", SPEC, rng(), user_edges=table.iloc[:0])


def test_edge_frame_names_and_types():
    out = data.edge_frame(np.array([1.0, 2.0]), np.array([3.0, 4.0]))
    assert list(out.columns) == ["src", "dst"] and out.dtypes.tolist() == [np.int64, np.int64]


def test_hsbm_links_only_distinct_ordered_pairs_neighbours_included():
    edges = data.hierarchical_sbm(32, 1, 2.0, 20.0, rng(0)).to_numpy()
    assert np.all(edges[:, 0] < edges[:, 1])
    assert np.any(edges[:, 1] - edges[:, 0] == 1)  # k=1: adjacent ids can link


def test_erdos_renyi_uses_p_equal_degree_over_n_minus_one():
    # n = 3, degree 2: p = 2 / (3 - 1) = 1, the triangle every time
    assert all(len(data.erdos_renyi(3, 2.0, rng(s))) == 3 for s in range(10))
    # degree 1: p = 1/2, so some draw misses an edge
    assert any(len(data.erdos_renyi(3, 1.0, rng(s))) < 3 for s in range(10))


def test_erdos_renyi_is_networkx_seeded_from_the_stream():
    seed = int(rng(5).integers(2**31))
    expected = nx.fast_gnp_random_graph(50, 4.0 / 49, seed=seed)
    got = data.erdos_renyi(50, 4.0, rng(5))
    assert sorted(map(tuple, got.to_numpy().tolist())) == sorted(expected.edges())
    assert np.all(got["src"] < got["dst"])


def test_small_graphs_have_their_textbook_sizes():
    les = data.small_graph("les_miserables")
    assert len(les) == 254 and les.to_numpy().max() == 76
    assert data.small_graph("karate").to_numpy().max() == 33


def test_deduplicate_returns_integer_ids():
    assert deduplicate(np.array([[1.0, 0.0]])).dtype == np.int64


def test_sampling_needs_two_nodes_and_draws_exactly_count():
    assert len(sample_non_edges(5, np.array([3]), np.array([], np.int64), 4, rng())) == 0
    two = sample_non_edges(4, np.array([0, 1]), np.array([], np.int64), 2, rng())
    assert len(two) == 4 and {tuple(sorted(p)) for p in two.tolist()} == {(0, 1)}
    assert len(sample_non_edges(1, np.array([0, 1, 2]), np.array([], np.int64), 3, rng())) == 1


def test_sampling_reaches_every_node_and_never_the_largest_forbidden_key():
    nodes = np.array([0, 1, 2])
    forbidden = np.sort(_keys(np.array([[0, 1], [1, 2]]), 3))
    pairs = sample_non_edges(60, nodes, forbidden, 3, rng(1))
    assert {tuple(sorted(p)) for p in pairs.tolist()} == {(0, 2)}
    free = sample_non_edges(60, nodes, np.array([], np.int64), 3, rng(2))
    assert 0 in free  # the first node is drawn too


def test_split_rejects_mu_outside_the_open_interval_by_name():
    edges = data.small_graph("karate").to_numpy()
    with pytest.raises(ValueError, match=r"must be in \(0, 1\)"):
        observed_split(edges, 0.0, 5, rng())


def test_split_with_a_single_observed_edge_works():
    chain = np.array([[i, i + 1] for i in range(10)])
    split = observed_split(chain, 0.1, 1, rng())
    assert len(split["train"]) == 1 and split["n_nodes"] == 2
    assert split["mu"] == 0.1 and split["n_edges_total"] == 10


def test_test_positives_are_exactly_the_unobserved_edges_between_observed_nodes():
    edges = deduplicate(data.small_graph("les_miserables").to_numpy())
    for seed in range(3):
        split = observed_split(edges, 0.3, 2, rng(seed))
        assert split["test_pos"].min() >= 0 and split["test_neg"].min() >= 0
        # map back through the relabelling: observed nodes in id order
        shuffled = edges[rng(seed).permutation(len(edges))]
        train = shuffled[: int(0.3 * len(edges))]
        nodes = np.unique(train)
        rest = shuffled[int(0.3 * len(edges)) :]
        inside = rest[np.isin(rest[:, 0], nodes) & np.isin(rest[:, 1], nodes)]
        expected = np.searchsorted(nodes, inside)
        assert split["test_pos"].tolist() == expected.tolist()


def test_carve_out_holds_one_edge_at_least_and_filters_by_kept_degree():
    tree = np.array([[i, j] for j in range(1, 40) for i in [(j - 1) // 3]])  # a ternary tree
    val = validation_carve_out(tree, 40, 0.01, 1, rng())
    assert len(val["train"]) == len(tree) - 1
    for seed in range(5):
        val = validation_carve_out(tree, 40, 0.3, 3, rng(seed))
        kept = {tuple(e) for e in val["train"].tolist()}
        held_all = [e for e in tree.tolist() if tuple(e) not in kept]
        degree = np.bincount(val["train"].ravel(), minlength=40)
        expected = [e for e in held_all if degree[e[0]] > 0 and degree[e[1]] > 0]
        assert sorted(val["test_pos"].tolist()) == sorted(expected) and expected
        assert np.all(degree[val["test_neg"]] > 0)
    # leaves (degree 1) are drawn as negatives too
    draws = np.concatenate(
        [validation_carve_out(tree, 40, 0.3, 3, rng(s))["test_neg"].ravel() for s in range(5)]
    )
    assert np.any(np.bincount(tree.ravel(), minlength=40)[draws] == 1)


def test_carve_out_tolerates_a_top_id_seen_only_in_held_edges():
    edges = np.array([[0, 1], [1, 2], [2, 3], [3, 9]])
    for seed in range(10):
        validation_carve_out(edges, 10, 0.5, 1, rng(seed))


def test_hits_with_exactly_k_negatives_still_ranks_against_the_last():
    from paper_pipelines.pipelines.leaf_matching.metrics import hits_at_k

    # k = 3 = |neg|: the 3rd best negative is 0.1; 0.05 falls below it
    assert hits_at_k(np.array([0.05, 0.5]), np.array([0.9, 0.5, 0.1]), 3) == 0.5
