"""Classical blind-IQA baselines on the same splits: NSS features + SVR, and the pretrained BRISQUE SVR.

The pretrained BRISQUE model (epsilon-SVR trained on LIVE, shipped in the ``brisque`` 0.2.0 wheel) is
an optional dependency: when the package (with libsvm and OpenCV) is not installed it is skipped and
the results say so.
"""

from __future__ import annotations

import logging

import numpy as np
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVR

logger = logging.getLogger(__name__)


def fit_nss_svr(features: np.ndarray, mos: np.ndarray, c: float, gamma: str):
    """RBF epsilon-SVR on standardised NSS features of the labelled images (classical supervised BIQA)."""
    model = make_pipeline(StandardScaler(), SVR(kernel="rbf", C=c, gamma=gamma))
    return model.fit(features, mos)


def brisque_scores(images: np.ndarray) -> np.ndarray | None:
    """Scores of the shipped LIVE-trained BRISQUE SVR (lower = better), or None when not installed."""
    try:
        from brisque import BRISQUE
    except Exception:  # not installed, or libsvm / OpenCV missing
        logger.info("brisque is not installed: the pretrained BRISQUE baseline is skipped")
        return None
    scorer = BRISQUE(url=False)
    # brisque 0.2.0 under numpy 2 returns 1-element feature arrays; the spec's fix: take the scalar
    original = scorer.scale_features

    def scale_features(features):
        return original(np.asarray([np.ravel(f)[0] for f in features]))

    scorer.scale_features = scale_features
    return np.asarray([float(scorer.score(image)) for image in images])
