"""Parameter blocks of si_pipeline (conf/base/parameters/si_pipeline.yml), one model per top-level block.

Kedro validates every block a node argument is typed with before the first node runs. The per-DAG blocks
(``op1``, ``op2``, and any DAG added to :data:`dags.DAGS`) share :class:`DagParams`; whether a block
gives exactly the hyperparameters its DAG's nodes read, and whether the experiments name declared DAGs,
spans blocks and lives in :func:`check_across_blocks`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, PositiveFloat, PositiveInt, ValidationError, model_validator

from paper_pipelines.common.params import ParamsModel, format_validation_error

SLUG = "si_pipeline"
DIABETES_ROWS = 442


class DataParams(ParamsModel):
    """The analysed demo dataset: synthetic with mean-shift outliers, or a diabetes subsample."""

    source: Literal["synthetic", "diabetes"] = "synthetic"
    n: int = Field(150, ge=10)
    p: int = Field(10, ge=1)  # synthetic only (diabetes has 10 features)
    delta: float = 0.8  # beta_1 = beta_2 = beta_3 = delta
    missing_rate: float = Field(0.03, ge=0.0, lt=1.0)
    n_outliers: int = Field(5, ge=0)
    outlier_shift: float = 6.0
    standardise: bool = True

    @model_validator(mode="after")
    def _fits_the_table(self) -> DataParams:
        if self.source == "diabetes" and self.n > DIABETES_ROWS:
            raise ValueError(
                f"{SLUG}.data.n = {self.n} exceeds the {DIABETES_ROWS} diabetes rows; "
                f"lower it to <= {DIABETES_ROWS}"
            )
        return self


class DagParams(ParamsModel):
    """Base of every DAG's parameter block; the fields of a block come from its DAG.

    :attr:`engine.DagSelectiveTest.params_model` subclasses this with one field per ``params:`` input
    of the DAG's nodes (nested by the dots of the key), each typed by the constraint its component
    declares for that argument (``lam: PositiveFloat``, ``k: PositiveInt``, ...). Two lasso nodes reading
    ``params:lasso_small.alpha`` and ``params:lasso_big.alpha`` thus give a block with both keys.
    """

    def hyperparameters(self) -> dict[str, Any]:
        """The block as the engine reads it (plain nested dicts)."""
        return self.model_dump()


class InferenceParams(ParamsModel):
    """The selective test: noise SD and the parametric line search (Sec. 4)."""

    sigma: PositiveFloat | None = 1.0  # None: plug-in estimate (full OLS residual SD, ddof = p)
    search_strategy: Literal["pi1", "pi3"] = "pi3"
    termination: Literal["precision", "decision", "exhaustive"] = "precision"
    precision: float = Field(1e-3, gt=0.0, lt=1.0)
    step: float = Field(1e-6, gt=0.0, le=1e-2)
    max_iter: PositiveInt = 100_000
    alpha: float = Field(0.05, gt=0.0, lt=1.0)

    def search(self) -> dict[str, Any]:
        """Keyword arguments of :func:`line_search.parametric_search`."""
        return self.model_dump(exclude={"sigma"})


class CalibrationParams(ParamsModel):
    """Null replications (beta = 0), one random selected feature tested per dataset (Sec. 6.2)."""

    replications: PositiveInt = 200
    n: int = Field(100, ge=10)
    p: PositiveInt = 10
    missing_rate: float = Field(0.03, ge=0.0, lt=1.0)
    variants: list[str] = Field(["op1", "op2"], min_length=1)
    estimated_sigma_variants: list[str] = ["op1"]
    estimated_sigma_replications: int = Field(200, ge=0)
    exactness_datasets: int = Field(10, ge=0)  # precision vs exhaustive on datasets of variants[0]


class PowerParams(ParamsModel):
    """Power: rejection rate among tests of truly active features (Sec. 6.2)."""

    replications: PositiveInt = 100
    deltas: list[float] = Field([0.4], min_length=1)
    n: int = Field(100, ge=10)
    p: PositiveInt = 10
    missing_rate: float = Field(0.03, ge=0.0, lt=1.0)
    variants: list[str] = Field(["op1", "op2"], min_length=1)


class RealParams(ParamsModel):
    """Real data: random diabetes subsamples, sigma = 1 after scaling y (Sec. 6.4)."""

    dataset: Literal["diabetes"] = "diabetes"
    n: int = Field(150, ge=20, le=DIABETES_ROWS)
    replications: PositiveInt = 100
    missing_rate: float = Field(0.0, ge=0.0, lt=1.0)
    variants: list[str] = Field(["op1", "op2"], min_length=1)


class CvParams(ParamsModel):
    """Pipeline selection by K-fold CV inside the test (Sec. 5, si4pipeline's ``tune`` + ``all_cv``)."""

    enabled: bool = True
    folds: int = Field(5, ge=2)
    max_candidates: PositiveInt | None = None
    condition_on: Literal["selection", "candidate"] = "selection"
    dags: list[str] = Field(["op1", "op2"], min_length=1)  # declared DAGs that compete
    # per DAG: its parameter block with lists for the values to cross-validate (product)
    grid: dict[str, dict[str, dict[str, Any]]] = {
        "op1": {"lasso": {"alpha": [0.08, 0.12]}},
        "op2": {"lasso": {"alpha": [0.08, 0.12]}},
    }
    demo: bool = True  # CV-chosen test of the demo data's selected features
    null_replications: int = Field(100, ge=0)  # at calibration.{n, p, missing_rate}
    power_replications: int = Field(100, ge=0)  # at power.{n, p, missing_rate}
    power_delta: float = 0.4
    real_replications: int = Field(50, ge=0)  # at real.{n, missing_rate}

    def candidate_grids(self) -> dict[str, dict]:
        """{dag: grid} of the competing DAGs (an empty grid: the DAG's own setting only)."""
        return {dag: self.grid.get(dag, {}) for dag in self.dags}


# ----------------------------------------------------------------------------- across blocks
def _dag_errors(declared: dict, blocks: dict[str, Any]) -> list[str]:
    """Each declared DAG has its block (the block's keys and values are checked by its own model)."""
    errors = []
    for name, engine in declared.items():
        block = blocks.get(name)
        if isinstance(block, DagParams):
            continue
        try:  # a block given as a plain mapping (outside Kedro): validate it here
            engine.check_params(block if isinstance(block, dict) else {}, f"{SLUG}.{name}")
        except ValueError as exc:
            if block is None:
                errors.append(
                    f"parameter block {SLUG}.{name} is missing: DAG {name} (dags.py) reads "
                    + ", ".join(sorted(engine_keys(engine)))
                )
            else:
                errors.append(str(exc))
    return errors


def engine_keys(engine) -> set[str]:
    """The hyperparameter keys (relative to the DAG's block) that the DAG's nodes read."""
    prefix = "params:" + (engine.namespace + "." if engine.namespace else "")
    return {h[len(prefix) :] for s in engine.steps for h in s.hyper}


def _unknown_dags(names: list[str], declared: dict, key: str) -> list[str]:
    unknown = [v for v in names if v not in declared]
    if not unknown:
        return []
    return [
        f"parameter {SLUG}.{key} = {names!r} names undeclared DAGs {unknown}; "
        f"declared DAGs (dags.DAGS): {sorted(declared)}"
    ]


def _cv_errors(cv: CvParams, declared: dict, blocks: dict[str, Any]) -> list[str]:
    """The competing DAGs exist and every candidate of the grid is a valid DAG block."""
    from .cross_validation import expand_candidates

    errors = _unknown_dags(cv.dags, declared, "cv.dags")
    errors += _unknown_dags(list(cv.grid), declared, "cv.grid")
    if errors:
        return errors
    base = {
        d: blocks[d].hyperparameters() for d in declared if isinstance(blocks.get(d), DagParams)
    }
    try:
        candidates = expand_candidates(declared, cv.candidate_grids(), base, check=False)
    except Exception as exc:  # a grid that cannot be expanded (a DAG without a block)
        return [f"parameter {SLUG}.cv.grid is invalid: {exc}"]
    for cand in candidates:  # each candidate is checked like its DAG's own block
        model = declared[cand.dag].params_model
        try:
            model.model_validate(cand.params)
        except ValidationError as exc:
            errors.append(format_validation_error(exc, f"{SLUG}.cv.grid.{cand.dag}", model))
    return list(dict.fromkeys(errors))


def check_across_blocks(blocks: dict[str, Any]) -> None:
    """Rules spanning blocks: DAG blocks fit their DAGs; experiments and CV name declared DAGs.

    ``blocks`` maps each block name to its validated model (or scalar). Raises ValueError naming the keys.
    """
    from .dags import selective_tests

    declared = selective_tests()
    errors = _dag_errors(declared, blocks)
    cal, power, real, cv = (blocks.get(b) for b in ("calibration", "power", "real", "cv"))
    if isinstance(cal, CalibrationParams):
        errors += _unknown_dags(cal.variants, declared, "calibration.variants")
        errors += _unknown_dags(
            cal.estimated_sigma_variants, declared, "calibration.estimated_sigma_variants"
        )
    if isinstance(power, PowerParams):
        errors += _unknown_dags(power.variants, declared, "power.variants")
    if isinstance(real, RealParams):
        errors += _unknown_dags(real.variants, declared, "real.variants")
    if isinstance(cv, CvParams) and cv.enabled and not errors:
        errors += _cv_errors(cv, declared, blocks)
    if errors:
        raise ValueError("; ".join(errors))
