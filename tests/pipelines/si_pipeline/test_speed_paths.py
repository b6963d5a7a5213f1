"""The fast paths of the selective test (issue 29's op1 speed): each must give the same numbers as the
plain computation it replaces, and the warm starts must do the work they are there to save."""

import numpy as np
import pytest
from scipy.special import logsumexp
from scipy.stats import norm

from paper_pipelines.pipelines.si_pipeline import components as c
from paper_pipelines.pipelines.si_pipeline import lasso_polyhedron as lp
from paper_pipelines.pipelines.si_pipeline import truncated_normal as tn
from paper_pipelines.pipelines.si_pipeline.dags import namespaced
from paper_pipelines.pipelines.si_pipeline.data import synthetic_data
from paper_pipelines.pipelines.si_pipeline.engine import DagSelectiveTest, feature_line
from paper_pipelines.pipelines.si_pipeline.intervals import QuadraticConstraints, as_intervals
from paper_pipelines.pipelines.si_pipeline.line_search import parametric_search

OP1 = {
    "soft_ipod": {"lam": 0.02},
    "marginal_screening": {"k": 5},
    "stepwise": {"k": 3},
    "lasso": {"alpha": 0.08},
}


# ------------------------------------------------------------------------------ interval sets
@pytest.mark.parametrize(
    "given, merged",
    [
        ([[3, 4], [1, 2], [2, 2.5], [5, 5]], [[1, 2.5], [3, 4], [5, 5]]),  # touching rows merge
        ([[0, 10], [1, 2], [11, 12]], [[0, 10], [11, 12]]),  # a row inside another
        ([[0, 1], [1.5, 3], [2, 2.5], [2.9, 4]], [[0, 1], [1.5, 4]]),  # a chain of overlaps
        ([[2, 1], [0, 0]], [[0, 0]]),  # an empty pair dropped, a point kept
    ],
)
def test_as_intervals_sorts_and_merges(given, merged):
    assert as_intervals(given).tolist() == merged


def _merge_by_loop(arr: np.ndarray) -> np.ndarray:
    """The row-by-row merge the vectorised as_intervals replaced."""
    arr = arr[arr[:, 0] <= arr[:, 1]]
    arr = arr[np.argsort(arr[:, 0], kind="stable")]
    out: list[list[float]] = []
    for lo, hi in arr.tolist():
        if out and lo <= out[-1][1]:
            out[-1][1] = max(out[-1][1], hi)
        else:
            out.append([lo, hi])
    return np.array(out).reshape(-1, 2)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_as_intervals_equals_the_loop_merge(seed):
    rng = np.random.default_rng(seed)
    for _ in range(200):
        lo = np.round(rng.normal(size=rng.integers(1, 12)) * 3, 1)
        arr = np.column_stack([lo, lo + np.round(rng.normal(size=len(lo)) + 0.5, 1)])
        assert np.array_equal(as_intervals(arr), _merge_by_loop(arr))


# ------------------------------------------------------------------------------ masses and p-values
@pytest.mark.parametrize("seed", [0, 1])
def test_logsumexp_is_scipys_to_the_bit(seed):
    rng = np.random.default_rng(seed)
    for _ in range(300):
        values = rng.normal(size=rng.integers(1, 9)) * 20
        if rng.random() < 0.3:
            values[0] = -np.inf
        if rng.random() < 0.3 and len(values) > 1:
            values[1] = values[-1]  # a tie at the maximum
        assert tn._logsumexp(values) == float(logsumexp(values))
    assert tn._logsumexp(np.array([-np.inf, -np.inf])) == -np.inf
    assert tn._logsumexp(np.empty(0)) == -np.inf


def test_grouped_logsumexp_per_group():
    values = np.array([0.0, np.log(3.0), -np.inf, np.log(0.5), np.log(0.5)])
    group = np.array([0, 0, 1, 2, 2])
    out = tn._grouped_logsumexp(values, group, 4)
    assert out[0] == pytest.approx(np.log(4.0), rel=1e-15)
    assert out[1] == -np.inf  # only a zero-mass piece
    assert out[2] == pytest.approx(0.0, abs=1e-15)  # 0.5 + 0.5
    assert out[3] == -np.inf  # no pieces at all


def test_split_masses_by_hand():
    """Z = [-1, 2] split at t = 0.5: the masses of [-1, 0.5] and [0.5, 2]."""
    left, right = tn._split_many([np.array([[-1.0, 2.0]])], 0.5)
    assert np.exp(left) == pytest.approx(norm.cdf(0.5) - norm.cdf(-1.0), rel=1e-13)
    assert np.exp(right) == pytest.approx(norm.cdf(2.0) - norm.cdf(0.5), rel=1e-13)


def test_p_value_bounds_by_hand():
    """Z = [1, inf) searched everywhere: p = 2 min(F, 1 - F) with F = P(1 <= X <= 1.5) / P(X >= 1).
    Searched only on [0, 3]: Z could also hold all of (3, inf) (F smallest) or all of (-inf, 0)
    (F largest), which bounds p."""
    t = 1.5
    f = (norm.cdf(t) - norm.cdf(1.0)) / norm.sf(1.0)
    p, inf_p, sup_p = tn.p_value_bounds(t, [[1.0, np.inf]], [[-np.inf, np.inf]])
    assert p == pytest.approx(2 * min(f, 1 - f), rel=1e-12)
    assert inf_p == sup_p == p
    p, inf_p, sup_p = tn.p_value_bounds(t, [[1.0, 3.0]], [[0.0, 3.0]])
    mid, tail_r, tail_l = norm.cdf(t) - norm.cdf(1.0), norm.sf(t), norm.cdf(0.0)
    f_lo = mid / (mid + (norm.cdf(3.0) - norm.cdf(t)) + norm.sf(3.0))
    f_hi = (mid + tail_l) / (mid + tail_l + (norm.cdf(3.0) - norm.cdf(t)))
    assert tail_r > 0
    assert inf_p == pytest.approx(min(2 * min(f, 1 - f) for f in (f_lo, f_hi)), rel=1e-12)
    assert sup_p == pytest.approx(max(2 * min(f, 1 - f) for f in (f_lo, f_hi)), rel=1e-12)


# ------------------------------------------------------------------------------ quadratic rows
@pytest.mark.parametrize(
    "row, z, piece",
    [
        ((1.0, 0.0, -1.0), 0.0, (-1.0, 1.0)),  # t^2 - 1 <= 0
        ((-1.0, 0.0, 1.0), 2.0, (1.0, np.inf)),  # 1 - t^2 <= 0, right branch
        ((-1.0, 0.0, 1.0), -2.0, (-np.inf, -1.0)),  # left branch
        ((0.0, 2.0, -1.0), 0.0, (-np.inf, 0.5)),  # linear: 2 t - 1 <= 0
        ((1.0, -2.0, 1.0), 1.0, (1.0, 1.0)),  # (t - 1)^2 <= 0: only the tangent point
    ],
)
def test_quadratic_constraints_by_hand(row, z, piece):
    qc = QuadraticConstraints(*(np.array([v]) for v in row))
    assert qc.interval(z) == pytest.approx(piece)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_scalar_and_vectorised_preparation_agree_to_the_bit(seed):
    """The Python-float path (few rows) and the numpy path give identical intervals."""
    rng = np.random.default_rng(seed)
    for _ in range(300):
        m = int(rng.integers(1, 8))
        c2, c1, c0 = (rng.normal(size=m) * rng.choice([0.0, 1e-14, 1.0], size=m) for _ in range(3))
        c0 = c0 - 0.1
        z = float(rng.normal())
        flip = np.where((c2 * z + c1) * z + c0 > 0, -1.0, 1.0)  # every row holds at z
        scalar = QuadraticConstraints(flip * c2, flip * c1, flip * c0)
        vector = QuadraticConstraints(flip * c2, flip * c1, flip * c0)
        vector._prepare_vectorised()
        assert scalar.interval(z) == vector.interval(z)
        for t in z + rng.normal(size=3):
            if ((flip * c2 * t + flip * c1) * t + flip * c0 <= 0).all():
                assert scalar.interval(t) == vector.interval(t)


# ------------------------------------------------------------------------------ warm starts
def _line(seed, n=60, p=6):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    a = X @ np.r_[1.0, -0.8, np.zeros(p - 2)] + rng.normal(size=n)
    a[:2] += 4.0
    return X, a, rng.normal(size=n) / np.sqrt(n) * 3


EVENTS = [
    (c.soft_ipod_event, 0.05),
    (c.marginal_screening_event, 3),
    (c.stepwise_event, 3),
    (c.lasso_fs_event, 0.08),
]


@pytest.mark.parametrize("event, hyper", EVENTS, ids=lambda e: getattr(e, "__name__", str(e)))
@pytest.mark.parametrize("seed", [0, 1])
def test_memo_never_changes_an_event(event, hyper, seed):
    """Along a line visited out of order, with states that come and go, and then on a second line
    with the same memo: every (state, lo, hi) equals the memo-free event's, to the bit."""
    X, a, b = _line(seed)
    states = [
        c.make_state(range(6), []),
        c.make_state([0, 1, 3, 4, 5], [7]),
        c.make_state(range(6), []),
    ]
    memo: dict = {}
    rng = np.random.default_rng(seed)
    for line_a in (a, a + 0.5 * b):
        for z in rng.uniform(-4, 4, size=15):
            for state in states:
                assert event(X, line_a, b, z, state, hyper, memo=memo) == event(
                    X, line_a, b, z, state, hyper
                )


def test_lasso_hint_is_only_a_start():
    """A wrong hint (other variables, other signs) still yields the KKT answer."""
    X, a, b = _line(3)
    state = c.initial_state(X)
    plain = c.lasso_fs_event(X, a, b, 0.2, state, 0.08)
    for wrong in ([(), ()], [(0, 1, 2, 3, 4, 5), (-1.0,) * 6]):
        labels = np.array(wrong[0], dtype=int)
        memo = {"last": (0.0, "elsewhere", labels, np.array(wrong[1]))}
        assert c.lasso_fs_event(X, a, b, 0.2, state, 0.08, memo=memo) == plain


def test_lasso_hint_maps_variables_by_label():
    """A hint from a design with columns (0, 2, 5) where column 2 is active with sign -1 names
    position 1 in a design with columns (1, 2, 5); a label the new design lacks is dropped."""
    memo = {"last": (0.0, "other", np.array([2, 0]), np.array([-1.0, 1.0]))}
    active, signs = lp._hint(memo, 0.3, "this", np.array([1, 2, 5]))
    assert active.tolist() == [1] and signs.tolist() == [-1.0]
    memo["answers"] = [
        (1.0, "this", np.array([5]), np.array([1.0])),
        (0.4, "this", np.array([1]), np.array([1.0])),
    ]
    active, _ = lp._hint(memo, 0.3, "this", np.array([1, 2, 5]))
    assert active.tolist() == [0]  # the nearest point (z = 0.4) of the same design


def _counting_lasso(monkeypatch):
    fits: list[int] = []

    class Counting(lp.Lasso):
        def fit(self, X, y, **kwargs):
            fits.append(X.shape[1])
            return super().fit(X, y, **kwargs)

    monkeypatch.setattr(lp, "Lasso", Counting)
    return fits


def test_op1_test_fits_each_lasso_about_once(monkeypatch):
    """With the warm starts, the line search needs no fresh soft-IPOD fit at all (its only one is
    at the observed data) and only a few fresh lasso fits, not one per point."""
    X, y, _ = synthetic_data(np.random.default_rng([11, 100, 10, 0]), 100, 10, 0.0, 3, 0.03)
    engine = DagSelectiveTest(namespaced("op1"))
    fits = _counting_lasso(monkeypatch)
    res = engine.test(X, y, OP1, sigma=1.0, features=[0])[0].result
    assert res.search_count >= 8
    assert fits.count(100) == 1  # soft-IPOD's design is the 100 x 100 projector
    assert fits.count(5) <= 2  # lasso FS after screening to k = 5 features (5 fits without hints)


@pytest.mark.parametrize("seed", [0, 1])
def test_engine_test_equals_a_memo_free_search(seed):
    """The selective test with every cache and warm start gives the p-value, bounds, search count
    and truncation set of the same search run with memo-free events."""
    X, y, _ = synthetic_data(np.random.default_rng([11, 80, 8, seed]), 80, 8, 0.0, 3, 0.03)
    engine = DagSelectiveTest(namespaced("op1"))
    fast = engine.test(X, y, OP1, sigma=1.0, features=[0])[0].result
    bound = engine.bind(OP1)
    observed = ~np.isnan(y)
    g = engine.imputation_matrix(X, y)
    state = engine.run(X, y, OP1)
    line = feature_line(X, g, y[observed], state, 0, 1.0)
    a_full, b_full = g @ line.a, g @ line.b
    plain = parametric_search(
        lambda z: engine.event(X, a_full, b_full, z, bound, None, strict=False), state, line.t_obs
    )
    assert fast.search_count == plain.search_count
    assert (fast.p_value, fast.inf_p, fast.sup_p) == (plain.p_value, plain.inf_p, plain.sup_p)
    assert np.array_equal(fast.truncation, plain.truncation)
