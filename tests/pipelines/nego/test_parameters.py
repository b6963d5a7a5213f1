"""Bad input named by key before anything runs (issue item 7), on the parameter models directly."""

import pytest
from pydantic import ValidationError

from paper_pipelines.pipelines.nego import parameters as P


def test_bias_outside_unit_interval():
    with pytest.raises(ValidationError, match="less than or equal to 1"):
        P.SplitParams(bias=1.2)
    with pytest.raises(ValidationError):
        P.SplitParams(bias_sweep=[0.5, -0.1])


def test_unknown_base_motif_method():
    with pytest.raises(ValidationError, match="train_bases"):
        P.SplitParams(train_bases=["wheel", "grid"])
    with pytest.raises(ValidationError, match="motifs"):
        P.DataParams(motifs=["house", "star"])
    with pytest.raises(ValidationError, match="methods"):
        P.TrainParams(methods=["erm", "dir"])


def test_overlapping_train_and_test_bases():
    with pytest.raises(
        ValidationError, match=r"train_bases and nego\.split\.test_bases overlap on \['path'\]"
    ):
        P.SplitParams(train_bases=["wheel", "path"])
    with pytest.raises(ValidationError, match="val_bases overlap"):
        P.SplitParams(val_bases=["tree"])
    with pytest.raises(ValidationError, match="lists a base twice"):
        P.SplitParams(bias_bases=["wheel", "wheel", "tree"])
    with pytest.raises(ValidationError, match="lists a motif twice"):
        P.DataParams(motifs=["house", "house"])


def test_width_too_small_for_the_motif():
    with pytest.raises(ValueError, match="too small to hold the motif.*width_spread = 2"):
        P.check_across_blocks(
            {"data": P.DataParams(width_centre=6, width_spread=4), "split": P.SplitParams()}
        )
    P.check_across_blocks(
        {"data": P.DataParams(width_centre=10, width_spread=5), "split": P.SplitParams()}
    )
    small_size = P.SplitParams(kinds=["size"], size_train_widths=[4, 10])
    with pytest.raises(ValueError, match="size_train_widths"):
        P.check_across_blocks({"data": P.DataParams(), "split": small_size})
    only_cycle = P.DataParams(width_centre=6, width_spread=1, motifs=["cycle", "crane"])
    P.check_across_blocks(
        {"data": only_cycle, "split": P.SplitParams(bias_bases=["wheel", "tree"])}
    )
    assert P.check_across_blocks({"data": P.DataParams()}) is None


def test_bias_bases_must_match_the_motifs():
    with pytest.raises(ValueError, match="bias_bases has 2 bases but nego.data.motifs has 3"):
        P.check_across_blocks(
            {"data": P.DataParams(), "split": P.SplitParams(bias_bases=["wheel", "tree"])}
        )
    P.check_across_blocks(
        {
            "data": P.DataParams(),
            "split": P.SplitParams(kinds=["basis"], bias_bases=["wheel", "tree"]),
        }
    )


def test_empty_split_sizes():
    with pytest.raises(ValidationError, match="num_train"):
        P.DataParams(num_train=0)
    with pytest.raises(ValidationError, match="kinds"):
        P.SplitParams(kinds=[])
    with pytest.raises(ValidationError, match="test_bases"):
        P.SplitParams(test_bases=[])
