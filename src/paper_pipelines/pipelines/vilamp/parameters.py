"""Parameter blocks of vilamp (conf/*/parameters/vilamp.yml), one model per top-level block.

Kedro validates each block before any node runs because the node arguments are annotated with these
models; every number carries its range and every choice is a Literal (tests/test_bad_input.py). The
rules that span blocks (the keyframe budget against the shortest video) are :func:`check_across_blocks`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from paper_pipelines.common.params import ParamsModel, RuntimeParams, Seed

__all__ = [
    "DFMParams",
    "DKSParams",
    "DataParams",
    "EvaluationParams",
    "LLMProjectionParams",
    "ReaderParams",
    "RuntimeParams",
    "Seed",
    "SelectorParams",
    "TowersParams",
    "check_across_blocks",
]

Colour = Literal["red", "green", "blue", "yellow", "magenta", "cyan"]
Task = Literal["retrieval", "ordering", "counting"]
# uniform-K, relevance-only top-K (tau = 1), DKS + drop / mean-pool / distinctiveness-pool / DFM, dense
Method = Literal[
    "uniform", "relevance_topk", "dks_drop", "dks_meanpool", "dks_respool", "vilamp", "dense"
]


class DataParams(ParamsModel):
    """SynthNIAH: drifting scenes cut from scikit-image's shipped images, sklearn digits as needle cards."""

    frame_size: int = Field(32, ge=8)  # pixels; the patch grid is frame_size / patch_size per side
    patch_size: int = Field(8, ge=2)
    backgrounds: int = Field(300, ge=2)  # random crops of the shipped images
    drift_every: int = Field(10, ge=1)  # a scene's window moves 1 px every this many frames
    noise: float = Field(0.02, ge=0, le=0.5)
    distractors_per_1k: float = Field(2.0, ge=0)  # cards of other colours per 1000 frames
    # denser in the short training videos, so the reader meets as many off-colour cards among its
    # keyframes as a long test video puts there (DKS picks card-like frames)
    train_distractors_per_1k: float = Field(15.0, ge=0)
    ordering_needle_len: int = Field(8, ge=1)
    max_count: int = Field(6, ge=2)
    train_videos: int = Field(3000, ge=1)
    colours: list[Colour] = Field(
        ["red", "green", "blue", "yellow", "magenta", "cyan"], min_length=2
    )
    scene_len: list[int] = Field([20, 300], min_length=2, max_length=2)
    needle_len: list[int] = Field([1, 8], min_length=2, max_length=2)
    train_frames: list[int] = Field([64, 256], min_length=2, max_length=2)

    @model_validator(mode="after")
    def _shapes(self) -> DataParams:
        if self.frame_size % self.patch_size:
            raise ValueError(
                f"vilamp.data.patch_size={self.patch_size} does not divide vilamp.data.frame_size="
                f"{self.frame_size}: a frame must split into whole patches (e.g. 32 and 8)"
            )
        for key in ("scene_len", "needle_len", "train_frames"):
            low, high = getattr(self, key)
            if not 1 <= low <= high:
                raise ValueError(
                    f"vilamp.data.{key}={[low, high]} must be [low, high] with 1 <= low <= high "
                    "(a video or a run needs at least one frame)"
                )
        if len(set(self.colours)) != len(self.colours):
            raise ValueError(f"vilamp.data.colours={self.colours} repeats a colour")
        return self

    @property
    def grid(self) -> int:
        return self.frame_size // self.patch_size

    @property
    def patches(self) -> int:
        """M: patch tokens per frame."""
        return self.grid**2


class SelectorParams(ParamsModel):
    """The frame/text dual encoder (stand-in for CLIP ViT-B/32), pretrained CLIP-style in the pipeline."""

    dim: int = Field(64, ge=8)
    layers: int = Field(1, ge=0)
    heads: int = Field(4, ge=1)
    steps: int = Field(600, ge=1)
    batch: int = Field(64, ge=2)
    lr: float = Field(1e-3, gt=0)
    temperature: float = Field(0.07, gt=0)
    card_prob: float = Field(0.7, ge=0, le=1)


class TowersParams(ParamsModel):
    """Which towers give the frame, query and patch features: the trained stand-ins or local CLIP / SigLIP.

    ``stand_in`` trains the small selector in the pipeline (the default CPU run). ``clip`` / ``siglip``
    read a local Hugging Face folder (``path``; nothing is downloaded) for frame and question
    embeddings and, unless ``vision_path`` names a second tower (ViLAMP: a SigLIP vision tower beside
    the CLIP selector), for the patch tokens too. The reader stays the trained stand-in.
    """

    kind: Literal["stand_in", "clip", "siglip"] = "stand_in"
    path: str | None = None
    vision_kind: Literal["clip", "siglip"] | None = None
    vision_path: str | None = None
    vision_layer: int = Field(-2, le=-1)  # hidden state the patch tokens come from (LLaVA: -2)
    dtype: Literal["float32", "bfloat16"] = "float32"  # of the frozen towers (bf16 on a GPU)

    @model_validator(mode="after")
    def _local_folders(self) -> TowersParams:
        from .towers import FIX_HINT, folder_problem

        if self.kind == "stand_in":
            if self.path or self.vision_path:
                raise ValueError(
                    "vilamp.towers.path / vision_path are read only with vilamp.towers.kind clip or "
                    f"siglip, got kind=stand_in with path={self.path!r}: set the kind or drop the path"
                )
            return self
        problem = folder_problem(self.path, self.kind)
        if problem:
            raise ValueError(f"vilamp.towers.path {problem} (kind={self.kind}): {FIX_HINT}")
        if self.vision_path is not None:
            problem = folder_problem(self.vision_path, self.vision_kind or "")
            if self.vision_kind is None or problem:
                raise ValueError(
                    f"vilamp.towers.vision_path {problem or 'needs vision_kind'}: set "
                    "vilamp.towers.vision_kind (clip or siglip) to the model in that folder; "
                    f"{FIX_HINT}"
                )
        return self


class DKSParams(ParamsModel):
    """Differential keyframe selection (SeqFrameSelector): budget K, suppression tau, relevance floor."""

    max_keyframes: int = Field(4, ge=1)  # K (max_frame_num; 32 in the released model)
    tau: float = Field(0.85, ge=-1, le=1)  # f2f_thrd: suppress frames with cos > tau to a keyframe
    relevance_floor: float = Field(-1.0, ge=-1, le=1)  # f2t_thrd: stop below it (-1 = off)
    fill_budget: bool = True  # distribute_frames: spend what suppression leaves on coverage
    counting_keyframes: int = Field(2, ge=1)  # K for the counting task (spec check 3)


class DFMParams(ParamsModel):
    """Differential feature merging (SigPooling): one token per non-keyframe."""

    temperature_init: float = Field(0.01, gt=0)
    reference_keyframe: Literal["paper", "official_code"] = "paper"
    max_dense_length: int = Field(60, ge=1)  # frames per chunk when scoring long videos


class ReaderParams(ParamsModel):
    """The small reader (stand-in for Qwen2-7B) trained jointly with the merging weights."""

    dim: int = Field(64, ge=8)
    layers: int = Field(2, ge=1)
    heads: int = Field(4, ge=1)
    steps: int = Field(1500, ge=1)
    batch: int = Field(8, ge=1)
    lr: float = Field(3e-4, gt=0)
    pool_videos: int = Field(400, ge=1)  # encoded training videos held at once
    refresh_per_step: int = Field(2, ge=0)  # pool videos replaced by unseen ones each step
    # assemblies the reader sees in training, one drawn per step, so every method meets its own inputs
    train_methods: list[Method] = Field(
        [
            "vilamp",
            "vilamp",
            "dks_drop",
            "dks_meanpool",
            "dks_respool",
            "uniform",
            "relevance_topk",
        ],
        min_length=1,
    )

    @model_validator(mode="after")
    def _heads_divide(self) -> ReaderParams:
        if self.dim % self.heads:
            raise ValueError(
                f"vilamp.reader.heads={self.heads} must divide vilamp.reader.dim={self.dim}"
            )
        if "dense" in self.train_methods:
            raise ValueError(
                "vilamp.reader.train_methods must not contain 'dense' (N*M tokens per training "
                "video); it is evaluated only"
            )
        return self


class LongParams(ParamsModel):
    videos: int = Field(12, ge=1)
    n_frames: list[int] = Field([4096, 10000], min_length=1)
    methods: list[Method] = Field(["uniform", "dks_drop", "vilamp"], min_length=1)


class EvaluationParams(ParamsModel):
    """The benchmark: every task x method at each N, the long sweep, the scale measurement."""

    videos_per_task: int = Field(24, ge=1)
    dense_memory_cap_gb: float = Field(4.0, gt=0)
    scale_frames: int = Field(10000, ge=1)  # N of the measured whole-path run (spec check 5)
    headline_frames: int = Field(1024, ge=1)  # N of the ordering / counting gains
    n_frames: list[int] = Field([256, 1024], min_length=1)
    tasks: list[Task] = Field(["retrieval", "ordering", "counting"], min_length=1)
    methods: list[Method] = Field(
        ["uniform", "relevance_topk", "dks_drop", "dks_meanpool", "dks_respool", "vilamp", "dense"],
        min_length=1,
    )
    long: LongParams = LongParams()

    @model_validator(mode="after")
    def _frames(self) -> EvaluationParams:
        bad = [n for n in [*self.n_frames, *self.long.n_frames] if n < 1]
        if bad:
            raise ValueError(
                f"vilamp.evaluation.n_frames / long.n_frames must be >= 1 (a video with no frames), "
                f"got {bad}"
            )
        if self.headline_frames not in self.n_frames:
            raise ValueError(
                f"vilamp.evaluation.headline_frames={self.headline_frames} must be one of "
                f"vilamp.evaluation.n_frames {self.n_frames}"
            )
        return self


class LLMProjectionParams(ParamsModel):
    """Analytic KV-cache memory of a real LLM fed each method's visual tokens (default Qwen2-7B, bf16)."""

    layers: int = Field(28, ge=1)
    kv_heads: int = Field(4, ge=1)
    head_dim: int = Field(128, ge=1)
    bytes: int = Field(2, ge=1)
    tokens_per_frame: int = Field(196, ge=1)  # LLaVA-OV video frames after 2x2 bilinear pooling
    keyframes: int = Field(32, ge=1)
    gpu_gb: float = Field(80.0, gt=0)
    max_frames: int = Field(10000, ge=2)
    points: int = Field(41, ge=2)


def check_across_blocks(blocks: dict[str, Any]) -> None:
    """A keyframe budget must leave non-keyframes in the shortest video, or merging has nothing to do."""
    data, dks, evaluation = blocks.get("data"), blocks.get("dks"), blocks.get("evaluation")
    if data is None or dks is None:
        return
    shortest = data.train_frames[0]
    if evaluation is not None:
        shortest = min(shortest, *evaluation.n_frames, *evaluation.long.n_frames)
    k = max(dks.max_keyframes, dks.counting_keyframes)
    if k >= shortest:
        raise ValueError(
            f"vilamp.dks.max_keyframes / counting_keyframes ({k}) must be below the shortest video "
            f"({shortest} frames, vilamp.data.train_frames / vilamp.evaluation.n_frames): lower K "
            "or lengthen the videos"
        )
    if evaluation is not None:
        # the counting task's runs (one free frame after each) or the two ordering runs
        needed = max(data.max_count * (data.needle_len[1] + 1), 2 * (data.ordering_needle_len + 1))
        if shortest < needed:
            raise ValueError(
                f"the shortest video ({shortest} frames) cannot hold the needles of every task "
                f"({needed} frames: vilamp.data.max_count={data.max_count} runs of up to "
                f"vilamp.data.needle_len[1]={data.needle_len[1]}): lengthen vilamp.data.train_frames "
                "/ vilamp.evaluation.n_frames"
            )
