"""vilamp nodes: typed blocks in, the method modules called, data out (no I/O, no plotting here)."""

from __future__ import annotations

import logging
from typing import Any

import pandas as pd
import torch
from matplotlib.figure import Figure

from paper_pipelines.common.claims import evaluate_claims
from paper_pipelines.common.runtime import apply_runtime, substream, substream_seed

from . import data as synth
from . import evaluation, figures, metrics, report, scaling, training
from .parameters import (
    DataParams,
    DFMParams,
    DKSParams,
    EvaluationParams,
    LLMProjectionParams,
    ReaderParams,
    RuntimeParams,
    Seed,
    SelectorParams,
    TowersParams,
)
from .towers import DTYPES

logger = logging.getLogger(__name__)


# ---------------------------------------------------------------- ingest
def load_shipped_assets(data: DataParams, seed: Seed) -> dict[str, Any]:
    """Background crops of scikit-image's shipped images, sklearn digits, a noise bank."""
    assets = synth.build_assets(data, substream(seed, "assets"))
    logger.info(
        "assets: %d backgrounds, %d digit glyphs", data.backgrounds, len(assets["glyphs"]["labels"])
    )
    return assets


# ---------------------------------------------------------------- preprocess
def make_caption_corpus(
    assets: dict, data: DataParams, selector: SelectorParams, seed: Seed
) -> pd.DataFrame:
    """The selector's frame/caption pairs as compact specs (re-rendered when trained on)."""
    rows = synth.caption_corpus(
        selector.steps * selector.batch,
        data,
        assets,
        selector.card_prob,
        substream(seed, "captions"),
    )
    return pd.DataFrame(rows)


def make_train_videos(assets: dict, data: DataParams, seed: Seed) -> list[dict]:
    """Short training videos of the three tasks (specs; frames are rendered on the fly)."""
    rng = substream(seed, "train_videos")
    tasks = ("retrieval", "ordering", "counting")
    low, high = data.train_frames
    labels = assets["glyphs"]["labels"]
    return [
        synth.make_video_spec(
            tasks[i % 3],
            int(rng.integers(low, high + 1)),
            data,
            labels,
            rng,
            distractors_per_1k=data.train_distractors_per_1k,
        )  # fmt: skip
        for i in range(data.train_videos)
    ]


def make_eval_videos(
    assets: dict, data: DataParams, evaluation: EvaluationParams, seed: Seed
) -> list[dict]:
    """The benchmark: videos_per_task per (task, N), plus the long retrieval sweep."""
    labels = assets["glyphs"]["labels"]
    specs = []
    for task in evaluation.tasks:
        for n in evaluation.n_frames:
            rng = substream(seed, "eval", task, n)
            specs += [
                synth.make_video_spec(task, n, data, labels, rng)
                for _ in range(evaluation.videos_per_task)
            ]
    for n in evaluation.long.n_frames:
        rng = substream(seed, "eval_long", n)
        specs += [
            {**synth.make_video_spec("retrieval", n, data, labels, rng), "long": True}
            for _ in range(evaluation.long.videos)
        ]
    return specs


def embed_texts(data: DataParams) -> dict[str, list[float]]:
    """Frozen MiniLM vectors of every question and caption (a finite template set, computed once)."""
    from .models import minilm_embeddings

    colours = list(data.colours)
    return minilm_embeddings(synth.all_questions(colours) + synth.all_captions(colours))


# ---------------------------------------------------------------- train
def pretrain_selector(
    caption_pairs: pd.DataFrame,
    assets: dict,
    text_embeddings: dict,
    data: DataParams,
    selector: SelectorParams,
    towers: TowersParams,
    seed: Seed,
    runtime: RuntimeParams,
) -> tuple[dict, pd.DataFrame]:
    """The CLIP stand-in, trained on frame/caption and frame/question pairs (not with pretrained towers)."""
    if towers.kind != "stand_in":
        logger.info("towers.kind=%s: the pretrained towers select frames, no stand-in", towers.kind)
        return {}, pd.DataFrame(columns=["step", "caption_loss", "query_loss"])
    device = apply_runtime(runtime)
    torch.manual_seed(substream_seed(seed, "selector"))
    model, log = training.pretrain_selector(
        caption_pairs.to_dict("records"), assets, data, selector, text_embeddings, device
    )
    return _on_cpu(model.state_dict()), log


def train_reader(
    train_videos: list[dict],
    assets: dict,
    selector_model: dict,
    text_embeddings: dict,
    data: DataParams,
    selector: SelectorParams,
    towers: TowersParams,
    reader: ReaderParams,
    dks: DKSParams,
    dfm: DFMParams,
    seed: Seed,
    runtime: RuntimeParams,
) -> tuple[dict, pd.DataFrame]:
    """Reader + projector + DFM on the answer loss, DKS in the loop, the selector frozen."""
    device = apply_runtime(runtime)
    torch.manual_seed(substream_seed(seed, "reader"))
    sel = _towers(selector_model, data, selector, towers, text_embeddings, device)
    model, log = training.train_reader(
        train_videos, assets, data, sel, reader, dks, dfm, text_embeddings,
        substream(seed, "reader_batches"),
    )  # fmt: skip
    return _on_cpu(model.state_dict()), log


def _on_cpu(state: dict) -> dict:
    """State dicts are stored from the CPU, so a GPU run's models load anywhere."""
    return {k: v.detach().cpu() for k, v in state.items()}


def _towers(state: dict, data, selector, towers, text_embeddings, device: str) -> torch.nn.Module:
    """The frozen towers on the run's device in towers.dtype: the trained stand-in or CLIP / SigLIP."""
    if towers.kind != "stand_in":
        from .towers import load_towers

        return load_towers(towers, device)
    model = training.build_selector(data, selector, len(next(iter(text_embeddings.values()))))
    model.load_state_dict(state)
    return model.to(device=device, dtype=DTYPES[towers.dtype]).eval()


def _reader(state: dict, towers, data, reader, dfm, text_embeddings) -> torch.nn.Module:
    """The trained reader, on the towers' device."""
    vocab = synth.answer_vocabulary(list(data.colours), data.max_count)
    text_dim = len(next(iter(text_embeddings.values())))
    model = training.build_reader(towers, reader, dfm, text_dim, len(vocab))
    model.load_state_dict(state)
    return model.to(training.device_of(towers)).eval()


# ---------------------------------------------------------------- evaluate
def run_benchmark(
    eval_videos: list[dict],
    assets: dict,
    selector_model: dict,
    reader_model: dict,
    text_embeddings: dict,
    data: DataParams,
    selector: SelectorParams,
    towers: TowersParams,
    reader: ReaderParams,
    dks: DKSParams,
    dfm: DFMParams,
    evaluation_params: EvaluationParams,
    runtime: RuntimeParams,
) -> pd.DataFrame:
    """Every method on every benchmark video: answer, keyframes' needle recall, visual tokens, time."""
    device = apply_runtime(runtime)
    sel = _towers(selector_model, data, selector, towers, text_embeddings, device)
    rdr = _reader(reader_model, sel, data, reader, dfm, text_embeddings)

    def methods_of(spec):
        return evaluation_params.long.methods if spec.get("long") else evaluation_params.methods

    return evaluation.run_benchmark(
        eval_videos, methods_of, assets, data, sel, rdr, dks, dfm, text_embeddings,
        evaluation_params, reader.heads,
    )  # fmt: skip


def tabulate_accuracy(predictions: pd.DataFrame) -> pd.DataFrame:
    """Accuracy, needle recall and tokens per (task, N, method)."""
    return metrics.accuracy_table(predictions)


def measure_scaling(
    assets: dict,
    selector_model: dict,
    reader_model: dict,
    text_embeddings: dict,
    data: DataParams,
    selector: SelectorParams,
    towers: TowersParams,
    reader: ReaderParams,
    dks: DKSParams,
    dfm: DFMParams,
    evaluation_params: EvaluationParams,
    seed: Seed,
    runtime: RuntimeParams,
) -> pd.DataFrame:
    """Whole-path peak RSS and seconds vs N for ViLAMP and (while under the cap) dense tokens."""
    device = apply_runtime(runtime)
    sel = _towers(selector_model, data, selector, towers, text_embeddings, device)
    rdr = _reader(reader_model, sel, data, reader, dfm, text_embeddings)
    return scaling.scaling_sweep(
        assets, data, sel, rdr, dks, dfm, text_embeddings, evaluation_params, reader.heads,
        substream(seed, "scaling"),
    )  # fmt: skip


def project_llm_memory(llm_projection: LLMProjectionParams) -> pd.DataFrame:
    """KV-cache GB of a Qwen2-7B-sized LLM fed dense vs ViLAMP input, N = 1 ... max_frames."""
    return scaling.projection_table(llm_projection)


def summarise(
    accuracy: pd.DataFrame,
    scaling_table: pd.DataFrame,
    evaluation_params: EvaluationParams,
    dks: DKSParams,
    data: DataParams,
    llm_projection: LLMProjectionParams,
) -> dict[str, Any]:
    """The metrics contract plus the numbers behind every claim."""
    return report.build_metrics(
        accuracy, scaling_table, evaluation_params, dks, data, llm_projection
    )


def tabulate_results(accuracy: pd.DataFrame, evaluation_params: EvaluationParams) -> pd.DataFrame:
    """One row per method: accuracy per task at the headline N and at the longest N, recall, tokens."""
    return report.build_results(accuracy, evaluation_params)


def check_claims(metrics: dict[str, Any]) -> pd.DataFrame:
    """Each claim with our value, the paper's, and whether it holds in this run."""
    return evaluate_claims(report.CLAIMS, metrics, "vilamp")


def plot_accuracy(accuracy: pd.DataFrame) -> Figure:
    return figures.accuracy_figure(accuracy)


def plot_scaling(scaling_table: pd.DataFrame) -> Figure:
    return figures.scaling_figure(scaling_table)


def plot_llm_memory(llm_memory: pd.DataFrame, llm_projection: LLMProjectionParams) -> Figure:
    return figures.llm_memory_figure(llm_memory, llm_projection.gpu_gb)
