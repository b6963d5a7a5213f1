"""Calibration statistics and the block walk on a tiny random LLaMA."""

import torch
from transformers import LlamaConfig, LlamaForCausalLM

from paper_pipelines.pipelines.dlp.calibration import (
    InputStatistics,
    capture_block_inputs,
    decoder_blocks,
    find_linears,
    run_block,
)
from paper_pipelines.pipelines.dlp.metrics import prunable_sparsity
from paper_pipelines.pipelines.dlp.sequential import prune_sequentially, score_blocks


def tiny_llama(seed: int = 0) -> LlamaForCausalLM:
    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=64,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=3,
        num_attention_heads=4,
        num_key_value_heads=4,
        max_position_embeddings=64,
        bos_token_id=None,
        eos_token_id=None,
        pad_token_id=None,
    )
    return LlamaForCausalLM(config).eval()


def test_scaler_row_is_mean_over_samples_of_squared_column_norms():
    torch.manual_seed(0)
    x = torch.randn(6, 5, 3)  # 6 samples, 5 tokens, 3 channels
    stats = InputStatistics(3, with_hessian=True)
    stats.add_batch(x[:2])
    stats.add_batch(x[2:])  # batches of different sizes give the same running mean
    expected = (x**2).sum(dim=1).mean(dim=0)
    torch.testing.assert_close(stats.scaler_row, expected)
    flat = x.reshape(-1, 3)
    torch.testing.assert_close(stats.hessian, 2 / 6 * flat.t() @ flat)


def test_block_walk_reproduces_the_full_forward():
    model = tiny_llama()
    ids = torch.randint(0, 64, (4, 16))
    inputs = capture_block_inputs(model, ids, batch_size=2)
    assert inputs.n_samples() == 4
    for block in decoder_blocks(model):
        inputs = run_block(block, inputs)
    hidden = torch.cat(inputs.hidden)
    with torch.no_grad():
        reference = model.model(ids).last_hidden_state
    torch.testing.assert_close(model.model.norm(hidden), reference, atol=1e-5, rtol=1e-4)


def test_score_blocks_has_one_row_per_block():
    model = tiny_llama()
    table = score_blocks(model, torch.randint(0, 64, (4, 16)), owl_m=5.0, batch_size=4)
    assert list(table["block"]) == [0, 1, 2]
    assert (table["median_score"] > 0).all() and (
        table["mean_score"] >= table["median_score"]
    ).all()


def test_sequential_pruning_hits_block_sparsities_and_spares_embeddings():
    model = tiny_llama()
    embed_before = model.model.embed_tokens.weight.clone()
    ids = torch.randint(0, 64, (4, 16))
    targets = [0.25, 0.5, 0.75]
    for base in ("wanda", "sparsegpt", "magnitude"):
        pruned = tiny_llama()
        masks = prune_sequentially(pruned, ids, targets, base, batch_size=2)
        for index, block in enumerate(decoder_blocks(pruned)):
            for name, lin in find_linears(block).items():
                zeros = (lin.weight.data == 0).float().mean().item()
                assert abs(zeros - targets[index]) < 1e-9, (base, index, name)
                assert torch.equal(masks[f"block{index}.{name}"], lin.weight.data == 0)
        assert abs(prunable_sparsity(pruned) - 0.5) < 0.01
        assert torch.equal(pruned.model.embed_tokens.weight, embed_before)
    assert prunable_sparsity(model) == 0.0
