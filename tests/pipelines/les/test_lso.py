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
