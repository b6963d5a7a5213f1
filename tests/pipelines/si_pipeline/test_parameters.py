"""Parameter blocks: each DAG block fits its DAG, and the rules that span blocks name the full key."""

import numpy as np
import pytest
import yaml

from paper_pipelines.pipelines.si_pipeline.dags import DAGS, selective_tests
from paper_pipelines.pipelines.si_pipeline.data import diabetes_standardised
from paper_pipelines.pipelines.si_pipeline.parameters import (
    CalibrationParams,
    CvParams,
    DagParams,
    DataParams,
    check_across_blocks,
    engine_keys,
)
from tests.kedro_helpers import PROJECT_ROOT

BASE = yaml.safe_load((PROJECT_ROOT / "conf/base/parameters/si_pipeline.yml").read_text())[
    "si_pipeline"
]


def _blocks(**changes) -> dict:
    blocks = {d: DagParams.model_validate(BASE[d]) for d in DAGS}
    blocks["calibration"] = CalibrationParams.model_validate(BASE["calibration"])
    blocks["cv"] = CvParams.model_validate(BASE["cv"])
    blocks.update(changes)
    return blocks


def test_every_declared_dag_has_a_block_giving_exactly_what_its_nodes_read():
    for name, engine in selective_tests().items():
        given = DagParams.model_validate(BASE[name]).hyperparameters()
        assert {f"{c}.{k}" for c, v in given.items() for k in v} == engine_keys(engine), name
    assert engine_keys(selective_tests()["op1"]) == {
        "soft_ipod.lam",
        "marginal_screening.k",
        "stepwise.k",
        "lasso.alpha",
    }
    check_across_blocks(_blocks())  # the shipped configuration passes


def test_a_component_the_dag_does_not_have_is_named():
    op2 = DagParams.model_validate({**BASE["op2"], "soft_ipod": {"lam": 0.02}})
    with pytest.raises(ValueError, match=r"si_pipeline\.op2\.soft_ipod\.lam is read by no node"):
        check_across_blocks(_blocks(op2=op2))


def test_a_missing_hyperparameter_is_named():
    op1 = DagParams.model_validate({k: v for k, v in BASE["op1"].items() if k != "lasso"})
    with pytest.raises(ValueError, match=r"si_pipeline\.op1: .*lasso\.alpha"):
        check_across_blocks(_blocks(op1=op1))


def test_experiments_must_name_declared_dags():
    cal = CalibrationParams.model_validate({**BASE["calibration"], "variants": ["op1", "op9"]})
    with pytest.raises(ValueError, match=r"si_pipeline\.calibration\.variants .*\['op9'\]"):
        check_across_blocks(_blocks(calibration=cal))


def test_cv_grid_candidates_are_checked_like_dag_blocks():
    cv = CvParams.model_validate({**BASE["cv"], "grid": {"op1": {"lasso": {"alpha": [0.1, -1.0]}}}})
    with pytest.raises(ValueError, match=r"si_pipeline\.cv\.grid\.op1\.lasso\.alpha"):
        check_across_blocks(_blocks(cv=cv))
    off = CvParams.model_validate({**BASE["cv"], "enabled": False, "dags": ["op7"]})
    check_across_blocks(_blocks(cv=off))  # CV switched off: its DAG list is not used


def test_diabetes_rows_bound_the_demo_size():
    with pytest.raises(ValueError, match=r"si_pipeline\.data\.n = 443 exceeds the 442"):
        DataParams(source="diabetes", n=443)
    assert DataParams(source="synthetic", n=443).n == 443


def test_diabetes_is_standardised_then_jittered_and_y_scaled():
    """Columns with >= 0.3 n distinct values are standardised only, the others jittered (N(0, 0.1^2));
    y has residual SD 1 (ddof = p) by construction."""
    from sklearn.datasets import load_diabetes

    raw, _ = load_diabetes(return_X_y=True)
    X, y = diabetes_standardised(0)
    assert X.shape == (442, 10)
    many = [j for j in range(10) if len(np.unique(raw[:, j])) >= 0.3 * 442]
    few = [j for j in range(10) if j not in many]
    assert 1 in few and many  # sex takes two values
    assert np.allclose(X[:, many], ((raw - raw.mean(0)) / raw.std(0))[:, many])
    jitter = X[:, few] - ((raw - raw.mean(0)) / raw.std(0))[:, few]
    assert 0.07 < jitter.std() < 0.13
    coef, *_ = np.linalg.lstsq(X, y, rcond=None)
    assert abs(y.mean()) < 1e-12 and np.std(y - X @ coef, ddof=10) == pytest.approx(1.0)
