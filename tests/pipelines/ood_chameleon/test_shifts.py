"""The shift parameterisation on hand-checkable cases: the 4x4 system, validity, the sampler."""

import numpy as np
import pytest

from paper_pipelines.pipelines.ood_chameleon import shifts


def test_balanced_triple_gives_equal_groups():
    assert shifts.group_counts(0.5, 0.5, 0.5, 100).tolist() == [25, 25, 25, 25]


def test_strong_spurious_correlation_by_hand():
    # n00 = (sc + ci + ai - 1) n / 2 = 45; n11 = sc n - n00 = 45; n01 = ci n - n00 = 5; n10 = ai n - n00 = 5
    assert shifts.group_counts(0.9, 0.5, 0.5, 100).tolist() == [45, 5, 5, 45]


def test_class_and_attribute_imbalance_by_hand():
    # sc = 0.5, ci = 0.8, ai = 0.6: n00 = 0.45 n, n01 = 0.35 n, n10 = 0.15 n, n11 = 0.05 n
    assert shifts.group_counts(0.5, 0.8, 0.6, 200).tolist() == [90, 70, 30, 10]


@pytest.mark.parametrize("triple", [(0.37, 0.61, 0.52), (0.13, 0.45, 0.71), (0.83, 0.29, 0.4)])
@pytest.mark.parametrize("n", [97, 250, 1000])
def test_counts_sum_to_n_and_realise_the_shift_within_1_over_n(triple, n):
    sc, ci, ai = triple
    counts = shifts.group_counts(sc, ci, ai, n)
    assert counts.sum() == n
    n00, n01, n10, n11 = counts
    assert abs((n00 + n11) / n - sc) <= 1 / n + 1e-12
    assert abs((n00 + n01) / n - ci) <= 1 / n + 1e-12
    assert abs((n00 + n10) / n - ai) <= 1 / n + 1e-12


def test_fractions_solve_the_group_matrix():
    p = shifts.group_fractions(0.3, 0.6, 0.55)
    assert np.allclose(shifts.GROUP_MATRIX @ p, [0.3, 0.55, 0.6, 1.0])


@pytest.mark.parametrize(
    ("triple", "valid"),
    [
        ((0.5, 0.5, 0.5), True),
        ((0.2, 0.2, 0.2), False),  # sc + ci + ai <= 1
        ((0.1, 0.9, 0.9), False),  # sc <= ci + ai - 1
        ((0.9, 0.1, 0.9), False),  # ci <= sc + ai - 1
        ((0.9, 0.9, 0.1), False),  # ai <= sc + ci - 1
        ((0.9, 0.9, 0.9), True),
    ],
)
def test_validity_constraints(triple, valid):
    assert shifts.is_valid_shift(*triple) is valid
    if valid:
        assert (shifts.group_fractions(*triple) > 0).all()
    else:
        assert (shifts.group_fractions(*triple) <= 1e-12).any()


def test_check_shift_rejects_invalid_and_too_small_groups():
    with pytest.raises(ValueError, match="invalid"):
        shifts.check_shift(0.2, 0.2, 0.2, 200)
    # sc = 0.01 leaves n00 = 0.005 * 200 = 1 sample
    with pytest.raises(ValueError, match="1 < 2 samples at n=200"):
        shifts.check_shift(0.01, 0.5, 0.5, 200)
    assert shifts.check_shift(0.05, 0.5, 0.5, 200).min() == 5


def test_rejection_sampler_returns_valid_rounded_triples():
    triples = shifts.sample_valid_shifts(30, 200, np.random.default_rng(3))
    assert len(triples) == 30
    for sc, ci, ai in triples:
        assert shifts.is_valid_shift(sc, ci, ai)
        assert shifts.group_counts(sc, ci, ai, 200).min() >= 2
        assert all(round(v, 2) == v for v in (sc, ci, ai))
    assert len(set(triples)) > 20  # random, not one repeated triple


def test_single_shift_families():
    assert shifts.single_shift_families([0.1]) == [
        (0.1, 0.5, 0.5),
        (0.5, 0.1, 0.5),
        (0.5, 0.5, 0.1),
    ]


def test_realised_shift_measures_labels():
    y = np.array([0, 0, 0, 1])
    a = np.array([0, 1, 0, 1])
    assert shifts.realised_shift(y, a) == (0.75, 0.75, 0.5)


def test_task_grid_validates_every_size_and_numbers_tasks():
    rng = np.random.default_rng(0)
    grid = shifts.task_grid(
        ["synth", "digits:ge5"], [(0.5, 0.5, 0.5), (0.9, 0.5, 0.5)],
        {"synth": [200], "digits": [100, 400]}, [1.0], [2], rng,
    )  # fmt: skip
    assert [r["task_id"] for r in grid] == list(range(6))
    assert [r["n"] for r in grid if r["source"] == "digits:ge5"] == [100, 400, 100, 400]
    assert all(r["d_feat"] == 2 for r in grid if r["source"] == "synth")
    with pytest.raises(ValueError, match="at n=20"):
        shifts.task_grid(["synth"], [(0.9, 0.5, 0.5)], {"synth": [20]}, [1.0], [2], rng)
