"""The OOD scores and penalties LES is compared with, and the evaluation measures."""

import math

import numpy as np
import pandas as pd
import pytest
import torch
from torch import nn

from paper_pipelines.pipelines.les import baselines, metrics


class Fixed(nn.Module):
    def __init__(self, logits):
        super().__init__()
        self.logits = torch.as_tensor(logits, dtype=torch.float64)

    def forward(self, z):
        return self.logits.expand(z.shape[0], *self.logits.shape)


def test_likelihood_is_the_log_probability_of_the_argmax_decoding():
    # two positions: s = (1/4, 3/4) and (1/2, 1/2)
    decoder = Fixed([[0.0, math.log(3.0)], [0.0, 0.0]])
    value = baselines.likelihood(decoder, torch.zeros(2, 1))
    assert torch.allclose(
        value, torch.full((2,), math.log(0.75) + math.log(0.5), dtype=value.dtype)
    )


def test_prior_is_minus_the_squared_norm():
    z = torch.tensor([[1.0, 2.0], [0.0, -3.0]])
    assert baselines.prior(z).tolist() == [-5.0, -9.0]


def test_train_distance_is_minus_the_mean_distance_to_the_k_nearest():
    encoded = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 2.0], [10.0, 10.0]])
    value = baselines.train_distance(np.array([[0.0, 0.0], [0.0, 1.0]]), encoded, k=3)
    assert value[0] == pytest.approx(-(0 + 1 + 2) / 3)
    assert value[1] == pytest.approx(-(1 + 1 + math.sqrt(2)) / 3)
    assert baselines.train_distance(np.zeros((1, 2)), encoded[:2], k=3)[0] == pytest.approx(-0.5)


def test_entropy_in_nats():
    p = torch.tensor([[0.5, 0.5], [1.0, 0.0], [0.25, 0.75]])
    expected = [math.log(2), 0.0, -(0.25 * math.log(0.25) + 0.75 * math.log(0.75))]
    assert torch.allclose(baselines.entropy(p), torch.tensor(expected, dtype=p.dtype))


def test_uncertainty_is_zero_without_dropout_and_positive_with_it():
    decoder = Fixed([[0.0, 1.0, 2.0]])
    value = baselines.decoder_uncertainty(decoder, torch.zeros(3, 1), 4)
    assert torch.allclose(value, torch.zeros(3, dtype=value.dtype))

    class Noisy(nn.Module):
        def __init__(self):
            super().__init__()
            self.drop = nn.Dropout(0.5)

        def forward(self, z):
            return self.drop(torch.ones(z.shape[0], 2, 3) * torch.tensor([0.0, 2.0, 4.0]))

    torch.manual_seed(0)
    noisy = Noisy().eval()
    value = baselines.decoder_uncertainty(noisy, torch.zeros(5, 1), 8)
    assert (value > 0).all() and not noisy.training  # mode restored
    # two masks, one gives uniform, one a point mass-ish: MI = H(mean) - mean H
    p = torch.tensor([[[1 / 3, 1 / 3, 1 / 3]], [[1.0, 0.0, 0.0]]])
    mi = baselines.entropy(p.mean(0)) - baselines.entropy(p).mean(0)
    assert mi.item() > 0


def test_validity_auroc():
    valid = np.array([True, True, False, False])
    assert metrics.validity_auroc(valid, np.array([4.0, 3.0, 2.0, 1.0])) == 1.0
    assert metrics.validity_auroc(valid, np.array([1.0, 2.0, 3.0, 4.0])) == 0.0
    assert metrics.validity_auroc(valid, np.array([4.0, 1.0, 2.0, 3.0])) == 0.5
    # a NaN score (singular G) ranks lowest
    assert metrics.validity_auroc(valid, np.array([4.0, 3.0, np.nan, 1.0])) == 1.0
    assert metrics.validity_auroc(valid, np.array([np.nan, 3.0, 2.0, 1.0])) == 0.5
    # below every finite score, also when they are all negative
    assert metrics.validity_auroc(valid, np.array([-1.0, -2.0, np.nan, -4.0])) == 1.0
    assert metrics.validity_auroc(valid, np.full(4, np.nan)) == 0.5
    assert math.isnan(metrics.validity_auroc(np.array([True, True]), np.array([1.0, 2.0])))
    assert math.isnan(metrics.validity_auroc(np.array([False, False]), np.array([1.0, 2.0])))


def test_top_k_mean():
    assert metrics.top_k_mean(np.array([1.0, 5.0, 3.0, 4.0]), 2) == 4.5
    assert metrics.top_k_mean(np.array([1.0, 5.0]), 10) == 3.0
    assert math.isnan(metrics.top_k_mean(np.array([]), 3))


def test_run_summary_counts_invalid_and_uniques_valid():
    candidates = pd.DataFrame(
        {
            "expression": ["x", "x", "1", "bad", "2"],
            "valid": [True, True, True, False, True],
            "objective": [-1.0, -1.0, -3.0, np.nan, -2.0],
        }
    )
    summary = metrics.run_summary(candidates, worst=-7.0)
    assert summary == {"valid_frac": 0.8, "n_unique_valid": 3.0, "best": -1.0, "top10": -2.0}
    # duplicates are by expression, whatever the other columns say
    rounds = candidates.assign(round=[0, 1, 2, 3, 4])
    assert metrics.run_summary(rounds, worst=-7.0)["n_unique_valid"] == 3.0
    many = pd.DataFrame(
        {"expression": [f"e{i}" for i in range(12)], "valid": True, "objective": np.arange(12.0)}
    )
    assert metrics.run_summary(many, -7.0)["top10"] == np.arange(2.0, 12.0).mean()
    none_valid = candidates.assign(valid=False)
    assert metrics.run_summary(none_valid, -7.0)["best"] == -7.0
    assert metrics.run_summary(none_valid, -7.0)["top10"] == -7.0
    assert metrics.run_summary(none_valid, -7.0)["valid_frac"] == 0.0


def test_likelihood_normalises_over_the_vocabulary_not_the_positions():
    # L = 3 positions over V = 2 tokens: s = (1/4, 3/4), (1/2, 1/2), (e / (1 + e), 1 / (1 + e))
    decoder = Fixed([[0.0, math.log(3.0)], [0.0, 0.0], [1.0, 0.0]])
    value = baselines.likelihood(decoder, torch.zeros(1, 1))
    expected = math.log(0.75) + math.log(0.5) + math.log(math.e / (1 + math.e))
    assert value.shape == (1,) and value.item() == pytest.approx(expected)


def test_train_distance_uses_the_three_nearest_by_default():
    encoded = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 2.0], [10.0, 10.0]])
    value = baselines.train_distance(np.array([[0.0, 0.0]]), encoded)
    assert value[0] == pytest.approx(-(0 + 1 + 2) / 3)


def test_validity_auroc_reads_object_columns_as_flags_and_floats():
    # e.g. pandas columns of Python objects: bools as flags, None as a missing (NaN) score
    valid = np.array([True, True, False, False], dtype=object)
    assert metrics.validity_auroc(valid, np.array([4.0, 3.0, 2.0, 1.0])) == 1.0
    score = np.array([4.0, 3.0, None, 1.0], dtype=object)
    assert metrics.validity_auroc(np.array([True, True, False, False]), score) == 1.0


def test_run_summary_of_an_empty_run():
    empty = pd.DataFrame(
        {
            "expression": pd.Series([], dtype=str),
            "valid": pd.Series([], dtype=bool),
            "objective": pd.Series([], dtype=float),
        }
    )
    summary = metrics.run_summary(empty, worst=-7.0)
    assert math.isnan(summary["valid_frac"])
    assert {k: summary[k] for k in ("n_unique_valid", "best", "top10")} == {
        "n_unique_valid": 0.0,
        "best": -7.0,
        "top10": -7.0,
    }
