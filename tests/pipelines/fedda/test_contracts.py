"""Small contracts of the measures, the towers and the server step, each on a hand-checkable case."""

import copy

import numpy as np
import pytest
import torch

from paper_pipelines.pipelines.fedda import data, mini_clip, towers
from paper_pipelines.pipelines.fedda import metrics as measures
from paper_pipelines.pipelines.fedda.federated import fedavg
from paper_pipelines.pipelines.fedda.prompts import combine_passes


def test_partition_stats_has_a_row_for_every_class_even_an_empty_one():
    clients = {"photo": {"train_labels": np.array([0, 0, 3]), "test_labels": np.array([1])}}
    stats = data.partition_stats({"main_0": clients})
    assert len(stats) == 2 * len(data.CLASS_NAMES)  # train and test, ten classes each
    train = stats[stats["split"] == "train"].set_index("class")["count"]
    assert train.to_dict() == {c: {0: 2, 3: 1}.get(i, 0) for i, c in enumerate(data.CLASS_NAMES)}
    named = data.partition_stats({"s": clients}, ("cat", "dog", "emu", "fox"))
    assert list(named["class"]) == ["cat", "dog", "emu", "fox"] * 2
    assert set(named["setting"]) == {"s"}


def test_fedavg_refuses_a_weight_per_client_mismatch():
    with pytest.raises(ValueError):
        fedavg([torch.ones(2), torch.ones(2)], torch.tensor([1.0]))


def test_plan_clients_refuses_a_pool_per_domain_mismatch():
    pools, rng = [np.arange(0, 10), np.arange(10, 20)], np.random.default_rng(0)
    with pytest.raises(ValueError):  # a domain without a pool is an error, not a dropped client
        data.plan_clients(np.arange(20) % 10, pools, ["photo", "sketch", "texture"], 0.8, 0.0, rng)


def test_mean_and_std_are_taken_in_double_precision():
    values = np.array([0.1, 0.2, 0.7], np.float32)
    exact = values.astype(np.float64)
    assert measures.mean_and_std(values) == (float(exact.mean()), float(exact.std()))


def test_mean_and_std_of_one_value():
    assert measures.mean_and_std(np.array([0.7])) == (0.7, 0.0)


def test_clip_logits_normalise_each_feature_row():
    v = torch.tensor([[1.0, 0.0], [0.0, 5.0]])
    t = torch.tensor([[3.0, 4.0], [0.0, 2.0]])  # unit rows (0.6, 0.8) and (0, 1)
    assert torch.allclose(mini_clip.clip_logits(v, t, 2.0), torch.tensor([[1.2, 0.0], [1.6, 2.0]]))


def test_combine_passes_normalises_each_class_row_of_both_passes():
    feats = torch.tensor([[3.0, 4.0], [1.0, 0.0], [0.0, 2.0], [0.0, -1.0]])
    # G rows (0.6, 0.8), (1, 0); P rows (0, 1), (0, -1); halves summed (0.3, 0.9), (0.5, -0.5)
    out = combine_passes(feats, 2)
    expected = torch.tensor([[0.3, 0.9], [0.5, -0.5]])
    assert torch.allclose(out, expected / expected.norm(dim=1, keepdim=True))


class _SpecialsTokenizer:
    """The word tokenizer with a Hugging Face tokenizer's default: [CLS] ... [SEP] added unless asked not to."""

    def __init__(self, words):
        self.words = words
        self.pad_token_id, self.cls_token_id, self.sep_token_id = 0, 1, 2

    def __call__(self, text, add_special_tokens=True):
        ids = self.words(text)["input_ids"]
        return {"input_ids": [1, *ids, 2] if add_special_tokens else ids}


def test_minilm_tokens_leave_out_the_special_tokens(tiny_bert, tokenizer):
    text = towers.MiniLMText(copy.deepcopy(tiny_bert), _SpecialsTokenizer(tokenizer), layers=2)
    assert text.tokens("the digit seven") == [19, 20, 11]


def test_load_minilm_text_truncates_the_shipped_model(monkeypatch, tiny_bert, tokenizer):
    import paper_pipelines.common.offline_models as offline

    monkeypatch.setattr(offline, "load_minilm", lambda: (copy.deepcopy(tiny_bert), tokenizer))
    text = towers.load_minilm_text(2)
    assert isinstance(text, towers.MiniLMText) and len(text.bert.encoder.layer) == 2
    assert text.tokenizer is tokenizer and text.tokens("one") == [5]


def test_openai_clip_text_pads_with_zeros():
    class Clip(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.token_embedding = torch.nn.Embedding(10, 4)
            self.positional_embedding = torch.nn.Parameter(torch.zeros(6, 4))
            self.ln_final = torch.nn.LayerNorm(4)
            self.text_projection = torch.nn.Parameter(torch.eye(4))

    text = towers.OpenAIClipText(Clip(), lambda s: [3], sot_id=8, eot_id=9)
    assert (text.bos_id, text.eos_id, text.pad_id) == (8, 9, 0)  # OpenAI's tokenize pads with 0


def test_openai_clip_text_runs_in_the_dtype_of_its_weights():
    class Clip(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.token_embedding = torch.nn.Embedding(10, 4)
            self.positional_embedding = torch.nn.Parameter(torch.arange(24.0).reshape(6, 4) / 10)
            self.transformer = torch.nn.Identity()
            self.ln_final = torch.nn.LayerNorm(4)
            self.text_projection = torch.nn.Parameter(torch.eye(4)[:, :3])

    clip = Clip().to(torch.bfloat16)
    text = towers.OpenAIClipText(clip, lambda s: [3], sot_id=8, eot_id=9)
    ids = torch.tensor([[8, 3, 9, 0, 0, 0]])
    soft = text.embed(ids).float()  # context vectors are trained in float32
    out = text(soft, torch.ones_like(ids), torch.tensor([2]))
    want = clip.ln_final(soft.to(torch.bfloat16) + clip.positional_embedding)[0, 2]
    assert out.dtype == torch.bfloat16 and torch.equal(out[0], want @ clip.text_projection)


def test_image_tower_keeps_the_size_in_each_block_and_halves_it_between_blocks():
    tower = towers.ImageTower([4, 6, 5], 7)
    # 3x3 convolutions with padding 1; a 2x2 max-pool after every block but the last
    assert tower.features(torch.rand(1, 3, 8, 8)).shape == (1, 5, 2, 2)
    assert tower.features(torch.rand(2, 3, 12, 12)).shape == (2, 5, 3, 3)
    assert tower(torch.rand(2, 3, 12, 12)).shape == (2, 7)
