"""The GOOD-Motif-style generator on cases a reader can count by hand (spec check 6)."""

import networkx as nx
import numpy as np
import pytest

from paper_pipelines.pipelines.nego import data as gen


@pytest.mark.parametrize(
    ("kind", "width", "nodes", "edges"),
    [
        ("wheel", 6, 6, 10),  # hub + 5-cycle rim: 5 spokes + 5 rim edges
        ("tree", 10, 7, 6),  # floor(log2 10) - 1 = 2: balanced binary tree of depth 2
        ("tree", 3, 3, 2),  # depth at least 1
        ("ladder", 4, 8, 10),  # 2 rails of 4 + 4 rungs
        ("star", 5, 6, 5),
        ("path", 7, 7, 6),
    ],
)
def test_base_graph_sizes(kind, width, nodes, edges):
    g = gen.base_graph(kind, width)
    assert (g.number_of_nodes(), g.number_of_edges()) == (nodes, edges)


def test_base_graph_rejects_unknown_and_tiny():
    with pytest.raises(ValueError, match="unknown base 'grid'"):
        gen.base_graph("grid", 5)
    with pytest.raises(ValueError, match="width must be >= 2"):
        gen.base_graph("path", 1)
    assert gen.base_graph("path", 2).number_of_edges() == 1


def test_motifs_are_the_three_shapes():
    house, cycle, crane = (gen.motif_graph(m) for m in ("house", "cycle", "crane"))
    assert sorted(d for _, d in house.degree()) == [2, 2, 2, 3, 3]
    assert sum(nx.triangles(house).values()) == 3  # the roof is one triangle
    assert nx.is_isomorphic(cycle, nx.cycle_graph(6))
    assert sum(nx.triangles(crane).values()) == 0  # roof on opposite corners: no triangle
    assert crane.number_of_edges() == 6 and sorted(d for _, d in crane.degree()) == [2, 2, 2, 3, 3]
    assert not nx.is_isomorphic(house, crane)
    with pytest.raises(ValueError, match="unknown motif"):
        gen.motif_graph("grid")


def test_attach_motif_mask_is_exactly_the_motif_edges():
    rng = np.random.default_rng(0)
    base, motif = gen.base_graph("path", 4), gen.motif_graph("house")
    edges, mask, n = gen.attach_motif(base, motif, rng)
    assert n == 9 and len(edges) == 3 + 6 + 1
    assert mask.sum() == 6 and not mask[:3].any() and not mask[-1]
    assert (edges[mask] >= 4).all()  # motif nodes are numbered after the base's
    u, v = edges[-1]
    assert u < 4 <= v  # the joining edge links base and motif
    assert nx.is_isomorphic(nx.Graph(edges[mask].tolist()), motif)
    assert nx.is_connected(nx.Graph(edges.tolist()))


def test_perturb_edges_adds_new_non_motif_edges():
    rng = np.random.default_rng(1)
    edges, mask, n = gen.attach_motif(gen.base_graph("path", 10), gen.motif_graph("cycle"), rng)
    new_edges, new_mask = gen.perturb_edges(edges, mask, n, 0.2, rng)
    added = len(new_edges) - len(edges)
    assert added == round(0.2 * len(edges)) == 3
    assert (new_mask[: len(mask)] == mask).all() and not new_mask[len(mask) :].any()
    assert len({tuple(e) for e in new_edges.tolist()}) == len(new_edges)
    assert (new_edges[:, 0] < new_edges[:, 1])[len(edges) :].all()
    same, same_mask = gen.perturb_edges(edges, mask, n, 0.0, rng)
    assert same is edges and same_mask is mask


def test_perturb_edges_stops_when_the_graph_is_complete():
    edges = np.array([[0, 1], [0, 2], [1, 2]])
    out, mask = gen.perturb_edges(edges, np.ones(3, bool), 3, 1.0, np.random.default_rng(0))
    assert len(out) == 3 and mask.all()


def test_noisy_label():
    rng = np.random.default_rng(0)
    assert all(gen.noisy_label(1, 3, 0.0, rng) == 1 for _ in range(50))
    flipped = [gen.noisy_label(1, 3, 1.0, rng) for _ in range(200)]
    assert set(flipped) == {0, 2}  # always another class, both reached


def test_make_graph_row():
    row = gen.make_graph("star", "crane", 5, np.random.default_rng(0), 0.0, 0.0)
    assert row["y"] == row["y_clean"] == 2 and row["base"] == "star" and row["width"] == 5
    assert row["num_nodes"] == 6 + 5 and len(row["edge_src"]) == 5 + 6 + 1
    assert sum(row["edge_motif"]) == 6


def test_draw_widths_stay_in_range():
    w = gen.draw_widths(500, [10, 30], 3, np.random.default_rng(0))
    assert set(np.unique(w)) == set(range(7, 14)) | set(range(27, 34))
    assert gen.draw_widths(20, [2], 5, np.random.default_rng(0)).min() == 2


def test_spurious_bases_follow_the_bias():
    rng = np.random.default_rng(0)
    y = rng.integers(3, size=3000)
    bases = ["wheel", "tree", "ladder"]
    tied = gen.spurious_bases(y, 1.0, bases, rng)
    assert (tied == np.array(bases)[y]).all()
    never = gen.spurious_bases(y, 0.0, bases, rng)
    assert (never != np.array(bases)[y]).all() and set(never) == set(bases)
    # off the bias, each graph draws its own other base: motif 0 meets both tree and ladder
    assert set(never[y == 0]) == {"tree", "ladder"}
    half = gen.spurious_bases(y, 0.7, bases, rng)
    assert abs(np.mean(half == np.array(bases)[y]) - 0.7) < 0.03


def test_generate_part_requested_bases_motifs_sizes():
    part = gen.generate_part(300, ["tree", "path"], [8], 2, np.random.default_rng(0), 0.05, 0.1)
    assert set(part.base) == {"tree", "path"} and set(part.motif) == set(gen.MOTIFS)
    assert part.width.between(6, 10).all()
    assert (part.y_clean == part.motif.map({"house": 0, "cycle": 1, "crane": 2})).all()
    assert 0.05 < np.mean(part.y != part.y_clean) < 0.16
    assert all(sum(m) == 6 for m in part.edge_motif)  # house, 6-cycle and crane all have 6 edges
    biased = gen.generate_part(
        200, ["wheel", "tree", "ladder"], [8], 0, np.random.default_rng(1), 0, 0, bias=1.0
    )
    assert (biased.base == biased.y.map(dict(enumerate(["wheel", "tree", "ladder"])))).all()
    assert (biased.width == 8).all()


def test_the_motif_mask_stays_boolean_after_perturbation():
    row = gen.make_graph("wheel", "house", 8, np.random.default_rng(0), 0.5, 0.0)
    assert len(row["edge_motif"]) > 16 and {type(v) for v in row["edge_motif"]} == {bool}
