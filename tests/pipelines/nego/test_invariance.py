"""The environment intervention and V-REx on hand-checkable tensors (spec check 6: the permutation
leaves labels alone)."""

import math

import pytest
import torch

from paper_pipelines.pipelines.nego import invariance as inv


def test_permutation_swaps_environments_only():
    env = torch.arange(12.0).reshape(6, 2).requires_grad_()
    y = torch.tensor([0, 1, 2, 0, 1, 2])
    swapped, perm = inv.permute_environment(env, torch.Generator().manual_seed(0))
    assert sorted(perm.tolist()) == list(range(6)) and perm.tolist() != list(range(6))
    assert torch.equal(swapped, env.detach()[perm])
    assert not swapped.requires_grad
    assert y.tolist() == [0, 1, 2, 0, 1, 2]  # labels are not touched
    again, perm2 = inv.permute_environment(env, torch.Generator().manual_seed(0))
    assert torch.equal(perm, perm2)


def test_intervention_loss_is_kl_plus_ce():
    logits = torch.tensor([[2.0, 0.0], [0.0, 1.0]])
    y = torch.tensor([0, 1])
    same = inv.intervention_loss(logits, logits, y)
    assert same.item() == pytest.approx(torch.nn.functional.cross_entropy(logits, y).item())
    swapped = torch.tensor([[0.0, 0.0], [0.0, 1.0]])
    p = torch.softmax(logits, -1)
    q = torch.softmax(swapped, -1)
    kl = (q * (q.log() - p.log())).sum(-1).mean()
    ce = torch.nn.functional.cross_entropy(swapped, y)
    assert inv.intervention_loss(swapped, logits, y).item() == pytest.approx(
        (kl + ce).item(), rel=1e-6
    )
    # first row: KL(0.5, 0.5 || p) with p0 = e^2 / (e^2 + 1)
    p0 = math.exp(2) / (math.exp(2) + 1)
    first = 0.5 * math.log(0.5 / p0) + 0.5 * math.log(0.5 / (1 - p0))
    assert kl.item() == pytest.approx(first / 2, rel=1e-5)


def test_intervention_loss_stops_the_gradient_at_the_target():
    logits = torch.tensor([[1.0, 0.0]], requires_grad=True)
    swapped = torch.tensor([[0.0, 1.0]], requires_grad=True)
    inv.intervention_loss(swapped, logits, torch.tensor([0])).backward()
    assert logits.grad is None and swapped.grad is not None


def test_environment_risks_and_vrex():
    losses = torch.tensor([1.0, 3.0, 2.0, 6.0])
    env = torch.tensor([0, 0, 1, 1])
    assert torch.allclose(inv.environment_risks(losses, env), torch.tensor([2.0, 4.0]))
    assert inv.vrex_penalty(losses, env).item() == pytest.approx(1.0)  # var of (2, 4), population
    three = inv.vrex_penalty(torch.tensor([0.0, 3.0, 6.0]), torch.tensor([2, 0, 1]))
    assert three.item() == pytest.approx(6.0)
    assert inv.vrex_penalty(losses, torch.zeros(4, dtype=torch.long)).item() == 0.0


def test_pseudo_environments_cluster_the_embeddings():
    env = torch.tensor(
        [[0.0, 0.0], [0.1, 0.0], [10.0, 10.0], [10.1, 10.0], [-9.0, 5.0], [-9.1, 5.0]]
    )
    labels = inv.pseudo_environments(env, 3, 0).tolist()
    assert labels[0] == labels[1] and labels[2] == labels[3] and labels[4] == labels[5]
    assert len(set(labels)) == 3
    assert len(set(inv.pseudo_environments(env[:2], 3, 0).tolist())) <= 2
