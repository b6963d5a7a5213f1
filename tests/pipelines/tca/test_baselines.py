"""Baselines: stream bookkeeping, BN/Tent/T3A behaviour, and the source model staying untouched."""

from __future__ import annotations

import numpy as np
import torch

from paper_pipelines.pipelines.tca.baselines import (
    T3A,
    batch_slices,
    configure_tent,
    make_method,
    run_stream,
)
from paper_pipelines.pipelines.tca.metrics import state_fingerprint
from paper_pipelines.pipelines.tca.source_model import ResNet, SmallCNN, map_checkpoint_keys


def _model(seed: int = 0) -> SmallCNN:
    torch.manual_seed(seed)
    return SmallCNN(width=4, num_classes=10).eval()


def _stream(images, method, order, batch_size=16):
    return run_stream(
        method, images, order, batch_size=batch_size, min_last=10, prepare=lambda x: x, device="cpu"
    )


def test_batch_slices_merge_a_tail_smaller_than_the_class_count():
    assert batch_slices(130, 64, 10) == [slice(0, 64), slice(64, 130)]
    assert batch_slices(140, 64, 10) == [slice(0, 64), slice(64, 128), slice(128, 140)]
    assert batch_slices(5, 64, 10) == [slice(0, 5)]
    assert batch_slices(138, 64, 10)[-1] == slice(128, 138)  # a tail of exactly min_last stays
    assert batch_slices(70, 64, 10) == [slice(0, 70)]  # two batches merge into one


def test_outputs_come_back_in_sample_order():
    x = torch.rand(50, 1, 16, 16)
    model = _model()
    shuffled = _stream(
        x,
        make_method("source", model, tent_lr=1e-3, steps=1, t3a_filter_k=5),
        np.random.default_rng(0).permutation(50),
    )
    plain = _stream(
        x, make_method("source", model, tent_lr=1e-3, steps=1, t3a_filter_k=5), np.arange(50)
    )
    assert torch.allclose(shuffled.logits, plain.logits, atol=1e-5)
    assert shuffled.z.shape == (50, 16)


def test_bn_adaptation_uses_batch_statistics():
    x = torch.rand(64, 1, 16, 16) * 3 + 2  # strongly shifted inputs
    model = _model()
    src = _stream(
        x, make_method("source", model, tent_lr=1e-3, steps=1, t3a_filter_k=5), np.arange(64), 64
    )
    bn = _stream(
        x, make_method("bn", model, tent_lr=1e-3, steps=1, t3a_filter_k=5), np.arange(64), 64
    )
    # With batch statistics, each channel of the first BN output has zero mean over the batch, so the
    # embedding changes compared with running statistics.
    assert not torch.allclose(src.z, bn.z, atol=1e-3)


def test_tent_updates_only_norm_affine_and_leaves_the_source_untouched():
    model = _model()
    before = state_fingerprint(model)
    tent = make_method("tent", model, tent_lr=1e-2, steps=1, t3a_filter_k=5)
    head = tent.model.classifier.weight.detach().clone()
    conv = tent.model.featurizer[0].weight.detach().clone()
    bn_w = tent.model.featurizer[1].weight.detach().clone()
    _stream(torch.rand(64, 1, 16, 16), tent, np.arange(64))
    assert torch.equal(tent.model.classifier.weight, head)
    assert torch.equal(tent.model.featurizer[0].weight, conv)
    assert not torch.equal(tent.model.featurizer[1].weight, bn_w)
    assert state_fingerprint(model) == before


def test_tent_parameters_are_the_bn_affines():
    params = configure_tent(_model())
    assert len(params) == 6  # 3 BatchNorm layers x (weight, bias)


def test_t3a_keeps_at_most_k_supports_per_class():
    model = _model()
    t3a = T3A(model, filter_k=3)
    assert t3a.supports.shape == (10, 16)  # warm start: the head's weight rows
    x = torch.rand(40, 1, 16, 16)
    z, logits = t3a(x)
    counts = torch.bincount(t3a.labels.argmax(1), minlength=10)
    assert counts.max() <= 3
    assert logits.shape == (40, 10)
    # logits are cosine-normalised prototypes applied to z: |logit| <= ||z||
    assert (logits.abs() <= z.norm(dim=1, keepdim=True) + 1e-5).all()


def test_checkpoint_key_mapping_official_and_torchvision():
    model = ResNet(depth=18, num_classes=10)
    state = model.state_dict()
    tv = {k.replace("featurizer.", "").replace("classifier.", "fc."): v for k, v in state.items()}
    assert set(map_checkpoint_keys(tv)) == set(state)
    names = ["conv1", "bn1", "relu", "maxpool", "layer1", "layer2", "layer3", "layer4"]
    official = {}
    for k, v in state.items():
        if k.startswith("featurizer."):
            head, rest = k.removeprefix("featurizer.").split(".", 1)
            official[f"featurizer.{names.index(head)}.{rest}"] = v
        else:
            official[k] = v
    official["algorithm_res.fc.weight"] = torch.zeros(1)
    official["network.1.weight"] = state["classifier.weight"]
    assert set(map_checkpoint_keys(official)) == set(state)
