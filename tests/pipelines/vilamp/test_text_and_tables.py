"""The frozen text tower's vectors, the accuracy table's columns and index, and the token count's bounds."""

import numpy as np
import pandas as pd
import pytest

from paper_pipelines.pipelines.vilamp.assembly import visual_token_count
from paper_pipelines.pipelines.vilamp.metrics import OOM, accuracy_table
from paper_pipelines.pipelines.vilamp.models import minilm_embeddings


def test_minilm_vectors_are_384d_batch_invariant_and_cut_at_77_tokens():
    texts = ["What digit is on the red card?", "a dog", "seven " * 120]
    alone = minilm_embeddings(texts, batch=1)
    together = minilm_embeddings(texts)  # one padded batch: the mask keeps the vectors unchanged
    assert list(together) == texts and all(len(v) == 384 for v in together.values())
    for t in texts:
        np.testing.assert_allclose(together[t], alone[t], atol=1e-5)
    # [CLS] + 75 words + [SEP] is exactly the 77 tokens a longer text is cut to
    np.testing.assert_allclose(
        minilm_embeddings(["seven " * 75])["seven " * 75], together[texts[2]], atol=1e-5
    )
    assert not np.allclose(
        minilm_embeddings(["seven " * 74])["seven " * 74], together[texts[2]], atol=1e-4
    )
    assert minilm_embeddings([]) == {}
    with pytest.raises(ValueError, match="every text needs words"):
        minilm_embeddings(["fine", ""])


def _row(method, status, **kw):
    return dict(task="retrieval", n_frames=8, method=method, status=status, **kw)


def test_accuracy_table_averages_every_measure_and_renumbers_its_rows():
    ok = dict(correct=1.0, needle_recall=0.5, needles_hit=1.0, visual_tokens=10)
    predictions = pd.DataFrame(
        [_row("vilamp", "ok", **ok), _row("vilamp", "ok", **{**ok, "needle_recall": 1.0}),
         _row("uniform", "ok", **ok)], index=[7, 3, 9],
    )  # fmt: skip
    table = accuracy_table(predictions)
    assert table.index.tolist() == [0, 1] and table.method.tolist() == ["uniform", "vilamp"]
    assert table.needle_recall.tolist() == [0.5, 0.75] and set(table.status) == {"ok"}
    with_oom = accuracy_table(
        pd.concat([predictions, pd.DataFrame([_row("dense", OOM, visual_tokens=99)], index=[5])])
    )
    assert with_oom.index.tolist() == [0, 1, 2]
    assert with_oom.set_index("method").status.to_dict() == {
        "dense": OOM,
        "uniform": "ok",
        "vilamp": "ok",
    }
    # two OOM videos of one cell stay one row
    twice = pd.concat([predictions, pd.DataFrame([_row("dense", OOM, visual_tokens=99)] * 2)])
    assert len(accuracy_table(twice)) == 3


def test_token_count_accepts_one_keyframe_and_names_both_sizes_when_out_of_range():
    assert visual_token_count(4, 1, 10) == 10 + 3 + 1
    assert visual_token_count(4, 4, 10, merged=False) == 41
    with pytest.raises(ValueError, match="need 0 < K <= N, got K=5, N=4"):
        visual_token_count(4, 5, 10)
