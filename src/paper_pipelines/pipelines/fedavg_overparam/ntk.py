"""The empirical neural tangent kernel and the linearised model f_0 + J_0 (theta - theta_0).

Theta_t(x, x') = J_t(x) J_t(x')^T with J = df/dtheta (Jacot et al. 2018; the paper's Sec. 4). For the MLP the
kernel is computed layer by layer without materialising J; the explicit J J^T (torch.func.jacrev) is the
reference for tests and for the convolutional families. A network with K > 1 outputs gets the trace kernel
sum_k J_k(x) J_k(x')^T.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.func import functional_call, jacrev, jvp

from .network import NTKMLP


def flat_parameters(model: nn.Module) -> torch.Tensor:
    """theta as one vector (a detached copy), in ``model.parameters()`` order."""
    return torch.cat([p.detach().reshape(-1) for p in model.parameters()]).clone()


def load_flat_parameters(model: nn.Module, theta: torch.Tensor) -> None:
    """Write the vector ``theta`` into the model's parameters (in place)."""
    torch.nn.utils.vector_to_parameters(theta, model.parameters())


def parameter_dict(model: nn.Module, theta: torch.Tensor) -> dict[str, torch.Tensor]:
    """``theta`` cut into the model's named parameter shapes (views, for torch.func.functional_call)."""
    out, start = {}, 0
    for name, p in model.named_parameters():
        out[name] = theta[start : start + p.numel()].view_as(p)
        start += p.numel()
    return out


def layerwise_ntk(
    model: NTKMLP, theta: torch.Tensor, x: torch.Tensor, y: torch.Tensor | None = None
):
    """Empirical NTK of an MLP at ``theta`` between the rows of ``x`` and of ``y`` (default ``x``).

    Theta(x, x') = sum_l [ s_l^2 <delta_l(x), delta_l(x')> <a_{l-1}(x), a_{l-1}(x')>
                           + c_l^2 <delta_l(x), delta_l(x')> ],
    with delta_l = df/dz_l, a_{l-1} the layer's input, s_l = sigma_W / sqrt(n_{l-1}) and c_l = sigma_b
    (NTK parameterisation; both 1 under the standard one). One backward pass of sum_i f(x_i) per
    output gives every sample's delta_l, since sample i's output depends on its own z_l only.
    """
    load_flat_parameters(model, theta)
    both = x if y is None else torch.cat([x, y])
    n = len(x)
    with torch.enable_grad():
        out, inputs, pre = model.forward_layers(both)
        kernel = torch.zeros(
            n, len(both) - n if y is not None else n, dtype=both.dtype, device=both.device
        )
        for k in range(out.shape[1]):
            deltas = torch.autograd.grad(out[:, k].sum(), pre, retain_graph=k < out.shape[1] - 1)
            for layer, a, d in zip(model.layers, inputs, deltas, strict=True):
                a, d = a.detach(), d.detach()
                da = d[:n] @ (d[n:] if y is not None else d).T
                aa = a[:n] @ (a[n:] if y is not None else a).T
                kernel += layer.weight_scale**2 * da * aa + layer.bias_scale**2 * da
    return kernel


def jacobian_ntk(model: nn.Module, theta: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """Reference kernel: the explicit J(x) J(x)^T, J from torch.func.jacrev (memory O(n * P))."""

    def f(flat: torch.Tensor) -> torch.Tensor:
        return functional_call(model, parameter_dict(model, flat), (x,))

    jac = jacrev(f)(theta.detach())  # (n, K, P)
    return torch.einsum("ikp,jkp->ij", jac, jac)


def empirical_ntk(model: nn.Module, theta: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """The layerwise formula for the MLP, the explicit Jacobian product for other families."""
    if isinstance(model, NTKMLP):
        return layerwise_ntk(model, theta, x)
    return jacobian_ntk(model, theta, x)


def relative_kernel_change(kernel: torch.Tensor, kernel_0: torch.Tensor) -> float:
    """||Theta_t - Theta_0||_F / ||Theta_0||_F (prediction P1/P2; the official fedavg4 / fedavg12 measure)."""
    return float(torch.linalg.norm(kernel - kernel_0) / torch.linalg.norm(kernel_0))


def linearised_outputs(
    model: nn.Module, theta_0: torch.Tensor, theta: torch.Tensor, x: torch.Tensor
) -> torch.Tensor:
    """f_lin(x; theta) = f(x; theta_0) + J_0(x) (theta - theta_0): one forward-mode jvp at theta_0 (T2)."""

    def f(flat: torch.Tensor) -> torch.Tensor:
        return functional_call(model, parameter_dict(model, flat), (x,))

    f0, tangent = jvp(f, (theta_0.detach(),), ((theta - theta_0).detach(),))
    return f0 + tangent
