"""Negative-prompt environment inference on hand-checkable tensors."""

import math

import pytest
import torch
from torch import nn

from paper_pipelines.pipelines.nego import prompts as neg


def test_gradient_reversal_flips_the_sign_and_keeps_the_value():
    x = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
    y = neg.grad_reverse(x, 0.5)
    assert torch.equal(y, x.detach())
    (y * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert torch.allclose(x.grad, torch.tensor([-0.5, -1.0, -1.5]))
    x.grad = None
    neg.grad_reverse(x).sum().backward()
    assert torch.allclose(x.grad, -torch.ones(3))


def test_prompt_attention_is_a_scaled_softmax():
    prompts = torch.tensor([[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]])
    query = torch.tensor([[2.0, 0.0, 0.0, 0.0]])
    a = neg.prompt_attention(query, prompts)
    # scores 2/sqrt(4) = 1 and 0
    expected = torch.tensor([[math.e / (math.e + 1), 1 / (math.e + 1)]])
    assert torch.allclose(a, expected)
    assert torch.allclose(a.sum(-1), torch.ones(1))


def test_prompt_bank_reads_a_convex_combination_of_prompts():
    torch.manual_seed(0)
    bank = neg.PromptBank(4, 3)
    env, attn = bank(torch.randn(5, 4))
    assert env.shape == (5, 4) and attn.shape == (5, 3)
    assert torch.allclose(env, attn @ bank.prompts)
    assert bank.out is None
    res = neg.PromptBank(4, 3, residual=True)
    s = torch.randn(2, 4)
    env, attn = res(s)
    assert torch.allclose(env, attn @ res.prompts + res.out(s))
    assert bank.prompts.shape == (3, 4)


def test_adversarial_loss_trains_the_head_and_reverses_into_the_environment():
    head = nn.Linear(2, 2)
    with torch.no_grad():
        head.weight.copy_(torch.eye(2))
        head.bias.zero_()
    env = torch.tensor([[1.0, 0.0]], requires_grad=True)
    y = torch.tensor([0])
    loss = neg.adversarial_negative_loss(head, env, y)
    assert torch.isclose(loss, nn.functional.cross_entropy(torch.tensor([[1.0, 0.0]]), y))
    loss.backward()
    # plain CE would push env[0] up (towards class 0); reversed it pushes it down
    p = torch.softmax(torch.tensor([1.0, 0.0]), 0)
    # dCE/dlogits = p - onehot = (p0 - 1, p1); the reversal gives (1 - p0, -p1)
    assert torch.allclose(env.grad, torch.tensor([[1 - p[0], -p[1]]]))
    assert env.grad[0, 0] > 0 and head.weight.grad[0, 0] < 0


def test_prediction_entropy():
    assert torch.isclose(neg.prediction_entropy(torch.zeros(4, 3)), torch.tensor(math.log(3)))
    sharp = torch.tensor([[100.0, 0.0, 0.0]])
    assert neg.prediction_entropy(sharp) < 1e-6
    mixed = torch.log(torch.tensor([[0.5, 0.5, 1e-12]]))
    assert torch.isclose(neg.prediction_entropy(mixed), torch.tensor(math.log(2)), atol=1e-5)


def test_entropy_mode_fits_the_head_on_a_detached_env_and_spreads_env():
    torch.manual_seed(0)
    head = nn.Linear(2, 3)
    env = torch.randn(4, 2, requires_grad=True)
    y = torch.tensor([0, 1, 2, 0])
    loss = neg.entropy_negative_loss(head, env, y)
    fit = nn.functional.cross_entropy(head(env.detach()), y)
    assert torch.isclose(loss, fit - neg.prediction_entropy(head(env)))
    loss.backward()
    # the head's gradient comes from the CE term alone (the entropy term uses a frozen copy)
    head2 = nn.Linear(2, 3)
    head2.load_state_dict(head.state_dict())
    nn.functional.cross_entropy(head2(env.detach()), y).backward()
    assert torch.allclose(head.weight.grad, head2.weight.grad)
    # env's gradient raises the entropy: a small step along -grad increases it
    before = neg.prediction_entropy(head(env)).item()
    after = neg.prediction_entropy(head(env - 0.1 * env.grad)).item()
    assert after > before


def test_coverage_loss():
    eye = nn.Linear(2, 2, bias=False)
    zero = nn.Linear(2, 2, bias=False)
    with torch.no_grad():
        eye.weight.copy_(torch.eye(2))
        zero.weight.zero_()
    summary = torch.tensor([[1.0, 2.0]], requires_grad=True)
    causal = torch.tensor([[0.0, 1.0]])
    env = torch.tensor([[3.0, 3.0]])
    # residual (1, 1) -> mean of squares 1
    assert torch.isclose(neg.coverage_loss(summary, causal, env, eye, zero), torch.tensor(1.0))
    # residual (1-0-3, 2-1-3) = (-2, -2) -> 4
    loss = neg.coverage_loss(summary, causal, env, eye, eye)
    assert torch.isclose(loss, torch.tensor(4.0))
    loss.backward()
    assert summary.grad is None  # the summary is a stop-gradient target


def test_diversity_loss():
    assert neg.diversity_loss(torch.eye(3) * 5) == pytest.approx(0.0)
    same = torch.tensor([[1.0, 0.0], [2.0, 0.0]])
    # normalised rows identical: Gram all ones, off-diagonals 1 -> 2
    assert neg.diversity_loss(same).item() == pytest.approx(2.0)
    opposite = torch.tensor([[1.0, 0.0], [-3.0, 0.0]])
    assert neg.diversity_loss(opposite).item() == pytest.approx(2.0)
    tilted = torch.tensor([[1.0, 0.0], [1.0, 1.0]])
    assert neg.diversity_loss(tilted).item() == pytest.approx(1.0, abs=1e-6)


def test_prediction_entropy_is_per_row():
    # rows (0, 0) and (5, 0): per-row entropies ln 2 and H(sigmoid(5)); not a softmax over the batch
    p = 1 / (1 + math.exp(-5))
    expected = (math.log(2) - (p * math.log(p) + (1 - p) * math.log(1 - p))) / 2
    assert neg.prediction_entropy(torch.tensor([[0.0, 0.0], [5.0, 0.0]])).item() == pytest.approx(
        expected, rel=1e-5
    )
