"""The paper-scale backend (a Stable-Diffusion-class latent model) on tiny random diffusers modules."""

from types import SimpleNamespace

import numpy as np
import pytest
import torch

from paper_pipelines.pipelines.deliberate_practice import generator as gen
from paper_pipelines.pipelines.deliberate_practice import guidance


class Tokenizer:
    model_max_length = 4

    def __call__(self, prompts, padding, max_length, truncation, return_tensors):
        ids = [[len(p) % 7, len(p.split()) % 7, 0, 0][:max_length] for p in prompts]
        return SimpleNamespace(input_ids=torch.tensor(ids))


class TextEncoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(7, 8)

    def forward(self, ids):
        return (self.emb(ids),)


def _components():
    from diffusers import AutoencoderKL, UNet2DConditionModel

    torch.manual_seed(0)
    unet = UNet2DConditionModel(
        sample_size=4, in_channels=4, out_channels=4, layers_per_block=1,
        block_out_channels=(8, 16), down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"),
        up_block_types=("UpBlock2D", "CrossAttnUpBlock2D"), cross_attention_dim=8,
        attention_head_dim=2, norm_num_groups=4,
    )  # fmt: skip
    vae = AutoencoderKL(
        in_channels=3, out_channels=3, latent_channels=4, block_out_channels=(4, 8),
        down_block_types=("DownEncoderBlock2D",) * 2, up_block_types=("UpDecoderBlock2D",) * 2,
        norm_num_groups=2, sample_size=8,
    )  # fmt: skip
    config = dict(gen.train_scheduler(50, "scaled_linear").config)
    return {"unet": unet, "vae": vae, "text_encoder": TextEncoder(), "tokenizer": Tokenizer(),
            "scheduler_config": config}  # fmt: skip


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
