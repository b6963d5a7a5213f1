"""Label propagation (spec check 2) and its pieces on graphs small enough to check by hand."""

import logging

import numpy as np
import pytest
import scipy.sparse as sp

from paper_pipelines.pipelines.cpl_iqa import propagation as lp


def two_clusters():
    """Two tight groups of 5 points on near-orthogonal directions; node 0 and node 5 are labelled."""
    rng = np.random.default_rng(0)
    a = np.array([1.0, 0.0, 0.0]) + 0.05 * rng.standard_normal((5, 3))
    b = np.array([0.0, 1.0, 0.0]) + 0.05 * rng.standard_normal((5, 3))
    a[0], b[0] = [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]
    return np.concatenate([a, b])


def test_knn_affinity_keeps_k_neighbours_with_cubed_positive_similarity():
    e = np.array([[1.0, 0.0], [0.8, 0.6], [0.0, 1.0], [-1.0, 0.0]])
    a = lp.knn_affinity(e, k=1, power=3.0).toarray()
    # nearest of 0 is 1 (cos 0.8), of 1 is 0, of 2 is 1 (cos 0.6), of 3 is 2 (cos 0 -> weight 0)
    expected = np.zeros((4, 4))
    expected[0, 1] = expected[1, 0] = 0.8**3
    expected[2, 1] = 0.6**3
    assert np.allclose(a, expected)
    with pytest.raises(ValueError, match="knn_k=4 must be below"):
        lp.knn_affinity(e, k=4, power=3.0)


def test_knn_affinity_power_and_normalisation_of_the_embeddings():
    e = np.array([[2.0, 0.0], [1.6, 1.2], [0.0, 5.0]])
    a = lp.knn_affinity(e, k=1, power=2.0).toarray()
    assert a[0, 1] == pytest.approx(0.64) and a[1, 0] == pytest.approx(0.64)
    assert a[2, 1] == pytest.approx(0.36)
    assert np.allclose(lp.l2_normalise(np.array([[3.0, 4.0], [0.0, 0.0]])), [[0.6, 0.8], [0, 0]])


def test_symmetrise_adds_the_transpose_and_drops_self_loops():
    a = sp.csr_matrix(np.array([[1.0, 2.0, 0.0], [0.0, 0.0, 3.0], [0.0, 0.0, 0.0]]))
    w = lp.symmetrise(a).toarray()
    assert np.array_equal(w, [[0, 2, 0], [2, 0, 3], [0, 3, 0]])


def test_normalise_graph_is_d_minus_half_w_d_minus_half_and_keeps_isolated_rows_zero():
    w = sp.csr_matrix(np.array([[0.0, 2.0, 0.0], [2.0, 0.0, 0.0], [0.0, 0.0, 0.0]]))
    wn = lp.normalise_graph(w).toarray()
    assert np.allclose(wn, [[0, 1, 0], [1, 0, 0], [0, 0, 0]])
    w2 = sp.csr_matrix(np.array([[0.0, 1.0, 3.0], [1.0, 0.0, 0.0], [3.0, 0.0, 0.0]]))
    wn2 = lp.normalise_graph(w2).toarray()
    assert wn2[0, 2] == pytest.approx(3.0 / np.sqrt(4.0 * 3.0))
    assert wn2[0, 1] == pytest.approx(1.0 / np.sqrt(4.0 * 1.0))


def test_cg_diffusion_equals_a_dense_solve():
    e = two_clusters()
    w_n = lp.normalise_graph(lp.symmetrise(lp.knn_affinity(e, 3, 3.0)))
    y = np.zeros((10, 4))
    y[0] = [0.0, 0.3, 0.7, 0.0]
    y[5] = [1.0, 0.0, 0.0, 0.0]
    z = lp.diffuse(w_n, y, 0.9, iters=200, tol=1e-12)
    dense = np.linalg.solve(np.eye(10) - 0.9 * w_n.toarray(), y)
    assert np.abs(z - dense).max() < 1e-5
    assert np.array_equal(z[:, 3], np.zeros(10))  # an empty bin stays empty


def test_cg_iteration_cap_is_used():
    e = two_clusters()
    w_n = lp.normalise_graph(lp.symmetrise(lp.knn_affinity(e, 3, 3.0)))
    y = np.zeros((10, 1))
    y[0] = 1.0
    dense = np.linalg.solve(np.eye(10) - 0.99 * w_n.toarray(), y)
    one = lp.diffuse(w_n, y, 0.99, iters=1, tol=1e-12)
    assert np.abs(one - dense).max() > 1e-3


def test_check_2_two_clusters_get_their_seed_label_and_confidence_falls_to_the_boundary():
    e = two_clusters()
    bridge = np.array([[0.7, 0.7, 0.0]])  # between the clusters, far from both seeds
    feats = np.concatenate([e[[0, 5]], e[[1, 2, 3, 4, 6, 7, 8, 9]], bridge])
    v = np.zeros((2, 3))
    v[0, 0] = 1.0
    v[1, 2] = 1.0
    out = lp.propagate_labels(feats, v, 2, k=3, gamma=0.9, power=3.0, iters=50, tol=1e-10)
    assert out.labels.shape == (9, 3)
    assert np.array_equal(out.labels[:8].argmax(axis=1), [0, 0, 0, 0, 2, 2, 2, 2])
    assert np.allclose(out.labels.sum(axis=1), 1.0)
    # the boundary node is the least confident; the others are above it
    assert out.weights[8] < out.weights[:8].min()
    assert out.weights.max() == pytest.approx(1.0)
    assert out.isolated == 0


def test_clip_and_normalise_and_confidence():
    z = np.array([[-0.2, 0.2, 0.6], [0.0, 0.0, 0.0], [0.5, 0.5, 0.0]])
    p = lp.clip_and_normalise(z)
    assert np.allclose(p, [[0, 0.25, 0.75], [0, 0, 0], [0.5, 0.5, 0]])
    omega = lp.entropy_confidence(p, 3)
    h0 = -(0.25 * np.log(0.25) + 0.75 * np.log(0.75))
    assert np.allclose(omega, [1 - h0 / np.log(3), 0.0, 1 - np.log(2) / np.log(3)])
    assert np.allclose(lp.scale_by_max(np.array([0.2, 0.4])), [0.5, 1.0])
    assert np.array_equal(lp.scale_by_max(np.zeros(3)), np.zeros(3))
    assert lp.entropy_confidence(np.array([[1.0, 0.0]]), 2)[0] == pytest.approx(1.0)


def test_an_isolated_node_gets_zero_confidence_and_a_warning(caplog):
    # node 3 points away from everyone: every similarity <= 0, so it has no edge
    feats = np.array([[1.0, 0.0], [0.9, 0.1], [0.8, 0.2], [-1.0, -0.05]])
    v = np.array([[0.0, 1.0, 0.0]])
    with caplog.at_level(logging.WARNING):
        out = lp.propagate_labels(feats, v, 1, k=1, gamma=0.9, power=3.0, iters=20, tol=1e-8)
    assert out.isolated == 1
    assert out.weights[-1] == 0.0 and np.array_equal(out.labels[-1], [0, 0, 0])
    assert out.weights[0] == pytest.approx(1.0)
    assert "received no label mass" in caplog.text


def test_normalisation_with_degrees_below_one():
    w = sp.csr_matrix(np.array([[0.0, 0.25], [0.25, 0.0]]))
    assert np.allclose(lp.normalise_graph(w).toarray(), [[0, 1], [1, 0]])


def test_cg_tolerance_is_passed_on():
    e = two_clusters()
    w_n = lp.normalise_graph(lp.symmetrise(lp.knn_affinity(e, 3, 3.0)))
    y = np.zeros((10, 1))
    y[0] = 1.0
    dense = np.linalg.solve(np.eye(10) - 0.99 * w_n.toarray(), y)
    loose = lp.diffuse(w_n, y, 0.99, iters=500, tol=0.5)
    assert np.abs(loose - dense).max() > 1e-3


def test_diffusion_of_integer_seed_labels_by_hand():
    # two nodes joined by one edge: (I - 0.5 W) z = (1, 0) gives z = (4/3, 2/3)
    w_n = sp.csr_matrix(np.array([[0.0, 1.0], [1.0, 0.0]]))
    z = lp.diffuse(w_n, np.array([[1], [0]]), 0.5, iters=50, tol=1e-12)
    assert z.dtype == np.float64
    assert np.allclose(z, [[4.0 / 3.0], [2.0 / 3.0]])


def test_l2_normalise_scales_short_rows_up():
    assert np.allclose(lp.l2_normalise(np.array([[0.3, 0.4], [0.0, 0.5]])), [[0.6, 0.8], [0, 1]])


def test_scale_by_max_of_no_unlabelled_image():
    assert lp.scale_by_max(np.zeros(0)).shape == (0,)


def test_the_isolation_warning_counts_the_images(caplog):
    feats = np.array([[1.0, 0.0], [0.9, 0.1], [0.8, 0.2], [-1.0, -0.05]])
    with caplog.at_level(logging.WARNING):
        lp.propagate_labels(feats, np.array([[0.0, 1.0]]), 1, k=1, gamma=0.9, power=3.0,
                            iters=20, tol=1e-8)  # fmt: skip
    assert "label propagation: 1 unlabelled image(s) received no label mass" in caplog.text
