"""The issue's bad inputs, through the check ProjectContext runs before any node (no session needed)."""

import copy
import functools

import pytest

from paper_pipelines.common.params import ParameterError, check_parameters
from paper_pipelines.pipeline_registry import paper_slugs
from paper_pipelines.pipelines.disc import create_pipeline
from tests.kedro_helpers import PROJECT_ROOT


@functools.cache
def _fast_parameters(slug: str) -> dict:
    from kedro.config import OmegaConfigLoader

    loader = OmegaConfigLoader(
        str(PROJECT_ROOT / "conf"), base_env="base", default_run_env="fast",
        merge_strategy={"parameters": "soft"},
    )  # fmt: skip
    return loader["parameters"][slug]


def check(**overrides):
    params = {"disc": copy.deepcopy(_fast_parameters("disc"))}
    for dotted, value in overrides.items():
        *parents, leaf = dotted.split("__")
        node = params["disc"]
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    check_parameters(params, [create_pipeline()], paper_slugs())


def test_fast_parameters_pass():
    check()


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ({"variants__cls__magic": {"lam": 0.5}}, r"unknown parameter disc\.variants\.cls\.magic"),
        ({"variants__seg": {}}, r"unknown parameter disc\.variants\.seg"),
        ({"variants__cls__disc_h__lam": 1.5}, r"disc\.variants\.cls\.disc_h\.lam = 1\.5"),
        ({"variants__box__upg__lam": -0.1}, r"disc\.variants\.box\.upg\.lam = -0\.1"),
        (
            {"variants__cls__disc__transfer_levels": ["layer1", "layer4"]},
            r"disc\.variants\.cls\.disc\.transfer_levels\.1",
        ),
        ({"variants__cls__upg__transfer_levels": ["layer2", "layer2"]}, r"repeat a level"),
        ({"variants__box__disc_h__selective": "feature"}, r"disc\.variants\.box\.disc_h\.selective"),
        ({"variants__cls__disc__lambda_schedule": "cos"}, r"lambda_schedule"),
        ({"data__pools__expert_c": 1400}, r"disc\.data\.pools ask for 1850 digits"),
        ({"data__pools": {"expert_c": 450, "expert_d": 450, "social": 300, "downstream": 800}},
         r"ask for 2000 digits"),
        ({"data__canvas": 12}, r"disc\.data\.canvas = 12 is smaller than the largest digit scale"),
        ({"data__scales": [6, 10]}, r"disc\.data\.scales must be >= 8"),
        ({"probe__label_frac": 0.02}, r"disc\.probe\.label_frac = 0\.02 leaves class"),
        ({"evaluation__replicates": 0}, r"disc\.evaluation\.replicates"),
    ],
)  # fmt: skip
def test_bad_input_names_the_key(override, message):
    with pytest.raises(ParameterError, match=message):
        check(**override)


def test_label_fraction_rule_checks_every_replicate():
    check(probe__label_frac=0.1, evaluation__replicates=3)
    with pytest.raises(ParameterError, match=r"replicate 0, seed 5\)"):
        check(probe__label_frac=0.02, evaluation__replicates=3, seed=5)
    # 0.045 of one render of the fast pools labels every class of seeds 0-3 at least once, but seed 4
    # has a class with fewer than 23 digits, so only the fifth replicate fails
    check(probe__label_frac=0.045, evaluation__replicates=4, data__pools__downstream=330)
    with pytest.raises(ParameterError, match=r"replicate 4, seed 4\)"):
        check(probe__label_frac=0.045, evaluation__replicates=5, data__pools__downstream=330)
