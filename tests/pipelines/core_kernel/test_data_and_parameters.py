"""Ingest (shipped tables, the generator) and the parameter rules that span blocks."""

import numpy as np
import pytest

from paper_pipelines.pipelines.core_kernel.data import load_sklearn, make_multiview_blobs
from paper_pipelines.pipelines.core_kernel.parameters import (
    TABLE_SIZES,
    CoreParams,
    DataParams,
    ExtensionParams,
    ScalingParams,
    check_across_blocks,
)


def _core(**kw):
    return CoreParams(**{"sizes_projection": [20, 80], "sizes_sampling": [80], **kw})


@pytest.mark.parametrize("name", sorted(TABLE_SIZES))
def test_tables_are_standardised_and_sized_as_declared(name):
    x, y = load_sklearn(name, None, np.random.default_rng(0))
    assert len(y) == TABLE_SIZES[name]
    np.testing.assert_allclose(x.mean(axis=0), 0.0, atol=1e-10)
    std = x.std(axis=0)
    # digits has constant (all-zero) pixels: centred, left unscaled, no NaN
    assert np.all(np.isclose(std, 1.0) | np.isclose(std, 0.0)) and np.isfinite(x).all()


def test_subsample_is_seeded_by_its_generator():
    a = load_sklearn("wine", 50, np.random.default_rng(3))
    b = load_sklearn("wine", 50, np.random.default_rng(3))
    c = load_sklearn("wine", 50, np.random.default_rng(4))
    np.testing.assert_array_equal(a[0], b[0])
    assert not np.array_equal(a[0], c[0])
    assert a[0].shape == (50, 13)


def test_multiview_blobs_shapes_and_views():
    x, y, slices = make_multiview_blobs(100, 3, 2, 4, 3.0, None, 2, np.random.default_rng(0))
    assert x.shape == (100, 12) and set(np.unique(y)) <= {0, 1, 2}
    assert [(s.start, s.stop) for s in slices] == [(0, 6), (6, 12)]


def test_core_sizes_must_fit_the_data():
    check_across_blocks({"data": DataParams(n=100), "core": _core()})
    with pytest.raises(ValueError, match=r"core_kernel\.core\.sizes_projection has \[120\]"):
        check_across_blocks({"data": DataParams(n=100), "core": _core(sizes_projection=[80, 120])})


def test_null_n_means_every_point_of_the_table():
    # iris has 150 points: n = null or n = 1000 both give 150
    for n in (None, 1000):
        with pytest.raises(ValueError, match=r"n=150 .*extension\.s_sampling has \[240\]"):
            check_across_blocks(
                {
                    "data": DataParams(dataset="iris", n=n),
                    "core": _core(),
                    "extension": ExtensionParams(),
                }
            )


def test_default_s_must_be_a_swept_size():
    with pytest.raises(ValueError, match=r"core_kernel\.core\.default_s=40"):
        _core(default_s=40)


def test_scaling_core_must_fit_the_smallest_n():
    with pytest.raises(ValueError, match=r"core_kernel\.scaling\.s=80"):
        ScalingParams(sizes=[50, 1000], s=80)
