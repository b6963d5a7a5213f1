"""Classical baselines: NSS + SVR fits the labelled MOS; BRISQUE is skipped cleanly when absent."""

import importlib.util

import numpy as np
import pytest

from paper_pipelines.pipelines.cpl_iqa import baselines


def test_nss_svr_learns_a_monotone_relation():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((80, 3))
    mos = 50 + 20 * x[:, 0]
    model = baselines.fit_nss_svr(x, mos, 10.0, "scale")
    pred = model.predict(x)
    assert np.corrcoef(pred, mos)[0, 1] > 0.95
    assert model.steps[-1][1].C == 10.0 and model.steps[-1][1].kernel == "rbf"
    loose = baselines.fit_nss_svr(x, mos, 0.01, "scale").predict(x)
    assert np.std(loose) < np.std(pred)  # a small C barely fits


@pytest.mark.skipif(importlib.util.find_spec("brisque") is not None, reason="brisque installed")
def test_brisque_is_skipped_when_not_installed():
    assert baselines.brisque_scores(np.zeros((2, 8, 8, 3), np.uint8)) is None
