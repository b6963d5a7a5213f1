"""Tiny random Stable-Diffusion-class modules (seed 0, no downloads) for smoke tests and the anchor.

They exercise the latent backend's code paths (prompt encoding, the UNet's cross-attention, the VAE
decode, the guidance step) in a second on a CPU; their outputs are noise. Like
``common.lm.tiny_random_lm``, nothing here is a model of anything.
"""

from __future__ import annotations

from types import SimpleNamespace

import torch


class StubTokenizer:
    """Token ids from the prompt's length and word count (4 positions, 7 ids): no vocabulary needed."""

    model_max_length = 4

    def __call__(
        self, prompts, padding=None, max_length=None, truncation=None, return_tensors=None
    ):
        prompts = [prompts] if isinstance(prompts, str) else prompts
        ids = [[len(p) % 7, len(p.split()) % 7, 0, 0][: max_length or 4] for p in prompts]
        return SimpleNamespace(input_ids=torch.tensor(ids))


class StubTextEncoder(torch.nn.Module):
    """An embedding table standing in for CLIP's text tower: hidden states (batch, 4, 8)."""

    def __init__(self) -> None:
        super().__init__()
        self.emb = torch.nn.Embedding(7, 8)

    def forward(self, ids):
        return (self.emb(ids),)


def tiny_unet_and_vae():
    """A 2-level UNet2DConditionModel on 4x4x4 latents (cross-attention width 8) and its 8x8 RGB VAE."""
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
    return unet, vae
