"""The learner architectures and the resumable trainer."""

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
