"""Calibration: block inputs captured from the model, and per-linear input statistics.

The model is walked one Transformer block at a time, as in the released code: the hidden states that
enter block 0 are captured once, then each block's outputs become the next block's inputs.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any

import torch


class _StopForward(Exception):
    """Raised by the capture hook once block 0's inputs are recorded."""


@dataclass
class BlockInputs:
    """Hidden states entering the current block, in chunks, with the keyword arguments each chunk needs
    (attention mask, rotary position embeddings, position ids) exactly as the model passes them."""

    hidden: list[torch.Tensor]
    kwargs: list[dict[str, Any]]

    def n_samples(self) -> int:
        return sum(h.shape[0] for h in self.hidden)


def decoder_blocks(model: torch.nn.Module) -> torch.nn.ModuleList:
    """The Transformer blocks of a decoder-only LM (LLaMA/Mistral/Qwen: model.model.layers; OPT: decoder)."""
    inner = getattr(model, "model", model)
    if hasattr(inner, "layers"):
        return inner.layers
    if hasattr(inner, "decoder") and hasattr(inner.decoder, "layers"):
        return inner.decoder.layers
    raise ValueError(
        f"cannot find the decoder blocks of {type(model).__name__}: expected model.model.layers "
        "(LLaMA family) or model.model.decoder.layers (OPT)"
    )


def find_linears(block: torch.nn.Module) -> dict[str, torch.nn.Linear]:
    """Every nn.Linear inside a block (LLaMA: q, k, v, o, gate, up, down), by qualified name."""
    return {name: mod for name, mod in block.named_modules() if isinstance(mod, torch.nn.Linear)}


@torch.no_grad()
def capture_block_inputs(
    model: torch.nn.Module, input_ids: torch.Tensor, batch_size: int
) -> BlockInputs:
    """Run the embedding stage and record what enters block 0, chunk by chunk of `batch_size` rows."""
    block0 = decoder_blocks(model)[0]
    # the embedding's device: where the token ids must go (blocks may sit elsewhere, see run_block)
    device = model.get_input_embeddings().weight.device
    hidden, kwargs_list = [], []

    def hook(_module, args, kwargs):
        hidden.append(args[0] if args else kwargs.pop("hidden_states"))
        kwargs = {
            k: v for k, v in kwargs.items() if k not in ("cache", "past_key_values", "use_cache")
        }
        kwargs_list.append(kwargs)
        raise _StopForward

    handle = block0.register_forward_pre_hook(hook, with_kwargs=True)
    try:
        for chunk in input_ids.split(batch_size):
            with contextlib.suppress(_StopForward):
                model(chunk.to(device), use_cache=False)
    finally:
        handle.remove()
    return BlockInputs(hidden=hidden, kwargs=kwargs_list)


def to_device(value: Any, device: torch.device) -> Any:
    """Move tensors (also inside tuples, lists and dicts, e.g. rotary (cos, sin)) to `device`."""
    if isinstance(value, torch.Tensor):
        return value.to(device)
    if isinstance(value, tuple | list):
        return type(value)(to_device(v, device) for v in value)
    if isinstance(value, dict):
        return {k: to_device(v, device) for k, v in value.items()}
    return value


def block_device(block: torch.nn.Module) -> torch.device:
    """The device of a block's weights (with a model split over devices, each block has its own)."""
    return next(block.parameters()).device


@torch.no_grad()
def run_block(block: torch.nn.Module, inputs: BlockInputs) -> BlockInputs:
    """Push every chunk through one block; the outputs are the next block's inputs.

    Inputs move to the block's device first, as the released code does per block
    (``model.hf_device_map``); on a single device this is a no-op, not a copy.
    """
    device = block_device(block)
    hidden = [h.to(device) for h in inputs.hidden]
    kwargs = [to_device(kw, device) for kw in inputs.kwargs]
    outs = []
    for h, kw in zip(hidden, kwargs, strict=True):
        out = block(h, **kw)
        outs.append(out[0] if isinstance(out, tuple) else out)
    return BlockInputs(hidden=outs, kwargs=kwargs)


def accumulation_dtype(weight_dtype: torch.dtype) -> torch.dtype:
    """Statistics accumulate in float32 for float16 / bfloat16 / float32 weights (a sum over
    128 x 2048 tokens of squares overflows float16 and loses most digits in bfloat16), and in
    float64 for float64 weights. The released WrappedGPT and SparseGPT accumulate in float32."""
    return torch.float64 if weight_dtype == torch.float64 else torch.float32


@dataclass
class InputStatistics:
    """Running statistics of one linear's inputs over calibration samples.

    scaler_row[j] = (1/N) sum_samples sum_tokens x_j^2 (Wanda's ||X_j||^2 / N), and optionally the
    SparseGPT Hessian H = (2/N) sum x x^T; both are running means over the N samples seen so far.
    Both live on `device` (the linear's) in `dtype` (see :func:`accumulation_dtype`).
    """

    columns: int
    with_hessian: bool = False
    device: torch.device | str = "cpu"
    dtype: torch.dtype = torch.float32
    n_samples: int = 0
    scaler_row: torch.Tensor = field(init=False)
    hessian: torch.Tensor | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        self.scaler_row = torch.zeros(self.columns, device=self.device, dtype=self.dtype)
        if self.with_hessian:
            self.hessian = torch.zeros(
                self.columns, self.columns, device=self.device, dtype=self.dtype
            )

    @classmethod
    def for_linear(cls, linear: torch.nn.Linear, with_hessian: bool = False) -> InputStatistics:
        """Statistics of one linear's inputs, on its weight's device, accumulated on purpose."""
        weight = linear.weight
        return cls(
            linear.in_features, with_hessian, weight.device, accumulation_dtype(weight.dtype)
        )

    def add_batch(self, x: torch.Tensor) -> None:
        """x: (batch, tokens, C_in) inputs of the linear for `batch` calibration samples."""
        if x.dim() == 2:
            x = x.unsqueeze(0)
        batch = x.shape[0]
        flat = x.reshape(-1, x.shape[-1]).to(device=self.scaler_row.device, dtype=self.dtype)
        total = self.n_samples + batch
        self.scaler_row *= self.n_samples / total
        self.scaler_row += (flat**2).sum(dim=0) / total
        if self.hessian is not None:
            self.hessian *= self.n_samples / total
            self.hessian += 2.0 / total * flat.t().matmul(flat)
        self.n_samples = total


@torch.no_grad()
def collect_statistics(
    block: torch.nn.Module, inputs: BlockInputs, with_hessian: bool = False
) -> tuple[dict[str, InputStatistics], BlockInputs]:
    """Hook every linear of `block`, run the calibration chunks through it, return stats and outputs."""
    linears = find_linears(block)
    stats = {n: InputStatistics.for_linear(lin, with_hessian) for n, lin in linears.items()}
    handles = [
        lin.register_forward_hook(lambda _m, inp, _out, name=name: stats[name].add_batch(inp[0]))
        for name, lin in linears.items()
    ]
    try:
        outputs = run_block(block, inputs)
    finally:
        for h in handles:
            h.remove()
    return stats, outputs
