"""Pydantic models of the ``core_kernel.*`` parameter blocks (conf/base/parameters/core_kernel.yml)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from paper_pipelines.common.params import ParamsModel


class KernelEntry(ParamsModel):
    kind: Literal["rbf", "polynomial", "linear"]
    bandwidth_factor: float = Field(1.0, gt=0)
    degree: int = Field(2, ge=1)
    offset: float = Field(1.0, ge=0)


class DataParams(ParamsModel):
    dataset: Literal["digits", "wine", "breast_cancer", "iris"] = "digits"
    n: int | None = Field(1500, ge=10)
    seed: int = 0


class KernelParams(ParamsModel):
    base: list[KernelEntry] = Field(min_length=1)
    center: bool = True
    normalize: bool = True
    psd_tol: float = Field(1e-8, ge=0)


class MKKMParams(ParamsModel):
    tol: float = Field(1e-4, gt=0)
    max_iter: int = Field(50, ge=1)


class SimpleMKKMParams(ParamsModel):
    tol: float = Field(1e-4, gt=0)
    max_iter: int = Field(100, ge=1)
    golden_tol: float = Field(1e-3, gt=0, lt=1)
    max_step: float = Field(0.1, gt=0, le=1)


class LateFusionParams(ParamsModel):
    variant: Literal["continuous", "discrete"] = "continuous"
    tol: float = Field(1e-4, gt=0)
    max_iter: int = Field(100, ge=1)
    kmeans_replicates: int = Field(30, ge=1)


class MKCParams(ParamsModel):
    algorithms: list[Literal["mkkm", "simplemkkm", "latefusion"]] = Field(min_length=1)
    dense_max_n: int = Field(200, ge=1)
    mkkm: MKKMParams = MKKMParams()
    simplemkkm: SimpleMKKMParams = SimpleMKKMParams()
    latefusion: LateFusionParams = LateFusionParams()

    def settings(self, algorithm: str, seed: int = 0) -> dict:
        """Keyword arguments of ``mkc.run_mkc`` for one algorithm."""
        block = getattr(self, algorithm).model_dump()
        if algorithm == "latefusion":
            block["seed"] = seed
        block["dense_max_n"] = self.dense_max_n
        return block


class CoreParams(ParamsModel):
    method: Literal["projection", "uniform", "leverage"] = "projection"
    solver: Literal["randomized", "exact"] = "randomized"
    power_iters: int = Field(3, ge=0)
    default_s: int = Field(80, ge=2)
    sizes_projection: list[int] = Field(min_length=1)
    sizes_sampling: list[int] = Field(min_length=1)
    sampling_methods: list[Literal["uniform", "leverage"]] = ["uniform", "leverage"]
    sampling_algorithms: list[Literal["mkkm", "simplemkkm", "latefusion"]] = ["mkkm", "simplemkkm"]
    seeds: list[int] = Field(min_length=1)
    rank: int = Field(10, ge=1)
    mix_beta: float = Field(0.5, ge=0, le=1)

    @model_validator(mode="after")
    def _sizes_positive(self) -> CoreParams:
        bad = [s for s in [*self.sizes_projection, *self.sizes_sampling] if s < 2]
        if bad:
            raise ValueError(f"core sizes must be >= 2, got {bad}")
        if self.default_s not in self.sizes_projection:
            raise ValueError(
                f"default_s={self.default_s} must be one of sizes_projection {self.sizes_projection}"
            )
        if self.sampling_methods and self.default_s not in self.sizes_sampling:
            raise ValueError(
                f"default_s={self.default_s} must be one of sizes_sampling {self.sizes_sampling}"
            )
        return self


class ExtensionParams(ParamsModel):
    algorithm: Literal["mkkm", "simplemkkm"] = "simplemkkm"
    s_sampling: int = Field(240, ge=2)
    kmeans_repeats: int = Field(20, ge=1)
    kmeans_n_init: int = Field(10, ge=1)


class ScalingParams(ParamsModel):
    sizes: list[int] = Field(min_length=1)
    full_max_n: int = Field(2000, ge=10)
    exact_max_n: int = Field(3000, ge=10)
    k: int = Field(10, ge=2)
    views: int = Field(4, ge=1)
    dim: int = Field(8, ge=1)
    irrelevant_dims: int = Field(4, ge=0)
    separation: float = Field(3.0, gt=0)
    noise: list[float] = [1.0, 1.5, 2.0, 3.0]
    bandwidth_factors: list[float] = [1.0]
    s: int = Field(80, ge=2)
    pilot_size: int = Field(300, ge=10)
    kmeans_repeats: int = Field(3, ge=1)
    kernel_dtype: Literal["float64", "float32"] = "float64"
    seed: int = 0


class RuntimeParams(ParamsModel):
    threads: int = Field(1, ge=1)
