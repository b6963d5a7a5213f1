"""The optimiser's steps on hand-checkable acquisitions, and one tiny BO run end to end."""

import numpy as np
import pytest
import torch
from torch import nn

from paper_pipelines.pipelines.les import lso


def test_unit_scales_rows_and_zeroes_degenerate_ones():
    g = torch.tensor([[3.0, 4.0], [0.0, 0.0], [float("nan"), 1.0], [0.0, -2.0]])
    assert torch.allclose(
        lso.unit(g), torch.tensor([[0.6, 0.8], [0.0, 0.0], [0.0, 0.0], [0.0, -1.0]])
    )


def test_ascent_step_adds_unit_gradients():
    a = torch.tensor([3.0, 4.0])
    b = torch.tensor([0.0, -2.0])
    z = torch.zeros(2, 2)
    step = lso.ascent_step(z, lambda v: v @ a, lambda v: v @ b, alpha=0.5, lr=2.0)
    assert torch.allclose(step, torch.tensor([[1.2, 1.6 - 1.0]] * 2))
    plain = lso.ascent_step(z, lambda v: v @ a, None, alpha=0.5, lr=2.0)
    assert torch.allclose(plain, torch.tensor([[1.2, 1.6]] * 2))
    off = lso.ascent_step(z, lambda v: v @ a, lambda v: v @ b, alpha=0.0, lr=1.0)
    assert torch.allclose(off, torch.tensor([[0.6, 0.8]] * 2))
    # per row: a quadratic acquisition pulls each point towards its own direction
    quad = lso.ascent_step(
        torch.tensor([[1.0, 0.0], [0.0, -1.0]]), lambda v: -(v * v).sum(-1), None, 0.5, 0.5
    )
    assert torch.allclose(quad, torch.tensor([[0.5, 0.0], [0.0, -0.5]]))


class Linear(nn.Module):
    def __init__(self, d=2, length=19, vocab=15):
        super().__init__()
        torch.manual_seed(0)
        self.latent_dim, self.length = d, length
        self.lin = nn.Linear(d, length * vocab).double()

    def forward(self, z):
        return self.lin(z.double()).reshape(z.shape[0], self.length, -1)


def test_penalties_by_name():
    decoder = Linear()
    start = torch.zeros(3, 2, dtype=torch.float64)
    assert lso.make_penalty("none", decoder, start, 1e-4, "fd") == (None, 0)
    prior, _ = lso.make_penalty("prior", decoder, start, 1e-4, "fd")
    assert prior(torch.ones(1, 2)).item() == -2.0
    les, singular = lso.make_penalty("les", decoder, start, 1e-4, "fd")
    assert singular == 0 and les(start).shape == (3,)
    likelihood, _ = lso.make_penalty("likelihood", decoder, start, 1e-4, "fd")
    assert (likelihood(start) < 0).all()
    with pytest.raises(ValueError, match="unknown penalty 'magic'"):
        lso.make_penalty("magic", decoder, start, 1e-4, "fd")


def test_les_penalty_keeps_the_start_points_slope():
    decoder = Linear()
    start = torch.zeros(1, 2, dtype=torch.float64)
    les, _ = lso.make_penalty("les", decoder, start, 1e-4, "fd")
    from paper_pipelines.pipelines.les import scores

    z = torch.full((1, 2), 0.5, dtype=torch.float64)
    fixed = scores.les(decoder, z, scores.local_slope(decoder, start)).values
    assert torch.allclose(les(z), fixed)


def test_a_tiny_bo_run_writes_one_row_per_candidate():
    decoder = Linear()
    rng = np.random.default_rng(0)
    z_init = rng.normal(size=(12, 2))
    y_init = rng.normal(size=12)
    table, singular = lso.optimise(
        decoder, decoder, z_init, y_init, "les", np.random.default_rng(1), n_rounds=2, n_batch=3,
        ga_steps=2, lr=0.5, alpha=0.5, fd_eps=1e-4, jacobian="fd", gp_iterations=3,
    )  # fmt: skip
    assert singular == 0
    assert list(table.columns) == [
        "round",
        "candidate",
        "evaluation",
        "expression",
        "valid",
        "objective",
    ]
    assert len(table) == 6 and list(table["evaluation"]) == [1, 2, 3, 4, 5, 6]
    assert table["objective"][~table["valid"]].isna().all()
    assert table["objective"][table["valid"]].notna().all()


def test_surrogate_reuses_the_first_fit():
    x = torch.linspace(0, 1, 8, dtype=torch.float64)[:, None]
    y = torch.sin(6 * x[:, 0])
    hyper = lso.fit_surrogate(x, y, max_iter=20)
    model = lso.surrogate(
        torch.cat([x, x + 1 / 16]), torch.cat([y, torch.sin(6 * (x[:, 0] + 1 / 16))]), hyper
    )
    lengthscale = model.covar_module.lengthscale
    fitted = [v for k, v in hyper.items() if k.endswith("raw_lengthscale")][0]
    assert torch.allclose(model.covar_module.raw_lengthscale, fitted)
    assert lengthscale.shape[-1] == 1 and not model.training


def test_censoring_freezes_points_above_the_threshold():
    decoder = Linear()
    rng = np.random.default_rng(0)
    z_init, y_init = rng.normal(size=(12, 2)), rng.normal(size=12)
    common = dict(n_rounds=1, n_batch=3, ga_steps=2, lr=5.0, alpha=0.5, fd_eps=1e-4,
                  jacobian="fd", gp_iterations=3)  # fmt: skip
    frozen, _ = lso.optimise(decoder, decoder, z_init, y_init, "none", np.random.default_rng(1),
                             censor=(decoder, -1.0, 2), **common)  # fmt: skip
    # every step censored: the candidates are the start points' decodings
    start = torch.as_tensor(z_init)[np.random.default_rng(1).choice(12, size=3, replace=False)]
    from paper_pipelines.pipelines.les.grammar import detokenize
    from paper_pipelines.pipelines.les.vae import decode_argmax

    assert list(frozen["expression"]) == [detokenize(r) for r in decode_argmax(decoder, start)]
    free, _ = lso.optimise(decoder, decoder, z_init, y_init, "none", np.random.default_rng(1),
                           censor=(decoder, 0.0, 2), **common)  # fmt: skip
    plain, _ = lso.optimise(
        decoder, decoder, z_init, y_init, "none", np.random.default_rng(1), **common
    )
    # a deterministic decoder has zero uncertainty: a threshold of 0 censors nothing
    assert list(free["expression"]) == list(plain["expression"])
    assert list(free["expression"]) != list(frozen["expression"])


class Constant(nn.Module):
    """A decoder that ignores z: G = 0 everywhere (singular)."""

    latent_dim, length = 2, 19

    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.zeros(1, dtype=torch.float64))

    def forward(self, z):
        return torch.zeros(z.shape[0], 19, 15, dtype=torch.float64) + 0 * z.sum()


def test_singular_start_points_are_counted_not_fatal():
    decoder = Constant()
    start = torch.zeros(3, 2, dtype=torch.float64)
    penalty, singular = lso.make_penalty("les", decoder, start, 1e-4, "fd")
    assert singular == 3 and torch.isnan(penalty(start)).all()
    assert lso.make_penalty("likelihood", decoder, start, 1e-4, "fd")[1] == 0
    assert lso.make_penalty("prior", decoder, start, 1e-4, "fd")[1] == 0
    rng = np.random.default_rng(0)
    table, total = lso.optimise(
        decoder, decoder, rng.normal(size=(8, 2)), rng.normal(size=8), "les",
        np.random.default_rng(1), n_rounds=2, n_batch=2, ga_steps=1, lr=0.5, alpha=0.5,
        fd_eps=1e-4, jacobian="fd", gp_iterations=2,
    )  # fmt: skip
    assert total == 4 and len(table) == 4


def test_valid_candidates_feed_the_surrogate():
    decoder = Linear()
    rng = np.random.default_rng(0)
    z_init, y_init = rng.normal(size=(10, 2)), rng.normal(size=10)
    seen = []
    original = lso.surrogate

    def spy(x, y, hyper):
        seen.append((len(x), y.dtype))
        return original(x, y, hyper)

    lso.surrogate = spy
    try:
        table, _ = lso.optimise(
            decoder, decoder, z_init, y_init, "none", np.random.default_rng(1), n_rounds=2,
            n_batch=4, ga_steps=1, lr=0.1, alpha=0.5, fd_eps=1e-4, jacobian="fd", gp_iterations=2,
        )  # fmt: skip
    finally:
        lso.surrogate = original
    first_round_valid = int(table[table["round"] == 0]["valid"].sum())
    assert seen == [(10, torch.float64), (10 + first_round_valid, torch.float64)]
    assert list(table["round"]) == [0] * 4 + [1] * 4
    assert list(table["candidate"]) == [0, 1, 2, 3] * 2


def test_bounded_lbfgs_run_stays_in_the_box_and_counts_candidates():
    decoder = Linear()
    rng = np.random.default_rng(0)
    z_init, y_init = rng.normal(size=(10, 2)), rng.normal(size=10)
    seen = []
    original = lso.surrogate

    def spy(x, y, hyper):
        seen.append(x.clone())
        return original(x, y, hyper)

    lso.surrogate = spy
    try:
        table = lso.optimise_bounded_lbfgs(decoder, z_init, y_init, n_rounds=2, n_batch=2,
                                           z_bound=0.25, gp_iterations=2, seed=0)  # fmt: skip
    finally:
        lso.surrogate = original
    assert list(table.columns) == [
        "round",
        "candidate",
        "evaluation",
        "expression",
        "valid",
        "objective",
    ]
    assert list(table["evaluation"]) == [1, 2, 3, 4] and list(table["round"]) == [0, 0, 1, 1]
    assert list(table["candidate"]) == [0, 1, 0, 1]
    assert table["objective"][~table["valid"]].isna().all()
    assert table["objective"][table["valid"]].notna().all()
    n_valid_first = int(table[table["round"] == 0]["valid"].sum())
    assert len(seen) == 2 and len(seen[1]) == 10 + n_valid_first
    new = seen[1][10:]
    assert (new.abs() <= 0.25 + 1e-9).all()
    from paper_pipelines.pipelines.les.grammar import detokenize
    from paper_pipelines.pipelines.les.vae import decode_argmax

    if n_valid_first:
        assert detokenize(decode_argmax(decoder, new[:1])[0]) in set(table["expression"])


def test_the_surrogate_fit_stops_at_max_iter():
    x = torch.linspace(0, 1, 12, dtype=torch.float64)[:, None]
    y = torch.sin(6 * x[:, 0])
    short = lso.fit_surrogate(x, y, max_iter=1)
    long = lso.fit_surrogate(x, y, max_iter=50)
    key = next(k for k in long if k.endswith("raw_lengthscale"))
    assert not torch.allclose(short[key], long[key])


SETTINGS = lso.TurboSettings(
    initial_length=0.8, length_min=0.5**7, length_max=1.6, success_tolerance=2, failure_tolerance=3
)


def test_failure_tolerance_is_the_official_default():
    assert lso.failure_tolerance(dim=25, batch=10) == 3  # ceil(2.5)
    assert lso.failure_tolerance(dim=2, batch=10) == 1  # ceil(max(0.4, 0.2))
    assert lso.failure_tolerance(dim=2, batch=3) == 2  # ceil(4 / 3)
    assert lso.failure_tolerance(dim=30, batch=10) == 3


def test_a_new_best_by_more_than_1e3_relative_counts_as_a_success():
    state = lso.TrustRegion(0.8, success=0, failure=2, best=-1.0)
    up = lso.update_trust_region(state, np.array([-2.0, -0.998]), SETTINGS)
    assert (up.length, up.success, up.failure, up.best) == (0.8, 1, 0, -0.998)
    # -0.9995 beats -1 by less than 1e-3 |best|: a failure, but the best still moves
    flat = lso.update_trust_region(state, np.array([-0.9995]), SETTINGS)
    assert (flat.success, flat.failure, flat.best) == (0, 0, -0.9995)
    assert flat.length == 0.4  # the third failure in a row halves the region


def test_success_tolerance_doubles_and_failures_halve():
    state = lso.TrustRegion(0.8, best=0.0)
    for value, expected in [(1.0, (0.8, 1, 0)), (2.0, (1.6, 0, 0)), (3.0, (1.6, 1, 0))]:
        state = lso.update_trust_region(state, np.array([value]), SETTINGS)
        assert (state.length, state.success, state.failure) == expected
    # a success run on 1.6 stays at length_max
    state = lso.update_trust_region(state, np.array([4.0]), SETTINGS)
    assert (state.length, state.success) == (1.6, 0)
    for failure in (1, 2):
        state = lso.update_trust_region(state, np.array([0.0]), SETTINGS)
        assert (state.length, state.success, state.failure) == (1.6, 0, failure)
    state = lso.update_trust_region(state, np.array([0.0]), SETTINGS)
    assert (state.length, state.failure, state.best) == (0.8, 0, 4.0)


def test_a_region_below_its_minimum_restarts_at_the_initial_length():
    state = lso.TrustRegion(0.5**7, failure=2, best=1.0)
    restarted = lso.update_trust_region(state, np.array([0.5]), SETTINGS)
    assert restarted == lso.TrustRegion(0.8, 0, 0, 1.0, restarts=1)
    # halving onto exactly length_min keeps the region
    edge = lso.update_trust_region(lso.TrustRegion(0.5**6, failure=2, best=1.0, restarts=2),
                                   np.array([0.5]), SETTINGS)  # fmt: skip
    assert edge == lso.TrustRegion(0.5**7, 0, 0, 1.0, restarts=2)


def test_the_box_is_stretched_by_lengthscales_over_their_geometric_mean_and_clamped():
    # lengthscales (1, 4): geometric mean 2, weights (0.5, 2); half side = w * 0.8 * 3
    box = lso.trust_region_box(
        torch.zeros(2, dtype=torch.float64), torch.tensor([1.0, 4.0], dtype=torch.float64), 0.8, 3.0
    )
    assert torch.allclose(box, torch.tensor([[-1.2, -3.0], [1.2, 3.0]], dtype=torch.float64))
    # equal lengthscales: a cube of side 0.5 x 6 around the centre, clipped at +3
    box = lso.trust_region_box(torch.tensor([2.0, -1.0]), torch.tensor([7.0, 7.0]), 0.5, 3.0)
    assert torch.allclose(box, torch.tensor([[0.5, -2.5], [3.0, 0.5]]))
    # a centre outside the global box is pulled in first, so the box never collapses
    box = lso.trust_region_box(torch.tensor([5.0]), torch.tensor([1.0]), 0.1, 3.0)
    assert torch.allclose(box, torch.tensor([[2.7], [3.0]]))


def test_ard_lengthscales_read_the_kernel():
    x = torch.rand(8, 3, dtype=torch.float64)
    model = lso.surrogate(x, x.sum(-1), {})
    scales = lso.ard_lengthscales(model, 3)
    assert scales.shape == (3,) and (scales > 0).all()

    class Shared:
        class covar_module:  # noqa: N801 - mimics a gpytorch ScaleKernel without ARD
            class base_kernel:  # noqa: N801
                lengthscale = torch.tensor([[2.0]])

    assert torch.equal(lso.ard_lengthscales(Shared, 3), torch.tensor([2.0, 2.0, 2.0]))


def test_a_turbo_run_searches_inside_the_region_around_the_best_point(monkeypatch):
    data = np.random.default_rng(0).normal(size=(10, 3))
    z_init, y_init = data[:, :2], data[:, 2]
    seen, original = [], lso.surrogate
    monkeypatch.setattr(lso, "surrogate", lambda x, y, h: seen.append(x) or original(x, y, h))
    # every decoding valid with objective 10: round 0 sets a new best, round 1 fails to beat it
    monkeypatch.setattr(lso, "is_valid", lambda expression: True)
    monkeypatch.setattr(lso, "objective", lambda expression: 10.0)
    table = lso.optimise_bounded_lbfgs(
        Linear(), z_init, y_init, n_rounds=3, n_batch=2, z_bound=3.0, gp_iterations=2, seed=0,
        turbo=lso.TurboSettings(0.1, 0.5**7, 1.6, 10, 1),
    )  # fmt: skip
    assert list(table.columns)[-2:] == ["tr_length", "tr_restarts"]
    # failure tolerance 1: a success keeps the length, the one failure halves it
    assert list(table["tr_length"]) == [0.1, 0.1, 0.1, 0.1, 0.05, 0.05]
    assert (table["tr_restarts"] == 0).all()
    x = seen[-1]
    assert x.shape == (14, 2)  # the last round starts from 10 + 2 + 2 points
    # each round's candidates lie in the box around the best point so far, stretched by the
    # surrogate's lengthscales (fit once: the first fit again)
    y = torch.as_tensor(y_init)
    model = original(x[:10], (y - y.mean()) / y.std(correction=0), lso.fit_surrogate(
        x[:10], (y - y.mean()) / y.std(correction=0), 2))  # fmt: skip
    scales = lso.ard_lengthscales(model, 2)
    for centre, new in [(x[int(np.argmax(y_init))], x[10:12]), (x[10], x[12:14])]:
        box = lso.trust_region_box(centre, scales, 0.1, 3.0)
        assert ((new >= box[0] - 1e-9) & (new <= box[1] + 1e-9)).all()
        assert (box[1] - box[0]).prod() < 0.6**2 * 1.0001  # the area is the side squared


def test_unit_zeroes_rows_with_an_infinite_entry():
    g = torch.tensor([[float("inf"), 1.0], [1.0, float("-inf")], [0.0, 2.0]])
    assert torch.equal(lso.unit(g), torch.tensor([[0.0, 0.0], [0.0, 0.0], [0.0, 1.0]]))


class Bent(nn.Module):
    """A nonlinear decoder (d = 2, L = 3, V = 4): forward differences of 0.5 miss the slope."""

    latent_dim, length = 2, 3

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.net = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 12)).double()

    def forward(self, z):
        return self.net(z.double()).reshape(z.shape[0], 3, 4)


def test_the_les_penalty_uses_the_requested_jacobian():
    from paper_pipelines.pipelines.les import scores

    decoder = Bent()
    start = torch.tensor([[0.2, -0.3], [0.5, 0.1]], dtype=torch.float64)
    exact, _ = lso.make_penalty("les", decoder, start, 0.5, "exact")
    coarse, _ = lso.make_penalty("les", decoder, start, 0.5, "fd")
    want_exact = scores.les(decoder, start, scores.local_slope(decoder, start, method="exact"))
    want_fd = scores.les(decoder, start, scores.local_slope(decoder, start, 0.5, "fd"))
    assert torch.allclose(exact(start), want_exact.values, atol=1e-12, rtol=0)
    assert torch.allclose(coarse(start), want_fd.values, atol=1e-12, rtol=0)
    assert not torch.allclose(exact(start), coarse(start), atol=1e-3)


def test_the_expressions_black_box_decodes_checks_and_scores():
    from paper_pipelines.pipelines.les.grammar import tokenize
    from paper_pipelines.pipelines.les.objective import objective

    row = tokenize(["x+1"])[0]
    assert lso.evaluate_expression(row) == ("x+1", True, objective("x+1"))
    text, valid, value = lso.evaluate_expression(tokenize(["x+"])[0])
    assert (text, valid) == ("x+", False) and np.isnan(value)


class Recorder:
    """A black box that records what it answers: every other candidate valid (the first one too),
    with objective (sum of tokens) / 7 (not a float32 number, so a float32 cast would show)."""

    def __init__(self):
        self.answers = []

    def __call__(self, row):
        answer = "-".join(map(str, row[:4])), len(self.answers) % 2 == 0, float(row.sum()) / 7
        self.answers.append(answer)
        return answer


def standardised(values, y_init):
    return (np.asarray(values, dtype=np.float64) - float(y_init.mean())) / float(y_init.std())


def test_a_bo_run_feeds_the_black_box_and_standardises_its_values(monkeypatch):
    data = np.random.default_rng(3).normal(size=(12, 3)).astype(np.float32)
    z_init, y_init = data[:, :2], data[:, 2]
    seen, built = [], []
    original_surrogate, original_penalty = lso.surrogate, lso.make_penalty
    monkeypatch.setattr(
        lso, "surrogate", lambda x, y, h: seen.append((x, y)) or original_surrogate(x, y, h)
    )
    monkeypatch.setattr(
        lso,
        "make_penalty",
        lambda *args: built.append(args) or original_penalty(*args),
    )
    decoder, score_decoder, black_box = Linear(), Linear(), Recorder()
    table, _ = lso.optimise(
        decoder, score_decoder, z_init, y_init, "les", np.random.default_rng(1), n_rounds=2,
        n_batch=3, ga_steps=1, lr=0.5, alpha=0.5, fd_eps=1e-3, jacobian="exact", gp_iterations=2,
        evaluate=black_box,
    )  # fmt: skip
    # every candidate went to the given black box, and the table holds its answers
    answers = black_box.answers
    assert len(answers) == len(table) == 6
    assert list(table["expression"]) == [a[0] for a in answers]
    assert list(table["valid"]) == [True, False, True, False, True, False]
    assert list(table["objective"]) == [a[2] for a in answers]
    # float64 throughout; objectives standardised by the initial mean and standard deviation
    (x0, y0), (x1, y1) = seen
    assert x0.dtype == y0.dtype == x1.dtype == y1.dtype == torch.float64
    assert torch.equal(x0, torch.as_tensor(z_init, dtype=torch.float64))
    assert np.allclose(y0.numpy(), standardised(y_init, y_init), rtol=1e-6, atol=0)  # float32 in
    first = table[table["round"] == 0]
    fed = first["objective"][first["valid"]]
    assert len(x1) == 12 + len(fed) == 14
    assert np.allclose(y1[12:].numpy(), standardised(fed, y_init), rtol=1e-12, atol=0)
    # the penalty of each round: the run's settings around start points drawn without replacement
    rng = np.random.default_rng(1)
    for (name, reader, start, fd_eps, jacobian), x in zip(built, (x0, x1), strict=True):
        assert (name, reader, fd_eps, jacobian) == ("les", score_decoder, 1e-3, "exact")
        assert torch.equal(start, x[rng.choice(len(x), size=3, replace=False)])


def test_a_bounded_lbfgs_run_searches_the_global_box_with_the_given_black_box(monkeypatch):
    import botorch.optim

    data = np.random.default_rng(4).normal(size=(10, 3)).astype(np.float32)
    z_init, y_init = data[:, :2], data[:, 2]
    seen, calls = [], []
    original_surrogate, original_optimiser = lso.surrogate, botorch.optim.optimize_acqf

    def optimiser(acq, bounds, **kwargs):
        calls.append((bounds.clone(), kwargs, torch.initial_seed()))
        return original_optimiser(acq, bounds, **kwargs)

    monkeypatch.setattr(
        lso, "surrogate", lambda x, y, h: seen.append((x, y)) or original_surrogate(x, y, h)
    )
    monkeypatch.setattr(botorch.optim, "optimize_acqf", optimiser)
    black_box = Recorder()
    table = lso.optimise_bounded_lbfgs(Linear(), z_init, y_init, n_rounds=2, n_batch=3,
                                       z_bound=0.5, gp_iterations=2, seed=7, evaluate=black_box)  # fmt: skip
    answers = black_box.answers
    assert len(answers) == len(table) == 6
    assert list(table["expression"]) == [a[0] for a in answers]
    assert list(table["valid"]) == [True, False, True, False, True, False]
    assert list(table["objective"]) == [a[2] for a in answers]
    box = torch.tensor([[-0.5, -0.5], [0.5, 0.5]], dtype=torch.float64)
    for bounds, kwargs, _ in calls:
        assert bounds.dtype == torch.float64 and torch.equal(bounds, box)
        # q = n_batch candidates per round; the fixed budget of 4 restarts from 64 raw samples
        assert kwargs == {"q": 3, "num_restarts": 4, "raw_samples": 64}
    assert [c[2] for c in calls] == [7, 8]  # round r draws its restarts with seed + r
    (x0, y0), (x1, y1) = seen
    assert x0.dtype == y0.dtype == y1.dtype == torch.float64
    assert np.allclose(y0.numpy(), standardised(y_init, y_init), rtol=1e-6, atol=0)  # float32 in
    first = table[table["round"] == 0]
    fed = first["objective"][first["valid"]]
    assert len(x1) == 10 + len(fed) == 12
    assert np.allclose(y1[10:].numpy(), standardised(fed, y_init), rtol=1e-12, atol=0)


def test_turbo_starts_from_the_best_initial_value_and_a_flat_start_is_not_rescaled(monkeypatch):
    # y_init constant: std 0 reads as 1; values below the initial best fail from the first round
    z_init = np.random.default_rng(5).normal(size=(8, 2))
    y_init = np.full(8, 2.0)
    seen, original = [], lso.surrogate
    monkeypatch.setattr(lso, "surrogate", lambda x, y, h: seen.append(y) or original(x, y, h))
    table = lso.optimise_bounded_lbfgs(
        Linear(), z_init, y_init, n_rounds=2, n_batch=2, z_bound=3.0, gp_iterations=2, seed=0,
        turbo=lso.TurboSettings(0.2, 0.5**7, 1.6, 10, 1),
        evaluate=lambda row: ("e", True, -1.5),
    )  # fmt: skip
    assert list(table["tr_length"]) == [0.2, 0.2, 0.1, 0.1]
    assert torch.equal(seen[0], torch.zeros(8, dtype=torch.float64))
    assert torch.equal(seen[1][8:], torch.full((2,), -3.5, dtype=torch.float64))
