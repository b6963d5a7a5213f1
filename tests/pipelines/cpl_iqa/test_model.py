"""The ResNet-101 backbone's wiring with a stand-in for transformers (importing it costs seconds that
every mutant would pay again; test_pipeline.py builds the real one): the configuration it asks for is
the torchvision ResNet-101 layout, its input is ImageNet-normalised and its output is the pooled
2048-d feature, which build_network feeds to the embedding layer."""

import sys
import types

import pytest
import torch
from torch import nn

from paper_pipelines.pipelines.cpl_iqa import model as net


class FakeConfig:
    """transformers.ResNetConfig's defaults (ResNet-50 depths) and its layer-type check."""

    def __init__(self, depths=(3, 4, 6, 3), hidden_sizes=(256, 512, 1024, 2048),
                 layer_type="bottleneck", embedding_size=64):  # fmt: skip
        if layer_type not in ("basic", "bottleneck"):
            raise ValueError(f"layer_type={layer_type!r} is not one of basic, bottleneck")
        self.depths, self.hidden_sizes = list(depths), list(hidden_sizes)
        self.layer_type, self.embedding_size = layer_type, embedding_size


class FakeResNet(nn.Module):
    """Records the pixels it is given; pooled output (n, C, 1, 1) = per-image pixel mean times 1..C."""

    def __init__(self, config):
        super().__init__()
        self.config = config
        self.stem = nn.Conv2d(3, config.embedding_size, 7, bias=False)
        self.seen = []

    def forward(self, pixel_values):
        self.seen.append(pixel_values)
        width = self.config.hidden_sizes[-1]
        scale = torch.arange(1.0, width + 1.0).view(1, width, 1, 1)
        pooled = pixel_values.mean(dim=(1, 2, 3)).view(-1, 1, 1, 1) * scale
        return types.SimpleNamespace(pooler_output=pooled)


@pytest.fixture
def fake_transformers(monkeypatch):
    module = types.ModuleType("transformers")
    module.ResNetConfig, module.ResNetModel = FakeConfig, FakeResNet
    monkeypatch.setitem(sys.modules, "transformers", module)


def test_resnet101_asks_for_the_torchvision_resnet101_layout(fake_transformers):
    body = net.ResNet101()
    config = body.net.config
    assert config.depths == [3, 4, 23, 3]  # He et al. 2016, Table 1, 101 layers
    assert config.hidden_sizes == [256, 512, 1024, 2048]
    assert config.layer_type == "bottleneck" and config.embedding_size == 64
    assert net.ResNet101((1, 2, 1, 1)).net.config.depths == [1, 2, 1, 1]


def test_resnet101_feeds_imagenet_normalised_pixels_and_returns_the_pooled_features(
    fake_transformers,
):
    body = net.ResNet101()
    x = torch.tensor([0, 51, 255], dtype=torch.uint8).view(1, 3, 1, 1).expand(2, 3, 2, 3).clone()
    x[1] = 255 - x[1]
    out = body(x)
    (pixels,) = body.net.seen
    mean = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1)
    std = torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1)
    expected = (x.float() / 255.0 - mean) / std
    assert pixels.shape == (2, 3, 2, 3)
    assert torch.allclose(pixels, expected)
    # by hand: red channel of image 0 is 0 -> (0 - 0.485) / 0.229
    assert float(pixels[0, 0, 0, 0]) == pytest.approx(-0.485 / 0.229, rel=1e-6)
    assert float(pixels[0, 2, 1, 2]) == pytest.approx((1.0 - 0.406) / 0.225, rel=1e-6)
    assert out.shape == (2, 2048)
    assert torch.allclose(out, expected.mean(dim=(1, 2, 3))[:, None] * torch.arange(1.0, 2049.0))


def test_the_resnet_network_embeds_its_2048_wide_features_and_loads_the_given_weights(
    fake_transformers,
):
    model = net.build_network("resnet101", 8, 5, [], [], 0)
    assert isinstance(model.backbone, net.ResNet101)
    assert model.embedding[0].in_features == 2048 and model.head.out_features == 5
    x = torch.randint(0, 256, (3, 3, 4, 4), dtype=torch.uint8)
    assert model(x).shape == (3, 5) and model.embed(x).shape == (3, 8)
    state = {"stem.weight": torch.full((64, 3, 7, 7), 0.25)}
    loaded = net.build_network("resnet101", 8, 5, [], [], 0, backbone_state=state)
    assert torch.equal(loaded.backbone.net.stem.weight, state["stem.weight"])
    untouched = net.build_network("resnet101", 8, 5, [], [], 0)
    assert not torch.equal(untouched.backbone.net.stem.weight, state["stem.weight"])
