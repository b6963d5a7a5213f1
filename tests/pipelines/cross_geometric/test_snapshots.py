"""Snapshot building and evaluation edges on hand-made event lists."""

import numpy as np
import pandas as pd
import pytest

from paper_pipelines.pipelines.cross_geometric import snapshots as sn


def test_undirected_unique_sorts_dedupes_and_drops_self_loops():
    out = sn.undirected_unique(np.array([[2, 1], [1, 2], [3, 3], [0, 4], [4, 0], [1, 0]]))
    assert out.tolist() == [[0, 1], [0, 4], [1, 2]]


def test_edge_keys():
    assert sn.edge_keys(np.array([[0, 1], [2, 3]]), 10).tolist() == [1, 23]


def test_equal_count_chunks_preserve_every_event_in_time_order():
    events = pd.DataFrame({"u": [5, 1, 2, 3, 4, 6, 7], "v": [6, 2, 3, 4, 5, 7, 8],
                           "t": [9, 1, 2, 3, 4, 10, 11]})  # fmt: skip
    chunks = sn.equal_count_chunks(events, 3)
    assert [len(c) for c in chunks] == [3, 2, 2]
    assert chunks[0].tolist() == [[1, 2], [2, 3], [3, 4]]
    snaps = sn.build_snapshots(chunks)
    assert sum(len(e) for e in snaps["edges"]) == len(events)  # no duplicates: the count is kept


def test_timestamp_chunks_one_per_value():
    events = pd.DataFrame({"u": [0, 1, 2], "v": [1, 2, 3], "t": [2001, 2000, 2001]})
    chunks = sn.timestamp_chunks(events)
    assert [c.tolist() for c in chunks] == [[[1, 2]], [[0, 1], [2, 3]]]


def test_build_snapshots_relabels_nodes_and_keeps_regions():
    chunks = [np.array([[10, 30], [30, 10]]), np.array([[20, 10], [20, 20]])]
    snaps = sn.build_snapshots(chunks, {10: "hyperbolic", 20: "euclidean"})
    assert snaps["num_nodes"] == 3 and snaps["node_ids"].tolist() == [10, 20, 30]
    assert snaps["edges"][0].tolist() == [[0, 2]] and snaps["edges"][1].tolist() == [[0, 1]]
    assert snaps["regions"].tolist() == ["hyperbolic", "euclidean", "unknown"]


def test_check_test_snapshots():
    snaps = {"edges": [np.array([[0, 1]])] * 4 + [np.zeros((0, 2), int)]}
    with pytest.raises(ValueError, match="test snapshot 4 has no edges"):
        sn.check_test_snapshots(snaps, 2, "x")
    with pytest.raises(ValueError, match="gives 5 snapshots, fewer than .*test_length \\+ 2 = 6"):
        sn.check_test_snapshots(snaps, 4, "x")
    sn.check_test_snapshots({"edges": snaps["edges"][:4]}, 2, "x")


def test_sample_non_edges_avoids_the_excluded_pairs():
    rng = np.random.default_rng(0)
    # among 4 nodes (6 pairs) with 4 excluded, exactly the other two remain
    exclude = sn.edge_keys(np.array([[0, 1], [0, 2], [1, 2], [2, 3]]), 4)
    out = sn.sample_non_edges(4, exclude, 2, rng)
    assert sorted(map(tuple, out.tolist())) == [(0, 3), (1, 3)]
    with pytest.raises(ValueError, match="cannot sample 3 non-edges"):
        sn.sample_non_edges(4, exclude, 3, rng)
    many = sn.sample_non_edges(50, np.zeros(0, np.int64), 40, rng)
    assert len(np.unique(sn.edge_keys(many, 50))) == 40 and (many[:, 0] < many[:, 1]).all()


def test_evaluation_edges_all_and_new_links():
    edges = [np.array([[0, 1], [1, 2]]), np.array([[0, 1], [2, 3]]), np.array([[0, 1], [3, 4]]),
             np.array([[1, 2], [0, 4], [4, 5]])]  # fmt: skip
    snaps = {"edges": edges, "num_nodes": 8}
    out = sn.evaluation_edges(snaps, 2, 1, np.random.default_rng(0))
    assert [e["t"] for e in out] == [2, 3]
    assert out[0]["new_pos"].tolist() == [[3, 4]]  # (0, 1) was seen in training
    assert out[1]["new_pos"].tolist() == [[0, 4], [4, 5]]  # (1, 2) was seen
    seen = set(sn.edge_keys(np.concatenate(edges[:2]), 8).tolist())
    for e in out:
        assert len(e["neg"]) == len(e["pos"]) and len(e["new_neg"]) == len(e["new_pos"])
        pos = set(sn.edge_keys(e["pos"], 8).tolist())
        assert not pos & set(sn.edge_keys(e["neg"], 8).tolist())
        assert not (pos | seen) & set(sn.edge_keys(e["new_neg"], 8).tolist())
    assert sn.training_union(snaps, 2).tolist() == [1, 10, 19]


def test_seen_nodes_accumulate_first_appearances():
    edges = [np.array([[0, 3]]), np.array([[3, 5]]), np.array([[1, 2]])]
    seen = sn.seen_nodes(edges)
    assert [s.tolist() for s in seen] == [[0, 3], [0, 3, 5], [0, 1, 2, 3, 5]]


def test_sample_non_edges_among_a_pool_of_nodes():
    rng = np.random.default_rng(0)
    # among nodes {0, 1, 2, 3} of 10 with the path 0-1-2-3 excluded, exactly 0-2, 0-3, 1-3 remain
    exclude = sn.edge_keys(np.array([[0, 1], [1, 2], [2, 3]]), 10)
    out = sn.sample_non_edges(10, exclude, 3, rng, np.array([0, 1, 2, 3]))
    assert sorted(map(tuple, out.tolist())) == [(0, 2), (0, 3), (1, 3)]
    with pytest.raises(ValueError, match="cannot sample 4 non-edges among 4 nodes"):
        sn.sample_non_edges(10, exclude, 4, rng, np.array([0, 1, 2, 3]))
    # ids of a pool need not be contiguous; keys stay those of all 10 nodes
    far = sn.sample_non_edges(10, np.zeros(0, np.int64), 3, rng, np.array([2, 7, 9]))
    assert sorted(map(tuple, far.tolist())) == [(2, 7), (2, 9), (7, 9)]
