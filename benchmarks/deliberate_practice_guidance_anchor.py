"""Anchor: our entropy guidance against the predecessor's official cond_fn, on tiny random diffusers modules.

The official code (facebookresearch/Feedback-guided-Data-Synthesis, fg_pipe.py) is never vendored:
pass the folder of a checkout you made yourself, and this script imports FeedbackGuidedDiffusion from
it, builds a tiny random UNet2DConditionModel, AutoencoderKL and DDIM scheduler (no downloads), and
compares (1) the guidance step of one denoising step (official cond_fn vs guidance.guidance_gradient
with blend=official, image=minmax), which pins the x0_hat blend, the rescaling and the sign, and
(2) a 5-step guided sampling run (official __call__ vs guidance.sample) from the same noise.

    python benchmarks/deliberate_practice_guidance_anchor.py --official /path/to/Feedback-guided-Data-Synthesis

Without --official (or $DP_OFFICIAL_CODE) it prints why and exits 0 (skipped).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np
import torch

from paper_pipelines.pipelines.deliberate_practice.tiny_latent import (
    StubTextEncoder,
    StubTokenizer,
    tiny_unet_and_vae,
)


def tiny_modules():
    from diffusers import DDIMScheduler

    unet, vae = tiny_unet_and_vae()
    scheduler = DDIMScheduler(
        num_train_timesteps=100, beta_schedule="scaled_linear", clip_sample=False,
        set_alpha_to_one=False,
    )  # fmt: skip
    learner = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(3 * 8 * 8, 5))
    return unet, vae, scheduler, learner


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--official", default=os.environ.get("DP_OFFICIAL_CODE"))
    parser.add_argument("--omega", type=float, default=0.3)
    args = parser.parse_args(argv)
    if not args.official:
        print("skipped: no --official checkout of Feedback-guided-Data-Synthesis given")
        return 0
    sys.path.insert(0, args.official)
    from fg_pipe import FeedbackGuidedDiffusion

    from paper_pipelines.pipelines.deliberate_practice import guidance
    from paper_pipelines.pipelines.deliberate_practice.generator import LatentTextGenerator

    class Official(FeedbackGuidedDiffusion):
        device = torch.device("cpu")  # the stub tokenizer is no module, so the property fails

    unet, vae, scheduler, learner = tiny_modules()
    tokenizer, text_encoder = StubTokenizer(), StubTextEncoder()
    official = Official(
        vae=vae, text_encoder=text_encoder, clip_model=torch.nn.Linear(1, 1), tokenizer=tokenizer,
        unet=unet, scheduler=scheduler, feature_extractor=None,
    )  # fmt: skip
    preprocessing = lambda image: image * 2 - 1  # noqa: E731  our learners read [-1, 1]
    prompt, cls = "a photo of a tench", 2
    with torch.no_grad():
        text = text_encoder(tokenizer(prompt).input_ids)[0]
        null = text_encoder(tokenizer("", max_length=4).input_ids)[0]
    ours_gen = LatentTextGenerator(unet, vae, text, null, dict(scheduler.config), 4, 8)
    report = {}

    # (1) one guidance step at several timesteps
    errors = []
    for t in (90, 50, 10):
        latents = torch.randn(1, 4, 4, 4, generator=torch.Generator().manual_seed(t))
        theirs = official.cond_fn(
            latents, torch.tensor(t), 0, text, None, "entropy", args.omega, prompt, learner,
            preprocessing, cls,
        )  # fmt: skip
        ours = guidance.guidance_gradient(
            ours_gen, learner, latents, torch.tensor(t), text, torch.tensor([cls]),
            scheduler.alphas_cumprod[t], args.omega, "entropy", "official", "minmax",
        )  # fmt: skip
        errors.append(float((theirs - ours).abs().max()))
    report["cond_fn_max_abs_diff"] = max(errors)
    report["cond_fn_step_norm"] = float(ours.norm())

    # (2) a 5-step guided run from the same noise (the official __call__ draws it from `generator`)
    official.set_progress_bar_config(disable=True)
    images, _ = official(
        prompt, height=32, width=32, num_inference_steps=5, cfg=5.0, fg_criterion="entropy",
        fg_scale=args.omega, generator=torch.Generator().manual_seed(7), output_type="np",
        fg_classifier=learner, fg_preprocessing=preprocessing, cls_index=cls,
    )  # fmt: skip
    theirs = np.stack([np.asarray(im, dtype=np.float32) / 255.0 for im in images])
    noise = torch.randn((1, 4, 4, 4), generator=torch.Generator().manual_seed(7))
    ours = guidance.sample(
        ours_gen, np.array([0]), noise, steps=5, cfg_scale=5.0, learner=learner,
        omega=args.omega, blend="official", image="minmax",
    )  # fmt: skip
    ours = (ours / 2 + 0.5).permute(0, 2, 3, 1).numpy()
    report["sampling_max_abs_diff_uint8_images"] = float(np.abs(theirs - ours).max())
    print(json.dumps(report, indent=1))
    ok = (
        report["cond_fn_max_abs_diff"] < 1e-5
        and report["sampling_max_abs_diff_uint8_images"] <= 1 / 255 + 1e-6
    )
    print("anchor:", "identical" if ok else "DIFFERENT")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
