"""Parameter blocks of the srca pipeline (conf/base/parameters/srca.yml), one model per top-level block.

Kedro validates every block a node argument is typed with before the first node runs. ``srca.seed``
(common.params.Seed) and ``srca.runtime`` (common.params.RuntimeParams) are the shared blocks; the random
streams of data generation, the split, the baselines and the co-ranking subset derive from the one seed.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from paper_pipelines.common.params import ParamsModel, RuntimeParams, Seed

DATASETS = (
    "sphere_exact",
    "sphere",
    "circle",
    "circle_hd",
    "cellcycle",
    "co2",
    "iris",
    "wine",
    "breast_cancer",
    "user",
)
DatasetName = Literal[
    "sphere_exact",
    "sphere",
    "circle",
    "circle_hd",
    "cellcycle",
    "co2",
    "iris",
    "wine",
    "breast_cancer",
    "user",  # the user's own table: the srca.user_table catalog entry (conf/paper/catalog/srca.yml)
]


class SphereSpec(ParamsModel):
    n: int = Field(1000, ge=3)
    radius: float = Field(1.0, gt=0)
    center: float = 1.0
    noise: float = Field(0.0, ge=0)
    dim: int = Field(3, ge=2)


class CircleSpec(ParamsModel):
    n: int = Field(500, ge=4)
    D: int = Field(50, ge=2)
    radius: float = Field(3.0, gt=0)
    noise: float = Field(0.1, ge=0)
    anisotropy: float = Field(0.5, ge=0, lt=1)


class CellCycleSpec(ParamsModel):
    n: int = Field(2000, ge=10)
    n_features: int = Field(40, ge=3)
    n_markers: int = Field(20, ge=1)
    noise: float = Field(0.3, ge=0)
    g0_fraction: float = Field(0.1, ge=0, lt=1)


class CO2Spec(ParamsModel):
    window: int = Field(26, ge=2)
    trend: int = Field(53, ge=3)
    max_n: int | None = Field(None, ge=10)


class UserTableSpec(ParamsModel):
    """srca.data.user: which columns of the user's table are the points (all numeric ones by default)."""

    columns: list[str] | None = None
    label_column: str | None = (
        None  # kept as labels (colours the embedding figure), not a coordinate
    )


class DataParams(ParamsModel):
    """srca.data: which data sets to build and their generator settings."""

    sphere_exact: SphereSpec = SphereSpec()
    sphere: SphereSpec = SphereSpec(radius=2.0, noise=0.02)
    circle: CircleSpec = CircleSpec()
    circle_hd: CircleSpec = CircleSpec(n=60, D=500)
    cellcycle: CellCycleSpec = CellCycleSpec()
    co2: CO2Spec = CO2Spec()
    user: UserTableSpec = UserTableSpec()
    # Lists come after scalars: a conf file that writes a mapping over a list fails in OmegaConf's merge
    # ("Cannot merge incompatible container types") before our message can name the key.
    datasets: list[DatasetName] = Field(min_length=1)


class PreprocessParams(ParamsModel):
    """srca.preprocess: standardisation and the out-of-sample split (official: ceil(n/2) train)."""

    test_fraction: float = Field(0.5, gt=0, lt=1)
    standardise: list[DatasetName] = []


class ModelParams(ParamsModel):
    """srca.model: SRCA settings (official defaults: PCA rotation, exhaustive search, W = I, lambda = 0)."""

    k: dict[DatasetName, list[int]]
    rotation: Literal["pca", "identity"] = "pca"
    subset_search: Literal["auto", "exhaustive", "greedy", "top", "l1"] = "auto"
    search_overrides: dict[DatasetName, Literal["auto", "exhaustive", "greedy", "top", "l1"]] = {}
    max_subsets: int = Field(30000, ge=1)
    weight: Literal["identity", "mve"] = "identity"
    lambda_penalty: float = Field(0.0, ge=0)
    tol: float = Field(1e-10, gt=0, lt=1e-2)
    max_iter: int = Field(10000, ge=10)
    prune: bool = True
    out_of_sample: bool = True

    @model_validator(mode="after")
    def _positive_k(self) -> ModelParams:
        for name, ks in self.k.items():
            if not ks or any(k < 1 for k in ks):
                raise ValueError(f"k[{name}] must be a non-empty list of integers >= 1, got {ks}")
        return self


class BaselineParams(ParamsModel):
    """srca.baselines: the nonlinear embeddings compared by co-ranking (scikit-learn)."""

    n_neighbors: int = Field(12, ge=2)
    tsne_perplexity: float = Field(30.0, gt=1)
    manifold_methods: list[Literal["isomap", "lle", "tsne", "mds"]] = ["isomap", "lle", "tsne"]


class EvaluationParams(ParamsModel):
    """srca.evaluation: which data sets feed which check."""

    coranking_k: int = Field(2, ge=1)
    coranking_max_n: int = Field(1000, ge=10, le=3000)
    coranking_datasets: list[DatasetName] = ["sphere"]
    flat_datasets: list[DatasetName] = ["iris", "wine", "breast_cancer"]
    phase_datasets: list[DatasetName] = ["circle", "cellcycle", "co2"]
    plot_datasets: list[DatasetName] = ["circle", "co2", "sphere"]


def check_across_blocks(blocks: dict[str, Any]) -> None:
    """Rules that span blocks: every data set built needs its k list, co-ranking needs a fit at its k."""
    data, model, evaluation = blocks.get("data"), blocks.get("model"), blocks.get("evaluation")
    if not isinstance(data, DataParams) or not isinstance(model, ModelParams):
        return
    missing = [name for name in data.datasets if not model.k.get(name)]
    if missing:
        raise ValueError(
            f"parameter srca.model.k has no entry for data set(s) {missing} of srca.data.datasets; "
            f"add e.g. k: {{{missing[0]}: [1]}} or drop them from srca.data.datasets"
        )
    if isinstance(evaluation, EvaluationParams):
        unfit = [
            name
            for name in evaluation.coranking_datasets
            if name in data.datasets and evaluation.coranking_k not in model.k[name]
        ]
        if unfit:
            raise ValueError(
                f"parameter srca.evaluation.coranking_k = {evaluation.coranking_k} is not among "
                f"srca.model.k of {unfit}; add it there or change srca.evaluation.coranking_k"
            )


__all__ = [
    "BaselineParams",
    "DataParams",
    "EvaluationParams",
    "ModelParams",
    "PreprocessParams",
    "RuntimeParams",
    "Seed",
    "check_across_blocks",
]
