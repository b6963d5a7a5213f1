"""The paper-scale path: ResNet specialists (transformers' ResNetModel) from checkpoints, key-mapped from
torchvision / mmcls / mmdet layouts, and CIFAR-100 from a local folder, on a tiny random ResNet and a fake
40-image CIFAR folder (CPU, no download, a few seconds)."""

from __future__ import annotations

import functools

import numpy as np
import pytest
import torch

from paper_pipelines.common.params import ParameterError, check_parameters
from paper_pipelines.datasets import CifarFolderDataset, ResNetCheckpointDataset
from paper_pipelines.pipeline_registry import paper_slugs
from paper_pipelines.pipelines.disc import cifar, create_pipeline, nodes, resnet
from paper_pipelines.pipelines.disc.collaboration import CentralModel
from paper_pipelines.pipelines.disc.parameters import (
    DataParams,
    EvaluationParams,
    ExpertParams,
    ProbeParams,
    ResNetParams,
    RuntimeParams,
    SocialParams,
    VariantsParams,
    check_across_blocks,
)
from paper_pipelines.pipelines.disc.report import SOCIAL_RUNS
from tests.kedro_helpers import PROJECT_ROOT
from tests.test_vision_folders import write_fake_cifar

TINY = ResNetParams(embedding_size=8, hidden_sizes=[8, 16, 32, 64], depths=[1, 1, 1, 1])
# a stage-0 shortcut (torchvision's layer1.0.downsample) and a second block in layer2
TINY_SHORTCUT = ResNetParams(embedding_size=8, hidden_sizes=[16, 32, 64, 128], depths=[1, 2, 1, 1])
MEAN, STD = [123.675, 116.28, 103.53], [58.395, 57.12, 57.375]


def tiny_specialist(values=TINY, task="cls", dtype="float32", seed=0):
    torch.manual_seed(seed)
    config = resnet.resnet_config(values.model_dump())
    return resnet.ResNetSpecialist(config, task, 4, 32, MEAN, STD, dtype).eval()


def torchvision_layout(model: resnet.ResNetSpecialist) -> dict[str, torch.Tensor]:
    """The HF backbone's own weights under torchvision's names (the inverse map), plus an fc head."""
    state = {resnet.hf_to_torchvision(k): v.clone() for k, v in model.backbone.state_dict().items()}
    state["fc.weight"] = torch.zeros(10, model.feature_dim)
    state["fc.bias"] = torch.zeros(10)
    return state


def randomise_bn_(model: torch.nn.Module) -> torch.nn.Module:
    """Non-trivial BN statistics, so a mis-mapped running mean would change the outputs."""
    g = torch.Generator().manual_seed(1)
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.running_mean.copy_(torch.randn(m.running_mean.shape, generator=g) * 0.1)
            m.running_var.copy_(torch.rand(m.running_var.shape, generator=g) + 0.5)
            m.weight.data.copy_(torch.rand(m.weight.shape, generator=g) + 0.5)
    return model


def images(n=3, seed=0):
    return torch.as_tensor(
        np.random.default_rng(seed).integers(0, 256, (n, 3, 32, 32), dtype=np.uint8)
    )


# ----------------------------------------------------------------------------- the specialist
def test_resnet_layout_and_shapes_follow_the_config():
    model = tiny_specialist()
    assert model.layout == {"layer1": (8, 4), "layer2": (16, 8), "layer3": (32, 16)}
    assert model.feature_dim == 64 and model.head_cls.out_features == 4
    out = model.stages(images())
    assert [tuple(out[k].shape) for k in ("layer1", "layer2", "layer3")] == [
        (3, 8, 8, 8), (3, 16, 4, 4), (3, 32, 2, 2),
    ]  # fmt: skip
    assert out["pre_fc"].shape == (3, 64) and out["pre_fc"].dtype == torch.float32
    assert tiny_specialist(task="box").head_box.out_features == 4


def test_resnet50_layout_is_256_512_1024_at_strides_4_8_16():
    config = resnet.resnet_config(ResNetParams().model_dump())
    assert resnet.stage_strides(config) == [4, 8, 16, 32]
    assert list(config.hidden_sizes[:3]) == [256, 512, 1024] and config.hidden_sizes[3] == 2048


def test_specialist_is_resnetmodel_on_resized_normalised_input():
    """pre_fc = ResNetModel's pooled output on the input resized to input_size and normalised."""
    model = randomise_bn_(tiny_specialist())
    config = resnet.resnet_config(TINY.model_dump())
    small = resnet.ResNetSpecialist(config, "cls", 4, 64, MEAN, STD).eval()
    small.load_state_dict(model.state_dict())
    x = images(2)
    big = torch.nn.functional.interpolate(x.float(), size=(64, 64), mode="bilinear")
    norm = (big - torch.tensor(MEAN).view(1, 3, 1, 1)) / torch.tensor(STD).view(1, 3, 1, 1)
    ref = model.backbone(norm).pooler_output.flatten(1)
    torch.testing.assert_close(small(x), ref, rtol=0, atol=1e-5)


def test_central_model_on_resnet_specialists_starts_as_the_expert():
    main, aux = tiny_specialist(seed=0), tiny_specialist(task="box", seed=1)
    central = CentralModel(main, aux, ["layer1", "layer2", "layer3"], "feature").eval()
    out = central.branches(images())
    torch.testing.assert_close(out["p_main"], main(images()), rtol=0, atol=0)
    torch.testing.assert_close(out["w_main"] + out["w_aux"], torch.ones(3))


# ----------------------------------------------------------------------------- the key map
@pytest.mark.parametrize(
    ("hf", "tv"),
    [
        ("embedder.embedder.convolution.weight", "conv1.weight"),
        ("embedder.embedder.normalization.running_var", "bn1.running_var"),
        ("encoder.stages.0.layers.0.shortcut.convolution.weight", "layer1.0.downsample.0.weight"),
        ("encoder.stages.0.layers.0.shortcut.normalization.bias", "layer1.0.downsample.1.bias"),
        ("encoder.stages.1.layers.1.layer.0.convolution.weight", "layer2.1.conv1.weight"),
        ("encoder.stages.3.layers.2.layer.2.normalization.weight", "layer4.2.bn3.weight"),
    ],
)
def test_key_map_names(hf, tv):
    assert resnet.hf_to_torchvision(hf) == tv
    assert resnet.torchvision_to_hf(tv) == hf


@pytest.mark.parametrize(
    "wrap",
    [
        lambda s: s,  # torchvision
        lambda s: {"state_dict": {f"backbone.{k}": v for k, v in s.items() if not k.startswith("fc.")}
                   | {"head.fc.weight": torch.zeros(1)}},  # mmcls / INTERN
        lambda s: {"meta": {}, "state_dict": {f"backbone.{k}": v for k, v in s.items()}
                   | {"neck.lateral_convs.0.conv.weight": torch.zeros(1),
                      "rpn_head.rpn_cls.weight": torch.zeros(1),
                      "roi_head.bbox_head.fc_cls.weight": torch.zeros(1)}},  # mmdet detector
        lambda s: {k: v for k, v in s.items() if not k.endswith("num_batches_tracked")},
    ],
    ids=["torchvision", "mmcls", "mmdet", "old_torchvision"],
)  # fmt: skip
def test_a_torchvision_layout_checkpoint_loads_to_the_same_outputs(wrap, caplog):
    source = randomise_bn_(tiny_specialist(TINY_SHORTCUT, seed=0))
    fresh = tiny_specialist(TINY_SHORTCUT, seed=5)
    assert not torch.allclose(fresh(images()), source(images()))
    with caplog.at_level("INFO"):
        resnet.load_backbone_(fresh, {"state_dict": wrap(torchvision_layout(source))})
    torch.testing.assert_close(fresh(images()), source(images()), rtol=0, atol=0)
    assert "non-backbone keys ignored" in caplog.text


def test_the_key_map_is_strict_and_names_the_key():
    source = tiny_specialist(TINY_SHORTCUT)
    state = torchvision_layout(source)
    extra = dict(state, **{"layer2.5.conv1.weight": torch.zeros(1)})
    with pytest.raises(KeyError, match=r"'layer2\.5\.conv1\.weight'"):
        resnet.load_backbone_(tiny_specialist(TINY_SHORTCUT), extra)
    missing = {k: v for k, v in state.items() if k != "layer1.0.downsample.0.weight"}
    with pytest.raises(KeyError, match=r"shortcut\.convolution\.weight"):
        resnet.load_backbone_(tiny_specialist(TINY_SHORTCUT), missing)
    with pytest.raises(KeyError, match=r"'backbone\.bogus\.weight'"):
        resnet.load_backbone_(
            tiny_specialist(TINY_SHORTCUT),
            {f"backbone.{k}": v for k, v in state.items()}
            | {"backbone.bogus.weight": torch.ones(1)},
        )
    wide = dict(state, **{"conv1.weight": torch.zeros(8, 3, 3, 3)})
    with pytest.raises(ValueError, match=r"embedder\.embedder\.convolution\.weight has shape"):
        resnet.load_backbone_(tiny_specialist(TINY_SHORTCUT), wide)


def test_a_transformers_folder_brings_its_own_config(tmp_path):
    source = randomise_bn_(tiny_specialist(TINY_SHORTCUT))
    source.backbone.save_pretrained(tmp_path / "hf")
    checkpoint = ResNetCheckpointDataset(path=str(tmp_path / "hf")).load()
    values = resnet.config_values(checkpoint, TINY.model_dump())  # the folder's config wins
    assert list(values["hidden_sizes"]) == [16, 32, 64, 128]
    fresh = tiny_specialist(TINY_SHORTCUT, seed=3)
    resnet.load_backbone_(fresh, checkpoint)
    torch.testing.assert_close(fresh(images()), source(images()), rtol=0, atol=0)


# ----------------------------------------------------------------------------- CIFAR-100 pools
def test_labelled_list_text_and_its_errors():
    assert cifar.parse_index_list("# train_10p\n3 12\n0,\n\n7\n", 10).tolist() == [3, 0, 7]
    assert cifar.parse_index_list([1, 2], 10).tolist() == [1, 2]
    for text, message in (
        ("a.png 3\n", "must start with a training index"),
        ("11\n", "index 11 is outside the 10"),
        ("1\n1\n", "repeats an index"),
        ("# nothing\n", "holds no index"),
    ):
        with pytest.raises(ValueError, match=message):
            cifar.parse_index_list(text, 10)


@pytest.fixture(scope="module")
def fake_cifar(tmp_path_factory):
    root = tmp_path_factory.mktemp("cifar")
    write_fake_cifar(root)
    return CifarFolderDataset(path=str(root)).load()


def test_cifar_pools_follow_the_released_protocol(fake_cifar):
    """Downstream = the labelled list (labelled) then the test set; social = the rest of train."""
    society = cifar.cifar_society(fake_cifar, "0\n5\n9\n", 0.1, None, ["cls"], 0)
    down = society["downstream"]
    assert down["labelled"].tolist() == [True] * 3 + [False] * 12
    np.testing.assert_array_equal(down["images"][:3], fake_cifar["train"]["images"][[0, 5, 9]])
    np.testing.assert_array_equal(down["labels"][3:], fake_cifar["test"]["labels"])
    assert society["digits"]["social"] == sorted(set(range(40)) - {0, 5, 9})
    assert society["social"]["images"].dtype == np.uint8 and society["tasks"] == ["cls"]
    drawn = cifar.cifar_society(fake_cifar, None, 0.25, 20, ["cls"], 0)
    labelled = np.asarray(drawn["digits"]["labelled"])
    assert np.bincount(fake_cifar["train"]["labels"][labelled]).tolist() == [2, 2, 2, 2]
    assert len(drawn["social"]["labels"]) == 20 and not set(drawn["digits"]["social"]) & set(
        labelled
    )
    with pytest.raises(ValueError, match="disc.data.cifar.social = 39 exceeds the 32"):
        cifar.cifar_society(fake_cifar, None, 0.25, 39, ["cls"], 0)
    with pytest.raises(ValueError, match="leaves class 0 without a labelled"):
        cifar.cifar_society(fake_cifar, None, 0.05, None, ["cls"], 0)


# ----------------------------------------------------------------------------- parameters
@functools.cache
def _paper_parameters() -> dict:
    from kedro.config import OmegaConfigLoader

    loader = OmegaConfigLoader(
        str(PROJECT_ROOT / "conf"), base_env="base", default_run_env="paper",
        merge_strategy={"parameters": "soft"},
    )  # fmt: skip
    return loader["parameters"]["disc"]


def test_the_paper_environment_validates_and_runs_resnet50_on_cifar100():
    params = _paper_parameters()
    check_parameters({"disc": params}, [create_pipeline()], paper_slugs())
    assert params["data"]["source"] == "cifar100" and params["expert"]["source"] == "checkpoint"
    assert params["evaluation"]["tasks"] == ["cls"]
    expert = ExpertParams.model_validate(params["expert"])
    assert (expert.input_size, expert.mean, expert.std) == (224, MEAN, STD)
    assert expert.resnet == ResNetParams()  # ResNet-50


def test_paper_scale_combinations_name_the_key():
    paper = {
        "data": DataParams(source="cifar100"),
        "expert": ExpertParams(source="checkpoint", backbone="resnet50"),
        "evaluation": EvaluationParams(tasks=["cls"]),
    }
    check_across_blocks(paper)
    with pytest.raises(ValueError, match="torchvision's Faster R-CNN"):
        check_across_blocks(paper | {"evaluation": EvaluationParams()})
    with pytest.raises(ValueError, match="cifar100 needs disc.expert.source = checkpoint"):
        check_across_blocks(paper | {"expert": ExpertParams()})
    with pytest.raises(ValueError, match="checkpoint needs disc.data.source = cifar100"):
        check_across_blocks(paper | {"data": DataParams()})
    with pytest.raises(
        ValueError, match="disc.expert.source = checkpoint with disc.expert.backbone"
    ):
        ExpertParams(source="checkpoint")
    with pytest.raises(ValueError, match="repeat a task"):
        EvaluationParams(tasks=["cls", "cls"])


def test_the_paper_scale_error_stops_the_run_before_any_node():
    params = _paper_parameters() | {"evaluation": {"tasks": ["cls", "box"]}}
    with pytest.raises(ParameterError, match="Faster R-CNN"):
        check_parameters({"disc": params}, [create_pipeline()], paper_slugs())


# ----------------------------------------------------------------------------- end to end (nodes)
def _checkpoints(tmp_path):
    """disc.cls_checkpoint as a transformers folder, disc.det_checkpoint as an mmdet-style file."""
    cls_model = randomise_bn_(tiny_specialist(seed=0))
    cls_model.backbone.save_pretrained(tmp_path / "cls")
    det_model = randomise_bn_(tiny_specialist(task="box", seed=1))
    det = {f"backbone.{k}": v for k, v in torchvision_layout(det_model).items()}
    torch.save(
        {"state_dict": det | {"rpn_head.rpn_cls.weight": torch.zeros(1)}}, tmp_path / "det.pth"
    )
    return (
        ResNetCheckpointDataset(path=str(tmp_path / "cls")).load(),
        ResNetCheckpointDataset(path=str(tmp_path / "det.pth")).load(),
    )


def _run_paper_scale(fake_cifar, tmp_path, dtype, runs):
    data = DataParams(source="cifar100", cifar={"social": 24})
    expert = ExpertParams(
        source="checkpoint", backbone="resnet50", resnet=TINY, input_size=32, dtype=dtype
    )
    probe, evaluation = (
        ProbeParams(label_frac=0.25, max_iter=200),
        EvaluationParams(replicates=2, tasks=["cls"]),
    )
    social, runtime, variants = (
        SocialParams(epochs=1, batch=8),
        RuntimeParams(device="cpu"),
        VariantsParams(),
    )
    with pytest.raises(ValueError, match="catalog entry disc.cifar100"):
        nodes.render_pools(None, data, probe, evaluation, 0, None, None)
    pools = nodes.render_pools(None, data, probe, evaluation, 0, fake_cifar, None)
    ckpt_c, ckpt_d = _checkpoints(tmp_path)
    with pytest.raises(ValueError, match="catalog entry disc.cls_checkpoint"):
        nodes.train_expert_cls(pools, expert, 0, runtime, None)
    expert_c = nodes.train_expert_cls(pools, expert, 0, runtime, ckpt_c)
    expert_d = nodes.train_expert_det(pools, expert, 0, runtime, ckpt_d)
    assert expert_c["n_classes"] == 4 and len(expert_c["states"]) == 1
    records = {"cls": (expert_c, expert_d), "box": (expert_d, expert_c)}
    scores = []
    for task, name in SOCIAL_RUNS:
        main, aux = records[task]
        aux = main if name == "self" else aux
        variant = getattr(getattr(variants, task), name)
        if (task, name) not in runs:  # not exercised here: an empty record of the right shape
            scores.append(
                {"task": task, "scores": [float("nan")] * 2, "w_main": [], "train_seconds": [0.0]}
            )
            continue
        social_model = nodes.train_collaboration(
            main, aux, pools, variant, social, expert, 0, runtime
        )
        scores.append(
            nodes.probe_collaboration(
                social_model, main, aux, pools, variant, probe, expert, runtime
            )
        )
    baseline = nodes.probe_experts(expert_c, expert_d, pools, probe, expert)
    results = nodes.tabulate_results(variants, baseline, *scores)
    metrics = nodes.summarise_metrics(results, evaluation)
    return pools, baseline, scores, results, metrics


RUNS = {("cls", "self"), ("cls", "disc_h"), ("cls", "disc"), ("box", "disc_h")}


def test_the_paper_scale_path_runs_node_by_node(fake_cifar, tmp_path):
    pools, baseline, scores, results, metrics = _run_paper_scale(
        fake_cifar, tmp_path, "float32", RUNS
    )
    assert len(pools) == 2
    by_run = dict(zip(SOCIAL_RUNS, scores, strict=True))
    for run in (("cls", "self"), ("cls", "disc_h"), ("cls", "disc")):
        assert all(0 <= s <= 1 for s in by_run[run]["scores"])
    assert len(by_run[("cls", "disc")]["w_main"]) == 2 * 12  # the test images of both replicates
    assert np.isnan(by_run[("box", "disc_h")]["scores"]).all()  # detection: not at paper scale here
    assert all(0 <= s <= 1 for s in baseline["upe_cls"] + baseline["concat_cls"])
    assert np.isnan(baseline["upe_box"]).all()
    assert 0 <= metrics["cls_acc_disc"] <= 1 and metrics["box_acc_upe"] is None
    assert nodes.check_claims(metrics).shape[0] > 0


def test_bfloat16_backbones_run_end_to_end(fake_cifar, tmp_path):
    runs = {("cls", "disc")}
    _, baseline, scores, _, metrics = _run_paper_scale(fake_cifar, tmp_path, "bfloat16", runs)
    assert 0 <= metrics["cls_acc_disc"] <= 1 and 0 <= baseline["upe_cls"][0] <= 1
    specialist = tiny_specialist(dtype="bfloat16")
    assert specialist.backbone.embedder.embedder.convolution.weight.dtype == torch.bfloat16
    assert specialist(images()).dtype == torch.float32


# ----------------------------------------------------------------------------- small pieces, by hand
def test_stage_strides_with_and_without_a_downsampling_first_stage():
    # the embedder halves twice (stride 4); each later stage halves again, the first only when asked
    plain = resnet.resnet_config(TINY.model_dump())
    assert resnet.stage_strides(plain) == [4, 8, 16, 32]
    first = resnet.resnet_config(TINY.model_dump() | {"downsample_in_first_stage": True})
    assert resnet.stage_strides(first) == [8, 16, 32, 64]


def test_a_resnet_needs_four_stages():
    config = resnet.resnet_config(
        TINY.model_dump() | {"hidden_sizes": [8, 16, 32], "depths": [1, 1, 1]}
    )
    with pytest.raises(ValueError, match=r"hidden_sizes needs 4 stages .*got \[8, 16, 32\]"):
        resnet.ResNetSpecialist(config, "cls", 4, 32, MEAN, STD)


def test_input_adapter_normalises_in_0_255_and_resizes_only_other_sizes():
    adapter = resnet.InputAdapter(2, [100.0, 0.0, 50.0], [2.0, 1.0, 10.0], torch.float32)
    x = torch.tensor([110.0, 3.0, 70.0]).view(1, 3, 1, 1).expand(1, 3, 2, 2).to(torch.uint8)
    out = adapter(x)
    # (x - mean) / std per channel: (110 - 100) / 2, 3 / 1, (70 - 50) / 10
    assert torch.equal(out[0, :, 0, 0], torch.tensor([5.0, 3.0, 2.0])) and out.shape == (1, 3, 2, 2)
    # a 4 x 4 input is resized to 2 x 2 (bilinear, align_corners=False: the 2 x 2 block means here)
    ramp = torch.arange(16.0).view(1, 1, 4, 4).expand(1, 3, 4, 4)
    small = adapter(ramp)[0, 1]
    assert torch.allclose(small, torch.tensor([[2.5, 4.5], [10.5, 12.5]]))
    half = resnet.InputAdapter(2, [0.0] * 3, [1.0] * 3, torch.bfloat16)
    assert half(ramp).dtype == torch.bfloat16


def test_cast_runs_the_piece_in_its_dtype_and_hands_float32_on():
    seen = []

    class Probe(torch.nn.Module):
        def forward(self, x):
            seen.append(x.dtype)
            return x * 2

    out = resnet.Cast(Probe(), torch.bfloat16)(torch.ones(2))
    assert seen == [torch.bfloat16] and out.dtype == torch.float32 and torch.equal(out, torch.full((2,), 2.0))  # fmt: skip  # noqa: E501


def test_hf_to_torchvision_refuses_a_non_backbone_key():
    with pytest.raises(KeyError, match="not a ResNetModel backbone key: pooler.x"):
        resnet.hf_to_torchvision("pooler.x")
    assert resnet.torchvision_to_hf("fc.weight") is None


def test_unwrap_checkpoint_finds_the_state_under_state_dict_or_model():
    inner = {"conv1.weight": torch.zeros(1)}
    assert resnet.unwrap_checkpoint({"meta": {}, "state_dict": inner}) is inner
    assert resnet.unwrap_checkpoint({"model": inner}) is inner
    # a non-mapping under "model" (a module) is not a state dict: the object itself is returned
    obj = {"model": torch.nn.Linear(1, 1)}
    assert resnet.unwrap_checkpoint(obj) is obj
    assert resnet.unwrap_checkpoint(inner) is inner


@pytest.mark.parametrize("prefix", ["module.", "module.backbone."])
def test_data_parallel_prefixes_load_too(prefix):
    source = randomise_bn_(tiny_specialist(TINY_SHORTCUT, seed=0))
    fresh = tiny_specialist(TINY_SHORTCUT, seed=5)
    state = {f"{prefix}{k}": v for k, v in torchvision_layout(source).items()}
    resnet.load_backbone_(fresh, state)
    torch.testing.assert_close(fresh(images()), source(images()), rtol=0, atol=0)


def test_the_log_line_counts_mapped_and_ignored_keys(caplog):
    source = tiny_specialist(TINY_SHORTCUT)
    tv = torchvision_layout(source)
    n_backbone = len(source.backbone.state_dict())
    state = {f"backbone.{k}": v for k, v in tv.items()} | {"neck.a": torch.zeros(1), "rpn.b": torch.zeros(1)}  # fmt: skip  # noqa: E501
    with caplog.at_level("INFO"):
        mapped = resnet.backbone_state(state, list(source.backbone.state_dict()))
    assert len(mapped) == n_backbone
    # 2 keys outside backbone. and torchvision's fc.weight / fc.bias under it
    assert f"{n_backbone} backbone keys mapped from under 'backbone.', 4 non-backbone keys ignored" in caplog.text  # fmt: skip  # noqa: E501
    caplog.clear()
    with caplog.at_level("INFO"):
        resnet.backbone_state(tv, list(source.backbone.state_dict()))
    assert f"{n_backbone} backbone keys mapped, 2 non-backbone keys ignored" in caplog.text


def test_a_checkpoint_missing_many_keys_names_five_and_the_count():
    source = tiny_specialist(TINY_SHORTCUT)
    target = list(source.backbone.state_dict())
    state = {"conv1.weight": torchvision_layout(source)["conv1.weight"]}
    n_missing = len([k for k in target if not k.endswith("num_batches_tracked")]) - 1
    with pytest.raises(KeyError, match=rf"\.\.\. \({n_missing} in all\)"):
        resnet.backbone_state(state, target)
    few = {k: v for k, v in torchvision_layout(source).items() if k != "bn1.bias"}
    with pytest.raises(
        KeyError, match=r"\['embedder\.embedder\.normalization\.bias'\] \(1 in all\)"
    ):
        resnet.backbone_state(few, target)


def test_a_transformers_folder_of_another_depth_is_refused():
    from transformers import ResNetModel

    deeper = ResNetModel(resnet.resnet_config(TINY_SHORTCUT.model_dump()))
    with pytest.raises(KeyError, match="unknown here"):
        resnet.load_backbone_(tiny_specialist(TINY), {"model": deeper})


def test_config_values_from_a_folder_or_from_the_parameters():
    from transformers import ResNetModel

    values = TINY_SHORTCUT.model_dump()
    folder = {"model": ResNetModel(resnet.resnet_config(values))}
    got = resnet.config_values(folder, TINY.model_dump())
    assert got == {
        "embedding_size": 8, "hidden_sizes": [16, 32, 64, 128], "depths": [1, 2, 1, 1],
        "layer_type": "bottleneck", "downsample_in_first_stage": False, "num_channels": 3,
    }  # fmt: skip
    assert resnet.config_values(None, values) == values
    assert resnet.config_values({"state_dict": {}}, values) == values


def test_build_resnet_specialist_restores_the_state_frozen_in_eval_mode():
    source = randomise_bn_(tiny_specialist(TINY))
    spec = {"config": TINY.model_dump(), "task": "box", "n_classes": 4, "input_size": 32,
            "mean": MEAN, "std": STD, "dtype": "float32"}  # fmt: skip
    built = resnet.build_resnet_specialist(spec, source.state_dict() | {
        "head_box.weight": torch.zeros(4, 64), "head_box.bias": torch.zeros(4)})  # fmt: skip
    assert not built.training and not any(p.requires_grad for p in built.parameters())
    torch.testing.assert_close(built(images()), source(images()), rtol=0, atol=0)
    assert built.head_box.out_features == 4 and built.head_cls.out_features == 4
    fresh = resnet.build_resnet_specialist(spec)
    assert not fresh.training


def test_labelled_list_bounds_are_zero_and_n_train_minus_one():
    assert cifar.parse_index_list("0\n9\n", 10).tolist() == [0, 9]
    with pytest.raises(ValueError, match="index 10 is outside the 10"):
        cifar.parse_index_list("10\n", 10)
    with pytest.raises(ValueError, match="index -1 is outside"):
        cifar.parse_index_list([-1], 10)
    assert cifar.parse_index_list("4 # note # more\n", 10).tolist() == [4]
    # a comment line with a second "#" is still all comment: the text before the first "#" counts
    assert cifar.parse_index_list("# train_10p # v2\n3\n", 10).tolist() == [3]
    assert cifar.parse_index_list(np.array([3, 1]), 10).dtype == np.int64


def test_cifar_pools_layout_boxes_and_the_seeded_social_draw(fake_cifar):
    from paper_pipelines.common.runtime import substream

    society = cifar.cifar_society(fake_cifar, None, 0.25, 32, ["cls"], 3)
    # social = 32 = every training image outside the labelled 8 is allowed; sorted, no repeat
    assert len(society["digits"]["social"]) == 32 and society["seed"] == 3
    assert society["source"] == "cifar100"
    drawn = cifar.cifar_society(fake_cifar, "0\n1\n", 0.25, 20, ["cls"], 3)
    rest = np.setdiff1d(np.arange(40), [0, 1])
    expect = np.sort(substream(3, "social").choice(rest, size=20, replace=False))
    assert drawn["digits"]["social"] == expect.tolist()
    assert len(set(drawn["digits"]["social"])) == 20
    for name in ("social", "downstream"):
        part = drawn[name]
        # CIFAR has no boxes: one full-image box (centre 0.5, 0.5, size 1, 1) per image
        assert part["boxes"].dtype == np.float32 and part["labels"].dtype == np.int64
        assert (part["boxes"] == np.array([0.5, 0.5, 1.0, 1.0], np.float32)).all()
        assert part["boxes"].shape == (len(part["labels"]), 4)
    labelled = np.asarray(cifar.cifar_society(fake_cifar, None, 0.25, None, ["cls"], 3)["digits"]["labelled"])  # fmt: skip  # noqa: E501
    mask = cifar.labelled_split(fake_cifar["train"]["labels"], 0.25, substream(3, "labelled"))
    assert labelled.tolist() == np.flatnonzero(mask).tolist()
