"""Pretrained towers offline: tiny random CLIP and SigLIP folders written here, read local_files_only."""

import math

import pytest
import torch
from pydantic import ValidationError

from paper_pipelines.pipelines.vilamp.distillation import choose_keyframes, visual_sequence
from paper_pipelines.pipelines.vilamp.parameters import DFMParams, DKSParams, TowersParams
from paper_pipelines.pipelines.vilamp.towers import (
    IMAGE_MEAN_STD,
    folder_problem,
    image_mean_std,
    load_towers,
)
from paper_pipelines.pipelines.vilamp.training import build_reader, encode

QUESTION = "what digit is on the red card ?"
TINY = dict(intermediate_size=32, num_hidden_layers=1, num_attention_heads=2, hidden_size=16)


def _tokenizer(folder, max_length):
    """A word-level tokenizer over the benchmark's words, built without any download."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {"[PAD]": 0, "[UNK]": 1}
    for word in [
        "what",
        "digit",
        "is",
        "on",
        "the",
        "red",
        "green",
        "blue",
        "card",
        "?",
        "how",
        "many",
        "cards",
    ]:
        vocab.setdefault(word, len(vocab))
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, pad_token="[PAD]", unk_token="[UNK]", model_max_length=max_length
    )
    fast.save_pretrained(folder)


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    from transformers import CLIPConfig, CLIPModel, SiglipConfig, SiglipModel

    torch.manual_seed(0)
    root = tmp_path_factory.mktemp("towers")
    text = dict(TINY, vocab_size=32, max_position_embeddings=16)
    clip = CLIPConfig(
        text_config=dict(text, bos_token_id=0, eos_token_id=0),
        vision_config=dict(
            TINY, image_size=64, patch_size=16
        ),  # 32 px frames resized to 64: M = 16
        projection_dim=12,
    )
    CLIPModel(clip).save_pretrained(root / "clip")
    _tokenizer(root / "clip", 16)
    siglip = SiglipConfig(text_config=text, vision_config=dict(TINY, image_size=48, patch_size=16))
    SiglipModel(siglip).save_pretrained(root / "siglip")
    _tokenizer(root / "siglip", 16)
    return root


def _frames(n=5):
    return torch.rand(n, 3, 32, 32, generator=torch.Generator().manual_seed(1))


def _unit(x):
    return torch.allclose(x.float().norm(dim=-1), torch.ones(x.shape[:-1]), atol=1e-2)


@pytest.mark.parametrize(
    ("kind", "patches", "width", "joint"), [("clip", 16, 16, 12), ("siglip", 9, 16, 16)]
)
def test_feature_path_of_a_pretrained_tower(folders, kind, patches, width, joint):
    towers = load_towers(TowersParams(kind=kind, path=str(folders / kind)), "cpu")
    assert (towers.patches, towers.vision_dim, towers.query_dim) == (patches, width, joint)
    tokens, emb = towers.encode_video(_frames(), chunk=2)
    query = towers.encode_query(QUESTION)
    assert (
        tokens.shape == (5, patches, width) and emb.shape == (5, joint) and query.shape == (joint,)
    )
    assert {t.device.type for t in (tokens, emb, query)} == {"cpu"}
    assert tokens.dtype == emb.dtype == query.dtype == torch.float32
    assert _unit(emb) and _unit(query)
    assert not any(p.requires_grad for p in towers.parameters())  # frozen
    # chunking does not change the features
    tokens_all, emb_all = towers.encode_video(_frames())
    assert torch.allclose(tokens, tokens_all, atol=1e-5) and torch.allclose(emb, emb_all, atol=1e-5)


def test_bfloat16_towers(folders):
    towers = load_towers(
        TowersParams(kind="clip", path=str(folders / "clip"), dtype="bfloat16"), "cpu"
    )
    tokens, emb = towers.encode_video(_frames())
    query = towers.encode_query(QUESTION)
    assert tokens.dtype == emb.dtype == query.dtype == torch.bfloat16
    assert _unit(emb) and _unit(query)


def test_clip_selector_with_a_siglip_vision_tower(folders):
    params = TowersParams(
        kind="clip",
        path=str(folders / "clip"),
        vision_kind="siglip",
        vision_path=str(folders / "siglip"),
        vision_layer=-1,
    )
    towers = load_towers(params, "cpu")
    tokens, emb = towers.encode_video(_frames(3))
    # patch tokens from SigLIP (3 x 3 grid), frame embeddings from CLIP (projection 12)
    assert tokens.shape == (3, 9, 16) and emb.shape == (3, 12)
    assert towers.encode_query(QUESTION).shape == (12,)
    # SigLIP's published normalisation (no preprocessor_config.json in the folder)
    assert towers.mean.flatten().tolist() == [0.5, 0.5, 0.5]
    assert torch.allclose(towers.std.flatten(), torch.tensor([0.5, 0.5, 0.5]))


def test_dks_and_dfm_run_unchanged_on_pretrained_features(folders):
    towers = load_towers(TowersParams(kind="clip", path=str(folders / "clip")), "cpu")
    cache = {QUESTION: [0.0] * 5}
    reader = build_reader(towers, _reader_params(), DFMParams(), 5, 4).eval()
    with torch.no_grad():
        enc = encode(_frames(8).numpy(), QUESTION, towers, reader, cache)
        keys = choose_keyframes("vilamp", enc, 2, DKSParams(max_keyframes=2))
        tokens, _, _ = visual_sequence("vilamp", enc, keys, reader, DFMParams(max_dense_length=3))
    assert len(keys) == 2
    assert tokens.shape == (2 * 16 + (8 - 2) + 1, 8)  # K * M + (N - K) + 1 with the tower's M


def _reader_params():
    from paper_pipelines.pipelines.vilamp.parameters import ReaderParams

    return ReaderParams(dim=8, layers=1, heads=2)


def test_preprocess_resizes_and_normalises(folders):
    towers = load_towers(TowersParams(kind="clip", path=str(folders / "clip")), "cpu")
    mean, std = IMAGE_MEAN_STD["clip"]
    frames = torch.ones(1, 3, 32, 32)
    x = towers.preprocess(frames, 64)
    assert x.shape == (1, 3, 64, 64)
    for c in range(3):
        assert math.isclose(x[0, c, 5, 7].item(), (1 - mean[c]) / std[c], rel_tol=1e-5)


def test_mean_std_come_from_the_folder_when_it_has_them(tmp_path):
    (tmp_path / "preprocessor_config.json").write_text(
        '{"image_mean": [0.1, 0.2, 0.3], "image_std": [1, 2, 3]}'
    )
    assert image_mean_std(str(tmp_path), "clip") == ((0.1, 0.2, 0.3), (1, 2, 3))
    assert image_mean_std(str(tmp_path / "none"), "siglip") == IMAGE_MEAN_STD["siglip"]


def test_a_missing_or_wrong_folder_is_refused_naming_the_key(folders, tmp_path):
    with pytest.raises(
        ValidationError, match=r"vilamp\.towers\.path .*no config\.json.*save_pretrained"
    ):
        TowersParams(kind="clip", path=str(tmp_path / "nowhere"))
    with pytest.raises(ValidationError, match=r"vilamp\.towers\.path is not set"):
        TowersParams(kind="siglip")
    with pytest.raises(ValidationError, match=r"holds a 'clip' model, not 'siglip'"):
        TowersParams(kind="siglip", path=str(folders / "clip"))
    with pytest.raises(ValidationError, match=r"vilamp\.towers\.vision_path"):
        TowersParams(kind="clip", path=str(folders / "clip"), vision_path=str(folders / "siglip"))
    with pytest.raises(ValidationError, match=r"kind=stand_in"):
        TowersParams(path=str(folders / "clip"))
    assert folder_problem(str(folders / "clip"), "clip") is None
    assert TowersParams().kind == "stand_in"


def test_a_missing_folder_stops_the_run_before_any_node(tmp_path):
    from paper_pipelines.common.params import ParameterError, check_parameters
    from paper_pipelines.pipeline_registry import paper_slugs
    from paper_pipelines.pipelines.vilamp import create_pipeline

    from .test_pipeline import _fast_params

    params = _fast_params()
    params["towers"].update(kind="clip", path=str(tmp_path / "clip"))
    with pytest.raises(ParameterError, match=r"vilamp\.towers\.path"):
        check_parameters({"vilamp": params}, [create_pipeline()], paper_slugs())


def test_load_towers_checks_the_folder_again(tmp_path):
    # a block built without validation (model_construct) still cannot load a missing folder
    bad = TowersParams.model_construct(
        kind="clip", path=str(tmp_path), vision_kind=None, vision_path=None, vision_layer=-2,
        dtype="float32",
    )  # fmt: skip
    with pytest.raises(FileNotFoundError, match=r"vilamp\.towers\.path"):
        load_towers(bad, "cpu")
