"""The shared tokeniser helper and the tiny byte-level LLaMA of the fast runs."""

import torch

from paper_pipelines.pipelines.dlp.lm import ByteTokenizer, encode, train_tiny_llama


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
