"""Parameter blocks of core_kernel (conf/*/parameters/core_kernel.yml), one model per top-level block.

Kedro validates each block before any node runs because the node arguments are annotated with these
models; every number carries its range and every choice is a Literal (tests/test_bad_input.py). The
rule that spans blocks (core sizes against the number of points) is :func:`check_across_blocks`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from paper_pipelines.common.params import ParamsModel, RuntimeParams, Seed

__all__ = [
    "CoreParams",
    "DataParams",
    "ExtensionParams",
    "KernelEntry",
    "KernelParams",
    "MKCParams",
    "RuntimeParams",
    "ScalingParams",
    "Seed",
    "check_across_blocks",
]

# latefusion_discrete: the official discrete one-pass late fusion with the mkc.latefusion settings,
# reported beside latefusion (whose variant is mkc.latefusion.variant).
ALGORITHM = Literal["mkkm", "simplemkkm", "latefusion", "latefusion_discrete"]
# Points in scikit-learn's shipped tables, so the size rule also holds for data.n = null (all points).
TABLE_SIZES = {"digits": 1797, "wine": 178, "breast_cancer": 569, "iris": 150}


class KernelEntry(ParamsModel):
    """One base kernel: ``rbf`` exp(-||x-y||^2 / (t * med)), ``polynomial`` ((x.y)/d + c)^deg, ``linear``."""

    kind: Literal["rbf", "polynomial", "linear"]
    bandwidth_factor: float = Field(1.0, gt=0)
    degree: int = Field(2, ge=1)
    offset: float = Field(1.0, ge=0)


class DataParams(ParamsModel):
    """Which shipped scikit-learn table, and the size of its uniform subsample (null = all points)."""

    dataset: Literal["digits", "wine", "breast_cancer", "iris"] = "digits"
    n: int | None = Field(1500, ge=10)


class KernelParams(ParamsModel):
    # Scalars first: the generic bad-input test puts a mapping into the first field, and OmegaConf
    # rejects a mapping over a list while merging environments, before any key can be named.
    center: bool = True
    normalize: bool = True
    psd_tol: float = Field(1e-8, ge=0)
    base: list[KernelEntry] = Field(min_length=1)


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
    dense_max_n: int = Field(200, ge=1)  # LAPACK eigh up to this n, ARPACK above
    algorithms: list[ALGORITHM] = Field(min_length=1)
    mkkm: MKKMParams = MKKMParams()
    simplemkkm: SimpleMKKMParams = SimpleMKKMParams()
    latefusion: LateFusionParams = LateFusionParams()

    def settings(self, algorithm: str, seed: int = 0) -> dict:
        """Keyword arguments of ``mkc.run_mkc`` for one algorithm."""
        discrete = algorithm == "latefusion_discrete"
        block = (self.latefusion if discrete else getattr(self, algorithm)).model_dump()
        if discrete:
            block["variant"] = "discrete"
        if algorithm in ("latefusion", "latefusion_discrete"):
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
    sampling_algorithms: list[ALGORITHM] = ["mkkm", "simplemkkm"]
    # Independent draws per sampling size, each its own sub-stream of core_kernel.seed.
    draws: int = Field(5, ge=1)
    rank: int = Field(10, ge=1)
    mix_beta: float = Field(0.5, ge=0, le=1)

    @model_validator(mode="after")
    def _sizes_positive(self) -> CoreParams:
        bad = [s for s in [*self.sizes_projection, *self.sizes_sampling] if s < 2]
        if bad:
            raise ValueError(
                f"core_kernel.core.sizes_projection / sizes_sampling must be >= 2, got {bad}"
            )
        if self.default_s not in self.sizes_projection:
            raise ValueError(
                f"core_kernel.core.default_s={self.default_s} must be one of "
                f"core_kernel.core.sizes_projection {self.sizes_projection}"
            )
        if self.sampling_methods and self.default_s not in self.sizes_sampling:
            raise ValueError(
                f"core_kernel.core.default_s={self.default_s} must be one of "
                f"core_kernel.core.sizes_sampling {self.sizes_sampling}"
            )
        return self


class ExtensionParams(ParamsModel):
    algorithm: Literal["mkkm", "simplemkkm"] = "simplemkkm"
    s_sampling: int = Field(240, ge=2)
    kmeans_repeats: int = Field(20, ge=1)
    kmeans_n_init: int = Field(10, ge=1)


class ScalingParams(ParamsModel):
    full_max_n: int = Field(2000, ge=10)
    exact_max_n: int = Field(3000, ge=10)
    sizes: list[int] = Field(min_length=1)
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

    @model_validator(mode="after")
    def _core_fits_smallest_n(self) -> ScalingParams:
        if self.s > min(self.sizes):
            raise ValueError(
                f"core_kernel.scaling.s={self.s} is larger than the smallest "
                f"core_kernel.scaling.sizes entry {min(self.sizes)}; lower s or drop that size"
            )
        return self


def check_across_blocks(blocks: dict[str, Any]) -> None:
    """Core sizes must be below the number of points the data block yields (a core is smaller than the data)."""
    data, core, extension = blocks.get("data"), blocks.get("core"), blocks.get("extension")
    if data is None or core is None:
        return
    available = TABLE_SIZES[data.dataset]
    n = available if data.n is None else min(data.n, available)
    sizes = {
        "core_kernel.core.sizes_projection": core.sizes_projection,
        "core_kernel.core.sizes_sampling": core.sizes_sampling,
    }
    if extension is not None:
        sizes["core_kernel.extension.s_sampling"] = [extension.s_sampling]
    too_big = {key: [s for s in values if s > n] for key, values in sizes.items()}
    too_big = {key: values for key, values in too_big.items() if values}
    if too_big:
        listed = "; ".join(f"{key} has {values}" for key, values in too_big.items())
        raise ValueError(
            f"core sizes larger than the number of points n={n} of core_kernel.data "
            f"(dataset={data.dataset}, n={data.n}): {listed}. A core kernel must be smaller than "
            "the data: lower these sizes or raise core_kernel.data.n"
        )
