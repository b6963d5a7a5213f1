"""LoRA recovery works in place (no copy of the model) and checks every pruned weight (issue 29)."""

import torch

from paper_pipelines.pipelines.dlp.recovery import lora_recovery, pruned_weights_still_zero
from paper_pipelines.pipelines.dlp.sequential import pack_mask
from tests.pipelines.dlp.test_calibration import tiny_llama


class Wrapped(torch.nn.Module):
    """The shape of a peft LoRA layer: the pruned linear as `base_layer`, adapters beside it."""

    def __init__(self, weight: torch.Tensor) -> None:
        super().__init__()
        self.base_layer = torch.nn.Linear(weight.shape[1], weight.shape[0], bias=False)
        self.base_layer.weight.data = weight
        self.lora_A = torch.nn.Linear(weight.shape[1], 1, bias=False)


def test_pruned_weight_check_reads_the_wrapped_linears():
    w = torch.tensor([[0.0, 1.0], [2.0, 0.0]])
    zero_before = {"proj.weight": pack_mask(w == 0)}
    wrapped = torch.nn.Module()
    wrapped.proj = Wrapped(w.clone())
    assert pruned_weights_still_zero(wrapped, zero_before)
    wrapped.proj.base_layer.weight.data[0, 0] = 0.5  # a pruned weight came back
    assert not pruned_weights_still_zero(wrapped, zero_before)


def test_lora_recovery_leaves_the_pruned_model_as_it_came():
    torch.manual_seed(0)
    model = tiny_llama()
    for block in model.model.layers:
        block.mlp.down_proj.weight.data[:, ::2] = 0
    before = {n: p.clone() for n, p in model.state_dict().items()}
    ids = torch.randint(0, 64, (200,))
    result = lora_recovery(
        model, ids, torch.randint(0, 64, (2, 16)), 2, 0,
        steps=2, batch=2, seqlen=16, lr=1e-2, rank=2, lora_alpha=4, dropout=0.0,
    )  # fmt: skip
    assert result["masks_intact"] is True and result["ppl_after"] != result["ppl_before"]
    assert not any("lora" in n for n, _ in model.named_parameters())
    assert all(p.requires_grad for p in model.parameters())
    for name, tensor in model.state_dict().items():
        assert torch.equal(tensor, before[name]), name
