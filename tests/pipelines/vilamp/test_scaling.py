"""The analytic LLM memory projection (spec check 6) and the RSS probe."""

import math
from pathlib import Path

from paper_pipelines.pipelines.vilamp.parameters import LLMProjectionParams
from paper_pipelines.pipelines.vilamp.scaling import (
    dense_tokens,
    frames_to_fill,
    kv_bytes_per_token,
    projection_table,
    vilamp_tokens,
)

SCALING = Path(__file__).parents[3] / "src/paper_pipelines/pipelines/vilamp/scaling.py"


def test_qwen2_7b_kv_cache_per_token():
    assert kv_bytes_per_token(28, 4, 128, 2) == 57_344  # 2 x 28 x 4 x 128 x 2 bytes


def test_token_counts_at_10k_frames():
    assert dense_tokens(10_000, 196) == 1_960_001
    assert vilamp_tokens(10_000, 32, 196) == 32 * 196 + 9_968 + 1 == 16_241
    assert vilamp_tokens(10, 32, 196) == 10 * 196 + 1  # K capped at N


def test_projection_crosses_80_gb_near_7k_frames():
    p = LLMProjectionParams()
    assert math.isclose(frames_to_fill(p), (80e9 / 57_344 - 1) / 196)
    assert 7_100 < frames_to_fill(p) < 7_150
    table = projection_table(p)
    last = table[table.n_frames == 10_000].set_index("method").gb
    assert math.isclose(last["dense"], 1_960_001 * 57_344 / 1e9)
    assert 0.9 < last["vilamp"] < 0.95 and last["dense"] / last["vilamp"] > 50


def test_peak_rss_sees_an_allocation():
    # In a fresh process: inside the whole suite the process's high-water mark is already far above
    # 60 MB, so the peak would not move however correct peak_rss is.
    import json
    import subprocess
    import sys

    # scaling.py is loaded by file path: importing the package would start torch and Kedro (seconds)
    code = (
        "import json, importlib.util, numpy as np\n"
        f"spec = importlib.util.spec_from_file_location('scaling', {str(SCALING)!r})\n"
        "scaling = importlib.util.module_from_spec(spec); spec.loader.exec_module(scaling)\n"
        "peak_rss = scaling.peak_rss\n"
        "with peak_rss() as usage:\n"
        "    block = np.ones(60_000_000 // 8); block.sum()\n"
        "print(json.dumps(usage))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    usage = json.loads(done.stdout.strip().splitlines()[-1])
    assert usage["peak_gb"] - usage["start_gb"] > 0.04
    assert usage["seconds"] >= 0
