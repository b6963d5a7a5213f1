"""The shared tokeniser helper and the tiny byte-level LLaMA of the fast runs."""

import pytest
import torch

from paper_pipelines.pipelines.dlp.lm import ByteTokenizer, encode, train_tiny_llama
from tests.kedro_helpers import log_messages
from tests.pipelines.dlp.log_cases import EVERY_FIFTH_AND_THE_LAST


def test_byte_tokens_are_utf8_bytes():
    ids = encode(ByteTokenizer(), "hé!")
    assert ids.dtype == torch.long and ids.tolist() == [104, 195, 169, 33]
    assert ByteTokenizer.vocab_size == 256


def test_hugging_face_tokenizers_add_special_tokens_only_when_asked():
    calls = []

    def tokenizer(text, add_special_tokens):
        calls.append(add_special_tokens)
        return {"input_ids": [1, len(text)] if add_special_tokens else [len(text)]}

    assert encode(tokenizer, "abc").tolist() == [3]
    assert encode(tokenizer, "abc", special_tokens=True).tolist() == [1, 3]
    assert calls == [False, True]


def test_tiny_llama_has_the_requested_shape_and_is_seeded():
    text = "the quick brown fox jumps over the lazy dog. " * 20

    def train(steps, seqlen=8):
        return train_tiny_llama(text, 2, 16, 24, 2, steps, batch=2, seqlen=seqlen, lr=1e-2, seed=0)

    lm = train(1)
    config = lm.model.config
    assert lm.name == "tiny-llama-2x16" and isinstance(lm.tokenizer, ByteTokenizer)
    assert (config.vocab_size, config.hidden_size, config.intermediate_size) == (256, 16, 24)
    assert (config.num_hidden_layers, config.num_attention_heads, config.num_key_value_heads) == (
        2,
        2,
        2,
    )
    assert config.max_position_embeddings == 512  # at least 512 positions
    assert train(0, seqlen=300).model.config.max_position_embeddings == 600  # twice the window
    assert config.tie_word_embeddings and not lm.model.training  # handed back in eval mode
    # the same seed gives the same model; training moved the weights away from the seeded init
    again, untrained = train(1), train(0)
    for p, q in zip(lm.model.parameters(), again.model.parameters(), strict=True):
        assert torch.equal(p, q)
    up = [m.model.model.layers[0].mlp.up_proj.weight for m in (lm, untrained)]
    assert not torch.equal(*up)


# ---------------------------------------------------------------- pinned by mutation testing (#29)
TEXT = "the quick brown fox jumps over the lazy dog. " * 20


@pytest.mark.parametrize(("steps", "logged"), EVERY_FIFTH_AND_THE_LAST)
def test_tiny_llama_logs_about_five_times_and_the_last_step(caplog, steps, logged):
    """The first loss of an untrained byte model is about ln 256 = 5.545 (near-uniform guesses)."""
    import logging
    import math

    caplog.set_level(logging.INFO, logger="paper_pipelines.pipelines.dlp.lm")
    caplog.set_level(logging.INFO, logger="paper_pipelines.progress")
    train_tiny_llama(TEXT, 2, 16, 24, 2, steps, batch=2, seqlen=8, lr=1e-2, seed=0)
    lines = log_messages(caplog, "paper_pipelines.pipelines.dlp.lm")
    prefixes = [line.split(":")[0] for line in lines]
    assert prefixes == [f"tiny LM step {k}/{steps}" for k in logged]
    losses = [float(line.rsplit("loss ", 1)[1]) for line in lines]
    assert abs(losses[0] - math.log(256)) < 0.05
    assert all(
        line == f"{p}: loss {loss:.3f}"
        for line, p, loss in zip(lines, prefixes, losses, strict=True)
    )
    done = log_messages(caplog, "paper_pipelines.progress")
    assert done[-1].startswith(f"tiny LM training: {steps} done in ")


def test_the_tokens_of_an_empty_text_are_an_empty_long_tensor():
    assert encode(ByteTokenizer(), "").dtype == torch.long  # not torch.tensor([])'s float32


def test_tiny_llama_has_no_special_tokens():
    # bytes have no BOS / EOS / padding: LLaMA's default ids 1 and 2 would be the bytes 0x01 and 0x02
    config = train_tiny_llama(
        TEXT, 1, 16, 24, 2, 0, batch=2, seqlen=8, lr=1e-2, seed=0
    ).model.config
    assert (config.bos_token_id, config.eos_token_id, config.pad_token_id) == (None, None, None)


def test_tiny_llama_first_adam_step_moves_each_weight_by_the_learning_rate():
    """Adam's first update is lr * g / (|g| + eps) = lr * sign(g) (plus AdamW's decay lr * 0.01 * w),
    so after one step at lr = 0.05 the largest change of a weight is 0.05."""
    before, after = (
        train_tiny_llama(TEXT, 2, 16, 24, 2, steps, batch=2, seqlen=8, lr=0.05, seed=0)
        for steps in (0, 1)
    )
    up = [m.model.model.layers[0].mlp.up_proj.weight for m in (before, after)]
    assert float((up[1] - up[0]).detach().abs().max()) == pytest.approx(0.05, rel=0.01)


def test_tiny_llama_windows_never_reach_the_last_two_tokens():
    # seqlen + 2 bytes: the only window start is 0 (randint(0, 1)), so the last two bytes never enter
    # a training window and two texts that differ only there train the same model
    models = [
        train_tiny_llama("abcdefgh" + tail, 1, 16, 24, 2, 2, batch=2, seqlen=8, lr=1e-2, seed=0)
        for tail in ("XY", "ZW")
    ]
    for p, q in zip(models[0].model.parameters(), models[1].model.parameters(), strict=True):
        assert torch.equal(p, q)
    # a difference inside the first window does change the model
    other = train_tiny_llama("abcdefgX" + "XY", 1, 16, 24, 2, 2, batch=2, seqlen=8, lr=1e-2, seed=0)
    embeddings = [m.model.model.embed_tokens.weight for m in (models[0], other)]
    assert not torch.equal(*embeddings)
