"""The generator the DP loop samples from: a class-conditional DDPM with classifier-free guidance.

Small scale: trained here on the real generator split (the stand-in for the generator's pretraining
data) with a residual-MLP denoiser (or diffusers' UNet2DModel); paper scale: a pretrained
Stable-Diffusion-class latent model (:class:`LatentTextGenerator`). Both expose the same interface to
the sampler (guidance.py): ``eps(x_t, t, cond)``, ``null(cond)``, ``decode(x)`` and ``shape``.
Noise schedules and the DDIM sampler are diffusers' (DDPMScheduler / DDIMScheduler).
"""

from __future__ import annotations

import logging
import math
from typing import Any

import numpy as np
import torch
from torch import nn

from paper_pipelines.common.progress import progress

logger = logging.getLogger(__name__)


def timestep_embedding(t: torch.Tensor, dim: int) -> torch.Tensor:
    """Sinusoidal timestep features (Ho et al. 2020, from the Transformer's positional encoding)."""
    from diffusers.models.embeddings import get_timestep_embedding

    return get_timestep_embedding(t, dim, flip_sin_to_cos=True, downscale_freq_shift=0)


class ResidualBlock(nn.Module):
    """LayerNorm -> SiLU -> Linear, conditioned by adding the (time + class) embedding, plus a skip."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.fc1 = nn.Linear(width, width)
        self.fc2 = nn.Linear(width, width)

    def forward(self, h: torch.Tensor, emb: torch.Tensor) -> torch.Tensor:
        z = self.fc1(torch.nn.functional.silu(self.norm(h) + emb))
        return h + self.fc2(torch.nn.functional.silu(z))


class ResidualMLPDenoiser(nn.Module):
    """eps_theta(x_t, t, c) on the flattened image; class index ``num_classes`` is the null label."""

    def __init__(self, shape: tuple[int, int, int], num_classes: int, width: int, blocks: int):
        super().__init__()
        self.shape, self.num_classes, self.width = tuple(shape), num_classes, width
        d = int(np.prod(shape))
        self.inp = nn.Linear(d, width)
        self.time = nn.Sequential(nn.Linear(width, width), nn.SiLU(), nn.Linear(width, width))
        self.label = nn.Embedding(num_classes + 1, width)
        self.blocks = nn.ModuleList(ResidualBlock(width) for _ in range(blocks))
        self.out = nn.Sequential(nn.LayerNorm(width), nn.SiLU(), nn.Linear(width, d))

    def forward(self, x: torch.Tensor, t: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        t = t.reshape(-1).expand(x.shape[0]) if t.numel() == 1 else t
        emb = self.time(timestep_embedding(t, self.width)) + self.label(labels)
        h = self.inp(x.flatten(1))
        for block in self.blocks:
            h = block(h, emb)
        return self.out(h).view_as(x)


class UNetDenoiser(nn.Module):
    """diffusers' UNet2DModel with a class embedding (num_classes + 1 entries, the last one null)."""

    def __init__(self, shape: tuple[int, int, int], num_classes: int, channels: list[int]):
        super().__init__()
        from diffusers import UNet2DModel

        self.shape, self.num_classes = tuple(shape), num_classes
        self.unet = UNet2DModel(
            sample_size=shape[1],
            in_channels=shape[0],
            out_channels=shape[0],
            block_out_channels=tuple(channels),
            down_block_types=("DownBlock2D",) * len(channels),
            up_block_types=("UpBlock2D",) * len(channels),
            layers_per_block=1,
            norm_num_groups=min(8, min(channels)),
            num_class_embeds=num_classes + 1,
        )

    def forward(self, x: torch.Tensor, t: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        return self.unet(x, t, class_labels=labels).sample


def make_denoiser(
    backend: str, shape: tuple[int, int, int], num_classes: int, width: int, blocks: int, channels
) -> nn.Module:
    if backend == "mlp":
        return ResidualMLPDenoiser(shape, num_classes, width, blocks)
    if backend == "unet2d":
        return UNetDenoiser(shape, num_classes, list(channels))
    raise ValueError(
        f"generator backend must be mlp or unet2d to build a denoiser, got {backend!r}"
    )


def train_scheduler(num_train_timesteps: int, beta_schedule: str):
    """The forward process q(x_t | x_0) (diffusers DDPMScheduler; squaredcos_cap_v2 = cosine)."""
    from diffusers import DDPMScheduler

    return DDPMScheduler(
        num_train_timesteps=num_train_timesteps, beta_schedule=beta_schedule, clip_sample=True
    )


def ddim_scheduler(config: dict[str, Any]):
    """DDIM on the same alphas; clip_sample clamps x0_hat to [-1, 1] before eps is recomputed."""
    from diffusers import DDIMScheduler

    return DDIMScheduler.from_config(config)


def drop_labels(labels: torch.Tensor, p: float, null: int, g: torch.Generator) -> torch.Tensor:
    """Classifier-free guidance training: each label becomes the null label with probability p."""
    drop = torch.rand(labels.shape, generator=g) < p
    return torch.where(drop, torch.full_like(labels, null), labels)


def ddpm_loss(
    model: nn.Module, scheduler, x0: torch.Tensor, labels: torch.Tensor, g: torch.Generator
) -> torch.Tensor:
    """Simplified DDPM objective (Ho et al. 2020, Eq. 14): E ||eps - eps_theta(sqrt(ab) x0 + sqrt(1-ab) eps, t, c)||^2."""
    t = torch.randint(0, scheduler.config.num_train_timesteps, (x0.shape[0],), generator=g)
    noise = torch.randn(x0.shape, generator=g)
    x_t = scheduler.add_noise(x0, noise, t)
    return torch.mean((model(x_t, t, labels) - noise) ** 2)


def train_ddpm(
    model: nn.Module,
    scheduler,
    x: np.ndarray,
    y: np.ndarray,
    steps: int,
    batch: int,
    lr: float,
    label_dropout: float,
    seed: int,
) -> list[float]:
    """Adam on the DDPM loss with label dropout; returns the loss of every step."""
    g = torch.Generator().manual_seed(seed)
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    losses = []
    model.train()
    for _ in progress(range(steps), "train DDPM generator", logger=logger):
        idx = torch.randint(0, len(xt), (min(batch, len(xt)),), generator=g)
        labels = drop_labels(yt[idx], label_dropout, model.num_classes, g)
        loss = ddpm_loss(model, scheduler, xt[idx], labels, g)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss))
    model.eval()
    return losses


class PixelGenerator:
    """A class-conditional pixel-space DDPM: cond = class indices, null = the null label."""

    def __init__(self, model: nn.Module, scheduler_config: dict[str, Any]) -> None:
        self.model = model.eval()
        for p in self.model.parameters():
            p.requires_grad_(False)
        self.scheduler_config = dict(scheduler_config)
        self.shape = tuple(model.shape)
        self.num_classes = model.num_classes

    def condition(self, labels: np.ndarray) -> torch.Tensor:
        return torch.as_tensor(labels, dtype=torch.long)

    def null(self, cond: torch.Tensor) -> torch.Tensor:
        return torch.full_like(cond, self.num_classes)

    def eps(self, x: torch.Tensor, t: torch.Tensor, cond: torch.Tensor) -> torch.Tensor:
        return self.model(x, t, cond)

    def decode(self, x: torch.Tensor) -> torch.Tensor:
        """Pixel space: the sample is the image."""
        return x


class LatentTextGenerator:
    """A Stable-Diffusion-class latent model: cond = text embeddings of class-name prompts.

    ``decode`` is the VAE decoder (latents / scaling_factor), as in the official process_image.
    """

    def __init__(
        self,
        unet: nn.Module,
        vae: nn.Module,
        class_embeddings: torch.Tensor,
        null_embedding: torch.Tensor,
        scheduler_config: dict[str, Any],
        latent_size: int,
        image_size: int,
    ) -> None:
        self.unet, self.vae = unet.eval(), vae.eval()
        for module in (self.unet, self.vae):
            for p in module.parameters():
                p.requires_grad_(False)
        self.class_embeddings, self.null_embedding = class_embeddings, null_embedding
        self.scheduler_config = dict(scheduler_config)
        self.shape = (unet.config.in_channels, latent_size, latent_size)
        self.num_classes = class_embeddings.shape[0]
        self.image_size = image_size

    def condition(self, labels: np.ndarray) -> torch.Tensor:
        return self.class_embeddings[torch.as_tensor(labels, dtype=torch.long)]

    def null(self, cond: torch.Tensor) -> torch.Tensor:
        return self.null_embedding.expand_as(cond)

    def eps(self, x: torch.Tensor, t: torch.Tensor, cond: torch.Tensor) -> torch.Tensor:
        return self.unet(x, t, encoder_hidden_states=cond).sample

    def decode(self, x: torch.Tensor) -> torch.Tensor:
        """VAE decode, resized (differentiably) to the learner's image size."""
        image = self.vae.decode(x / self.vae.config.scaling_factor).sample
        if image.shape[-1] != self.image_size:
            size = (self.image_size, self.image_size)
            image = torch.nn.functional.interpolate(image, size=size, mode="bilinear")
        return image


def encode_prompts(text_encoder, tokenizer, prompts: list[str]) -> torch.Tensor:
    """CLIP text-encoder hidden states of each prompt (the unconditional prompt is "")."""
    tokens = tokenizer(
        prompts,
        padding="max_length",
        max_length=tokenizer.model_max_length,
        truncation=True,
        return_tensors="pt",
    )
    device = next(text_encoder.parameters()).device
    with torch.no_grad():
        return text_encoder(tokens.input_ids.to(device))[0]


def latent_generator(
    components: dict, class_names: list[str], template: str, image_size: int, resolution: int
):
    """The pretrained backend from the catalog's components (DiffusionCheckpointDataset.load())."""
    prompts = [template.format(name.replace("_", " ")) for name in class_names]
    text = encode_prompts(components["text_encoder"], components["tokenizer"], prompts)
    null = encode_prompts(components["text_encoder"], components["tokenizer"], [""])
    factor = 2 ** (len(components["vae"].config.block_out_channels) - 1)
    return LatentTextGenerator(
        components["unet"],
        components["vae"],
        text,
        null,
        components["scheduler_config"],
        math.ceil(resolution / factor),
        image_size,
    )
