"""The experiment grid: replicates x strategies on one generator (wiring of the method modules only).

Every strategy draws its samples from the same generator and trains the same learner for the same
iteration budget, evaluated on the same real val / test / OOD splits.
"""

from __future__ import annotations

import logging
import time

import numpy as np
import pandas as pd
import torch

from paper_pipelines.common.progress import progress
from paper_pipelines.common.runtime import substream_seed

from . import baselines, guidance, learner, metrics, practice

logger = logging.getLogger(__name__)


def omega_key(omega: float) -> str:
    """0.1 -> '0p1': metric names cannot hold dots."""
    return f"{omega:g}".replace(".", "p").replace("-", "m")


class Context:
    """Generator, splits and blocks shared by every run of one pipeline run."""

    def __init__(
        self, generator, splits, ood, sampler, guidance_params, learner_params, loop, seed, device
    ):
        self.generator, self.sampler, self.guidance = generator, sampler, guidance_params
        self.learner_params, self.loop, self.seed, self.device = learner_params, loop, seed, device
        self.num_classes = generator.num_classes
        self.eval_sets = {
            "val": splits["val"],
            "test": splits["test"],
            "ood": ood,
        }
        self.shape = tuple(splits["test"]["x"].shape[1:])
        self.tensors = {k: torch.from_numpy(v["x"]) for k, v in self.eval_sets.items()}

    def trainer(self, replicate: int, name: str):
        model = learner.make_learner(
            self.learner_params.arch, self.shape, self.num_classes, self.learner_params,
            substream_seed(self.seed, "learner_init", replicate, name),
        )  # fmt: skip
        return learner.LearnerTrainer(
            model, self.learner_params.lr, self.learner_params.batch,
            substream_seed(self.seed, "learner_batches", replicate, name), self.device,
        )  # fmt: skip

    def evaluate(self, trainer) -> dict[str, float]:
        out = {}
        for k, x in self.tensors.items():
            predicted = trainer.logits(x).argmax(1).numpy()
            out[f"{k}_acc"] = metrics.accuracy(predicted, self.eval_sets[k]["y"])
        return out

    def generate(
        self, labels: np.ndarray, seed: int, trainer=None, omega: float = 0.0
    ) -> tuple[np.ndarray, np.ndarray]:
        """Samples for ``labels`` from noise seeded by ``seed``; guided by ``trainer`` when omega > 0.

        Returns the images and the entropy of ``trainer`` (if any) on them.
        """
        g = torch.Generator().manual_seed(seed)
        noise = torch.randn((len(labels), *self.generator.shape), generator=g).to(self.device)
        chunks = []
        bs = self.sampler.batch_size
        for start in range(0, len(labels), bs):
            chunks.append(
                guidance.sample(
                    self.generator, labels[start : start + bs], noise[start : start + bs],
                    self.sampler.steps, self.sampler.cfg_scale, self.sampler.eta,
                    learner=trainer if omega > 0 else None, omega=omega,
                    criterion=self.guidance.criterion, freq=self.guidance.freq,
                    blend=self.guidance.blend, image=self.guidance.image, step_generator=g,
                ).cpu()
            )  # fmt: skip
        images = torch.cat(chunks)
        images = _to_learner_shape(images, self.shape)
        entropy = (
            metrics.softmax_entropy(trainer.logits(images).numpy())
            if trainer is not None
            else np.full(len(labels), np.nan, dtype=np.float32)
        )
        return images.numpy().astype(np.float32), entropy


def _to_learner_shape(images: torch.Tensor, shape: tuple) -> torch.Tensor:
    """Decoded images at the real images' size (a latent model may decode to another resolution)."""
    if tuple(images.shape[1:]) == tuple(shape):
        return images
    return torch.nn.functional.interpolate(
        images, size=shape[1:], mode="bilinear", align_corners=False
    )


def unguided_pool(ctx: Context, n: int, replicate: int) -> dict[str, np.ndarray]:
    """The class-balanced unguided pool every static set is a prefix of (and the prune pool)."""
    labels = practice.class_balanced_labels(n, ctx.num_classes)
    x, _ = ctx.generate(labels, substream_seed(ctx.seed, "unguided_pool", replicate))
    return {"x": x, "y": labels}


def static_runs(
    ctx: Context, pools: dict, sizes: list[int], replicates: int, iters: int
) -> pd.DataFrame:
    rows = []
    grid = [(r, n) for r in range(replicates) for n in sizes]
    for r, n in progress(grid, "static synthetic sets", logger=logger):
        x, y = baselines.static_subset(pools[f"rep{r}"]["x"], pools[f"rep{r}"]["y"], n)
        trainer = ctx.trainer(r, f"static{n}")
        records = baselines.train_and_evaluate(
            trainer, x, y, iters, ctx.loop.eval_every, ctx.evaluate
        )
        rows += [
            {"strategy": "static", "n": n, "replicate": r, "omega": 0.0, **rec} for rec in records
        ]
    return pd.DataFrame(rows)


def dp_runs(ctx: Context, omegas: list[float], replicates: int) -> tuple[pd.DataFrame, dict, dict]:
    """The DP loop for each omega and replicate; curves, pools and the default-omega learner of rep 0."""
    rows, pools, learners = [], {}, {}
    loop = ctx.loop
    for omega in omegas:
        for r in range(replicates):
            trainer = ctx.trainer(r, "dp")

            def generate(n, offset, round_, current, omega=omega, r=r, trainer=trainer):
                labels = practice.class_balanced_labels(n, ctx.num_classes, offset)
                seed = substream_seed(ctx.seed, "dp_round", r, round_, omega_key(omega))
                images, entropy = ctx.generate(labels, seed, current, omega if current else 0.0)
                if current is None:
                    entropy = metrics.softmax_entropy(
                        trainer.logits(torch.from_numpy(images)).numpy()
                    )
                return images, labels, entropy

            started = time.perf_counter()
            pool, records = practice.deliberate_practice(
                trainer, generate, ctx.evaluate, loop.n0, loop.delta_n, loop.eval_every,
                loop.patience, loop.max_iters, loop.max_samples,
            )  # fmt: skip
            logger.info(
                "DP omega=%g replicate %d: %d samples, test acc %.3f (%.1f s)",
                omega, r, len(pool), records[-1]["test_acc"], time.perf_counter() - started,
            )  # fmt: skip
            rows += [
                {"strategy": "dp", "n": len(pool), "replicate": r, "omega": omega, **rec}
                for rec in records
            ]
            pools[f"omega{omega_key(omega)}_rep{r}"] = pool.arrays()
            learners[(omega, r)] = trainer.model
    return pd.DataFrame(rows), pools, learners


def equal_n_static_runs(
    ctx: Context, pools: dict, dp_curves: pd.DataFrame, omega: float, sizes: list[int], iters: int
) -> pd.DataFrame:
    """Static sets of each replicate's final DP pool size (at the default omega) not already run."""
    final = dp_curves[dp_curves.omega == omega].groupby("replicate").pool_size.last()
    rows = []
    for r, n in final.items():
        if int(n) in sizes:
            continue
        x, y = baselines.static_subset(pools[f"rep{r}"]["x"], pools[f"rep{r}"]["y"], int(n))
        trainer = ctx.trainer(int(r), f"static{int(n)}")
        records = baselines.train_and_evaluate(
            trainer, x, y, iters, ctx.loop.eval_every, ctx.evaluate
        )
        rows += [
            {"strategy": "static", "n": int(n), "replicate": int(r), "omega": 0.0, **rec}
            for rec in records
        ]
    return pd.DataFrame(rows)


def prune_runs(ctx: Context, pools: dict, prune, replicates: int) -> pd.DataFrame:
    """Generate-then-prune: a scorer on a random part of the unguided pool keeps its top-entropy part."""
    rows = []
    for r in progress(range(replicates), "generate-then-prune", logger=logger):
        x_pool, y_pool = baselines.static_subset(
            pools[f"rep{r}"]["x"], pools[f"rep{r}"]["y"], prune.pool
        )
        rng = np.random.default_rng(substream_seed(ctx.seed, "prune_scorer", r))
        part = rng.choice(len(y_pool), size=prune.scorer_train_size, replace=False)
        scorer = ctx.trainer(r, "prune_scorer")
        baselines.train_and_evaluate(
            scorer, x_pool[part], y_pool[part], ctx.loop.max_iters, ctx.loop.max_iters, ctx.evaluate
        )
        entropy = metrics.softmax_entropy(scorer.logits(torch.from_numpy(x_pool)).numpy())
        kept = baselines.top_entropy(entropy, prune.keep)
        trainer = ctx.trainer(r, "prune")
        records = baselines.train_and_evaluate(
            trainer,
            x_pool[kept],
            y_pool[kept],
            ctx.loop.max_iters,
            ctx.loop.eval_every,
            ctx.evaluate,
        )
        rows += [
            {
                "strategy": "prune",
                "n": prune.keep,
                "generated": prune.pool,
                "replicate": r,
                "omega": 0.0,
                **rec,
            }
            for rec in records
        ]
    return pd.DataFrame(rows)


def real_reference_runs(ctx: Context, real: dict, replicates: int) -> pd.DataFrame:
    """The learner on the real generator split: the upper reference no synthetic set should pass."""
    rows = []
    for r in range(replicates):
        trainer = ctx.trainer(r, "real")
        records = baselines.train_and_evaluate(
            trainer, real["x"], real["y"], ctx.loop.max_iters, ctx.loop.eval_every, ctx.evaluate
        )
        rows += [
            {"strategy": "real", "n": len(real["y"]), "replicate": r, "omega": 0.0, **rec}
            for rec in records
        ]
    return pd.DataFrame(rows)


def guidance_diagnostics(
    ctx: Context, reference, omegas: list[float], diag, replicates: int
) -> pd.DataFrame:
    """Learner entropy and reference label agreement of guided vs unguided samples from the same noise."""
    rows = []
    for r in progress(range(replicates), "guidance diagnostics", logger=logger):
        labels = practice.class_balanced_labels(diag.learner_train_size, ctx.num_classes)
        x, _ = ctx.generate(labels, substream_seed(ctx.seed, "diag_train", r))
        trainer = ctx.trainer(r, "diag")
        trainer.train_steps(torch.from_numpy(x), torch.from_numpy(labels), diag.learner_iters)
        labels = practice.class_balanced_labels(diag.samples, ctx.num_classes)
        seed = substream_seed(ctx.seed, "diag_noise", r)
        for omega in [0.0, *omegas]:
            started = time.perf_counter()
            images, entropy = ctx.generate(labels, seed, trainer, omega)
            seconds = time.perf_counter() - started
            predicted = reference.predict(images.reshape(len(images), -1))
            rows.append(
                {
                    "replicate": r,
                    "omega": omega,
                    "mean_entropy": float(np.mean(entropy)),
                    "ref_agreement": metrics.label_agreement(predicted, labels),
                    "seconds_per_sample": seconds / len(labels),
                }
            )
    return pd.DataFrame(rows)
