"""The paper-scale backend (a Stable-Diffusion-class latent model) on tiny random diffusers modules."""

import numpy as np
import pytest
import torch

from paper_pipelines.pipelines.deliberate_practice import generator as gen
from paper_pipelines.pipelines.deliberate_practice import guidance
from paper_pipelines.pipelines.deliberate_practice.tiny_latent import (
    StubTextEncoder,
    StubTokenizer,
    tiny_unet_and_vae,
)


def _components():
    unet, vae = tiny_unet_and_vae()
    config = dict(gen.train_scheduler(50, "scaled_linear").config)
    return {"unet": unet, "vae": vae, "text_encoder": StubTextEncoder(),
            "tokenizer": StubTokenizer(), "scheduler_config": config}  # fmt: skip


def test_encode_prompts_returns_the_encoder_hidden_states():
    comps = _components()
    out = gen.encode_prompts(comps["text_encoder"], comps["tokenizer"], ["a photo of a cat", ""])
    assert out.shape == (2, 4, 8)
    assert torch.equal(out[1, 0], comps["text_encoder"].emb.weight[0])


def test_latent_generator_conditions_on_class_prompts_and_decodes_to_the_learner_size():
    comps = _components()
    g = gen.latent_generator(
        comps, ["tench", "golden_retriever"], "a photo of a {}", image_size=6, resolution=8
    )
    assert g.shape == (4, 4, 4)  # 8 px / VAE factor 2
    assert g.num_classes == 2
    cond = g.condition(np.array([1, 0, 1]))
    assert cond.shape == (3, 4, 8) and torch.equal(cond[0], cond[2])
    assert g.null(cond).shape == cond.shape
    x = torch.randn(3, 4, 4, 4)
    assert g.eps(x, torch.tensor(10), cond).shape == x.shape
    image = g.decode(x)
    assert image.shape == (3, 3, 6, 6)


def test_guided_latent_sampling_runs_through_the_vae_and_the_learner():
    comps = _components()
    g = gen.latent_generator(comps, ["a", "b"], "{}", image_size=8, resolution=8)
    learner = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(3 * 8 * 8, 2))
    noise = torch.randn((2, 4, 4, 4), generator=torch.Generator().manual_seed(0))
    plain = guidance.sample(g, np.array([0, 1]), noise, steps=3, cfg_scale=5.0)
    guided = guidance.sample(
        g, np.array([0, 1]), noise, steps=3, cfg_scale=5.0, learner=learner, omega=0.2,
        blend="official", image="minmax",
    )  # fmt: skip
    assert plain.shape == guided.shape == (2, 3, 8, 8)
    assert plain.abs().max() <= 1 and not torch.allclose(plain, guided)
    with pytest.raises(ValueError):
        gen.make_denoiser("pretrained", (4, 4, 4), 2, 8, 1, [8])
