"""The issue's bad inputs fail with a message naming the key (checked without a Kedro session)."""

import pytest
from pydantic import ValidationError

from paper_pipelines.pipelines.deliberate_practice import parameters as p


@pytest.mark.parametrize(
    ("model", "values", "match"),
    [
        (p.GuidanceParams, {"omega": -0.1}, "omega"),
        (p.GuidanceParams, {"omega_sweep": [0.1, -0.2]}, "omega_sweep"),
        (p.GuidanceParams, {"criterion": "margin"}, "criterion"),
        (p.SamplerParams, {"cfg_scale": -1.0}, "cfg_scale"),
        (p.LoopParams, {"patience": 0}, "patience"),
        (p.LoopParams, {"eval_every": 0}, "eval_every"),
        (p.LearnerParams, {"arch": "resnet50"}, "arch"),
        (p.GeneratorParams, {"backend": "vqgan"}, "backend"),
        (p.DataParams, {"split": {"generator": 0.6, "val": 0.1, "test": 0.2}}, "sum to 1"),
        (p.StaticParams, {"sizes": [0, 100]}, "sizes"),
    ],
)
def test_bad_values_are_refused_with_the_key(model, values, match):
    with pytest.raises(ValidationError, match=match):
        model(**values)


def test_split_fractions_summing_to_one_pass():
    assert p.DataParams(split={"generator": 0.5, "val": 0.2, "test": 0.3}).split.val == 0.2


def _blocks(**overrides):
    blocks = {"loop": p.LoopParams(), "guidance": p.GuidanceParams(), "prune": p.PruneParams()}
    blocks.update(overrides)
    return blocks


def test_initial_set_above_the_sample_budget_is_refused():
    with pytest.raises(ValueError, match=r"loop\.n0 = 1200 is above .*max_samples = 1000"):
        p.check_across_blocks(_blocks(loop=p.LoopParams(n0=1200)))
    p.check_across_blocks(_blocks(loop=p.LoopParams(n0=1000)))


def test_default_omega_must_be_in_the_sweep():
    with pytest.raises(ValueError, match=r"guidance\.omega = 0\.3 must be one of"):
        p.check_across_blocks(_blocks(guidance=p.GuidanceParams(omega=0.3)))


@pytest.mark.parametrize("prune", [{"keep": 5000}, {"scorer_train_size": 4001}])
def test_prune_keep_and_scorer_within_the_pool(prune):
    with pytest.raises(ValueError, match=r"prune\.pool = 4000"):
        p.check_across_blocks(_blocks(prune=p.PruneParams(**prune)))


def test_blocks_that_are_absent_are_not_checked():
    p.check_across_blocks({})
