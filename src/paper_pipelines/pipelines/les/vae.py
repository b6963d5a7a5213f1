"""The official expressions GRU VAE (OmerRonen/les, les/nets/vaes.py: VAEGRUConv), trained from scratch.

Encoder: three Conv1d + ReLU + BatchNorm over the one-hot sequence ("small": 2, 3, 4 channels with
kernels 2, 3, 4) -> Linear(100) -> mu and a softplus scale read as a log-variance. Decoder: z -> Linear(100)
fed at every step into a 3-layer GRU (hidden 100, dropout 0.2 between layers); the logits of step t are
Linear([h_t, Linear(s_{t-1})]) with s_{t-1} the previous step's softmax (no teacher forcing). Module names
follow the official ones so that a released ``w.pth`` loads into :class:`ExpressionVAE` (its property head
is not used here and is ignored on load).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from paper_pipelines.common.progress import progress

logger = logging.getLogger(__name__)

CONV_SIZES = {"small": ((2, 2), (3, 3), (4, 4)), "large": ((9, 9), (9, 9), (10, 11))}


class Encoder(nn.Module):
    """q(z | x): convolutions over positions, then mu and softplus(sigma) (read as log-variance)."""

    def __init__(self, latent_dim: int, vocab_size: int, length: int, conv_size: str = "small"):
        super().__init__()
        hidden = 100
        (c1, k1), (c2, k2), (c3, k3) = CONV_SIZES[conv_size]
        self.conv1, self.batch_norm1 = nn.Conv1d(vocab_size, c1, k1), nn.BatchNorm1d(c1)
        self.conv2, self.batch_norm2 = nn.Conv1d(c1, c2, k2), nn.BatchNorm1d(c2)
        self.conv3, self.batch_norm3 = nn.Conv1d(c2, c3, k3), nn.BatchNorm1d(c3)
        self.linear = nn.Linear(c3 * (length - k1 - k2 - k3 + 3), hidden)
        self.mu = nn.Linear(hidden, latent_dim)
        self.sigma = nn.Linear(hidden, latent_dim)

    def forward(self, one_hot: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = one_hot.transpose(1, 2)
        for conv, norm in (
            (self.conv1, self.batch_norm1),
            (self.conv2, self.batch_norm2),
            (self.conv3, self.batch_norm3),
        ):
            h = norm(F.relu(conv(h)))
        h = F.relu(self.linear(h.flatten(1)))
        return self.mu(h), F.softplus(self.sigma(h))


class GRUDecoder(nn.Module):
    """g(z): logits (batch, L, V). The previous softmax enters only the output layer, so the GRU runs
    over all L steps at once (its input, Linear(z), is the same at every step) and only the cheap
    output recursion loops: the same function as the official step-by-step loop."""

    def __init__(
        self,
        latent_dim: int,
        vocab_size: int,
        length: int,
        hidden: int,
        layers: int,
        dropout: float,
    ):
        super().__init__()
        self.latent_dim, self.vocab_size, self.length = latent_dim, vocab_size, length
        self.project = nn.Linear(latent_dim, hidden)
        self.gru = nn.GRU(hidden, hidden, num_layers=layers, batch_first=True, dropout=dropout)
        self.out = nn.Linear(2 * hidden, vocab_size)
        self.output_projection = nn.Linear(vocab_size, hidden)

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        if z.ndim != 2 or z.shape[1] != self.latent_dim:
            raise ValueError(
                f"the decoder takes latents of shape (batch, {self.latent_dim}), got {tuple(z.shape)}"
            )
        context = self.project(z)[:, None, :].expand(-1, self.length, -1)
        states, _ = self.gru(context)
        previous = torch.zeros(z.shape[0], self.vocab_size, dtype=z.dtype, device=z.device)
        logits = []
        for t in range(self.length):
            u_t = self.out(torch.cat([states[:, t], self.output_projection(previous)], dim=-1))
            logits.append(u_t)
            previous = torch.softmax(u_t, dim=-1)
        return torch.stack(logits, dim=1)


class ExpressionVAE(nn.Module):
    """Encoder and decoder of the official VAEGRUConv; reparameterisation noise scaled by eps_std."""

    def __init__(
        self,
        latent_dim: int = 25,
        vocab_size: int = 15,
        length: int = 19,
        hidden: int = 100,
        layers: int = 3,
        dropout: float = 0.2,
        eps_std: float = 0.1,
        conv_size: str = "small",
    ):
        super().__init__()
        self.eps_std = eps_std
        self.encoder = Encoder(latent_dim, vocab_size, length, conv_size)
        self.decoder = GRUDecoder(latent_dim, vocab_size, length, hidden, layers, dropout)

    def forward(self, one_hot: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        mu, logvar = self.encoder(one_hot)
        z = mu + self.eps_std * torch.randn_like(mu) * torch.exp(0.5 * logvar)
        return self.decoder(z), mu, logvar


def elbo_loss(
    logits: torch.Tensor, tokens: torch.Tensor, mu: torch.Tensor, logvar: torch.Tensor, beta: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-sequence reconstruction cross-entropy (summed over positions) and KL(q || N(0, I)), batch means.

    The released code has no training script; this is the standard beta-VAE reading (recon + beta KL).
    """
    recon = F.cross_entropy(logits.transpose(1, 2), tokens, reduction="none").sum(1).mean()
    kl = (0.5 * (mu.pow(2) + logvar.exp() - 1.0 - logvar).sum(1)).mean()
    return recon, beta * kl


@dataclass(frozen=True)
class TrainingCurve:
    """Mean training loss terms per epoch and the test reconstruction accuracy at the end."""

    recon: np.ndarray
    kl: np.ndarray
    test_token_accuracy: float
    test_sequence_accuracy: float


def one_hot(
    tokens: torch.Tensor, vocab_size: int, dtype: torch.dtype = torch.float32
) -> torch.Tensor:
    return F.one_hot(tokens, vocab_size).to(dtype)


def train_vae(
    model: ExpressionVAE,
    train_tokens: np.ndarray,
    test_tokens: np.ndarray,
    epochs: int,
    lr: float,
    batch_size: int,
    beta: float,
    generator: torch.Generator,
    device: str = "cpu",
) -> TrainingCurve:
    """Adam on recon + beta KL over shuffled mini-batches; returns the per-epoch curve."""
    model.to(device).train()
    optimiser = torch.optim.Adam(model.parameters(), lr=lr)
    tokens = torch.as_tensor(train_tokens, device=device)
    vocab = model.decoder.vocab_size
    recon_curve, kl_curve = [], []
    for epoch in progress(range(epochs), "les: VAE epochs", logger=logger):
        order = torch.randperm(len(tokens), generator=generator).to(device)
        sums, batches = np.zeros(2), 0
        for start in range(0, len(tokens), batch_size):
            batch = tokens[order[start : start + batch_size]]
            logits, mu, logvar = model(one_hot(batch, vocab))
            recon, kl = elbo_loss(logits, batch, mu, logvar, beta)
            optimiser.zero_grad()
            (recon + kl).backward()
            optimiser.step()
            sums += [recon.item(), kl.item()]
            batches += 1
        recon_curve.append(sums[0] / batches)
        kl_curve.append(sums[1] / batches)
        logger.info("VAE epoch %d: recon %.3f, beta*KL %.3f", epoch + 1, *sums / batches)
    model.eval()
    with torch.no_grad():
        test = torch.as_tensor(test_tokens, device=device)
        predicted = model.decoder(model.encoder(one_hot(test, vocab))[0]).argmax(-1)
    hits = (predicted == test).float()
    return TrainingCurve(
        recon=np.array(recon_curve),
        kl=np.array(kl_curve),
        test_token_accuracy=float(hits.mean()),
        test_sequence_accuracy=float(hits.all(1).float().mean()),
    )


@torch.no_grad()
def encode_means(model: ExpressionVAE, tokens: np.ndarray, batch_size: int = 1024) -> np.ndarray:
    """Posterior means mu(x) of token sequences (the encoded data of the OOD and LSO stages)."""
    model.eval()
    device = next(model.parameters()).device
    vocab = model.decoder.vocab_size
    out = []
    for start in range(0, len(tokens), batch_size):
        batch = torch.as_tensor(tokens[start : start + batch_size], device=device)
        out.append(model.encoder(one_hot(batch, vocab))[0].double().cpu().numpy())
    return np.concatenate(out) if out else np.zeros((0, model.decoder.latent_dim))


@torch.no_grad()
def decode_argmax(decoder: nn.Module, z: torch.Tensor, batch_size: int = 1024) -> np.ndarray:
    """Argmax token ids (n, L) of the decoder's logits (eval mode: the decoding users would see)."""
    was_training = decoder.training
    decoder.eval()
    dtype = next(decoder.parameters()).dtype
    out = [
        decoder(z[start : start + batch_size].to(dtype)).argmax(-1).cpu().numpy()
        for start in range(0, len(z), batch_size)
    ]
    decoder.train(was_training)
    return np.concatenate(out) if out else np.zeros((0, decoder.length), dtype=np.int64)
