"""CT space on hand-checkable trees: the XOR lookup equals the height of the lowest common ancestor."""

import pytest
import torch

from paper_pipelines.pipelines.leaf_matching.ct_space import (
    MAX_HEIGHT,
    check_height,
    distance_table,
    leaf_distance,
    node_distance,
    uniform_leaves,
)


def lca_height_by_walk(x: int, y: int) -> int:
    """Climb both leaves to their parents until they meet; the number of climbs is the LCA height."""
    height = 0
    while x != y:
        x, y, height = x // 2, y // 2, height + 1
    return height


def test_distance_is_lca_height_for_all_pairs_at_h6():
    table = distance_table(6)
    x = torch.arange(64).repeat_interleave(64)
    y = torch.arange(64).repeat(64)
    got = leaf_distance(x, y, table).tolist()
    assert got == [lca_height_by_walk(a, b) for a, b in zip(x.tolist(), y.tolist(), strict=True)]


def test_table_values_by_hand():
    # leaves 0..7 of a height-3 tree: xor 0 -> 0, 1 -> 1, 2..3 -> 2, 4..7 -> 3
    assert distance_table(3).tolist() == [0, 1, 2, 2, 3, 3, 3, 3]


def test_distance_is_an_ultrametric():
    table = distance_table(5)
    g = torch.Generator().manual_seed(0)
    a, b, c = (torch.randint(0, 32, (500,), generator=g) for _ in range(3))
    dab, dbc, dac = (
        leaf_distance(a, b, table),
        leaf_distance(b, c, table),
        leaf_distance(a, c, table),
    )
    assert torch.all(dac <= torch.maximum(dab, dbc))
    assert torch.equal(dab, leaf_distance(b, a, table))


def test_node_distance_is_the_mean_over_trees():
    table = distance_table(3)
    z_i = torch.tensor([[0, 0, 5]])
    z_j = torch.tensor([[1, 4, 5]])  # distances 1, 3, 0
    assert node_distance(z_i, z_j, table).item() == pytest.approx(4 / 3)


def test_large_table_has_exact_bit_lengths():
    table = distance_table(20)
    for k in (1, 10, 19, 20):
        assert table[2**k - 1].item() == k
    assert table[2**19].item() == 20


@pytest.mark.parametrize("height", [0, MAX_HEIGHT + 1])
def test_heights_outside_the_encoding_fail_clearly(height):
    with pytest.raises(ValueError, match=r"tree height h must be in \[1, 24\]"):
        check_height(height)


def test_uniform_leaves_cover_the_tree():
    leaves = uniform_leaves(2000, 4, 3, torch.Generator().manual_seed(1))
    assert leaves.shape == (2000, 4) and leaves.dtype == torch.int64
    assert set(leaves.flatten().tolist()) == set(range(8))
