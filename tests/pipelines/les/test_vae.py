"""The GRU VAE: the batched decoder equals the official step-by-step loop; the loss by hand."""

import copy
import math

import numpy as np
import pytest
import torch
from torch.nn import functional as F

from paper_pipelines.pipelines.les import vae


def official_loop(decoder: vae.GRUDecoder, z: torch.Tensor) -> torch.Tensor:
    """The released DecoderRNN.forward, one GRU step at a time with the hidden state carried."""
    context = decoder.project(z)[:, None, :]
    hidden = torch.zeros(decoder.gru.num_layers, z.shape[0], decoder.gru.hidden_size)
    previous = torch.zeros(z.shape[0], 1, decoder.vocab_size)
    outputs = []
    for _ in range(decoder.length):
        state, hidden = decoder.gru(context, hidden)
        out = decoder.out(torch.cat([state, decoder.output_projection(previous)], dim=-1))
        outputs.append(out)
        previous = torch.softmax(out, dim=-1)
    return torch.cat(outputs, dim=1)


def test_batched_decoder_equals_the_official_loop():
    torch.manual_seed(0)
    decoder = vae.GRUDecoder(4, 15, 6, hidden=8, layers=3, dropout=0.2).eval()
    z = torch.randn(3, 4)
    assert torch.allclose(decoder(z), official_loop(decoder, z), atol=1e-6)
    reference = official_loop(decoder, z).double()
    assert torch.allclose(decoder.double()(z.double()), reference, atol=1e-5)
    with pytest.raises(ValueError, match=r"shape \(batch, 4\), got \(3, 5\)"):
        decoder(torch.randn(3, 5))


def test_module_names_follow_the_released_weights():
    keys = set(vae.ExpressionVAE(latent_dim=25).state_dict())
    for key in ("encoder.conv1.weight", "encoder.batch_norm3.running_mean", "encoder.linear.weight",
                "encoder.mu.weight", "encoder.sigma.bias", "decoder.project.weight",
                "decoder.gru.weight_hh_l2", "decoder.out.weight", "decoder.output_projection.weight"):  # fmt: skip
        assert key in keys
    model = vae.ExpressionVAE(latent_dim=25)
    assert model.encoder.linear.in_features == 4 * (19 - 2 - 3 - 4 + 3)
    assert model.decoder.out.in_features == 200 and model.decoder.gru.num_layers == 3


def test_elbo_terms_by_hand():
    logits = torch.zeros(2, 3, 4)  # uniform: CE = log 4 per position
    tokens = torch.zeros(2, 3, dtype=torch.long)
    mu = torch.tensor([[0.0, 1.0], [0.0, 0.0]])
    logvar = torch.zeros(2, 2)
    recon, kl = vae.elbo_loss(logits, tokens, mu, logvar, beta=2.0)
    assert recon.item() == pytest.approx(3 * math.log(4))
    assert kl.item() == pytest.approx(2.0 * 0.25)  # KL = 0.5 mu^2 -> 0.5 in one sample, mean 0.25
    _, kl_var = vae.elbo_loss(logits, tokens, torch.zeros(1, 1), torch.tensor([[1.0]]), beta=1.0)
    assert kl_var.item() == pytest.approx(0.5 * (math.e - 2.0))


def test_training_lowers_the_loss_and_encodes_decodes():
    torch.manual_seed(0)
    model = vae.ExpressionVAE(latent_dim=3, hidden=8, layers=1, dropout=0.0)
    tokens = np.random.default_rng(0).integers(0, 15, size=(32, 19))
    curve = vae.train_vae(
        model, tokens, tokens[:4], 3, 1e-2, 8, 1.0, torch.Generator().manual_seed(0)
    )
    assert curve.recon.shape == (3,) and curve.recon[-1] < curve.recon[0]
    assert 0 <= curve.test_sequence_accuracy <= curve.test_token_accuracy <= 1
    mu = vae.encode_means(model, tokens[:5], batch_size=2)
    assert mu.shape == (5, 3) and mu.dtype == np.float64
    assert np.allclose(mu, vae.encode_means(model, tokens[:5]))
    decoded = vae.decode_argmax(model.decoder, torch.as_tensor(mu), batch_size=2)
    assert decoded.shape == (5, 19) and decoded.max() < 15
    assert not model.training and not model.decoder.training


def test_epoch_losses_are_batch_means():
    torch.manual_seed(0)
    model = vae.ExpressionVAE(latent_dim=3, hidden=8, layers=1, dropout=0.0)
    tokens = np.random.default_rng(0).integers(0, 15, size=(40, 19))
    curve = vae.train_vae(
        model, tokens, tokens[:4], 1, 1e-3, 8, 1.0, torch.Generator().manual_seed(0)
    )
    # one epoch of 5 batches: a mean of per-sequence CE near 19 log 15, not a sum over batches
    assert 0.8 * 19 * math.log(15) < curve.recon[0] < 1.2 * 19 * math.log(15)
    assert 0 <= curve.kl[0] < 5
    assert model.encoder.training is False


def test_one_hot_has_the_vocabulary_width_whatever_the_largest_token():
    out = vae.one_hot(torch.tensor([[0, 1]]), 15)
    assert out.shape == (1, 2, 15) and out.dtype == torch.float32
    assert out[0, 1, 1] == 1.0 and out.sum() == 2.0


def test_the_encoder_is_small_by_default():
    encoder = vae.Encoder(latent_dim=3, vocab_size=15, length=19)
    assert [encoder.conv1.out_channels, encoder.conv2.out_channels, encoder.conv3.out_channels] == [
        2,
        3,
        4,
    ]
    assert encoder.linear.in_features == 4 * (19 - 2 - 3 - 4 + 3)


def test_reparameterisation_scales_unit_noise_by_eps_std_and_the_standard_deviation():
    torch.manual_seed(0)
    model = vae.ExpressionVAE(latent_dim=3, hidden=8, layers=1, dropout=0.0, eps_std=0.7).eval()
    x = vae.one_hot(torch.as_tensor(np.random.default_rng(0).integers(0, 15, size=(4, 19))), 15)
    mu, logvar = model.encoder(x)
    torch.manual_seed(5)
    logits, mu_out, logvar_out = model(x)
    torch.manual_seed(5)
    eps = torch.randn_like(mu)
    # z = mu + eps_std * eps * sigma with sigma = exp(logvar / 2)
    expected = model.decoder(mu + 0.7 * eps * torch.exp(0.5 * logvar))
    assert torch.equal(mu_out, mu) and torch.equal(logvar_out, logvar)
    assert torch.allclose(logits, expected, atol=1e-6)
    assert not torch.allclose(logits, model.decoder(mu), atol=1e-3)  # the noise matters


def test_training_is_adam_on_recon_plus_beta_kl_per_epoch():
    # eps_std = 0 and no dropout: the only randomness is the batch order, and with one batch
    # holding every row the epoch means do not depend on it (BatchNorm statistics neither)
    torch.manual_seed(0)
    model = vae.ExpressionVAE(latent_dim=3, hidden=8, layers=1, dropout=0.0, eps_std=0.0)
    reference = copy.deepcopy(model)
    tokens = np.random.default_rng(1).integers(0, 15, size=(6, 19))
    curve = vae.train_vae(
        model, tokens, tokens[:3], 3, 0.05, 6, 0.5, torch.Generator().manual_seed(0)
    )
    reference.train()
    optimiser = torch.optim.Adam(reference.parameters(), lr=0.05)
    batch = torch.as_tensor(tokens)
    expected = []
    for _ in range(3):
        logits, mu, logvar = reference(F.one_hot(batch, 15).float())
        recon, kl = vae.elbo_loss(logits, batch, mu, logvar, beta=0.5)
        expected.append((recon.item(), kl.item()))
        optimiser.zero_grad()
        (recon + kl).backward()
        optimiser.step()
    assert curve.recon.shape == curve.kl.shape == (3,)
    assert curve.recon == pytest.approx([r for r, _ in expected], rel=1e-5)
    assert curve.kl == pytest.approx([k for _, k in expected], rel=1e-4)
    # the test accuracies: argmax decodings of the posterior means, per token and per sequence
    test = tokens[:3]
    decoded = vae.decode_argmax(model.decoder, torch.as_tensor(vae.encode_means(model, test)))
    assert curve.test_token_accuracy == pytest.approx(float((decoded == test).mean()))
    assert curve.test_sequence_accuracy == pytest.approx(float((decoded == test).all(1).mean()))


def test_the_batch_order_comes_from_the_given_generator():
    torch.manual_seed(0)
    base = vae.ExpressionVAE(latent_dim=3, hidden=8, layers=1, dropout=0.0, eps_std=0.0)
    tokens = np.random.default_rng(2).integers(0, 15, size=(9, 19))

    def curve(generator_seed, global_seed):
        torch.manual_seed(global_seed)
        model = copy.deepcopy(base)
        generator = torch.Generator().manual_seed(generator_seed)
        return vae.train_vae(model, tokens, tokens[:2], 2, 0.01, 3, 1.0, generator).recon

    same = curve(0, 1)
    assert np.array_equal(same, curve(0, 2))  # the global RNG does not move the order
    assert not np.allclose(same, curve(1, 1), rtol=1e-6, atol=0)  # the generator does
