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


@pytest.mark.skipif(importlib.util.find_spec("brisque") is None, reason="brisque not installed")
def test_brisque_scores_a_noisy_copy_worse_than_the_clean_image():
    """The shipped LIVE SVR (lower = better): strong noise on a photograph scores clearly worse, and
    the numpy-2 workaround keeps one finite score per image."""
    import skimage.data

    clean = skimage.data.astronaut()[100:196, 150:246]
    rng = np.random.default_rng(0)
    noisy = np.clip(clean + rng.normal(0, 40, clean.shape), 0, 255).astype(np.uint8)
    scores = baselines.brisque_scores(np.stack([clean, noisy]))
    assert scores.shape == (2,) and np.isfinite(scores).all()
    assert scores[1] > scores[0] + 5


def test_unscorable_images_are_left_out_of_a_methods_measures():
    """A NaN prediction (BRISQUE cannot fit a flat crop) drops that image from its method's row."""
    import pandas as pd

    from paper_pipelines.pipelines.cpl_iqa import report

    mos = pd.DataFrame({"image_id": [0, 1, 2, 3], "mos": [10.0, 20.0, 30.0, 40.0]})
    preds = pd.DataFrame(
        {
            "method": ["brisque_pretrained"] * 4 + ["cpl"] * 4,
            "split": [0] * 8,
            "image_id": [0, 1, 2, 3] * 2,
            "prediction": [1.0, np.nan, 3.0, 2.0, 1.0, 2.0, 3.0, 4.0],
        }
    )
    rows = report.score_predictions(preds, mos, logistic=False).set_index("method")
    assert rows.loc["brisque_pretrained", "n_test"] == 3 and rows.loc["cpl", "n_test"] == 4
    assert rows.loc["brisque_pretrained", "srcc"] == pytest.approx(0.5)  # ranks 1,3,2 vs 1,2,3
    assert np.isnan(rows.loc["brisque_pretrained", "rmse"])  # not on the MOS scale
    assert rows.loc["cpl", "srcc"] == pytest.approx(1.0)


def test_nss_svr_standardises_the_features_first():
    # standardised features: rescaling one feature column leaves the fitted predictions unchanged
    rng = np.random.default_rng(1)
    x = rng.standard_normal((60, 3))
    mos = 50 + 20 * x[:, 0] - 10 * x[:, 1]
    scaled = x * np.array([1000.0, 1.0, 0.01])
    pred = baselines.fit_nss_svr(x, mos, 10.0, "scale").predict(x)
    again = baselines.fit_nss_svr(scaled, mos, 10.0, "scale").predict(scaled)
    assert np.allclose(pred, again, atol=1e-6)
