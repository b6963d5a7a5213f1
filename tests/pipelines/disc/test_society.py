"""The replicate glue (society.py) on a tiny two-replicate society of random 8x8 canvases."""

import time

import numpy as np
import pytest
import torch

from paper_pipelines.common.params import validate_params
from paper_pipelines.common.runtime import substream, substream_seed
from paper_pipelines.pipelines.disc import society
from paper_pipelines.pipelines.disc.experts import pooled_features, train_specialist
from paper_pipelines.pipelines.disc.parameters import (
    ExpertParams,
    ProbeParams,
    SocialParams,
    VariantParams,
)
from paper_pipelines.pipelines.disc.probes import probe_boxes, probe_classification
from paper_pipelines.pipelines.disc.socialisation import train_central

EXPERT = validate_params(
    ExpertParams, {"stem": 3, "channels": [4, 5, 6], "epochs": 1, "batch": 16}, "e"
)
SOCIAL = SocialParams(epochs=1, batch=16)
PROBE = ProbeParams(max_iter=100)


def pool(n, seed, nan=False):
    rng = np.random.default_rng(seed)
    images = rng.standard_normal((n, 1, 8, 8)).astype(np.float32)
    if nan:
        images[:] = np.nan
    return {
        "images": images,
        "labels": (np.arange(n) % 10).astype(np.int64),
        "boxes": rng.uniform(0.3, 0.7, (n, 4)).astype(np.float32),
    }


def replicate(seed, nan_det=False):
    down = pool(40, seed + 3)
    down["labelled"] = np.arange(40) < 20
    return {
        "expert_c": pool(16, seed),
        "expert_d": pool(16, seed + 1, nan=nan_det),
        "social": pool(16, seed + 2),
        "downstream": down,
    }


@pytest.fixture(scope="module")
def pools():
    return [replicate(0), replicate(0)]  # identical pools: replicates differ only by seed + r


@pytest.fixture(scope="module")
def records(pools):
    return society.train_experts(pools, "cls", EXPERT, 0, "cpu"), society.train_experts(
        pools, "box", EXPERT, 0, "cpu"
    )


def test_each_expert_trains_on_its_own_pool():
    pools = [replicate(0, nan_det=True)]
    cls = society.train_experts(pools, "cls", EXPERT, 0, "cpu")
    assert cls["task"] == "cls" and len(cls["states"]) == 1 and len(cls["seconds"]) == 1
    assert all(torch.isfinite(v.float()).all() for v in cls["states"][0].values())
    det = society.train_experts(pools, "box", EXPERT, 0, "cpu")
    assert not all(torch.isfinite(v.float()).all() for v in det["states"][0].values())


def test_replicate_r_runs_at_seed_plus_r(pools, records):
    cls, _ = records
    w0, w1 = (s["layer1.0.weight"] for s in cls["states"])
    assert not torch.equal(w0, w1)
    shifted = society.train_experts(pools[:1], "cls", EXPERT, 1, "cpu")
    assert torch.equal(shifted["states"][0]["layer1.0.weight"], w1)
    assert cls["seconds"][0] >= 0


def test_specialist_rebuilds_the_saved_replicate(pools, records):
    cls, _ = records
    model = society.specialist(cls, 1, EXPERT)
    assert torch.equal(model.state_dict()["layer2.0.weight"], cls["states"][1]["layer2.0.weight"])
    assert model.task == "cls" and not model.training


def test_train_and_score_a_selective_variant(pools, records):
    cls, det = records
    variant = VariantParams(selective="feature", lam=0.3)
    trained = society.train_variant(cls, det, pools, variant, SOCIAL, EXPERT, 0, "cpu")
    assert trained["task"] == "cls" and trained["lam"] == [0.3, 0.3] and len(trained["states"]) == 2
    assert any(k.startswith("confid_aux.") for k in trained["states"][0])
    assert not torch.equal(
        trained["states"][0]["transfer.layer1.paths.layer1.1.weight"],
        trained["states"][1]["transfer.layer1.paths.layer1.1.weight"],
    )
    scored = society.score_variant(trained, cls, det, pools, variant, PROBE, EXPERT, "cpu")
    assert scored["task"] == "cls" and len(scored["scores"]) == 2
    assert all(0 <= s <= 1 for s in scored["scores"])
    assert len(scored["w_main"]) == 2 * 20 and all(0 < w < 1 for w in scored["w_main"])
    assert scored["train_seconds"] == trained["seconds"]
    # the score is the classification probe on the loaded social model's features
    central = society.build_central(cls, det, 1, EXPERT, variant, "cpu")
    central.load_state_dict(trained["states"][1])
    central.lam = 0.3
    down = pools[1]["downstream"]
    feats = pooled_features(central, down["images"])
    expected = probe_classification(feats, down["labels"], down["labelled"], 1.0, 100)
    assert scored["scores"][1] == pytest.approx(expected)
    w = society.selective_weight_values(central, down["images"][~down["labelled"]])
    assert scored["w_main"][20:] == pytest.approx(np.round(w, 5).tolist())


def test_box_variant_scores_boxes_and_has_no_weights(pools, records):
    cls, det = records
    variant = VariantParams()
    trained = society.train_variant(det, cls, pools[:1], variant, SOCIAL, EXPERT, 0, "cpu")
    assert trained["task"] == "box"
    scored = society.score_variant(trained, det, cls, pools[:1], variant, PROBE, EXPERT, "cpu")
    assert scored["w_main"] == []
    central = society.build_central(det, cls, 0, EXPERT, variant, "cpu")
    central.load_state_dict(trained["states"][0])
    central.lam = trained["lam"][0]
    down = pools[0]["downstream"]
    expected = probe_boxes(
        pooled_features(central, down["images"]), down["boxes"], down["labelled"], 1.0, 0.5
    )
    assert scored["scores"][0] == pytest.approx(expected)


def test_probe_scores_dispatch_on_the_task(pools):
    down = pools[0]["downstream"]
    feats = np.random.default_rng(0).standard_normal((40, 5))
    assert society.probe_scores(feats, down, "cls", PROBE) == probe_classification(
        feats, down["labels"], down["labelled"], PROBE.cls_C, PROBE.max_iter
    )
    assert society.probe_scores(feats, down, "box", PROBE) == probe_boxes(
        feats, down["boxes"], down["labelled"], PROBE.box_alpha, PROBE.iou_thr
    )


def test_baselines_probe_each_expert_and_the_concatenation(pools, records):
    cls, det = records
    out = society.score_baselines(cls, det, pools, PROBE, EXPERT)
    assert all(len(out[k]) == 2 for k in ("upe_cls", "concat_cls", "upe_box", "concat_box"))
    assert out["expert_c_seconds"] == cls["seconds"] and out["expert_d_seconds"] == det["seconds"]
    down = pools[1]["downstream"]
    f_c = pooled_features(society.specialist(cls, 1, EXPERT), down["images"])
    f_d = pooled_features(society.specialist(det, 1, EXPERT), down["images"])
    assert out["upe_cls"][1] == society.probe_scores(f_c, down, "cls", PROBE)
    assert out["upe_box"][1] == society.probe_scores(f_d, down, "box", PROBE)
    assert out["concat_cls"][1] == society.probe_scores(np.hstack([f_c, f_d]), down, "cls", PROBE)
    assert out["concat_box"][1] == society.probe_scores(np.hstack([f_d, f_c]), down, "box", PROBE)


def test_build_central_puts_the_model_on_the_device(records):
    cls, det = records
    central = society.build_central(cls, det, 0, EXPERT, VariantParams(selective="feature"), "meta")
    assert {p.device.type for p in central.parameters()} == {"meta"}


def test_experts_train_from_the_expert_stream_of_seed_plus_r(pools, records):
    # replicate r's expert is train_specialist on substream(seed + r, "expert", task): rebuildable alone
    cls, _ = records
    alone = train_specialist(
        pools[1]["expert_c"], "cls", EXPERT.stem, EXPERT.channels, EXPERT.epochs, EXPERT.lr,
        EXPERT.batch, EXPERT.det_cls_weight, EXPERT.box_beta, substream(1, "expert", "cls"),
    )  # fmt: skip
    assert all(torch.equal(v, cls["states"][1][k]) for k, v in alone.state_dict().items())


def test_variants_train_from_the_social_stream_of_seed_plus_r(pools, records):
    # the initial weights come from the "social_init" stream of seed + r and the minibatches from
    # its "social" stream: whatever drew from torch's global generator before does not matter
    cls, det = records
    variant = VariantParams()
    social = SocialParams(
        epochs=1, batch=4
    )  # several minibatches: their order is the stream's draw
    torch.manual_seed(123)
    trained = society.train_variant(cls, det, pools[:1], variant, social, EXPERT, 2, "cpu")
    torch.rand(7)  # a disturbed global generator
    again = society.train_variant(cls, det, pools[:1], variant, social, EXPERT, 2, "cpu")
    assert all(torch.equal(v, again["states"][0][k]) for k, v in trained["states"][0].items())
    torch.manual_seed(substream_seed(2, "social_init", "cls"))
    central = society.build_central(cls, det, 0, EXPERT, variant, "cpu")
    train_central(
        central, pools[0]["social"], "cls", variant, social.epochs, social.lr, social.batch,
        EXPERT.det_cls_weight, EXPERT.box_beta, substream(2, "social", "cls"),
    )  # fmt: skip
    assert all(torch.equal(v, trained["states"][0][k]) for k, v in central.state_dict().items())


def test_the_glue_builds_and_trains_every_model_on_the_requested_device(
    pools, records, monkeypatch
):
    # the device reaches every model the replicate loops build; "accel" stands in for an accelerator
    # name, mapped back to the CPU after it has been recorded
    cls, det = records
    seen = []
    real_build, real_train = society.build_central, society.train_specialist

    def build(main, aux, r, expert, variant, device):
        seen.append(("central", device))
        return real_build(main, aux, r, expert, variant, "cpu")

    def train(*args):
        seen.append(("expert", args[-1]))
        return real_train(*args[:-1], "cpu")

    monkeypatch.setattr(society, "build_central", build)
    monkeypatch.setattr(society, "train_specialist", train)
    started = time.perf_counter()
    experts = society.train_experts(pools[:1], "cls", EXPERT, 0, "accel")
    variant = VariantParams()
    middle = time.perf_counter()
    trained = society.train_variant(cls, det, pools[:1], variant, SOCIAL, EXPERT, 0, "accel")
    # and each record's seconds are the wall time of its replicate's training
    assert 0 < experts["seconds"][0] <= middle - started
    assert 0 < trained["seconds"][0] <= time.perf_counter() - middle
    society.score_variant(trained, cls, det, pools[:1], variant, PROBE, EXPERT, "accel")
    assert seen == [("expert", "accel"), ("central", "accel"), ("central", "accel")]


def test_a_missing_checkpoint_names_the_catalog_entry_and_the_dataset():
    for task, entry in (("cls", "disc.cls_checkpoint"), ("box", "disc.det_checkpoint")):
        with pytest.raises(ValueError, match=rf"catalog entry {entry} \(a ResNetCheckpointDataset with a local path, conf/paper/catalog/disc.yml\)"):  # fmt: skip  # noqa: E501
            society.checkpoint_expert(None, task, [], EXPERT, 0)
