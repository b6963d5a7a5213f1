"""Tiny stand-ins for the frozen text tower: a word-level tokenizer and a 2-block random BERT."""

import pytest
import torch

WORDS = [
    "[PAD]",
    "[CLS]",
    "[SEP]",
    ".",
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "with",
    "a",
    "style",
    "of",
    "photo",
    "the",
    "digit",
    "golden",
    "retriever",
]


class WordTokenizer:
    """Whitespace tokenizer with BERT's special ids: [PAD] 0, [CLS] 1, [SEP] 2 ('.' splits off)."""

    pad_token_id, cls_token_id, sep_token_id = 0, 1, 2

    def __init__(self):
        self.vocab = {w: i for i, w in enumerate(WORDS)}
        self.words = {i: w for w, i in self.vocab.items()}

    def __call__(self, text, add_special_tokens=False):
        return {"input_ids": [self.vocab[w] for w in text.replace(".", " .").split()]}

    def decode(self, ids):
        return " ".join(self.words[int(i)] for i in ids)


@pytest.fixture(scope="session")
def tokenizer():
    return WordTokenizer()


@pytest.fixture(scope="session")
def tiny_bert():
    from transformers import BertConfig, BertModel

    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=len(WORDS),
        hidden_size=8,
        num_hidden_layers=3,
        num_attention_heads=2,
        intermediate_size=16,
        max_position_embeddings=64,
    )
    return BertModel(config).eval()


@pytest.fixture()
def tiny_text(tiny_bert, tokenizer):
    """A 2-block MiniLMText on the tiny BERT (a deep copy: MiniLMText truncates the layers)."""
    import copy

    from paper_pipelines.pipelines.fedda.towers import MiniLMText

    return MiniLMText(copy.deepcopy(tiny_bert), tokenizer, layers=2)
