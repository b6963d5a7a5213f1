"""The optimisation layer: the two model shapes and the Adam trajectory on B tasks per step (Sec. 5)."""

import numpy as np
import pytest
import torch
from torch import nn

from paper_pipelines.pipelines.ata.optimisation import build_model, train_trajectory


def n_params(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


def test_mlp_shape_by_hand():
    model = build_model("mlp", 64, 32, 10)
    assert n_params(model) == 64 * 32 + 32 + 32 * 10 + 10
    assert isinstance(model[1], nn.ReLU)
    assert model(torch.zeros(5, 64)).shape == (5, 10)


def test_cnn_shape_by_hand():
    # 3 x 3 convs 1->16->32->32 (padding 1 keeps 8 x 8), two 2 x 2 pools: 8 -> 4 -> 2, so 32 * 2 * 2 inputs.
    model = build_model("cnn", 64, 32, 10)
    convs = 16 * 9 + 16 + 32 * 16 * 9 + 32 + 32 * 32 * 9 + 32
    assert n_params(model) == convs + 128 * 32 + 32 + 32 * 10 + 10
    assert model(torch.zeros(3, 64)).shape == (3, 10)
    assert sum(isinstance(m, nn.ReLU) for m in model) == 4
    # the smallest allowed image, 4 x 4: pooled to 1 x 1
    small = build_model("cnn", 16, 8, 3)
    assert small(torch.zeros(2, 16)).shape == (2, 3)
    assert small[-3].in_features == 32


@pytest.mark.parametrize(("features", "message"), [(10, "square images"), (9, "side >= 4")])
def test_cnn_needs_square_images_of_side_four_or_more(features, message):
    with pytest.raises(ValueError, match=message):
        build_model("cnn", features, 8, 3)


def test_unknown_model_fails():
    with pytest.raises(ValueError, match="unknown model 'rnn'; allowed: mlp, cnn"):
        build_model("rnn", 4, 8, 3)


def _tiny_data():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((24, 4)).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.int64)  # two classes in the training set
    return {
        "X_train": x,
        "y_train": y,
        "X_holdout": x[:6] + 0.1,
        "y_holdout": np.array([0, 1, 2, 0, 1, 1]),
    }


def _reference_parameters(data, hidden, lr, batch, K, seed):
    """The docstring's loop written out plainly: K Adam steps, each on `batch` uniform random samples."""
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    x, y = torch.as_tensor(data["X_train"]), torch.as_tensor(data["y_train"])
    model = build_model("mlp", 4, hidden, 3)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    for _ in range(K):
        idx = torch.as_tensor(rng.integers(0, len(y), size=batch))
        opt.zero_grad()
        nn.functional.cross_entropy(model(x[idx]), y[idx]).backward()
        opt.step()
    return [p.detach().clone() for p in model.parameters()]


def test_trajectory_is_K_adam_steps_on_B_tasks_of_samples():
    data = _tiny_data()
    trajectory, model = train_trajectory(
        data, "mlp", 8, 0.05, B=3, K=7, samples_per_task=2, log_every=3, seed=4
    )
    # logged at 0, every 3rd step and the last one
    assert trajectory["k"].tolist() == [0, 3, 6, 7]
    # holdout label 2 is absent from training, yet the model has 3 outputs
    assert model[-1].out_features == 3
    ref = _reference_parameters(data, 8, 0.05, 3 * 2, 7, seed=4)
    for got, want in zip(model.parameters(), ref, strict=True):
        np.testing.assert_allclose(got.detach().numpy(), want.numpy(), rtol=1e-6, atol=1e-7)


def test_logged_losses_and_accuracies_are_those_of_the_model():
    data = _tiny_data()
    trajectory, model = train_trajectory(
        data, "mlp", 8, 0.05, B=2, K=4, samples_per_task=3, log_every=10, seed=1
    )
    assert trajectory["k"].tolist() == [0, 4]
    x, y = torch.as_tensor(data["X_train"]), torch.as_tensor(data["y_train"])
    xh, yh = torch.as_tensor(data["X_holdout"]), torch.as_tensor(data["y_holdout"])
    last = trajectory.iloc[-1]
    with torch.no_grad():
        assert last["train_loss"] == pytest.approx(float(nn.functional.cross_entropy(model(x), y)))
        assert last["holdout_loss"] == pytest.approx(
            float(nn.functional.cross_entropy(model(xh), yh))
        )
        assert last["train_acc"] == pytest.approx(float((model(x).argmax(1) == y).float().mean()))
        assert last["holdout_acc"] == pytest.approx(
            float((model(xh).argmax(1) == yh).float().mean())
        )
    # k = 0 is the untrained model: the one the seed builds
    torch.manual_seed(1)
    fresh = build_model("mlp", 4, 8, 3)
    with torch.no_grad():
        assert trajectory.iloc[0]["train_loss"] == pytest.approx(
            float(nn.functional.cross_entropy(fresh(x), y))
        )
    assert trajectory.iloc[-1]["train_loss"] < trajectory.iloc[0]["train_loss"]
