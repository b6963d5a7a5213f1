"""Token accounting and the temporal order of ViLAMP's mixed-precision sequence (spec check 4)."""

import pytest
import torch

from paper_pipelines.pipelines.vilamp.assembly import assemble_sequence, visual_token_count


def test_visual_token_count():
    assert visual_token_count(10_000, 4, 16) == 10_061
    assert visual_token_count(10_000, 10_000, 16) == 160_001  # dense: every frame a keyframe
    assert visual_token_count(10, 2, 16, merged=False) == 33
    with pytest.raises(ValueError):
        visual_token_count(3, 0, 16)


def test_assembly_keeps_temporal_order():
    n, m, d = 5, 2, 1
    patches = torch.arange(n * m, dtype=torch.float).reshape(n, m, d)  # frame f: tokens 2f, 2f+1
    merged = torch.tensor([[100.0], [102.0], [104.0]])  # frames 0, 2, 4
    newline = torch.tensor([-1.0])
    tokens, frame_of = assemble_sequence(patches, [1, 3], merged, newline)
    assert tokens.squeeze(1).tolist() == [100, 2, 3, 102, 6, 7, 104, -1]
    assert frame_of.tolist() == [0, 1, 1, 2, 3, 3, 4, 5]
    assert tokens.shape[0] == visual_token_count(n, 2, m)


def test_assembly_without_merged_tokens():
    patches = torch.arange(8, dtype=torch.float).reshape(4, 2, 1)
    tokens, frame_of = assemble_sequence(patches, [0, 2], None, torch.tensor([9.0]))
    assert tokens.squeeze(1).tolist() == [0, 1, 4, 5, 9]
    assert frame_of.tolist() == [0, 0, 2, 2, 4]
    with pytest.raises(ValueError, match="merged tokens"):
        assemble_sequence(patches, [0, 2], torch.zeros(3, 1), torch.tensor([9.0]))
