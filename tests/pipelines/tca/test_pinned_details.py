"""Details of LinearTCA, the stream and the inputs that the larger tests leave open: the defaults of
the paper (K = 20 per class, 20 Adam steps), dtypes and devices, error messages in full, the stream's
clock and GPU synchronisation."""

from __future__ import annotations

import logging

import numpy as np
import pytest
import torch
from kedro.io import DatasetError
from PIL import Image
from scipy import ndimage

from paper_pipelines.pipelines.tca import baselines, data
from paper_pipelines.pipelines.tca.baselines import T3A, SourceOnly, configure_tent, run_stream
from paper_pipelines.pipelines.tca.linear_tca import (
    chunked_mean_covariance,
    class_proportions,
    linear_tca,
    select_pseudo_source,
    solve_w_adam,
    solve_w_eig,
)
from paper_pipelines.pipelines.tca.metrics import peak_tensor_bytes
from paper_pipelines.pipelines.tca.source_model import FeaturizerClassifier
from tests.pipelines.tca.problems import linear_head_problem


def _problem(n: int = 300, d: int = 6, c: int = 3, seed: int = 0):
    return linear_head_problem(n, d, c, seed)


def test_defaults_are_the_papers_k_20_and_20_adam_steps():
    z, logits, head = _problem()
    counts = torch.bincount(logits.argmax(1), minlength=3)
    assert int(counts.min()) > 21  # every class can give K rows
    default = linear_tca(z, logits, head, 3)
    assert default.info["n_support"] == 3 * 20  # floor(20 * 1) rows per predicted class
    assert torch.equal(
        default.support_index, linear_tca(z, logits, head, 3, filter_k=20).support_index
    )
    calls = []
    linear_tca(z, logits, lambda h: calls.append(len(h)) or head(h), 3)
    assert calls == [256, 300 - 256]  # the head sees at most 256 rows at a time
    adam = linear_tca(z, logits, head, 3, w_solver="adam")
    assert torch.equal(adam.W, linear_tca(z, logits, head, 3, w_solver="adam", w_lr=1e-3).W)
    assert torch.equal(adam.W, linear_tca(z, logits, head, 3, w_solver="adam", w_iters=20).W)
    assert not torch.equal(adam.W, linear_tca(z, logits, head, 3, w_solver="adam", w_iters=21).W)


def test_chunked_covariance_keeps_float64_by_hand():
    """Rows (0, 0), (2, 0), (0, 2), (2, 2): mean (1, 1), centred entries +-1, so C = 4 / 3 I."""
    z = torch.tensor([[0.0, 0.0], [2.0, 0.0], [0.0, 2.0], [2.0, 2.0]], dtype=torch.float64)
    mu, cov = chunked_mean_covariance(z, chunk=3)
    assert mu.dtype == cov.dtype == torch.float64
    assert mu.tolist() == [[1.0, 1.0]]
    assert torch.allclose(cov, torch.eye(2, dtype=torch.float64) * 4 / 3, atol=1e-15)


def test_pseudo_source_indices_live_on_the_logits_device():
    """All samples (K = -1) are returned as indices on the logits' device; the meta device (shapes
    only, no data) stands in for a GPU here."""
    logits = torch.empty(5, 2, device="meta")
    assert select_pseudo_source(logits, 2, -1, torch.ones(2)).device.type == "meta"


def test_error_messages_in_full():
    z, logits, head = _problem()
    with pytest.raises(
        ValueError, match=r"^unknown w_solver 'svd'; use one of auto, eig, adam, identity$"
    ):
        linear_tca(z, logits, head, 3, w_solver="svd")
    with pytest.raises(
        ValueError, match=r"^proportions='oracle' divides by the count of class 0, which is 0$"
    ):
        class_proportions("oracle", 3, labels=torch.tensor([1, 2, 2]))
    model = FeaturizerClassifier()
    model.featurizer, model.classifier = torch.nn.Identity(), torch.nn.Linear(2, 2)
    with pytest.raises(
        ValueError,
        match=r"^Tent needs normalisation layers with affine parameters; the model has none$",
    ):
        configure_tent(model)


def test_singular_target_covariance_is_logged_by_name(caplog):
    c_t = torch.diag(torch.tensor([1.0, 0.0], dtype=torch.float64))
    with caplog.at_level(logging.INFO, logger="paper_pipelines.pipelines.tca.linear_tca"):
        solve_w_eig(c_t, torch.eye(2, dtype=torch.float64), 1e-3)
    # the pseudo-source covariance (I) is regular; the target's shrinkage is 1e-3 x tr(C_t) / 2
    assert [r.getMessage() for r in caplog.records] == [
        "target covariance is singular or near-singular (1 of 2 eigenvalues ~0); regularised with "
        "shrinkage eps * tr(C)/d = 0.0005"
    ]


def _identity_model() -> FeaturizerClassifier:
    model = FeaturizerClassifier()
    model.featurizer, model.classifier = torch.nn.Identity(), torch.nn.Linear(2, 2)
    return model


def test_run_stream_seconds_are_the_clock_difference(monkeypatch):
    ticks = iter([100.0, 103.5])
    monkeypatch.setattr(baselines, "_clock", lambda device: next(ticks))
    out = run_stream(
        SourceOnly(_identity_model()),
        torch.zeros(4, 2),
        np.arange(4),
        batch_size=2,
        min_last=1,
        prepare=lambda b: b,
        device="cpu",
    )
    assert out.seconds == 3.5


@pytest.mark.parametrize(("device", "syncs"), [("cuda", 2), ("cuda:1", 2), ("cpu", 0)])
def test_run_stream_synchronises_a_gpu_around_the_clock(monkeypatch, device, syncs):
    """On a GPU the kernels run asynchronously: the stream waits for them before each clock read."""
    calls = []
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: calls.append("sync"))
    monkeypatch.setattr(baselines, "_clock", lambda d: calls.append("clock") or 0.0)

    def cpu_batches(images, order, batch_size, min_last, prepare, device):
        yield order, prepare(images[torch.as_tensor(order)])

    monkeypatch.setattr(baselines, "iterate_stream", cpu_batches)
    run_stream(
        SourceOnly(_identity_model()),
        torch.zeros(3, 2),
        np.arange(3),
        batch_size=3,
        min_last=1,
        prepare=lambda b: b,
        device=device,
    )
    expected = ["sync", "clock", "sync", "clock"] if syncs else ["clock", "clock"]
    assert calls == expected


def test_a_missing_cifar_c_folder_names_the_catalog_entry_to_fix(tmp_path):
    absent = str(tmp_path / "absent")
    with pytest.raises(DatasetError) as err:
        data.CifarCFolderDataset(path=absent).load()
    assert str(err.value) == (
        f"tca.cifar_c_folder: {absent!r} is not a directory; point `path` of this entry in "
        "conf/paper/catalog/tca.yml at a CIFAR-10-C folder (layouts: docs/papers/tca.md)"
    )
    assert data.CifarCFolderDataset(path=str(tmp_path)).load() == data.CifarCFolder(str(tmp_path))


def test_oracle_proportions_when_the_last_class_is_absent():
    """Labels 0, 0, 1 of 3 classes: r = (n_0, n_1, n_2) / n_0 = (1, 1/2, 0)."""
    r = class_proportions("oracle", 3, labels=torch.tensor([0, 0, 1]))
    assert r.tolist() == [1.0, 0.5, 0.0]


def test_digits_images_are_the_8x8_digits_upsampled_bilinearly():
    assert data.load_digits_images()[0].shape == (1797, 16, 16)  # 16 x 16 by default
    small, labels8 = data.load_digits_images(8)
    big, labels16 = data.load_digits_images(16)
    assert np.array_equal(labels8, labels16) and small.shape == (1797, 8, 8)
    zoomed = ndimage.zoom(small[:20].astype(np.float64), (1, 2, 2), order=1, mode="nearest")
    np.testing.assert_allclose(big[:20], np.clip(zoomed, 0, 1), atol=1e-6)
    # bilinear: no value beyond the range of the 8 x 8 image it came from
    assert np.all(big[:20].max(axis=(1, 2)) <= small[:20].max(axis=(1, 2)) + 1e-6)


def test_the_catalog_input_describes_itself_by_its_path(tmp_path):
    assert data.CifarCFolderDataset(path=str(tmp_path))._describe() == {"path": str(tmp_path)}


def test_chunked_covariance_is_accumulated_on_the_embeddings_device():
    """The meta device (shapes only) stands in for a GPU: the accumulator must live there too."""
    mu, cov = chunked_mean_covariance(torch.empty(6, 3, device="meta"), chunk=4)
    assert cov.device.type == "meta" and cov.shape == (3, 3) and mu.shape == (1, 3)


def test_folder_images_in_any_mode_load_as_rgb(tmp_path):
    d = tmp_path / "fog" / "cat"
    d.mkdir(parents=True)
    Image.fromarray(np.array([[0, 51], [102, 255]], dtype=np.uint8), mode="L").save(d / "0.png")
    entry = data.domain_manifest(str(tmp_path), ["fog"], [1], None, seed=0)["fog@1"]
    x, y = data.load_domain(entry)
    assert x.shape == (1, 3, 2, 2) and y.tolist() == [0]
    assert all(x[0, c].tolist() == [[0, 51], [102, 255]] for c in range(3))  # grey in R, G and B


def test_npy_rows_are_integer_indices_even_for_an_empty_selection(tmp_path):
    np.save(tmp_path / "fog.npy", np.arange(4 * 2 * 2 * 3, dtype=np.uint8).reshape(4, 2, 2, 3))
    np.save(tmp_path / "labels.npy", np.array([3, 1, 4, 1]))
    entry = data.domain_manifest(str(tmp_path), ["fog"], [1], None, seed=0)["fog@1"]
    x, y = data.load_domain({**entry, "rows": [2, 0]})
    assert x.shape == (2, 3, 2, 2) and y.tolist() == [4, 3]
    assert x[0, :, 0, 0].tolist() == [24, 25, 26]  # image 2, pixel (0, 0), channels first
    x, y = data.load_domain({**entry, "rows": []})
    assert x.shape == (0, 3, 2, 2) and y.shape == (0,) and y.dtype == np.int64


def test_adam_solver_works_on_the_covariances_device():
    c = torch.empty(3, 3, device="meta")  # shapes only: a stand-in for a GPU
    assert solve_w_adam(c, c, 2, 1e-3).device.type == "meta"


def test_t3a_warm_labels_have_a_column_per_class_even_when_a_row_predicts_another():
    """Head rows (1, 0) and (0.5, 0): the second row's logits are (0.5, 0), so both warm supports are
    labelled class 0, and the one-hot labels still have two columns."""
    model = FeaturizerClassifier()
    model.featurizer, model.classifier = torch.nn.Identity(), torch.nn.Linear(2, 2)
    with torch.no_grad():
        model.classifier.weight.copy_(torch.tensor([[1.0, 0.0], [0.5, 0.0]]))
        model.classifier.bias.zero_()
    t3a = T3A(model, filter_k=-1)
    assert t3a.labels.tolist() == [[1.0, 0.0], [1.0, 0.0]]
    z, logits = t3a(torch.tensor([[0.0, 2.0]]))  # predicted class 0 too (logits 0, 0; ties -> 0)
    assert logits.shape == (1, 2)


def test_peak_gpu_memory_is_the_maximum_above_the_starting_level(monkeypatch):
    """On a GPU the peak is torch.cuda.max_memory_allocated() minus what was allocated before; the
    counters are reset and the device synchronised around the call (faked here, no GPU needed)."""
    calls = []
    fake = {
        "synchronize": lambda: calls.append("sync"),
        "reset_peak_memory_stats": lambda: calls.append("reset"),
        "memory_allocated": lambda: calls.append("base") or 1000,
        "max_memory_allocated": lambda: calls.append("max") or 5096,
    }
    for name, fn in fake.items():
        monkeypatch.setattr(torch.cuda, name, fn)
    result, peak = peak_tensor_bytes(lambda: calls.append("fn") or "done", "cuda:0")
    assert (result, peak) == ("done", 4096)
    assert calls == ["sync", "reset", "base", "fn", "sync", "max"]


def test_unknown_names_list_the_known_ones_in_full():
    from paper_pipelines.pipelines.tca import digits_c
    from paper_pipelines.pipelines.tca.baselines import make_method

    with pytest.raises(
        ValueError, match=r"^unknown TTA method 'cotta'; use one of source, bn, tent, t3a$"
    ):
        make_method("cotta", _identity_model(), tent_lr=1e-3, steps=1, t3a_filter_k=4)
    with pytest.raises(
        ValueError, match=r"^unknown proportions 'zipf'; use one of uniform, predicted, oracle$"
    ):
        class_proportions("zipf", 3)
    with pytest.raises(ValueError, match=r"^proportions='oracle' needs the ground-truth labels$"):
        class_proportions("oracle", 3)
    expected = "unknown corruption 'snow'; Digits-C has: " + ", ".join(digits_c.CORRUPTIONS)
    with pytest.raises(ValueError) as err:
        digits_c.corrupt(np.zeros((1, 4, 4)), "snow", 1, seed=0)
    assert str(err.value) == expected
    assert expected.endswith("pixelate, jpeg_compression")
