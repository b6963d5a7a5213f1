"""Local hyperbolicity: four-point defect by hand, zero on trees, positive on grids and cycles."""

import networkx as nx
import numpy as np
import pytest

from paper_pipelines.pipelines.cross_geometric import hyperbolicity as hy


def _adj(graph):
    g = nx.convert_node_labels_to_integers(graph)
    return hy.adjacency(np.array(g.edges(), dtype=np.int64).reshape(-1, 2), g.number_of_nodes())


def test_four_point_delta_by_hand():
    # a 4-cycle x-y-z-w: sums d_xy + d_zw = 2, d_xz + d_yw = 4, d_xw + d_yz = 2 -> (4 - 2) / 2 = 1
    one, two = np.array([1.0]), np.array([2.0])
    assert hy.four_point_delta(one, one, two, two, one, one)[0] == 1.0
    # sums 3, 5, 4 -> (5 - 4) / 2 = 0.5 whatever their order
    d = hy.four_point_delta(np.array([1.0]), np.array([2.0]), np.array([2.0]), np.array([3.0]),
                            np.array([1.0]), np.array([3.0]))  # fmt: skip
    assert d[0] == 0.5
    # a star's leaves (all distances 2): the three sums tie -> 0
    assert hy.four_point_delta(two, two, two, two, two, two)[0] == 0.0


def test_adjacency_symmetric_binary():
    adj = hy.adjacency(np.array([[0, 1], [1, 2], [0, 1]]), 4)
    dense = adj.toarray()
    assert (dense == dense.T).all() and set(np.unique(dense)) <= {0.0, 1.0}
    assert dense.sum() == 4 and dense[3].sum() == 0


def test_ego_nodes_of_a_path():
    adj = _adj(nx.path_graph(7))
    assert list(hy.ego_nodes(adj, 3, 1)) == [3, 2, 4]
    assert sorted(hy.ego_nodes(adj, 3, 2)) == [1, 2, 3, 4, 5]
    assert sorted(hy.ego_nodes(adj, 0, 2)) == [0, 1, 2]


@pytest.mark.parametrize(
    "graph", [nx.balanced_tree(2, 4), nx.balanced_tree(3, 3), nx.path_graph(9)]
)
def test_delta_is_zero_on_trees(graph):
    scores = hy.snapshot_scores(_adj(graph), "gromov_delta", 2, 20, np.random.default_rng(0))
    assert np.nanmax(scores) == 0.0


def test_delta_is_positive_on_grids_and_cycles():
    rng = np.random.default_rng(0)
    grid = hy.snapshot_scores(_adj(nx.grid_2d_graph(4, 4)), "gromov_delta", 2, 30, rng)
    assert np.all(grid > 0) and np.all(grid <= 0.5)
    # C6 inside a 3-hop ego graph is the whole cycle: every quadruple of distinct nodes is checked
    cycle = hy.ego_delta(_adj(nx.cycle_graph(6)), 0, 3, 200, rng)
    assert 0 < cycle <= 0.5


def test_ego_delta_normalises_by_the_diameter():
    # C4 alone: every quadruple is the 4 nodes, delta = 1 and diameter 2 -> 0.5, with either the
    # exact diameter or the sampled-source one
    adj = _adj(nx.cycle_graph(4))
    rng = np.random.default_rng(1)
    assert hy.ego_delta(adj, 0, 2, 5, rng) == 0.5
    assert hy.ego_delta(adj, 0, 2, 5, rng, exact_diameter_max=3) == 0.5
    assert hy.ego_delta(_adj(nx.path_graph(3)), 1, 2, 5, rng) == 0.0  # fewer than 4 nodes


def test_forman_curvature_by_hand():
    # triangle: F = 4 - 2 - 2 + 3 = 3 on every edge; path a-b-c: F = 4 - 1 - 2 = 1; star K1,3: 0
    assert np.allclose(hy.forman_curvature(_adj(nx.cycle_graph(3))), 3.0)
    assert np.allclose(hy.forman_curvature(_adj(nx.path_graph(3))), 1.0)
    assert np.allclose(hy.forman_curvature(_adj(nx.star_graph(3))), 0.0)
    # two triangles sharing an edge (0-1): F(0,1) = 4 - 3 - 3 + 6 = 4, the others 4 - 3 - 2 + 3 = 2
    adj = hy.adjacency(np.array([[0, 1], [0, 2], [1, 2], [0, 3], [1, 3]]), 5)
    f = hy.forman_curvature(adj)
    assert np.allclose(f[:4], [8 / 3, 8 / 3, 2.0, 2.0]) and np.isnan(f[4])


def test_tree_scores_shape_nan_for_absent_and_forman_option():
    edges = [np.array([[0, 1], [1, 2], [2, 3], [3, 0]]), np.array([[0, 1]])]
    out = hy.tree_scores(edges, 5, "gromov_delta", 2, 10, np.random.default_rng(0))
    assert out.shape == (2, 5) and out.dtype == np.float32
    assert np.allclose(out[0, :4], 0.5) and np.isnan(out[0, 4])
    assert np.allclose(out[1, :2], 0.0) and np.isnan(out[1, 2:]).all()
    forman = hy.tree_scores(edges, 5, "forman_curvature", 2, 10, np.random.default_rng(0))
    assert np.allclose(forman[0, :4], 0.0) and np.allclose(forman[1, :2], 2.0)


def test_node_tree_score_averages_present_training_snapshots():
    scores = np.array([[0.2, np.nan, 0.1], [0.4, np.nan, np.nan], [9.0, 9.0, 9.0]])
    out = hy.node_tree_score(scores, 2)
    assert np.allclose(out[[0, 2]], [0.3, 0.1]) and np.isnan(out[1])


def test_sampled_diameter_is_the_largest_eccentricity_of_the_four_sampled_nodes():
    # C6 (0..5) with a tail 0-6-7-8; seed 53 draws the quadruple (0, 2, 5, 4) of node 0's 5-hop ego
    # graph (the whole graph): sums d02 + d54 = 3, d05 + d24 = 3, d04 + d25 = 5 -> delta = 1; the
    # sampled nodes' largest eccentricity is 5 (2 and 4 to 8), the exact diameter 6 (3 to 8)
    g = nx.cycle_graph(6)
    g.add_edges_from([(0, 6), (6, 7), (7, 8)])
    adj = _adj(g)
    ego = hy.ego_nodes(adj, 0, 5)
    order = np.argsort(np.random.default_rng(53).random((1, len(ego))), axis=1)[0]
    assert ego[order[:4]].tolist() == [0, 2, 5, 4]
    assert hy.ego_delta(adj, 0, 5, 1, np.random.default_rng(53), exact_diameter_max=0) == 0.2
    assert hy.ego_delta(adj, 0, 5, 1, np.random.default_rng(53)) == pytest.approx(1 / 6)


def test_ego_delta_counts_hops_whatever_the_stored_weights():
    # duplicated edges sum to 2 in a CSR matrix: distances and the diameter stay hop counts (an
    # adjacency read as weights would scale only one of them if the two calls disagreed)
    adj = _adj(nx.cycle_graph(4)) * 2.0
    rng = np.random.default_rng(1)
    assert hy.ego_delta(adj, 0, 2, 5, rng) == 0.5
    assert hy.ego_delta(adj, 0, 2, 5, rng, exact_diameter_max=3) == 0.5
    g = nx.cycle_graph(6)
    g.add_edges_from([(0, 6), (6, 7), (7, 8)])
    weighted = _adj(g) * 3.0
    assert hy.ego_delta(weighted, 0, 5, 1, np.random.default_rng(53)) == pytest.approx(1 / 6)


def test_forman_curvature_of_an_isolated_node_is_nan_without_a_warning():
    import warnings

    adj = hy.adjacency(np.array([[0, 1]]), 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # 0 / 0 for the isolated node is expected, not a warning
        f = hy.forman_curvature(adj)
    assert np.allclose(f[:2], 2.0) and np.isnan(f[2])
