"""The learner architectures and the resumable trainer."""

import math

import pytest
import torch

from paper_pipelines.pipelines.deliberate_practice import learner
from paper_pipelines.pipelines.deliberate_practice.parameters import LearnerParams


@pytest.mark.parametrize("arch", ["mlp", "small_cnn", "vit"])
def test_every_arch_maps_images_to_class_logits(arch):
    model = learner.make_learner(arch, (1, 8, 8), 10, LearnerParams(hidden=16), seed=0)
    assert model(torch.randn(3, 1, 8, 8)).shape == (3, 10)


def test_make_learner_is_seeded_and_checks_the_arch():
    a = learner.make_learner("mlp", (1, 4, 4), 3, LearnerParams(hidden=5), seed=1)
    b = learner.make_learner("mlp", (1, 4, 4), 3, LearnerParams(hidden=5), seed=1)
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters(), strict=True))
    assert a.net[1].out_features == 5
    with pytest.raises(ValueError, match="arch"):
        learner.make_learner("resnet", (1, 4, 4), 3, LearnerParams(), seed=0)


def test_small_cnn_head_matches_odd_sizes():
    model = learner.SmallCNNLearner((3, 7, 7), 4, 8)
    assert model(torch.randn(2, 3, 7, 7)).shape == (2, 4)


def test_trainer_fits_a_separable_set_and_counts_iterations():
    torch.manual_seed(0)
    x = torch.randn(64, 1, 2, 2)
    y = (x.flatten(1).sum(1) > 0).long()
    model = learner.make_learner("mlp", (1, 2, 2), 2, LearnerParams(hidden=16), seed=0)
    trainer = learner.LearnerTrainer(model, lr=1e-2, batch=32, seed=0)
    before = float(torch.nn.functional.cross_entropy(trainer.logits(x), y))
    trainer.train_steps(x, y, 100)
    trainer.train_steps(x, y, 50)
    after = float(torch.nn.functional.cross_entropy(trainer.logits(x), y))
    assert trainer.iterations == 150
    assert after < 0.5 * before
    assert (trainer.logits(x, batch=7).argmax(1) == y).float().mean() > 0.9


def test_trainer_logits_in_batches_equal_one_pass_and_guidance_sees_gradients():
    model = learner.make_learner("mlp", (1, 2, 2), 3, LearnerParams(hidden=4), seed=0)
    trainer = learner.LearnerTrainer(model, lr=1e-3, batch=8, seed=0)
    x = torch.randn(10, 1, 2, 2)
    assert torch.allclose(trainer.logits(x, batch=3), trainer.logits(x, batch=100))
    images = x.clone().requires_grad_()
    trainer(images).sum().backward()
    assert images.grad is not None and images.grad.abs().sum() > 0


def test_mlp_learner_is_not_affine():
    """A hidden ReLU layer: f(a) + f(b) != f(a + b) + f(0), which holds for any affine map."""
    model = learner.MLPLearner((1, 2, 2), 3, 8)
    torch.manual_seed(0)
    a, b = torch.randn(4, 1, 2, 2), torch.randn(4, 1, 2, 2)
    with torch.no_grad():
        lhs = model(a) + model(b)
        rhs = model(a + b) + model(torch.zeros_like(a))
    assert not torch.allclose(lhs, rhs, atol=1e-4)


def test_vit_learner_has_the_asked_depth_and_mlp_width():
    model = learner.ViTLearner((1, 8, 8), 10, patch=4, hidden=8, layers=2, heads=2)
    assert sum(type(m).__name__ == "ViTLayer" for m in model.modules()) == 2
    # the transformer MLP is 4x the hidden size (ViT-B: 768 -> 3072), the widest linear layer here
    widths = [m.out_features for m in model.modules() if isinstance(m, torch.nn.Linear)]
    assert max(widths) == 32
    assert model(torch.randn(2, 1, 8, 8)).shape == (2, 10)


def test_mlp_and_cnn_learners_compute_the_documented_layers():
    """Forward passes recomputed with torch.nn.functional from each learner's own weights."""
    F = torch.nn.functional
    torch.manual_seed(0)
    x = torch.randn(2, 1, 4, 4)
    mlp = learner.MLPLearner((1, 4, 4), 3, 6)
    w1, b1, w2, b2 = mlp.parameters()
    assert w1.shape == (6, 16) and w2.shape == (3, 6)
    with torch.no_grad():
        assert torch.allclose(mlp(x), F.linear(F.relu(F.linear(x.flatten(1), w1, b1)), w2, b2))
    # two 3x3 convs (16 channels, then 32 with stride 2), then hidden and output linear layers
    cnn = learner.SmallCNNLearner((1, 5, 5), 3, 6)
    c1, d1, c2, d2, w1, b1, w2, b2 = cnn.parameters()
    assert c1.shape == (16, 1, 3, 3) and c2.shape == (32, 16, 3, 3)
    x = torch.randn(2, 1, 5, 5)
    with torch.no_grad():
        z = F.relu(F.conv2d(x, c1, d1, padding=1))
        z = F.relu(F.conv2d(z, c2, d2, stride=2, padding=1))  # 5x5 -> 3x3
        assert z.shape == (2, 32, 3, 3) and w1.shape == (6, 32 * 9)
        expected = F.linear(F.relu(F.linear(z.flatten(1), w1, b1)), w2, b2)
        assert torch.allclose(cnn(x), expected, atol=1e-6)


def test_trainer_batches_repeat_from_its_seed_and_cover_the_pool():
    x = torch.randn(6, 1, 2, 2, generator=torch.Generator().manual_seed(0))
    y = torch.tensor([0, 1, 2, 0, 1, 2])
    weights = []
    for global_seed in (0, 1):
        model = learner.make_learner("mlp", (1, 2, 2), 3, LearnerParams(hidden=4), seed=0)
        trainer = learner.LearnerTrainer(model, lr=1e-2, batch=2, seed=3)
        torch.manual_seed(global_seed)
        trainer.train_steps(x, y, 5)
        weights.append(torch.cat([p.detach().flatten() for p in model.parameters()]))
    assert torch.equal(weights[0], weights[1])


class InputSpy(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(1, 2)
        self.seen = []

    def forward(self, x):
        self.seen.append(x.detach().clone())
        return self.lin(x)


def test_trainer_draws_from_the_whole_pool_and_zero_steps_return_nan():
    spy = InputSpy()
    trainer = learner.LearnerTrainer(spy, lr=1e-3, batch=2, seed=0)
    x, y = torch.arange(4.0).view(4, 1), torch.tensor([0, 1, 0, 1])
    assert math.isnan(trainer.train_steps(x, y, 0)) and trainer.iterations == 0
    trainer.train_steps(x, y, 30)
    assert set(torch.cat(spy.seen).flatten().tolist()) == {0.0, 1.0, 2.0, 3.0}
    assert all(len(b) == 2 for b in spy.seen)


def test_trainer_takes_adam_steps_of_the_given_learning_rate():
    """Adam's first step moves every weight with a nonzero gradient by lr (g / |g|, bias-corrected)."""
    model = learner.make_learner("mlp", (1, 2, 2), 2, LearnerParams(hidden=3), seed=0)
    before = [p.detach().clone() for p in model.parameters()]
    trainer = learner.LearnerTrainer(model, lr=0.05, batch=4, seed=0)
    x, y = (
        torch.randn(4, 1, 2, 2, generator=torch.Generator().manual_seed(0)),
        torch.tensor([0, 1, 0, 1]),
    )
    trainer.train_steps(x, y, 1)
    moved = torch.cat(
        [(p.detach() - b).abs().flatten() for p, b in zip(model.parameters(), before, strict=True)]
    )
    assert torch.allclose(moved[moved > 0], torch.tensor(0.05), rtol=1e-3)
    assert (moved > 0).float().mean() > 0.5
