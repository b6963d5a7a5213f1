"""The algorithm zoo: resampling, remax scales, GroupDRO's step, and the batched trainer against the
per-task reference loop (spec check 1)."""

import numpy as np
import pytest
import torch

from paper_pipelines.pipelines.ood_chameleon import zoo

G = np.array([0, 0, 0, 1, 2, 2, 3])  # group sizes 3, 1, 2, 1


def test_oversample_replicates_every_group_up_to_the_largest():
    idx = zoo.oversample_indices(G, np.random.default_rng(0))
    assert np.bincount(G[idx]).tolist() == [3, 3, 3, 3]
    counts = np.bincount(idx, minlength=len(G))
    assert counts[:3].tolist() == [1, 1, 1]  # the largest group is kept as is
    assert counts[3] == 3 and counts[6] == 3  # singletons: 3 copies
    assert sorted(counts[4:6].tolist()) == [1, 2]  # 1 copy + a remainder of 1 without replacement


def test_undersample_draws_min_group_size_without_replacement():
    idx = zoo.undersample_indices(G, np.random.default_rng(0))
    assert np.bincount(G[idx]).tolist() == [1, 1, 1, 1]
    assert len(set(idx.tolist())) == 4


def test_remax_scales_are_relative_group_frequencies():
    g = np.array([0, 0, 1, 2, 3, 3, 3, 3])
    assert np.allclose(zoo.remax_scales(g), [0.5, 0.25, 0.25, 1.0])


def test_groupdro_update_by_hand():
    q = np.full(4, 0.25)
    out = zoo.groupdro_update(q, np.array([1.0, 0, 0, 0]), np.log(2.0))
    assert np.allclose(out, [0.4, 0.2, 0.2, 0.2])
    tq = zoo.groupdro_update(torch.full((1, 4), 0.25), torch.tensor([[1.0, 0, 0, 0]]), np.log(2.0))
    assert torch.allclose(tq, torch.tensor([[0.4, 0.2, 0.2, 0.2]]))


def test_row_weights():
    rng = np.random.default_rng(0)
    w, s = zoo.row_weights("ERM", G, rng)
    assert np.allclose(w, 1 / 7) and np.allclose(s, 1)
    w, s = zoo.row_weights("remax-margin", G, rng)
    # (1/4) sum_g mean_{i in g}: weight 1 / (4 n_g); logits scaled by p_g / max p = n_g / 3
    assert np.allclose(w, [1 / 12] * 3 + [1 / 4, 1 / 8, 1 / 8, 1 / 4])
    assert np.allclose(s, [1, 1, 1, 1 / 3, 2 / 3, 2 / 3, 1 / 3])
    w, _ = zoo.row_weights("undersample", G, rng)
    assert np.isclose(w.sum(), 1) and (w > 0).sum() == 4
    with pytest.raises(ValueError, match="unknown algorithm 'IRM'"):
        zoo.row_weights("IRM", G, rng)


def test_worst_group_error():
    y = np.array([0, 0, 1, 1, 0, 1, 1, 0])
    a = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    pred = np.array([0, 0, 1, 0, 1, 1, 1, 0])
    g = 2 * y + a
    # g = 2y + a = [0, 0, 2, 2, 1, 3, 3, 1]: group 1 misses one of 2, group 2 one of 2
    assert np.allclose(zoo.group_errors(pred, y, g), [0, 0.5, 0.5, 0])
    assert zoo.worst_group_error(pred, y, g) == 0.5


def _toy_tasks(n=60, d=4):
    rng = np.random.default_rng(1)
    tasks = []
    for counts in ([25, 5, 5, 25], [35, 10, 3, 12]):
        y = np.repeat([0, 0, 1, 1], counts)
        a = np.repeat([0, 1, 0, 1], counts)
        x = rng.normal(size=(n, d)).astype(np.float32)
        x[:, 0] += 2 * y - 1
        x[:, 1] += 2 * (2 * a - 1)
        tasks.append((x, y, a))
    return tasks


# Linear heads (the default): equal to 1e-5 (spec check 1). MLP heads: Adam divides by sqrt(v), so on
# near-zero gradients (dead ReLU units) float summation-order differences grow to ~1e-3.
@pytest.mark.parametrize(("classifier", "atol"), [("linear", 1e-5), ("mlp", 5e-3)])
def test_batched_zoo_equals_the_per_task_reference_loop(classifier, atol):
    settings = zoo.HeadSettings(
        classifier=classifier, hidden=8, max_steps=120, check_every=40, tol=1e-3
    )
    xs, ys, gs, ws, ss, dro, inits, refs = [], [], [], [], [], [], [], []
    for k, (x, y, a) in enumerate(_toy_tasks()):
        g = 2 * y + a
        init = zoo.init_heads(1, x.shape[1], settings, torch.Generator().manual_seed(k))
        for algorithm in zoo.ALGORITHMS:
            rng = np.random.default_rng([k, len(algorithm)])
            w, s = zoo.row_weights(algorithm, g, rng)
            rng = np.random.default_rng([k, len(algorithm)])  # the same draws for the reference
            idx = None
            if algorithm == "oversample":
                idx = zoo.oversample_indices(g, rng)
            elif algorithm == "undersample":
                idx = zoo.undersample_indices(g, rng)
            refs.append(
                zoo.train_head_reference(x, y, g, algorithm, [p[0] for p in init], settings, idx)
            )
            for store, value in zip((xs, ys, gs, ws, ss), (x, y, g, w, s), strict=True):
                store.append(value)
            dro.append(algorithm == "GroupDRO")
            inits.append(init)
    f = lambda v, dt=torch.float32: torch.as_tensor(np.stack(v), dtype=dt)  # noqa: E731
    params = [torch.cat([i[j] for i in inits]) for j in range(len(inits[0]))]
    trained, steps = zoo.train_heads(
        f(xs), f(ys), f(gs, torch.long), f(ws), f(ss), torch.tensor(dro), params, settings
    )
    for b, (ref_params, ref_steps) in enumerate(refs):
        assert int(steps[b]) == ref_steps, (b, int(steps[b]), ref_steps)
        for p, r in zip(trained, ref_params, strict=True):
            assert torch.max(torch.abs(p[b] - r)) < atol, b
    # the heads really trained (and differ between algorithms)
    assert not torch.allclose(trained[0][0], params[0][0])
    assert not torch.allclose(trained[0][0], trained[0][1])


def test_early_stopping_stops_a_converged_head():
    settings = zoo.HeadSettings(
        max_steps=1000, check_every=20, tol=10.0
    )  # any loss drop < 10 stops
    x, y, a = _toy_tasks()[0]
    init = zoo.init_heads(1, x.shape[1], settings, torch.Generator().manual_seed(0))
    _, steps = zoo.train_head_reference(x, y, 2 * y + a, "ERM", [init[0][0]], settings)
    assert steps == 20
