"""The paper-scale backend (a Stable-Diffusion-class latent model) on tiny random diffusers modules."""

from types import SimpleNamespace

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


class RecordingTokenizer(StubTokenizer):
    def __init__(self):
        self.prompts = []

    def __call__(self, prompts, **kwargs):
        self.prompts.append(list(prompts))
        self.kwargs = kwargs
        return super().__call__(prompts, **kwargs)


class FakeUNet(torch.nn.Module):
    """eps = x + the mean of the text states, so the conditioning shows in the output."""

    config = SimpleNamespace(in_channels=4)

    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.ones(()))
        self.timesteps = []

    def forward(self, x, t, encoder_hidden_states):
        self.timesteps.append(t)
        return SimpleNamespace(sample=x + encoder_hidden_states.mean())


class FakeVAE(torch.nn.Module):
    """Four levels (spatial factor 2^3 = 8), scaling factor 0.5; decodes channel 0 as a grey image."""

    config = SimpleNamespace(block_out_channels=(4, 8, 16, 32), scaling_factor=0.5)

    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.ones(()))

    def decode(self, z):
        return SimpleNamespace(sample=z[:, :1])


def test_latent_generator_prompts_null_prompt_latent_size_and_frozen_modules():
    tokenizer, encoder = RecordingTokenizer(), StubTextEncoder()
    comps = {"unet": FakeUNet(), "vae": FakeVAE(), "text_encoder": encoder,
             "tokenizer": tokenizer, "scheduler_config": {"num_train_timesteps": 10}}  # fmt: skip
    g = gen.latent_generator(
        comps, ["tench", "golden_retriever"], "a photo of a {}", image_size=5, resolution=20
    )
    prompts = ["a photo of a tench", "a photo of a golden retriever"]
    assert tokenizer.prompts == [prompts, [""]]
    assert torch.equal(g.class_embeddings, gen.encode_prompts(encoder, StubTokenizer(), prompts))
    assert torch.equal(g.null_embedding, gen.encode_prompts(encoder, StubTokenizer(), [""]))
    assert g.shape == (4, 3, 3)  # ceil(20 px / factor 8)
    assert g.num_classes == 2 and g.image_size == 5
    assert g.scheduler_config == {"num_train_timesteps": 10}
    for module in (g.unet, g.vae):
        assert not module.training and not any(p.requires_grad for p in module.parameters())
    cond = g.condition(np.array([1, 0, 1]))
    assert torch.equal(cond, g.class_embeddings[[1, 0, 1]])
    null = g.null(cond)
    assert null.shape == cond.shape and all(torch.equal(n, g.null_embedding[0]) for n in null)
    x = torch.zeros(3, 4, 3, 3)
    t = torch.tensor(7)
    assert torch.allclose(g.eps(x, t, cond), torch.full_like(x, float(cond.mean())))
    assert g.unet.timesteps == [t]


def test_latent_decode_unscales_and_resizes_bilinearly():
    emb = torch.zeros(2, 4, 8)
    g = gen.LatentTextGenerator(
        FakeUNet(), FakeVAE(), emb, emb[:1], {}, latent_size=2, image_size=4
    )
    x = torch.zeros(1, 4, 2, 2)
    x[0, 0] = torch.tensor([[-0.5, 0.5], [-0.5, 0.5]])  # / scaling factor 0.5 -> [-1, 1] rows
    assert torch.allclose(g.decode(x)[0, 0], torch.tensor([[-1.0, -0.5, 0.5, 1.0]] * 4))
    same = gen.LatentTextGenerator(
        FakeUNet(), FakeVAE(), emb, emb[:1], {}, latent_size=2, image_size=2
    )
    assert torch.equal(same.decode(x), 2 * x[:, :1])


def test_encode_prompts_asks_for_padded_truncated_torch_tokens():
    """Every prompt padded (and cut) to the encoder's context length, as PyTorch tensors."""
    tokenizer = RecordingTokenizer()
    gen.encode_prompts(StubTextEncoder(), tokenizer, ["a", "b c"])
    assert tokenizer.kwargs == {
        "padding": "max_length", "max_length": 4, "truncation": True, "return_tensors": "pt"
    }  # fmt: skip
