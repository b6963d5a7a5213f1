"""Loaders, the generator, the run plan, the measures and the report on small hand-made inputs."""

import numpy as np
import pandas as pd
import pytest

from paper_pipelines.pipelines.cross_geometric import data, metrics, plan, report
from paper_pipelines.pipelines.cross_geometric.parameters import DataParams, TrainParams


def test_check_events_rejects_nan_ids_and_timestamps():
    ok = data.check_events(pd.DataFrame({"u": [1.0], "v": [2.0], "t": [0]}), "s")
    assert ok["u"].dtype == np.int64
    with pytest.raises(ValueError, match="source 'x' has 1 NaN node ids .*'v'"):
        data.check_events(pd.DataFrame({"u": [1, 2], "v": [2, None], "t": [0, 1]}), "x")
    with pytest.raises(ValueError, match="source 'x' has 2 NaN timestamps"):
        data.check_events(pd.DataFrame({"u": [1, 2], "v": [2, 3], "t": [None, None]}), "x")


def test_popularity_similarity_links_each_arrival_to_m_earlier_nodes():
    edges, order = data.popularity_similarity_edges(6, 2, np.random.default_rng(0))
    assert order.tolist() == list(range(6))
    assert np.bincount(edges[:, 1], minlength=6).tolist() == [0, 1, 2, 2, 2, 2]
    assert (edges[:, 0] < edges[:, 1]).all()
    # node 2 links to both earlier nodes, whatever the angles
    assert sorted(edges[edges[:, 1] == 2, 0].tolist()) == [0, 1]


def test_popularity_similarity_prefers_the_closest_angle():
    # the proxy r_i + r_j + 2 ln(dtheta / 2): among equal-age choices the nearer angle wins
    rng = np.random.default_rng(3)
    edges, _ = data.popularity_similarity_edges(40, 1, rng)
    assert len(edges) == 39


def test_torus_rgg_wraps_around():
    points = np.array([[0.01, 0.5], [0.99, 0.5], [0.5, 0.5]])
    assert data.torus_rgg_edges(points, 0.05).tolist() == [[0, 1]]
    assert len(data.torus_rgg_edges(points, 0.6)) == 3


def test_mixed_generator_regions_growth_and_cross_links():
    events, regions = data.mixed_geometry_events(30, 20, 2, 0.5, 1.0, 0.3, 0.0, 0.1, 4, np.random.default_rng(0))  # fmt: skip  # noqa: E501
    assert sorted(events["t"].unique()) == [0, 1, 2, 3]
    assert regions["region"].tolist() == ["hyperbolic"] * 30 + ["euclidean"] * 20
    h = events[(events["u"] < 30) & (events["v"] < 30)]
    counts = h.groupby("t").size().tolist()
    assert counts == sorted(counts) and counts[0] < counts[-1]  # the hyperbolic region grows
    cross = events[(events["u"] < 30) != (events["v"] < 30)]
    assert len(cross) > 0
    pure, reg = data.mixed_geometry_events(0, 20, 2, 0.5, 1.0, 0.3, 0.0, 0.1, 3, np.random.default_rng(0))  # fmt: skip  # noqa: E501
    assert (pure[["u", "v"]].to_numpy() < 20).all() and set(reg["region"]) == {"euclidean"}


def test_htgn_events_and_cumulate():
    events = data.htgn_events({"edge_index_list": [np.array([[0, 1], [1, 2]]), np.array([[2], [3]])]})  # fmt: skip  # noqa: E501
    assert events.values.tolist() == [[0, 1, 0], [1, 2, 0], [2, 3, 1]]
    assert list(events.columns) == ["u", "v", "t"]  # every loader's shape
    with pytest.raises(ValueError, match="htgn_snapshots holds no HTGN"):
        data.htgn_events(None)
    cum = data.cumulate(pd.DataFrame({"u": [0, 1], "v": [1, 2], "t": [2000, 2001]}))
    assert cum.values.tolist() == [[0, 1, 2000], [0, 1, 2001], [1, 2, 2001]]


def test_shipped_collegemsg_and_pubmed():
    college = data.read_collegemsg()
    assert len(college) == 59835 and college["t"].notna().all()
    pubmed = data.read_pubmed(2008, 2009)
    assert set(pubmed["t"]) == {2008, 2009}


def test_plan_runs_and_settings():
    train = TrainParams(n_seeds=3, sanity_seeds=1, ablation_seeds=2)
    sources = ["mixed_synthetic", "pure_euclidean", "collegemsg"]
    runs = plan.mode_runs("euclid", sources, train, 0)
    assert [(s, k) for s, k, _ in runs] == [("mixed_synthetic", 0), ("mixed_synthetic", 1), ("mixed_synthetic", 2), ("pure_euclidean", 0), ("collegemsg", 0), ("collegemsg", 1), ("collegemsg", 2)]  # fmt: skip  # noqa: E501
    assert runs[0][2] == plan.mode_runs("hybrid_gate", sources, train, 0)[0][2]  # same seeds
    assert [s for s, _, _ in plan.mode_runs("hybrid_gate", sources, train, 0)].count("pure_euclidean") == 0  # fmt: skip  # noqa: E501
    assert {s for s, _, _ in plan.mode_runs("hybrid_const", sources, train, 0)} == {"mixed_synthetic"}  # fmt: skip  # noqa: E501
    assert [(s, k) for s, k, _ in plan.ablation_runs(train, 0)] == [("mixed_synthetic", 0), ("mixed_synthetic", 1)]  # fmt: skip  # noqa: E501
    from paper_pipelines.pipelines.cross_geometric.parameters import (
        GeometryParams,
        LossParams,
        ModelParams,
    )  # noqa: E501, I001

    blocks = (ModelParams(), GeometryParams(), LossParams(), TrainParams(epochs=7))
    s = plan.settings("hybrid_gate", *blocks)
    assert s.mode == "hybrid_gate" and s.epochs == 7 and s.lambda_node == 0.1 and s.use_tree_score
    assert not plan.settings("hybrid_gate", *blocks, "no_tree_score").use_tree_score
    assert not plan.settings("hybrid_gate", *blocks, "no_temporal_attention").use_temporal_attention
    assert plan.settings("hybrid_gate", *blocks, "no_lambda_node").lambda_node == 0.0
    assert plan.settings("hybrid_gate", *blocks, "no_lambda_chg").lambda_chg == 0.0


def test_plan_loads_sources_into_one_table():
    d = DataParams(sources=["pure_hyperbolic", "collegemsg"], collegemsg_events=500,
                   mixed={"n_h": 20, "n_e": 20, "n_snapshots": 3})  # fmt: skip
    events, regions = plan.load_sources(d, None, np.random.default_rng(0))
    assert list(events.columns) == ["source", "u", "v", "t"]
    assert (events["source"] == "collegemsg").sum() == 500
    assert set(regions["source"]) == {"pure_hyperbolic"} and len(regions) == 20
    college = plan.snapshots_of("collegemsg", events, regions, 4)
    assert len(college["edges"]) == 4 and set(college["regions"]) == {"unknown"}
    pure = plan.snapshots_of("pure_hyperbolic", events, regions, 4)
    assert len(pure["edges"]) == 3 and set(pure["regions"]) == {"hyperbolic"}


def test_link_auc_ap_and_region_auc():
    assert metrics.link_auc_ap(np.array([0.9, 0.8]), np.array([0.1, 0.2])) == (1.0, 1.0)
    auc, ap = metrics.link_auc_ap(np.array([0.1]), np.array([0.9]))
    assert auc == 0.0 and ap == 0.5
    assert all(np.isnan(metrics.link_auc_ap(np.zeros(0), np.array([0.1]))))
    regions = np.array(["hyperbolic", "euclidean", "hyperbolic", "unknown", "euclidean"])
    score = np.array([0.9, 0.1, np.nan, 5.0, 0.3])
    assert metrics.region_auc(score, regions) == 1.0
    assert metrics.region_auc(-score, regions) == 0.0
    assert np.isnan(metrics.region_auc(score, np.array(["hyperbolic"] * 5)))


def _entry(method, source, seed, good):
    pos, neg = (np.array([0.9, 0.8]), np.array([0.1, 0.2])) if good else (np.array([0.1, 0.6]), np.array([0.5, 0.2]))  # fmt: skip  # noqa: E501
    return {"method": method, "source": source, "seed": seed,
            "tests": [{"t": 5, "pos": pos, "neg": neg, "new_pos": pos[:1], "new_neg": neg[:1]}]}  # fmt: skip


def test_results_metrics_margins_and_contract():
    scored = [_entry("euclid", "mixed_synthetic", 0, False), _entry("hyperbolic", "mixed_synthetic", 0, False),  # noqa: E501
              _entry("hybrid_gate", "mixed_synthetic", 0, True), _entry("euclid", "collegemsg", 0, True),  # noqa: E501
              _entry("hybrid_gate", "collegemsg", 0, False), _entry("hyperbolic", "collegemsg", 0, True),  # noqa: E501
              _entry("no_tree_score", "mixed_synthetic", 0, False)]  # fmt: skip
    results = report.build_results(scored)
    assert list(results.columns[:3]) == ["method", "source", "seed"]
    # the weak scores win 2 of the 4 positive-negative pairs
    assert results.loc[2, "auc"] == 1.0 and results.loc[0, "auc"] == 0.5
    assert results.loc[0, "n_new_links"] == 1
    gates = pd.DataFrame({"source": "mixed_synthetic", "seed": 0, "node": [0, 1, 2, 3],
                          "region": ["hyperbolic", "hyperbolic", "euclidean", "euclidean"],
                          "tree_score": [0.0, 0.1, 0.2, 0.3], "gate": [0.4, 0.9, 0.5, 0.1]})  # fmt: skip
    m = report.build_metrics(results, gates)
    assert list(m)[: len(report.METRICS)] == list(report.METRICS)
    assert m["auc_mixed_hybrid_minus_best_single"] == 0.5
    assert m["auc_collegemsg_hybrid_minus_euclid"] == -0.5 and m["auc_collegemsg_min"] == 0.5
    assert m["tree_score_region_auc"] == 1.0 and m["gate_region_auc"] == 0.75
    assert m["ablation_no_tree_score_minus_full"] == -0.5
    assert m["auc_pubmed_euclid"] is None and m["n_seeds"] == 1


def test_gate_table_averages_present_training_snapshots():
    graphs = {
        "g": {
            "edges": [None] * 4,
            "regions": np.array(["hyperbolic", "euclidean", "unknown"], dtype=object),
        }
    }  # noqa: E501
    tree = {
        "g": np.array([[0.1, np.nan, np.nan], [0.3, 0.2, np.nan], [9, 9, 9], [9, 9, 9]], np.float32)
    }  # noqa: E501
    alpha = np.array([[0.2, 0.9, 0.5], [0.4, 0.7, 0.5], [1, 1, 1]])
    out = report.gate_table(graphs, tree, [{"source": "g", "seed": 0, "alpha": alpha}], 2)
    assert out["node"].tolist() == [0, 1]
    assert np.allclose(out["gate"], [0.3, 0.7]) and np.allclose(out["tree_score"], [0.2, 0.2])


def _popularity_similarity_by_hand(n, m, seed):
    """The docstring's rule written out: node i at radius 2 ln(i + 1) and a uniform angle links to the
    m earlier nodes j of smallest r_i + r_j + 2 ln(dtheta_ij / 2)."""
    theta = np.random.default_rng(seed).uniform(0, 2 * np.pi, n)
    edges = []
    for i in range(1, n):
        proxy = []
        for j in range(i):
            gap = abs(theta[i] - theta[j])
            dtheta = min(gap, 2 * np.pi - gap)
            proxy.append(2 * np.log(i + 1) + 2 * np.log(j + 1) + 2 * np.log(dtheta / 2))
        edges += [(int(j), i) for j in np.argsort(proxy)[:m]]
    return edges


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_popularity_similarity_edges_follow_the_distance_proxy(seed):
    edges, _ = data.popularity_similarity_edges(12, 2, np.random.default_rng(seed))
    assert [tuple(e) for e in edges.tolist()] == _popularity_similarity_by_hand(12, 2, seed)


def test_mixed_generator_first_snapshot_holds_the_first_m_plus_one_nodes():
    # initial_frac 0: the growth starts from m + 1 = 3 hyperbolic nodes (a triangle for m = 2), and the
    # last snapshot holds every node: 1 + 2 * 4 = 9 links for n_h = 6 (no Euclidean part, no cross links)
    events, _ = data.mixed_geometry_events(6, 0, 2, 0.0, 1.0, 0.3, 0.0, 0.1, 3, np.random.default_rng(0))  # fmt: skip  # noqa: E501
    assert events[events["t"] == 0][["u", "v"]].values.tolist() == [[0, 1], [0, 2], [1, 2]]
    assert events.groupby("t").size().tolist() == [3, 5, 9]  # arrivals 3, 4, 6
    assert list(events.columns) == ["u", "v", "t"] and events.index.equals(pd.RangeIndex(len(events)))  # fmt: skip  # noqa: E501


def test_mixed_generator_euclidean_region_is_the_torus_graph_of_uniform_points():
    # without a hyperbolic part the first draw of the stream is the n_e uniform points in the unit square
    n_e, radius = 15, 0.3
    events, _ = data.mixed_geometry_events(0, n_e, 2, 0.5, 1.0, radius, 0.0, 0.1, 3, np.random.default_rng(1))  # fmt: skip  # noqa: E501
    points = np.random.default_rng(1).uniform(0, 1, (n_e, 2))
    expect = data.torus_rgg_edges(points, radius).tolist()
    for t in range(3):  # drift 0: the same graph at every snapshot
        assert events[events["t"] == t][["u", "v"]].values.tolist() == expect
    assert events["u"].dtype == np.int64 and events["v"].dtype == np.int64
