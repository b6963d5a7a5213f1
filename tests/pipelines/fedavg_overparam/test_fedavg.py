"""FedAvg with gradient descent on hand-checkable cases (spec check 7: M = 1, tau = 1 is centralised GD)."""

import pytest
import torch

from paper_pipelines.pipelines.fedavg_overparam.fedavg import (
    Schedule,
    aggregate,
    aggregation_weights,
    epoch_batches,
    fedavg_round,
    local_update,
    loss_value,
    model_divergence,
    predicted_labels,
)
from paper_pipelines.pipelines.fedavg_overparam.network import build_network
from paper_pipelines.pipelines.fedavg_overparam.ntk import flat_parameters, parameter_dict


def _setup(out_dim=1, n=12, seed=0):
    gen = torch.Generator().manual_seed(seed)
    x = torch.rand(n, 1, 2, 2, generator=gen)
    y = torch.randint(0, max(out_dim, 2), (n,), generator=gen)
    net = build_network("mlp", (1, 2, 2), 8, out_dim, 2, 1.5, 0.1, "ntk", seed=seed)
    return net, x, y


def test_squared_loss_by_hand():
    out = torch.tensor([[1.0], [3.0]])
    y = torch.tensor([0, 1])
    assert float(loss_value(out, y, "mse")) == pytest.approx(0.5 * (1 + 4) / 2)
    # K > 1: one-hot targets, half the summed squares, mean over samples
    out2 = torch.tensor([[1.0, 0.0], [0.0, 0.0]])
    assert float(loss_value(out2, torch.tensor([0, 1]), "mse")) == pytest.approx(0.5 * (0 + 1) / 2)


def test_cross_entropy_by_hand():
    out = torch.zeros(2, 4)
    assert float(loss_value(out, torch.tensor([0, 3]), "ce")) == pytest.approx(
        torch.log(torch.tensor(4.0))
    )
    logit = torch.tensor([[0.0]])
    assert float(loss_value(logit, torch.tensor([1]), "ce")) == pytest.approx(
        float(torch.log(torch.tensor(2.0)))
    )
    with pytest.raises(ValueError, match="unknown loss"):
        loss_value(out, torch.tensor([0, 1]), "hinge")


def test_predicted_labels_thresholds():
    out = torch.tensor([[0.4], [0.6], [-0.1]])
    assert predicted_labels(out, "mse").tolist() == [0, 1, 0]
    assert predicted_labels(out, "ce").tolist() == [1, 1, 0]
    assert predicted_labels(torch.tensor([[0.1, 0.9, 0.0]]), "mse").tolist() == [1]


def test_aggregation_is_the_sample_weighted_average():
    thetas = [torch.tensor([0.0, 4.0]), torch.tensor([4.0, 0.0])]
    torch.testing.assert_close(aggregate(thetas, [1, 3]), torch.tensor([3.0, 1.0]))
    torch.testing.assert_close(aggregate(thetas, [1, 3], weighted=False), torch.tensor([2.0, 2.0]))
    assert aggregation_weights([2, 6]).tolist() == [0.25, 0.75]


def test_model_divergence_by_hand():
    local = [torch.tensor([0.0, 0.0]), torch.tensor([3.0, 4.0])]
    centre = torch.tensor([0.0, 0.0])
    assert model_divergence(local, centre, [1, 1]) == pytest.approx(2.5)  # (0 + 5) / 2
    assert model_divergence(local, centre, [3, 1]) == pytest.approx(1.25)


def test_one_local_step_is_a_gradient_step_with_weight_decay():
    net, x, y = _setup()
    theta = flat_parameters(net)
    before = theta.clone()

    def loss(t):
        return loss_value(torch.func.functional_call(net, parameter_dict(net, t), (x,)), y, "mse")  # noqa: E731

    grad = torch.func.grad(loss)(theta)
    stepped = local_update(net, theta, x, y, Schedule(lr=0.3, tau=1, weight_decay=0.01))
    torch.testing.assert_close(stepped, theta - 0.3 * (grad + 0.01 * theta))
    two = local_update(net, theta, x, y, Schedule(lr=0.3, tau=2))
    first = theta - 0.3 * grad
    torch.testing.assert_close(two, first - 0.3 * torch.func.grad(loss)(first))
    assert torch.equal(theta, before)  # the broadcast weights are not modified in place


def test_fedavg_with_one_client_and_one_step_is_centralised_gd_exactly():
    net, x, y = _setup()
    theta = flat_parameters(net)
    schedule = Schedule(lr=0.5, tau=1)
    fed, central = theta, theta
    for _ in range(5):
        fed, _ = fedavg_round(net, fed, [(x, y)], schedule)
        central = local_update(net, central, x, y, schedule)
    assert torch.equal(fed, central)


def test_identical_clients_make_fedavg_equal_centralised_gd():
    """Every client holding the whole data set gives every local iterate the centralised one."""
    net, x, y = _setup()
    theta = flat_parameters(net)
    schedule = Schedule(lr=0.5, tau=3)
    fed, local = fedavg_round(net, theta, [(x, y)] * 4, schedule)
    torch.testing.assert_close(fed, local_update(net, theta, x, y, schedule))
    assert model_divergence(local, fed, [len(x)] * 4) == pytest.approx(0.0, abs=1e-6)


def test_heterogeneous_clients_differ_from_centralised_gd_with_several_local_steps():
    net, x, y = _setup(n=12)
    theta = flat_parameters(net)
    order = torch.argsort(y)  # client 0 one class, client 1 the other
    clients = [(x[order[:6]], y[order[:6]]), (x[order[6:]], y[order[6:]])]
    schedule = Schedule(lr=0.5, tau=5)
    fed, local = fedavg_round(net, theta, clients, schedule)
    central = local_update(net, theta, x[order], y[order], schedule)
    assert float(torch.linalg.norm(fed - central)) > 1e-4
    assert model_divergence(local, fed, [6, 6]) > 1e-4


def test_sgd_batches_cover_every_sample_once_per_epoch():
    gen = torch.Generator().manual_seed(0)
    batches = epoch_batches(10, Schedule(lr=1, tau=1, optimizer="sgd", batch_size=4), gen)
    assert [len(b) for b in batches] == [4, 4, 2]
    assert sorted(torch.cat(batches).tolist()) == list(range(10))
    assert epoch_batches(5, Schedule(lr=1, tau=1), None)[0].tolist() == [0, 1, 2, 3, 4]


def test_labels_use_argmax_for_two_outputs_and_a_strict_threshold_for_one():
    assert predicted_labels(torch.tensor([[0.9, 0.1], [0.2, 0.3]]), "mse").tolist() == [0, 1]
    assert predicted_labels(torch.tensor([[0.5], [0.0]]), "mse").tolist() == [0, 0]
    assert predicted_labels(torch.tensor([[0.0]]), "ce").tolist() == [0]


def test_one_hot_targets_have_as_many_columns_as_outputs():
    # labels 0 and 1 only, three outputs: targets (1,0,0) and (0,1,0), so 1/2 (1 + 1) / 2
    assert float(loss_value(torch.zeros(2, 3), torch.tensor([0, 1]), "mse")) == pytest.approx(0.5)


def test_sgd_uses_only_its_own_generator():
    """The same seeded generator gives the same local SGD path whatever the global torch seed."""
    net, x, y = _setup(n=20)
    theta = flat_parameters(net)
    schedule = Schedule(lr=0.3, tau=2, optimizer="sgd", batch_size=6)
    runs = []
    for global_seed in (1, 2):
        torch.manual_seed(global_seed)
        local = local_update(net, theta, x, y, schedule, torch.Generator().manual_seed(0))
        fed, _ = fedavg_round(net, theta, [(x[:10], y[:10]), (x[10:], y[10:])], schedule,
                              torch.Generator().manual_seed(0))  # fmt: skip
        batches = epoch_batches(20, schedule, torch.Generator().manual_seed(0))
        runs.append((local, fed, torch.cat(batches)))
    for a, b in zip(runs[0], runs[1], strict=True):
        assert torch.equal(a, b)
    other = local_update(net, theta, x, y, schedule, torch.Generator().manual_seed(1))
    assert not torch.equal(other, runs[0][0])


def test_uniform_aggregation_and_divergence_ignore_client_sizes():
    net, x, y = _setup(n=12)
    theta = flat_parameters(net)
    clients = [(x[:3], y[:3]), (x[3:], y[3:])]
    uniform = Schedule(lr=0.5, tau=2, weighted=False)
    fed, local = fedavg_round(net, theta, clients, uniform)
    torch.testing.assert_close(fed, (local[0] + local[1]) / 2)
    weighted, _ = fedavg_round(net, theta, clients, Schedule(lr=0.5, tau=2))
    torch.testing.assert_close(weighted, 0.25 * local[0] + 0.75 * local[1])
    spread = [torch.tensor([0.0, 0.0]), torch.tensor([3.0, 4.0])]
    assert model_divergence(spread, torch.zeros(2), [3, 1], weighted=False) == pytest.approx(2.5)
