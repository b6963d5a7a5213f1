"""Device and dtype placement: every tensor follows the model it meets, on CPU here.

No GPU is needed: a tensor created without ``device=`` is caught by making "meta" the default device
while the inputs and models stay on the CPU (a meta tensor mixed with a CPU one raises), and bfloat16
inputs check that dtypes follow the weights they enter.
"""

import re
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from paper_pipelines.pipelines.vilamp.assembly import assemble_sequence
from paper_pipelines.pipelines.vilamp.distillation import (
    Encoded,
    choose_keyframes,
    visual_sequence,
)
from paper_pipelines.pipelines.vilamp.merging import DifferentialFeatureMerging, reference_keyframes
from paper_pipelines.pipelines.vilamp.models import Reader, Selector
from paper_pipelines.pipelines.vilamp.selection import (
    differential_keyframe_selection,
    temporal_distinctiveness,
)
from paper_pipelines.pipelines.vilamp.training import encode, text_matrix

DKS = SimpleNamespace(tau=0.85, relevance_floor=-1.0, fill_budget=True)
DFM = SimpleNamespace(reference_keyframe="paper", max_dense_length=4)
FOLDER = Path(__file__).parents[3] / "src/paper_pipelines/pipelines/vilamp"


def _video(n=12, m=4, d=8, seed=0):
    g = torch.Generator().manual_seed(seed)
    return Encoded(
        patches=torch.randn(n, m, d, generator=g),
        frame_emb=torch.randn(n, 6, generator=g),
        query_emb=torch.randn(6, generator=g),
    )


def _reader(d=8, query=6):
    torch.manual_seed(0)
    return Reader(d, query, 5, d, 1, 2, 3, 0.01).eval()


def test_no_tensor_is_created_off_the_inputs_device():
    enc, reader = _video(), _reader()
    with torch.device("meta"), torch.no_grad():  # a factory call without device= lands on meta
        keys = choose_keyframes("vilamp", enc, 3, DKS)
        tokens, time, kind = visual_sequence("vilamp", enc, keys, reader, DFM)
        logits = reader([(tokens, time, kind)], torch.randn(1, 5, device="cpu"))
        assert temporal_distinctiveness(enc.frame_emb, []).device.type == "cpu"
        assert reference_keyframes([2], 5, "paper", "cpu").device.type == "cpu"
    assert len(keys) == 3
    assert tokens.device.type == time.device.type == kind.device.type == "cpu"
    assert tokens.shape == (3 * 4 + 9 + 1, 8) and logits.shape == (1, 3)
    assert torch.isfinite(logits).all()


def test_selection_runs_on_bfloat16_embeddings():
    # two clusters of frames: bf16 rounding cannot move a cosine across tau = 0.5 here
    base = torch.tensor([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    frames = base[[0, 0, 0, 1, 1, 1]] + 0.05 * torch.arange(6.0)[:, None]
    query = torch.tensor([1.0, 0.2, 0.0])
    keys32, rel32 = differential_keyframe_selection(frames, query, 2, 0.5, fill=False)
    keys16, rel16 = differential_keyframe_selection(
        frames.bfloat16(), query.bfloat16(), 2, 0.5, fill=False
    )
    assert rel16.dtype == torch.bfloat16 and rel32.dtype == torch.float32
    # relevance order 2, 1, 0, 5, 4, 3: frame 2 suppresses its cluster (0, 1), frame 5 the other
    assert keys32 == [2, 5] and keys16 == keys32
    assert temporal_distinctiveness(frames.bfloat16(), []).dtype == torch.bfloat16


@pytest.mark.parametrize("weights", [torch.float32, torch.bfloat16])
def test_merging_follows_the_weights_dtype(weights):
    torch.manual_seed(0)
    # temperature 1: at 0.01 bf16's rounding of the cosines (~4e-3) would move the softmax itself
    dfm = DifferentialFeatureMerging(8, 6, temperature_init=1.0).to(weights)
    p, k, q = torch.randn(5, 4, 8), torch.randn(5, 4, 8), torch.randn(6)
    merged = dfm(p.bfloat16(), k.bfloat16(), q.bfloat16(), max_dense_length=2)
    assert merged.dtype == weights and merged.shape == (5, 8)
    reference = DifferentialFeatureMerging(8, 6, temperature_init=1.0)
    reference.load_state_dict({n: t.float() for n, t in dfm.state_dict().items()})
    # bf16 keeps about 3 significant digits
    assert torch.allclose(merged.float(), reference(p, k, q), atol=0.05)


def test_bfloat16_towers_feed_a_float32_reader():
    torch.manual_seed(0)
    towers = Selector(8, 4, 4, 1, 2, 5).to(torch.bfloat16).eval()
    reader = Reader(8, 8, 5, 8, 1, 2, 3, 0.01).eval()
    cache = {"q": [0.1, 0.2, 0.3, 0.4, 0.5]}
    video = torch.rand(6, 3, 8, 8).numpy()
    with torch.no_grad():
        enc = encode(video, "q", towers, reader, cache)
        assert enc.frame_emb.dtype == enc.query_emb.dtype == torch.bfloat16
        assert enc.patches.dtype == torch.float32 and enc.patches.shape == (6, 4, 8)
        keys = choose_keyframes("vilamp", enc, 2, DKS)
        sequence = visual_sequence("vilamp", enc, keys, reader, DFM)
        logits = reader([sequence], text_matrix(["q"], cache))
    assert sequence[0].dtype == torch.float32 and sequence[0].shape == (2 * 4 + 4 + 1, 8)
    assert logits.dtype == torch.float32 and torch.isfinite(logits).all()


def test_assembly_keeps_the_patches_dtype():
    patches = torch.arange(12.0).reshape(3, 2, 2).bfloat16()
    tokens, frame_of = assemble_sequence(patches, [1], torch.zeros(2, 2), torch.ones(2))
    assert tokens.dtype == torch.bfloat16 and frame_of.tolist() == [0, 1, 1, 2, 3]


def test_text_matrix_is_made_on_the_requested_device():
    with torch.device("meta"):
        assert text_matrix(["a"], {"a": [1.0, 2.0]}, "cpu").device.type == "cpu"


def test_nothing_moves_to_a_gpu_unconditionally():
    # the device comes from runtime.device (apply_runtime) and the models' parameters, never .cuda()
    hits = [
        f"{path.name}:{n}"
        for path in sorted(FOLDER.glob("*.py"))
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if re.search(r"\.cuda\(|device=[\"']cuda", line)
    ]
    assert hits == []
