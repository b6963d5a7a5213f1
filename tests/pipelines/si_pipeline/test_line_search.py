"""The parametric line search on hand-made lines: which points it visits, when it stops, what it returns."""

import numpy as np
import pytest

from paper_pipelines.pipelines.si_pipeline import line_search as ls
from paper_pipelines.pipelines.si_pipeline.truncated_normal import (
    ZeroMassError,
    naive_p_value,
    p_value_bounds,
    selective_p_value,
)


def _line(pieces, visited=None):
    """event(z) for a line cut into closed pieces [(lo, hi, model), ...] covering R (first match)."""

    def event(z):
        if visited is not None:
            visited.append(z)
        lo, hi, model = next(p for p in pieces if p[0] <= z <= p[1])
        return model, lo, hi

    return event


# Z = [-2, -1] u [0.2, 1.5] around T = 1; the pieces touch, so a full search leaves no gap
PIECES = [
    (-np.inf, -2.0, "B"),
    (-2.0, -1.0, "A"),
    (-1.0, 0.2, "B"),
    (0.2, 1.5, "A"),
    (1.5, np.inf, "B"),
]
STEP = 1e-6


def test_full_search_gives_the_p_value_of_the_truncation_set():
    res = ls.parametric_search(_line(PIECES), "A", 1.0, termination="exhaustive", step=STEP)
    np.testing.assert_allclose(res.truncation, [[-2.0, -1.0], [0.2, 1.5]])
    np.testing.assert_allclose(res.searched, [[-np.inf, np.inf]])
    assert res.p_value == pytest.approx(selective_p_value(1.0, [[-2, -1], [0.2, 1.5]]), rel=1e-12)
    assert res.inf_p == pytest.approx(res.p_value) and res.sup_p == pytest.approx(res.p_value)
    assert res.naive_p == pytest.approx(naive_p_value(1.0)) and res.stat == 1.0
    assert res.mode == "parametric" and res.search_count == 5 and res.extra == {}


def test_strategies_visit_the_edges_in_their_own_order():
    """From T = 1 the piece [0.2, 1.5] has edges 0.8 and 0.5 away: pi1 (nearest to T) goes right
    first, pi3 (larger N(0,1) density, i.e. smaller |z|) goes left first."""
    first = {}
    for strategy in ("pi1", "pi3"):
        visited: list[float] = []
        ls.parametric_search(_line(PIECES, visited), "A", 1.0, search_strategy=strategy, step=STEP)
        first[strategy] = visited[:2]
    assert first["pi1"] == [1.0, pytest.approx(1.5 + STEP)]
    assert first["pi3"] == [1.0, pytest.approx(0.2 - STEP)]
    # on equal distances pi1 takes the left edge
    visited = []
    sym = [(-np.inf, 0.5, "B"), (0.5, 1.5, "A"), (1.5, np.inf, "B")]
    ls.parametric_search(_line(sym, visited), "A", 1.0, search_strategy="pi1", step=STEP)
    assert visited[1] == pytest.approx(0.5 - STEP)
    # pi3 on equal |z| (a block symmetric about 0) also takes the left edge
    visited = []
    sym0 = [(-np.inf, -1.0, "B"), (-1.0, 1.0, "A"), (1.0, np.inf, "B")]
    ls.parametric_search(_line(sym0, visited), "A", 0.5, search_strategy="pi3", step=STEP)
    assert visited[1] == -1.0 - STEP


def test_once_one_side_is_unbounded_the_search_goes_the_other_way():
    visited: list[float] = []
    pieces = [(-np.inf, 3.0, "A"), (3.0, 4.0, "B"), (4.0, np.inf, "A")]
    res = ls.parametric_search(
        _line(pieces, visited), "A", 0.0, termination="exhaustive", step=STEP
    )
    assert visited == [0.0, pytest.approx(3.0 + STEP), pytest.approx(4.0 + STEP)]
    np.testing.assert_allclose(res.truncation, [[-np.inf, 3.0], [4.0, np.inf]])


def test_precision_and_decision_stop_early():
    """A fine grid of pieces (width 0.25) out to +-20: precision stops once the bounds are 1e-3 apart,
    exhaustive covers [-(10 + |T|), 10 + |T|], decision stops when alpha lies outside the bounds."""
    edges = np.arange(-20.0, 20.01, 0.25)
    pieces = [(-np.inf, edges[0], "B")]
    pieces += [
        (a, b, "A" if k % 2 == 0 else "B")
        for k, (a, b) in enumerate(zip(edges[:-1], edges[1:], strict=True))
    ]
    pieces += [(edges[-1], np.inf, "B")]
    t = 0.1
    prec = ls.parametric_search(_line(pieces), "A", t, precision=1e-3, step=STEP)
    exh = ls.parametric_search(_line(pieces), "A", t, termination="exhaustive", step=STEP)
    dec = ls.parametric_search(_line(pieces), "A", t, termination="decision", step=STEP)
    assert prec.sup_p - prec.inf_p < 1e-3
    assert prec.inf_p <= exh.p_value <= prec.sup_p
    # exhaustive stops at the first pieces reaching past -(10 + |T|) = -10.1 and 10.1
    assert exh.searched[0, 0] == -10.25 and exh.searched[-1, 1] == 10.25
    assert prec.search_count < exh.search_count
    assert dec.inf_p > 0.05 or dec.sup_p <= 0.05
    assert dec.search_count < prec.search_count
    visited: list[float] = []
    with pytest.raises(ls.SearchError, match=r"max_iter=3 \(sup_p - inf_p = ") as err:
        ls.parametric_search(_line(pieces, visited), "A", t, termination="exhaustive", max_iter=3)
    assert len(visited) == 3  # exactly max_iter events
    # the message reports the gap left between the bounds after those three events
    found = [next(p for p in pieces if p[0] <= z <= p[1]) for z in visited]
    trunc = [[lo, hi] for lo, hi, m in found if m == "A"]
    _, inf_p, sup_p = p_value_bounds(t, trunc, [[lo, hi] for lo, hi, _ in found])
    gap = float(str(err.value).split("= ")[-1].rstrip(")"))
    assert gap == pytest.approx(sup_p - inf_p, rel=1e-12) and 0.0 < gap < 1.0


def test_inconsistent_events_are_errors():
    with pytest.raises(ls.SearchError, match="never found"):
        ls.parametric_search(_line([(-np.inf, np.inf, "B")]), "A", 0.0)
    with pytest.raises(ls.SearchError, match=r"does not contain z=0.0"):
        ls.parametric_search(lambda z: ("A", 1.0, 2.0), "A", 0.0)
    with pytest.raises(
        ls.SearchError, match="the pipeline output at T_obs differs from the observed one"
    ):
        ls.over_conditioning(_line([(-np.inf, np.inf, "B")]), "A", 0.0)


def test_over_conditioning_uses_the_one_interval_at_t():
    res = ls.over_conditioning(_line(PIECES), "A", 1.0)
    np.testing.assert_allclose(res.truncation, [[0.2, 1.5]])
    np.testing.assert_allclose(res.searched, [[0.2, 1.5]])
    assert res.p_value == pytest.approx(selective_p_value(1.0, [[0.2, 1.5]]), rel=1e-12)
    assert res.inf_p == res.p_value == res.sup_p
    assert res.mode == "over_conditioning" and res.search_count == 1
    assert res.naive_p == pytest.approx(naive_p_value(1.0)) and res.stat == 1.0


def test_block_edges_bridge_only_gaps_below_the_step():
    searched = np.array(
        [[-3.0, -2.0], [-2.0 + 1e-7, 0.0], [0.0, 1.0], [1.0 + 1e-7, 2.0], [3.0, 4.0]]
    )
    assert ls._block_edges(searched, 0.5, 1e-6) == (-3.0, 2.0)
    assert ls._block_edges(searched, 0.5, 1e-8) == (-2.0 + 1e-7, 1.0)
    assert ls._block_edges(searched, 3.5, 1e-6) == (3.0, 4.0)


def test_a_selection_only_at_a_point_names_the_point():
    t = 0.5
    pieces = [(-np.inf, t - 1e-7, "B"), (t, t, "A"), (t + 1e-7, np.inf, "B")]
    with pytest.raises(ZeroMassError) as err:
        ls.parametric_search(_line(pieces), "A", t)
    assert str(err.value) == (
        "the observed selection holds only at isolated points [0.5] of the searched line (a tie at "
        "a decision boundary at the observed data): Z has zero N(0,1) mass and the selective "
        "p-value is undefined for this feature"
    )
