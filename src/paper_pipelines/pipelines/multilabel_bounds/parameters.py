"""Parameter blocks of multilabel_bounds (conf/*/parameters/multilabel_bounds.yml), one model per block.

Kedro validates each block before any node runs (the node arguments are annotated with these models). Rules
that span blocks (grids against the generator's c_max and pool sizes, the Rademacher sub-grid against the
low-dimensional pool, yeast without river) are :func:`check_across_blocks`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from paper_pipelines.common.params import ParamsModel, RuntimeParams, Seed

__all__ = [
    "AnchorParams",
    "DataParams",
    "EvaluationParams",
    "ModelParams",
    "RademacherParams",
    "RuntimeParams",
    "Seed",
    "TrainParams",
    "check_across_blocks",
]

LOSS = Literal["squared", "logistic", "squared_hinge", "hinge"]
KIND = Literal["linear", "lowrank", "mlp"]  # mlp: opt-in, no default grid uses it
Eta = Annotated[float, Field(ge=0.0, lt=0.5)]
Size = Annotated[int, Field(ge=2)]
# Rows of the shipped real sets, and the test rows every split keeps.
REAL_ROWS = {"yeast": 2417}
MIN_TEST_ROWS = 500


def _grid_ok(block: str, n: list[int], c: list[int]) -> None:
    for key, values in (("n", n), ("c", c)):
        if len(set(values)) < 2:
            raise ValueError(
                f"multilabel_bounds.data.{block}.{key} = {values} needs at least two distinct values "
                "(a slope of log gap against log " + key + " needs two points)"
            )


class SyntheticBlock(ParamsModel):
    """One grid of the linear-threshold generator: inputs, class radius Lambda, n, c, eta, classes."""

    enabled: bool = True
    d: int = Field(20, ge=1)  # raw features; x has d + 1 coordinates (bias)
    Lambda: float = Field(10.0, gt=0)
    inputs: Literal["isotropic", "spiked"] = "isotropic"
    informative: int = Field(10, ge=1)
    informative_energy: float = Field(0.92, gt=0, lt=1)
    n_pool: int = Field(3200, ge=2)
    n_test: int = Field(20000, ge=100)
    replicates: int = Field(1, ge=1)  # independent pools, sub-streams of the one seed
    n: list[Size] = Field(min_length=2)
    c: list[Size] = Field(min_length=2)
    etas: list[Eta] = Field(min_length=1)
    models: list[KIND] = Field(min_length=1)

    @model_validator(mode="after")
    def _check(self) -> SyntheticBlock:
        if self.inputs == "spiked" and self.informative >= self.d:
            raise ValueError(
                f"multilabel_bounds.data.*.informative = {self.informative} must be below d = {self.d}"
            )
        return self


class MultilabelBlock(ParamsModel):
    """scikit-learn's make_multilabel_classification grid (the secondary generator; reported only)."""

    enabled: bool = True
    Lambda: float = Field(10.0, gt=0)
    n_features: int = Field(20, ge=1)
    c_max: int = Field(50, ge=2)
    n_pool: int = Field(1600, ge=2)
    n_test: int = Field(5000, ge=100)
    n: list[Size] = Field(min_length=2)
    c: list[Size] = Field(min_length=2)
    models: list[KIND] = Field(min_length=1)


class RealBlock(ParamsModel):
    """Yeast from the river wheel (or the multi-digit fallback): n, label-subset sizes, splits."""

    enabled: bool = True
    source: Literal["yeast", "digits"] = "yeast"
    Lambda: float = Field(10.0, gt=0)
    splits: int = Field(5, ge=1)
    label_subsets: int = Field(5, ge=1)
    min_label_count: int = Field(2, ge=1)
    digits_rows: int = Field(2400, ge=100)  # size of the fallback set
    digits_per_image: int = Field(3, ge=1)
    n: list[Size] = Field(min_length=2)
    c: list[Size] = Field(min_length=2)
    # classes fitted on the real set; a coupled class (lowrank, mlp) is fitted once per label subset
    models: list[KIND] = Field(default_factory=lambda: ["linear"], min_length=1)


class DataParams(ParamsModel):
    # scalars first (the generic bad-input test edits the first fields)
    c_max: int = Field(100, ge=2)
    label_rank: int = Field(3, ge=1)
    label_specific: float = Field(0.3, ge=0)
    positive_rate: float = Field(0.3, gt=0, lt=1)
    low_d: SyntheticBlock
    high_d: SyntheticBlock
    optimistic: SyntheticBlock
    multilabel: MultilabelBlock
    real: RealBlock

    @model_validator(mode="after")
    def _check(self) -> DataParams:
        for name in ("low_d", "high_d", "optimistic"):
            block = getattr(self, name)
            _grid_ok(name, block.n, block.c)
            too_many = [c for c in block.c if c > self.c_max]
            if too_many:
                raise ValueError(
                    f"multilabel_bounds.data.{name}.c has {too_many}, above the generator's "
                    f"multilabel_bounds.data.c_max = {self.c_max}: lower them or raise c_max"
                )
            too_big = [n for n in block.n if n > block.n_pool]
            if too_big:
                raise ValueError(
                    f"multilabel_bounds.data.{name}.n has {too_big}, above the pool "
                    f"multilabel_bounds.data.{name}.n_pool = {block.n_pool}: lower them or raise n_pool"
                )
        ml = self.multilabel
        _grid_ok("multilabel", ml.n, ml.c)
        if max(ml.c) > ml.c_max or max(ml.n) > ml.n_pool:
            raise ValueError(
                f"multilabel_bounds.data.multilabel: n {ml.n} must be <= n_pool {ml.n_pool} and c "
                f"{ml.c} <= c_max {ml.c_max}"
            )
        real = self.real
        _grid_ok("real", real.n, real.c)
        rows = REAL_ROWS.get(real.source, real.digits_rows)
        if max(real.n) > rows - MIN_TEST_ROWS:
            raise ValueError(
                f"multilabel_bounds.data.real.n has {max(real.n)}, above the pool: {real.source} has "
                f"{rows} rows and each split keeps {MIN_TEST_ROWS} for testing; lower "
                "multilabel_bounds.data.real.n"
            )
        labels = 14 if real.source == "yeast" else 10
        if max(real.c) > labels:
            raise ValueError(
                f"multilabel_bounds.data.real.c has {max(real.c)}, above the {labels} labels of "
                f"{real.source}: lower multilabel_bounds.data.real.c"
            )
        return self


class ModelParams(ParamsModel):
    rank: int = Field(5, ge=1)  # r of the shared low-rank class W = A B (||A||_F <= sqrt(r))
    hidden: int = Field(64, ge=1)  # h, hidden units of the mlp class B^T tanh(V^T x) (||v_k|| <= 1)


class TrainParams(ParamsModel):
    steps: int = Field(600, ge=1)
    lr: float = Field(0.1, gt=0)
    n_jobs: int = Field(2, ge=1)  # joblib workers for the grid
    losses: list[LOSS] = Field(min_length=1)


class RademacherParams(ParamsModel):
    enabled: bool = True
    mc_draws: int = Field(200, ge=1)  # sign draws of the closed-form (Monte Carlo) complexities
    sign_draws: int = Field(5, ge=0)  # sign draws of the loss-class ascent (0: closed forms only)
    restarts: int = Field(2, ge=1)
    ascent_steps: int = Field(150, ge=1)
    ascent_lr: float = Field(0.1, gt=0)
    n: list[Size] = Field(min_length=2)
    c: list[Size] = Field(min_length=2)
    losses: list[LOSS] = Field(min_length=1)
    models: list[KIND] = Field(min_length=1)


class AnchorParams(ParamsModel):
    """scikit-learn one-vs-rest anchors on the real set at matched regularisation (spec: Anchors)."""

    enabled: bool = True
    n: int = Field(1600, ge=10)
    # on standardised features, as the spec's prototype; rescaled to our feature map in baselines.py
    logistic_C: float = Field(0.1, gt=0)
    ridge_alpha: float = Field(10.0, gt=0)
    svc_C: float = Field(0.01, gt=0)


class EvaluationParams(ParamsModel):
    c_lo: int = Field(2, ge=2)
    c_hi: int = Field(50, ge=2)
    decoupled_k: float = Field(1.5, gt=0)
    lowrank_k: float = Field(1.2, gt=0)
    auc_k: float = Field(1.5, gt=0)
    decoupled_min_n: int = Field(400, ge=2)
    auc_min_n: int = Field(400, ge=2)
    lowrank_n: list[Size] = Field(min_length=1)


def check_across_blocks(blocks: dict[str, Any]) -> None:
    """The grids the evaluate step reads must exist, the Rademacher sub-grid must fit the low-d pool, and
    yeast needs river installed."""
    data, rad, ev, anchors = (
        blocks.get(k) for k in ("data", "rademacher", "evaluation", "anchors")
    )
    if data is None:
        return
    if data.real.enabled and data.real.source == "yeast":
        from .data import river_available

        if not river_available():
            raise ValueError(
                "multilabel_bounds.data.real.source = 'yeast' needs the `river` package (the data ships "
                "inside its wheel), which is not installed: `pip install river==0.26.1`, or use the "
                "fallback multilabel_bounds.data.real.source: digits"
            )
    if rad is not None and rad.enabled:
        low = data.low_d
        if max(rad.n) > low.n_pool or max(rad.c) > data.c_max:
            raise ValueError(
                f"multilabel_bounds.rademacher.n {rad.n} / c {rad.c} must fit the low-d pool "
                f"(multilabel_bounds.data.low_d.n_pool = {low.n_pool}, data.c_max = {data.c_max})"
            )
    if ev is not None and ev.c_lo >= ev.c_hi:
        raise ValueError(
            f"multilabel_bounds.evaluation.c_lo = {ev.c_lo} must be below c_hi = {ev.c_hi}"
        )
    if ev is not None and data.low_d.enabled:
        missing = [c for c in (ev.c_lo, ev.c_hi) if c not in data.low_d.c]
        if missing:
            raise ValueError(
                f"multilabel_bounds.evaluation.c_lo / c_hi {missing} are not in "
                f"multilabel_bounds.data.low_d.c {data.low_d.c}: add them or change the evaluation"
            )
    if anchors is not None and anchors.enabled and data.real.enabled:
        rows = REAL_ROWS.get(data.real.source, data.real.digits_rows)
        if anchors.n > rows - MIN_TEST_ROWS:
            raise ValueError(
                f"multilabel_bounds.anchors.n = {anchors.n} is above the pool of {data.real.source} "
                f"({rows} rows, {MIN_TEST_ROWS} kept for testing): lower it"
            )
