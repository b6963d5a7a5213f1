"""The glue between the method modules on tiny sizes: towers and reader, training, benchmark, scaling.

Pinned on hand-checkable cases where there is one (losses, time encoding, padding, token counts), and
on shapes and invariants elsewhere; a few seconds in all (a 2-colour vocabulary, 64-frame videos).
"""

import math
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import torch
import torch.nn.functional as F

from paper_pipelines.pipelines.vilamp import data as synth
from paper_pipelines.pipelines.vilamp.evaluation import (
    predicted_attention_gb,
    run_benchmark,
    run_video,
)
from paper_pipelines.pipelines.vilamp.metrics import OOM, accuracy_table, events_hit
from paper_pipelines.pipelines.vilamp.models import (
    Reader,
    caption_loss,
    query_loss,
    time_encoding,
)
from paper_pipelines.pipelines.vilamp.parameters import (
    DataParams,
    DFMParams,
    DKSParams,
    ReaderParams,
    SelectorParams,
)
from paper_pipelines.pipelines.vilamp.scaling import scaling_sweep
from paper_pipelines.pipelines.vilamp.training import (
    build_reader,
    build_selector,
    keyframe_budget,
    pretrain_selector,
    text_matrix,
    train_reader,
)

DATA = DataParams(backgrounds=4, colours=["red", "blue"], train_frames=[64, 64], train_videos=4)
SELECTOR = SelectorParams(dim=8, heads=2, steps=2, batch=4)
READER = ReaderParams(dim=8, layers=1, heads=2, steps=2, batch=2, pool_videos=3, refresh_per_step=1)
DKS = DKSParams(max_keyframes=3, counting_keyframes=2)
DFM = DFMParams()


@pytest.fixture(scope="module")
def assets():
    return synth.build_assets(DATA, np.random.default_rng(0), noise_bank=4)


@pytest.fixture(scope="module")
def cache():
    colours = list(DATA.colours)
    texts = synth.all_questions(colours) + synth.all_captions(colours)
    rng = np.random.default_rng(0)
    return {t: rng.standard_normal(5).tolist() for t in texts}


@pytest.fixture(scope="module")
def models(cache):
    torch.manual_seed(0)
    towers = build_selector(DATA, SELECTOR, 5).eval()
    vocab = synth.answer_vocabulary(list(DATA.colours), DATA.max_count)
    reader = build_reader(towers, READER, DFM, 5, len(vocab)).eval()
    return towers, reader


def _specs(assets, n=64, tasks=("retrieval", "ordering", "counting"), seed=0):
    rng = np.random.default_rng(seed)
    labels = assets["glyphs"]["labels"]
    return [synth.make_video_spec(t, n, DATA, labels, rng) for t in tasks]


# ---------------------------------------------------------------- models
def test_caption_loss_by_hand():
    frame = torch.tensor([[1.0, 0.0]])
    captions = torch.tensor([[2.0, 0.0], [0.0, 3.0]])  # cosines 1 and 0
    loss = caption_loss(frame, captions, torch.tensor([0]), temperature=0.5)
    assert math.isclose(loss.item(), -math.log(math.exp(2) / (math.exp(2) + 1)), rel_tol=1e-6)
    wrong = caption_loss(frame, captions, torch.tensor([1]), temperature=0.5)
    assert math.isclose(wrong.item(), -math.log(1 / (math.exp(2) + 1)), rel_tol=1e-6)


def test_query_loss_by_hand():
    frame = torch.tensor([[1.0, 0.0]])
    queries = torch.tensor([[4.0, 0.0], [0.0, 1.0]])  # cosines 1 and 0
    bias = torch.tensor(-1.0)
    loss = query_loss(frame, queries, torch.tensor([[True, False]]), 0.5, bias)
    # logits (1 / 0.5 - 1, 0 - 1) = (1, -1); targets (1, 0)
    expected = (-math.log(1 / (1 + math.exp(-1))) - math.log(1 - 1 / (1 + math.exp(1)))) / 2
    assert math.isclose(loss.item(), expected, rel_tol=1e-6)


def test_time_encoding_by_hand():
    enc = time_encoding(torch.tensor([0.0, 0.5]), 4)
    assert enc.shape == (2, 4)
    assert enc[0].tolist() == [0.0, 0.0, 1.0, 1.0]  # sin 0, cos 0
    # frequencies pi and 512 pi: sin(pi / 2) = 1, sin(256 pi) = 0
    assert torch.allclose(enc[1], torch.tensor([1.0, 0.0, 0.0, 1.0]), atol=1e-3)


def test_reader_padding_does_not_change_an_answer():
    torch.manual_seed(0)
    reader = Reader(8, 8, 5, 8, 2, 2, 3, 0.01).eval()
    short = (torch.randn(3, 8), torch.tensor([0.0, 0.5, 1.0]), torch.tensor([1, 2, 2]))
    long = (torch.randn(7, 8), torch.linspace(0, 1, 7), torch.full((7,), 2))
    prompt = torch.randn(2, 5)
    with torch.no_grad():
        alone = reader([short], prompt[:1])
        padded = reader([short, long], prompt)
        other = reader([long], prompt[1:])
    assert torch.allclose(alone[0], padded[0], atol=1e-5)
    assert torch.allclose(other[0], padded[1], atol=1e-5)
    # the question token is what the head reads: another question, another answer
    with torch.no_grad():
        assert not torch.allclose(reader([short], prompt[1:]), alone)


def test_selector_encodes_in_chunks_and_maps_the_question(models, cache):
    towers, _ = models
    frames = torch.rand(5, 3, 32, 32)
    tokens, emb = towers.encode_video(frames, chunk=2)
    tokens_all, emb_all = towers.encode_video(frames)
    assert tokens.shape == (5, 16, 8) and emb.shape == (5, 8)
    assert torch.allclose(tokens, tokens_all, atol=1e-5) and torch.allclose(emb, emb_all, atol=1e-5)
    question = synth.all_questions(list(DATA.colours))[0]
    with torch.no_grad():
        expected = towers.text(torch.tensor(cache[question]))
    assert torch.allclose(towers.encode_query(question, cache), expected)
    with pytest.raises(KeyError, match="no cached MiniLM"):
        towers.encode_query("what is this?", cache)


# ---------------------------------------------------------------- training
def test_keyframe_budget_and_text_matrix(cache):
    assert keyframe_budget("counting", DKS) == 2
    assert keyframe_budget("retrieval", DKS) == keyframe_budget("ordering", DKS) == 3
    texts = list(cache)[:2]
    m = text_matrix(texts, cache)
    assert m.dtype == torch.float32 and m[1].tolist() == pytest.approx(cache[texts[1]])
    with pytest.raises(KeyError, match="without a cached"):
        text_matrix(["nothing"], cache)


def test_pretraining_runs_its_steps_and_learns(assets, cache):
    torch.manual_seed(0)
    params = SelectorParams(dim=8, heads=2, steps=6, batch=8, lr=1e-2)
    corpus = synth.caption_corpus(6 * 8, DATA, assets, 0.7, np.random.default_rng(0))
    model, log = pretrain_selector(corpus, assets, DATA, params, cache)
    assert list(log.step) == list(range(6)) and not model.training
    assert np.isfinite(log[["caption_loss", "query_loss"]].to_numpy()).all()
    assert log.caption_loss.gt(0).all() and log.query_loss.gt(0).all()


def test_pretraining_losses_target_each_frames_caption_and_asked_colours(assets, cache):
    # step 0's losses are those of the initial weights: recompute them from the rows by hand
    params = SelectorParams(dim=8, heads=2, steps=1, batch=12)
    corpus = synth.caption_corpus(12, DATA, assets, 0.7, np.random.default_rng(3))
    colours = list(DATA.colours)
    assert {r["colour"] for r in corpus} == {-1, 0, 1}  # no card, red and blue frames
    torch.manual_seed(0)
    _, log = pretrain_selector(corpus, assets, DATA, params, cache)
    torch.manual_seed(0)
    model = build_selector(DATA, params, 5)
    captions, questions = synth.all_captions(colours), synth.all_questions(colours)
    # the caption of a frame is its own; a question is relevant when it names the frame's card colour
    target = torch.tensor([captions.index(r["caption"]) for r in corpus])
    relevant = torch.tensor(
        [[r["colour"] >= 0 and f" {colours[r['colour']]} " in q for q in questions] for r in corpus]
    )
    frames = torch.from_numpy(synth.render_caption_frames(corpus, assets, DATA))
    with torch.no_grad():
        emb = model.image.frame_embedding(model.image.patch_tokens(frames))
        loss_c = caption_loss(
            emb, model.text(text_matrix(captions, cache)), target, params.temperature
        )
        loss_q = query_loss(
            emb, model.text(text_matrix(questions, cache)), relevant, params.temperature, model.bias
        )
    assert log.caption_loss[0] == pytest.approx(loss_c.item(), rel=1e-5)
    assert log.query_loss[0] == pytest.approx(loss_q.item(), rel=1e-5)


def test_reader_training_logs_every_step(assets, models, cache):
    towers, _ = models
    specs = _specs(assets) + _specs(assets, seed=1)
    model, log = train_reader(
        specs, assets, DATA, towers, READER, DKS, DFM, cache, np.random.default_rng(0)
    )
    assert list(log.step) == [0, 1] and not model.training
    assert set(log.method) <= set(READER.train_methods)
    assert log.accuracy.between(0, 1).all() and np.isfinite(log.loss).all()
    # pool of 3 videos, one new one per step
    assert list(log.videos_seen) == [4, 5]


def test_reader_training_accuracy_is_the_share_answered_right(assets, models, cache):
    # ordering questions have two options and a batch of one video: the answer is right exactly when
    # the option-masked cross-entropy is below log 2 (the right option has p > 1/2)
    towers, _ = models
    specs = _specs(assets, tasks=("ordering",) * 4)
    params = ReaderParams(
        dim=8, layers=1, heads=2, steps=4, batch=1, pool_videos=3, refresh_per_step=1, lr=0.05
    )
    _, log = train_reader(
        specs, assets, DATA, towers, params, DKS, DFM, cache, np.random.default_rng(0)
    )
    assert all(len(s["options"]) == 2 for s in specs)
    assert log.accuracy.tolist() == [float(loss < math.log(2)) for loss in log.loss]


# ---------------------------------------------------------------- evaluation
def test_predicted_attention_memory():
    assert predicted_attention_gb(1000, 4) == pytest.approx(4 * 4 * 1000**2 / 1e9)
    assert predicted_attention_gb(1000, 4, bytes_per=2) == pytest.approx(8e-3)


def test_run_video_gives_every_method_its_tokens(assets, models, cache):
    towers, reader = models
    spec = _specs(assets, tasks=("retrieval",))[0]
    methods = ["uniform", "relevance_topk", "dks_drop", "dks_meanpool", "dks_respool", "vilamp"]
    rows = run_video(
        spec, [*methods, "dense"], assets, DATA, towers, reader, DKS, DFM, cache, 1.0, 2
    )
    by = {r["method"]: r for r in rows}
    k, m, n = 3, 16, 64
    assert by["uniform"]["visual_tokens"] == k * m + 1 == by["dks_drop"]["visual_tokens"]
    assert (
        by["vilamp"]["visual_tokens"] == k * m + (n - k) + 1 == by["dks_meanpool"]["visual_tokens"]
    )
    assert by["dense"]["visual_tokens"] == n * m + 1 and by["dense"]["needle_recall"] == 1.0
    assert by["dense"]["keyframes"] == n
    # events hit: every needle run for dense, and those of linspace(0, 63, 3) = 0, 31, 63 for uniform
    assert by["dense"]["needles_hit"] == 1.0
    assert by["uniform"]["needles_hit"] == events_hit([0, 31, 63], spec)
    for r in rows:
        assert r["status"] == "ok" and r["predicted"] in spec["options"]
        assert r["correct"] == float(r["predicted"] == spec["answer"])
        assert r["keyframe_budget"] == k and r["seconds"] >= 0
    # below the cap dense runs; above it, it is marked and not run
    capped = run_video(spec, ["dense"], assets, DATA, towers, reader, DKS, DFM, cache, 1e-6, 2)
    assert capped[0]["status"] == OOM and "predicted" not in capped[0]
    assert capped[0]["visual_tokens"] == n * m + 1


def test_accuracy_table_keeps_oom_rows():
    predictions = pd.DataFrame(
        [
            dict(task="retrieval", n_frames=8, method="vilamp", status="ok", correct=1.0,
                 needle_recall=1.0, needles_hit=1.0, visual_tokens=10),
            dict(task="retrieval", n_frames=8, method="vilamp", status="ok", correct=0.0,
                 needle_recall=0.0, needles_hit=0.5, visual_tokens=12),
            dict(task="retrieval", n_frames=8, method="dense", status=OOM, visual_tokens=99),
            dict(task="retrieval", n_frames=8, method="dense", status=OOM, visual_tokens=99),
        ]
    )  # fmt: skip
    table = accuracy_table(predictions).set_index("method")
    assert table.loc["vilamp", "accuracy"] == 0.5 and table.loc["vilamp", "videos"] == 2
    assert table.loc["vilamp", "needles_hit"] == 0.75 and table.loc["vilamp", "visual_tokens"] == 11
    assert table.loc["vilamp", "status"] == "ok" and table.loc["dense", "status"] == OOM
    assert len(table) == 2 and table.loc["dense", "visual_tokens"] == 99


def test_benchmark_runs_each_video_under_its_methods(assets, models, cache):
    towers, reader = models
    specs = _specs(assets, tasks=("retrieval", "counting"))

    def method_of(spec):
        return ["uniform", "dense"] if spec["task"] == "retrieval" else ["uniform", "vilamp"]

    evaluation = SimpleNamespace(dense_memory_cap_gb=1e-6)  # dense is over the cap: marked OOM
    table = run_benchmark(
        specs, method_of, assets, DATA, towers, reader, DKS, DFM, cache, evaluation, 2
    )
    assert list(table.task) == ["retrieval", "retrieval", "counting", "counting"]
    assert list(table.method) == ["uniform", "dense", "uniform", "vilamp"]
    assert list(table.status) == ["ok", OOM, "ok", "ok"]
    assert list(table.question) == [specs[0]["question"]] * 2 + [specs[1]["question"]] * 2
    assert list(table.answer) == [specs[0]["answer"]] * 2 + [specs[1]["answer"]] * 2
    # counting keeps the smaller keyframe budget (2 of DKS's 3): 2 x 16 + 1 tokens for uniform
    assert list(table.keyframe_budget) == [3, 3, 2, 2]
    assert list(table.visual_tokens) == [3 * 16 + 1, 64 * 16 + 1, 2 * 16 + 1, 2 * 16 + 62 + 1]
    # the same rows as the videos run one by one (timings aside)
    one_by_one = pd.DataFrame(
        run_video(specs[0], method_of(specs[0]), assets, DATA, towers, reader, DKS, DFM, cache,
                  1e-6, 2)
        + run_video(specs[1], method_of(specs[1]), assets, DATA, towers, reader, DKS, DFM, cache,
                    1e-6, 2)
    )  # fmt: skip
    pd.testing.assert_frame_equal(table.drop(columns="seconds"), one_by_one.drop(columns="seconds"))


# ---------------------------------------------------------------- scaling
def test_scaling_sweep_measures_vilamp_and_caps_dense(assets, models, cache):
    towers, reader = models
    long = SimpleNamespace(n_frames=[128], methods=["vilamp"], videos=1)
    # dense at 64 frames: 1026 tokens, 2 heads -> 8.4 MB; at 128: 33.6 MB (over the 20 MB cap)
    evaluation = SimpleNamespace(
        n_frames=[64], long=long, scale_frames=128, dense_memory_cap_gb=0.02
    )
    table = scaling_sweep(
        assets, DATA, towers, reader, DKS, DFM, cache, evaluation, 2, np.random.default_rng(0)
    )
    rows = table.set_index(["method", "n_frames"])
    assert rows.loc[("vilamp", 64), "visual_tokens"] == 3 * 16 + 61 + 1
    assert rows.loc[("vilamp", 128), "status"] == "ok"
    assert rows.loc[("dense", 64), "status"] == "ok"
    assert rows.loc[("dense", 128), "status"] == OOM
    assert rows.loc[("dense", 128), "visual_tokens"] == 128 * 16 + 1
    assert (table.patches_per_frame == 16).all()
    assert rows.loc[("dense", 128), "predicted_attention_gb"] == pytest.approx(
        predicted_attention_gb(128 * 16 + 2, 2)
    )
    # quadratic extrapolation from the largest measured dense run
    ratio = (2049 / 1025) ** 2
    assert rows.loc[("dense", 128), "seconds_extrapolated"] == pytest.approx(
        rows.loc[("dense", 64), "seconds"] * ratio
    )
    ok = table[table.status == "ok"]
    assert ok.peak_rss_gb.gt(0).all() and ok.seconds.gt(0).all()
    # ViLAMP's attention buffer is predicted from its own sequence (+ the question token), not dense's
    assert rows.loc[("vilamp", 64), "predicted_attention_gb"] == pytest.approx(
        predicted_attention_gb(3 * 16 + 61 + 2, 2)
    )
    assert ok.added_rss_gb.ge(0).all() and (ok.added_rss_gb <= ok.peak_rss_gb).all()
    assert set(ok.correct) <= {0.0, 1.0}
    # only the capped dense rows get an extrapolated time; measured rows keep their own
    assert table[table.status == "ok"].seconds_extrapolated.isna().all()
    assert ok.peak_gpu_gb.isna().all()  # CPU: no GPU high-water mark


# ---------------------------------------------------------------- distillation
def _encoded():
    from paper_pipelines.pipelines.vilamp.distillation import Encoded

    g = torch.Generator().manual_seed(0)
    return Encoded(
        patches=torch.randn(5, 2, 2, generator=g),
        frame_emb=torch.randn(5, 3, generator=g),
        query_emb=torch.randn(3, generator=g),
    )


def test_visual_sequence_order_kind_and_time():
    from paper_pipelines.pipelines.vilamp.distillation import visual_sequence

    enc = _encoded()
    p = enc.patches
    newline = torch.zeros(2)
    stub = SimpleNamespace(newline=newline, merging=None)
    tokens, time, kind = visual_sequence("dks_meanpool", enc, [1, 3], stub, DFM)
    expected = torch.stack([p[0].mean(0), p[1, 0], p[1, 1], p[2].mean(0), p[3, 0], p[3, 1],
                            p[4].mean(0), newline])  # fmt: skip
    assert torch.allclose(tokens, expected, atol=1e-6)  # straight-through weights are 1
    assert kind.tolist() == [2, 1, 1, 2, 1, 1, 2, 2]
    assert torch.allclose(time, torch.tensor([0.0, 0.2, 0.2, 0.4, 0.6, 0.6, 0.8, 1.0]))
    tokens, _, kind = visual_sequence("uniform", enc, [1, 3], stub, DFM)
    assert torch.equal(tokens, torch.stack([p[1, 0], p[1, 1], p[3, 0], p[3, 1], newline]))
    assert kind.tolist() == [1, 1, 1, 1, 2]
    tokens, _, _ = visual_sequence("dks_drop", enc, [1, 3], stub, DFM)
    assert tokens.shape == (5, 2)
    # respool: each non-keyframe compared with its reference keyframe (frame 0 with itself)
    from paper_pipelines.pipelines.vilamp.merging import distinctiveness_pool

    tokens, _, _ = visual_sequence("dks_respool", enc, [1, 3], stub, DFM)
    assert torch.allclose(tokens[3], distinctiveness_pool(p[2:3], p[1:2])[0], atol=1e-6)
    assert torch.allclose(tokens[0], distinctiveness_pool(p[0:1], p[0:1])[0], atol=1e-6)
    stub = _dfm_stub()
    tokens, _, _ = visual_sequence("vilamp", enc, [1, 3], stub, DFM)
    merged = stub.merging(p[[2]], p[[1]], enc.query_emb)
    assert torch.allclose(tokens[3], merged[0], atol=1e-6) and tokens.shape == (8, 2)


def _dfm_stub():
    from paper_pipelines.pipelines.vilamp.merging import DifferentialFeatureMerging

    torch.manual_seed(0)
    return SimpleNamespace(newline=torch.zeros(2), merging=DifferentialFeatureMerging(2, 3))


def test_choose_keyframes_caches_dks_and_refuses_unknown_methods():
    from paper_pipelines.pipelines.vilamp.distillation import choose_keyframes

    enc = _encoded()
    cache = {}
    keys = choose_keyframes("dks_drop", enc, 2, DKS, cache)
    assert cache["dks"] == keys and len(keys) == 2
    assert choose_keyframes("vilamp", enc, 2, DKS, {"dks": [0, 4]}) == [0, 4]
    assert choose_keyframes("dense", enc, 2, DKS) == [0, 1, 2, 3, 4]
    relevance = F.cosine_similarity(enc.frame_emb, enc.query_emb[None], dim=-1)
    assert choose_keyframes("relevance_topk", enc, 2, DKS) == sorted(
        torch.topk(relevance, 2).indices.tolist()
    )
    with pytest.raises(ValueError, match="unknown method 'llama_vid'"):
        choose_keyframes("llama_vid", enc, 2, DKS)
