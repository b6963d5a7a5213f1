"""Parameter blocks of the srca pipeline (conf/base/parameters/srca.yml), validated at node start."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from paper_pipelines.common.params import ParamsModel

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


class DataParams(ParamsModel):
    """srca.data: which data sets to build and their generator settings."""

    seed: int = 0
    datasets: list[DatasetName] = Field(min_length=1)
    sphere_exact: SphereSpec = SphereSpec()
    sphere: SphereSpec = SphereSpec(radius=2.0, noise=0.02)
    circle: CircleSpec = CircleSpec()
    circle_hd: CircleSpec = CircleSpec(n=60, D=500)
    cellcycle: CellCycleSpec = CellCycleSpec()
    co2: CO2Spec = CO2Spec()


class PreprocessParams(ParamsModel):
    """srca.preprocess: standardisation and the out-of-sample split (official: ceil(n/2) train)."""

    seed: int = 0
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
    blas_threads: int | None = Field(1, ge=1)
    out_of_sample: bool = True

    @model_validator(mode="after")
    def _positive_k(self) -> ModelParams:
        for name, ks in self.k.items():
            if not ks or any(k < 1 for k in ks):
                raise ValueError(f"k[{name}] must be a non-empty list of integers >= 1, got {ks}")
        return self


class BaselineParams(ParamsModel):
    """srca.baselines: the nonlinear embeddings compared by co-ranking (scikit-learn)."""

    seed: int = 0
    manifold_methods: list[Literal["isomap", "lle", "tsne", "mds"]] = ["isomap", "lle", "tsne"]
    n_neighbors: int = Field(12, ge=2)
    tsne_perplexity: float = Field(30.0, gt=1)
    blas_threads: int | None = Field(1, ge=1)


class EvalParams(ParamsModel):
    """srca.eval: which data sets feed which check."""

    seed: int = 0
    coranking_datasets: list[DatasetName] = ["sphere"]
    coranking_k: int = Field(2, ge=1)
    coranking_max_n: int = Field(1000, ge=10, le=3000)
    flat_datasets: list[DatasetName] = ["iris", "wine", "breast_cancer"]
    phase_datasets: list[DatasetName] = ["circle", "cellcycle", "co2"]
    plot_datasets: list[DatasetName] = ["circle", "co2", "sphere"]
