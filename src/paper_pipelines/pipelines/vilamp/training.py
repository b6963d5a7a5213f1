"""Training the stand-ins: the selector CLIP-style on frame/caption and frame/question pairs, then the
reader jointly with the DFM weights on short videos, the selector frozen (as the released script)."""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd
import torch

from paper_pipelines.common.progress import progress

from . import data as synth
from .distillation import USES_DKS, Encoded, choose_keyframes, visual_sequence
from .models import Reader, Selector, caption_loss, query_loss

logger = logging.getLogger(__name__)


def text_matrix(
    texts: list[str], cache: dict[str, list[float]], device: torch.device | str | None = None
) -> torch.Tensor:
    """MiniLM sentence vectors of ``texts`` from the cache, (len, 384), on ``device``."""
    missing = [t for t in texts if t not in cache]
    if missing:
        raise KeyError(f"texts without a cached MiniLM embedding: {missing[:3]}")
    return torch.tensor(np.asarray([cache[t] for t in texts], np.float32), device=device)


def device_of(model: torch.nn.Module) -> torch.device:
    """Where a model's parameters live: the tensors it is fed are created there."""
    return next(model.parameters()).device


def build_selector(data, selector, text_dim: int) -> Selector:
    return Selector(
        selector.dim, data.patch_size, data.patches, selector.layers, selector.heads, text_dim
    )


def pretrain_selector(
    corpus: list[dict],
    assets: dict,
    data,
    selector,
    text_cache: dict,
    device: torch.device | str = "cpu",
) -> tuple[Selector, pd.DataFrame]:
    """CLIP-style pretraining: softmax over every caption + sigmoid loss against every question."""
    colours = list(data.colours)
    captions, questions = synth.all_captions(colours), synth.all_questions(colours)
    cap_txt = text_matrix(captions, text_cache, device)
    q_txt = text_matrix(questions, text_cache, device)
    # which colours each question asks about (ordering asks two)
    asks = torch.tensor([[c in q.split() for c in colours] for q in questions], device=device)
    model = build_selector(data, selector, cap_txt.shape[1]).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=selector.lr, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, selector.lr, total_steps=selector.steps)
    log = []
    for step in progress(range(selector.steps), "vilamp selector pretraining"):
        rows = corpus[step * selector.batch : (step + 1) * selector.batch]
        frames = torch.from_numpy(synth.render_caption_frames(rows, assets, data)).to(device)
        colour = torch.tensor([r["colour"] for r in rows], device=device)
        digit = torch.tensor([r["digit"] for r in rows], device=device)
        target = torch.where(colour < 0, 0, 1 + colour * 10 + digit)
        relevant = asks[:, colour.clamp(min=0)].T & (colour >= 0)[:, None]
        emb = model.image.frame_embedding(model.image.patch_tokens(frames))
        loss_c = caption_loss(emb, model.text(cap_txt), target, selector.temperature)
        loss_q = query_loss(emb, model.text(q_txt), relevant, selector.temperature, model.bias)
        loss = loss_c + loss_q
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        log.append({"step": step, "caption_loss": loss_c.item(), "query_loss": loss_q.item()})
    model.eval()
    return model, pd.DataFrame(log)


def encode_frozen(video: np.ndarray, question: str, towers, cache) -> tuple:
    """Frames -> (patch tokens (N, M, Dv), frame embeddings (N, Ds), query (Ds,)); the towers are frozen.

    ``towers`` is the trained stand-in (:class:`Selector`) or pretrained CLIP / SigLIP towers; the
    outputs sit on the towers' device in their dtype.
    """
    tokens, emb = towers.encode_video(torch.from_numpy(video))
    return tokens, emb, towers.encode_query(question, cache)


def encode(video: np.ndarray, question: str, towers, reader: Reader, cache) -> Encoded:
    """Frames -> selector embeddings and projected patch tokens (the reader's trainable projector)."""
    tokens, emb, query = encode_frozen(video, question, towers, cache)
    weight = reader.projector[0].weight  # bf16 tower features enter the reader in its own dtype
    return Encoded(patches=reader.projector(tokens.to(weight)), frame_emb=emb, query_emb=query)


def keyframe_budget(task: str, dks) -> int:
    """K of a task: counting uses the smaller budget (spec check 3), the others dks.max_keyframes."""
    return dks.counting_keyframes if task == "counting" else dks.max_keyframes


def build_reader(towers, reader_params, dfm, text_dim: int, answers: int) -> Reader:
    """The reader for ``towers``' patch width (vision_dim) and query width (query_dim)."""
    return Reader(
        towers.vision_dim,
        towers.query_dim,
        text_dim,
        reader_params.dim,
        reader_params.layers,
        reader_params.heads,
        answers,
        dfm.temperature_init,
    )


def train_reader(
    specs: list[dict],
    assets: dict,
    data,
    towers,
    reader_params,
    dks,
    dfm,
    text_cache: dict,
    rng: np.random.Generator,
) -> tuple[Reader, pd.DataFrame]:
    """Reader + projector + DFM trained on the answer loss; one assembly method drawn per step.

    The reader is built on the towers' device; the towers stay frozen.
    """
    vocab = synth.answer_vocabulary(list(data.colours), data.max_count)
    text_dim = len(next(iter(text_cache.values())))
    device = device_of(towers)
    model = build_reader(towers, reader_params, dfm, text_dim, len(vocab)).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=reader_params.lr, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.OneCycleLR(
        opt, reader_params.lr, total_steps=reader_params.steps, pct_start=0.1
    )
    index = {a: i for i, a in enumerate(vocab)}

    # The towers are frozen, so a training video is rendered and encoded once (fp16 tokens) and its
    # keyframes per method are computed once. A pool of reader.pool_videos encoded videos is kept and
    # reader.refresh_per_step of them are replaced by the next unseen specs every step, so the reader
    # sees many videos a few times each instead of a few videos many times (it overfits those).
    def encoded(spec):
        video = synth.render_video(spec, assets, data)
        tokens, emb, query = encode_frozen(video, spec["question"], towers, text_cache)
        return spec, tokens.half(), emb, query, {}

    pool_size = min(reader_params.pool_videos, len(specs))
    pool = [encoded(specs[i]) for i in range(pool_size)]
    next_spec = pool_size
    log = []
    for step in progress(range(reader_params.steps), "vilamp reader + DFM training"):
        for _ in range(reader_params.refresh_per_step if len(specs) > pool_size else 0):
            pool[int(rng.integers(pool_size))] = encoded(specs[next_spec % len(specs)])
            next_spec += 1
        method = reader_params.train_methods[int(rng.integers(len(reader_params.train_methods)))]
        picks = rng.integers(pool_size, size=reader_params.batch)
        sequences, prompts, targets, option_masks = [], [], [], []
        for i in picks:
            spec, tokens, emb, query, keys_of = pool[int(i)]
            enc = Encoded(
                patches=model.projector(tokens.to(model.newline.dtype)),
                frame_emb=emb,
                query_emb=query,
            )
            group = "dks" if method in USES_DKS else method
            if group not in keys_of:
                keys_of[group] = choose_keyframes(
                    method, enc, keyframe_budget(spec["task"], dks), dks
                )
            sequences.append(visual_sequence(method, enc, keys_of[group], model, dfm))
            prompts.append(spec["question"])
            targets.append(index[spec["answer"]])
            mask = torch.full((len(vocab),), float("-inf"), device=device)
            mask[[index[o] for o in spec["options"]]] = 0.0
            option_masks.append(mask)
        targets_t = torch.tensor(targets, device=device)
        logits = model(sequences, text_matrix(prompts, text_cache, device))
        logits = logits + torch.stack(option_masks)
        loss = torch.nn.functional.cross_entropy(logits, targets_t)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        acc = (logits.argmax(1) == targets_t).float().mean().item()
        log.append(
            {"step": step, "method": method, "loss": loss.item(), "accuracy": acc,
             "videos_seen": min(next_spec, len(specs))}
        )  # fmt: skip
    model.eval()
    return model, pd.DataFrame(log)
