"""Parameter blocks of ood_chameleon (conf/*/parameters/ood_chameleon.yml), one model per block.

Kedro validates each block before any node runs because the node arguments are annotated with these
models; every number carries its range and every choice is a Literal (tests/test_bad_input.py). Rules
that span blocks (every shift valid at every size, transfer sources that exist) are
:func:`check_across_blocks`. Scalars come first in every block: the generic bad-input test writes into
the first fields.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from paper_pipelines.common.params import ParamsModel, RuntimeParams, Seed

from .shifts import check_shift

__all__ = [
    "DataParams",
    "DescriptorParams",
    "EvaluationParams",
    "MetaParams",
    "RuntimeParams",
    "Seed",
    "SelectorParams",
    "ShiftParams",
    "TransferParams",
    "ZooParams",
    "check_across_blocks",
]

SOURCE = Literal["synth", "digits:ge5", "digits:parity", "digits:loops", "real"]
ALGORITHM = Literal["ERM", "GroupDRO", "oversample", "remax-margin", "undersample"]
DESCRIPTOR = Literal[
    "n", "sc", "ci", "ai", "c_intra", "c_inter", "a_intra", "a_inter",
    "c_intra_n", "c_inter_n", "a_intra_n", "a_inter_n",
    "sc_", "ci_", "ai_", "a_intra_i", "a_inter_i",
]  # fmt: skip
LEARNER = Literal["mlp", "linear", "knn", "tree", "regression"]


class DataParams(ParamsModel):
    """The base datasets tasks are resampled from, and the task sizes per kind of source."""

    digits_noise: float = Field(0.3, ge=0)
    digits_train_pool: int = Field(1100, ge=100, le=1700)
    digit_features: Literal["pca", "identity"] = "pca"
    digit_feature_dim: int = Field(32, ge=2, le=128)
    real_batch_size: int = Field(64, ge=1)
    sources: list[SOURCE] = Field(min_length=1)
    synth_sizes: list[int] = Field([200, 1000], min_length=1)
    digits_sizes: list[int] = Field([250, 1000], min_length=1)
    real_sizes: list[int] = Field([200, 500, 1000], min_length=1)
    synth_var_causal: list[float] = Field([1.0, 5.0, 20.0], min_length=1)
    synth_d_feat: list[int] = Field([2, 10, 50], min_length=1)

    @model_validator(mode="after")
    def _sizes(self) -> DataParams:
        for key in ("synth_sizes", "digits_sizes", "real_sizes"):
            bad = [n for n in getattr(self, key) if n < 16]
            if bad:
                raise ValueError(f"ood_chameleon.data.{key} must all be >= 16, got {bad}")
        if any(d < 2 for d in self.synth_d_feat) or any(v <= 0 for v in self.synth_var_causal):
            raise ValueError(
                "ood_chameleon.data.synth_d_feat must be >= 2 and synth_var_causal > 0, got "
                f"{self.synth_d_feat} and {self.synth_var_causal}"
            )
        return self

    def sizes(self) -> dict[str, list[int]]:
        return {"synth": self.synth_sizes, "digits": self.digits_sizes, "real": self.real_sizes}


class ShiftParams(ParamsModel):
    """The shift grid: random mixed triples, the single-shift families, the unshifted task, extras."""

    n_mixed: int = Field(12, ge=0)
    unshifted: bool = True
    single_shift_values: list[float] = [0.1, 0.3, 0.7, 0.9]
    extra_triples: list[list[float]] = []

    @model_validator(mode="after")
    def _values(self) -> ShiftParams:
        bad = [v for v in self.single_shift_values if not 0 < v < 1]
        if bad:
            raise ValueError(
                f"ood_chameleon.shifts.single_shift_values must be in (0, 1), got {bad}"
            )
        wrong = [t for t in self.extra_triples if len(t) != 3]
        if wrong:
            raise ValueError(
                f"ood_chameleon.shifts.extra_triples entries must be [sc, ci, ai], got {wrong}"
            )
        return self


class ZooParams(ParamsModel):
    """The algorithm zoo and the official head training (train.py)."""

    classifier: Literal["linear", "mlp"] = "linear"
    hidden: int = Field(100, ge=1)
    optimizer: Literal["adam", "sgd"] = "adam"
    lr: float = Field(1e-3, gt=0)
    max_steps: int = Field(1000, ge=1)
    tol: float = Field(1e-3, ge=0)
    check_every: int = Field(100, ge=1)
    l2: float = Field(1e-6, ge=0)
    groupdro_eta: float = Field(1e-3, ge=0)
    repeats: int = Field(1, ge=1)
    algorithms: list[ALGORITHM] = Field(
        ["ERM", "GroupDRO", "oversample", "remax-margin", "undersample"], min_length=2
    )

    @model_validator(mode="after")
    def _unique(self) -> ZooParams:
        if len(set(self.algorithms)) != len(self.algorithms):
            raise ValueError(f"ood_chameleon.zoo.algorithms has duplicates: {self.algorithms}")
        return self


class DescriptorParams(ParamsModel):
    reducer: Literal["pca", "umap"] = "pca"


class MetaParams(ParamsModel):
    """Ground-truth labels: every algorithm within ``margin`` of the best ``metric`` wins."""

    margin: float = Field(0.05, ge=0, lt=1)
    metric: Literal["wga_te_err", "avg_te_err"] = "wga_te_err"


class SelectorParams(ParamsModel):
    """OOD-Chameleon's learner (the headline) and the ablation learners, on the same descriptors."""

    learner: Literal["mlp", "linear"] = "mlp"
    hidden: int = Field(100, ge=1)
    epochs: int = Field(1000, ge=1)
    lr: float = Field(1e-3, gt=0)
    weight_decay: float = Field(1e-4, ge=0)
    knn_k: int = Field(5, ge=1)
    tree_depth: int = Field(3, ge=1)
    regression_alpha: float = Field(0.1, ge=0)
    features: list[DESCRIPTOR] = Field(["n", "sc", "ci", "ai", "c_intra", "a_intra"], min_length=1)
    ablations: list[LEARNER] = ["linear", "knn", "tree", "regression"]


class TransferParams(ParamsModel):
    """An unseen-dataset evaluation: fit on the training sources' tasks, test on other sources."""

    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    train_sources: list[SOURCE] = Field(min_length=1)
    test_sources: list[SOURCE] = Field(min_length=1)

    @model_validator(mode="after")
    def _disjoint(self) -> TransferParams:
        both = sorted(set(self.train_sources) & set(self.test_sources))
        if both:
            raise ValueError(
                f"transfer {self.name!r}: test source(s) {both} are also training sources; an "
                "unseen-dataset evaluation needs disjoint train_sources and test_sources"
            )
        return self


class EvaluationParams(ParamsModel):
    """The random task split (repeated) and the unseen-dataset transfers (the first is the headline)."""

    test_frac: float = Field(0.2, gt=0, lt=1)
    split_repeats: int = Field(3, ge=1)
    val_frac: float = Field(0.2, ge=0, lt=1)
    transfers: list[TransferParams] = Field(min_length=1)

    @model_validator(mode="after")
    def _names(self) -> EvaluationParams:
        names = [t.name for t in self.transfers]
        if len(set(names)) != len(names) or "random_split" in names:
            raise ValueError(
                f"ood_chameleon.evaluation.transfers names must be unique and not 'random_split': {names}"
            )
        return self


def check_across_blocks(blocks: dict[str, Any]) -> None:
    """Every shift triple valid at every task size; transfer sources among data.sources."""
    data, shifts, evaluation = blocks.get("data"), blocks.get("shifts"), blocks.get("evaluation")
    if data is not None and shifts is not None:
        kinds = {s.split(":")[0] for s in data.sources}
        sizes = [n for kind, ns in data.sizes().items() if kind in kinds for n in ns]
        smallest = min(sizes)
        triples = [("single_shift_values", v, t) for v in shifts.single_shift_values
                   for t in ((v, 0.5, 0.5), (0.5, v, 0.5), (0.5, 0.5, v))]  # fmt: skip
        triples += [("extra_triples", t, tuple(t)) for t in shifts.extra_triples]
        for key, value, triple in triples:
            try:
                check_shift(*triple, smallest)
            except ValueError as exc:
                raise ValueError(
                    f"ood_chameleon.shifts.{key} entry {value}: {exc} (smallest task size "
                    f"{smallest} in ood_chameleon.data)"
                ) from None
    if data is not None and evaluation is not None:
        for transfer in evaluation.transfers:
            missing = sorted(
                set(transfer.train_sources + transfer.test_sources) - set(data.sources)
            )
            if missing:
                raise ValueError(
                    f"ood_chameleon.evaluation.transfers {transfer.name!r} uses source(s) {missing} "
                    f"that ood_chameleon.data.sources {list(data.sources)} does not generate"
                )
