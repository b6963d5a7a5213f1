"""The shared parts every paper uses: parameter checks, seeds, progress, figures, reporting, tables, LMs."""

from __future__ import annotations

import logging

import numpy as np
import pytest
from kedro.pipeline import Node, Pipeline
from matplotlib.figure import Figure
from pydantic import Field

from paper_pipelines.common.figures import PALETTE, distinct_colours, method_colour, new_figure
from paper_pipelines.common.params import (
    ParameterError,
    ParamsModel,
    RuntimeParams,
    Seed,
    check_parameters,
    parameter_requirements,
)
from paper_pipelines.common.progress import progress
from paper_pipelines.common.reporting import check_metrics_contract, results_table, to_jsonable
from paper_pipelines.common.runtime import apply_runtime, substream, substream_seed
from paper_pipelines.common.tables import load_sklearn_table, standardise


class Block(ParamsModel):
    k: int = Field(3, ge=1)


def fit(block: Block, seed: Seed, runtime: RuntimeParams) -> int:
    return block.k + seed


def toy_pipeline() -> Pipeline:
    return Pipeline(
        [Node(fit, ["params:block", "params:seed", "params:runtime"], "out", name="fit")],
        namespace="toy",
    )


GOOD = {"toy": {"block": {"k": 2}, "seed": 0, "runtime": {"device": "cpu"}}}


def test_requirements_map_each_params_input_to_its_annotation():
    found = parameter_requirements([toy_pipeline()])
    assert found["toy.block"] is Block and found["toy.runtime"] is RuntimeParams
    assert "toy.seed" in found


def test_good_parameters_pass():
    check_parameters(GOOD, [toy_pipeline()], ["toy"])


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"toy": {**GOOD["toy"], "block": {"k": 0}}}, "toy.block.k = 0 is invalid"),
        ({"toy": {**GOOD["toy"], "block": {"kk": 2}}}, "unknown parameter toy.block.kk"),
        ({"toy": {**GOOD["toy"], "blok": {"k": 2}}}, "toy.blok (did you mean 'block'?)"),
        ({**GOOD, "tyo": {}}, "'tyo' (did you mean 'toy'?)"),
        ({"toy": {**GOOD["toy"], "seed": -1}}, "toy.seed = -1 is invalid"),
        ({"toy": {**GOOD["toy"], "seed": "1"}}, "toy.seed = '1' is invalid"),
        ({"toy": {**GOOD["toy"], "runtime": {"device": "gpu"}}}, "toy.runtime.device = 'gpu'"),
        (
            {"toy": {**GOOD["toy"], "runtime": {"torch_threads": "x"}}},
            "toy.runtime.torch_threads =",
        ),
        ({"toy": {**GOOD["toy"], "block": 5}}, "toy.block must be a mapping"),
    ],
)
def test_bad_parameters_name_the_key(params, expected):
    with pytest.raises(ParameterError) as info:
        check_parameters(params, [toy_pipeline()], ["toy"])
    assert expected in str(info.value)
    assert "conf/base/parameters/toy.yml" in str(info.value)


def test_unknown_key_lists_the_allowed_ones():
    with pytest.raises(ParameterError, match=r"toy.block.kk \(allowed keys here: k\)"):
        check_parameters({"toy": {**GOOD["toy"], "block": {"kk": 2}}}, [toy_pipeline()], ["toy"])


def test_substreams_are_deterministic_and_independent():
    a1, a2, b = (
        substream(0, "data").random(3),
        substream(0, "data").random(3),
        substream(0, "model"),
    )
    assert np.array_equal(a1, a2) and not np.array_equal(a1, b.random(3))
    assert substream_seed(0, "data") != substream_seed(1, "data")
    assert substream_seed(7, "x", 2) == substream_seed(7, "x", 2)


def test_apply_runtime_sets_torch_threads_and_resolves_auto():
    import torch

    before = torch.get_num_threads()
    try:
        assert apply_runtime(RuntimeParams(device="auto", torch_threads=1)) in ("cpu", "cuda")
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)


def test_progress_logs_about_every_tenth_when_not_a_terminal(caplog, monkeypatch):
    monkeypatch.setattr("sys.stderr.isatty", lambda: False, raising=False)
    with caplog.at_level(logging.INFO, logger="paper_pipelines.progress"):
        assert list(progress(range(20), desc="loop")) == list(range(20))
    lines = [r.getMessage() for r in caplog.records]
    assert sum("loop:" in m and "/20" in m for m in lines) == 9  # 2, 4, ..., 18 of 20
    assert lines[-1].startswith("loop: 20 done")


def test_method_colour_is_stable_and_the_paper_method_is_blue():
    assert method_colour("OWL") == method_colour("owl")
    assert method_colour("ours") == "#0072B2"
    fig, ax = new_figure()
    assert isinstance(fig, Figure) and ax.figure is fig


def test_distinct_colours_never_repeat_within_one_figure_while_the_palette_lasts():
    # find two names that collide under the hash, then check the second one moves on
    names = [f"m{i}" for i in range(40)]
    first = {}
    pair = None
    for n in names:
        c = method_colour(n)
        if c in first:
            pair = (first[c], n)
            break
        first[c] = n
    assert pair is not None
    a, b = distinct_colours(pair)
    assert a == method_colour(pair[0]) and b != a
    assert b == PALETTE[(PALETTE.index(a) + 1) % len(PALETTE)]  # the next free entry
    many = distinct_colours(names[: len(PALETTE)], ours="m3")
    assert len(set(many)) == len(PALETTE) and many[3] == PALETTE[0]
    assert distinct_colours(["x", "X", "x"]) == [method_colour("x")] * 3
    assert distinct_colours(["cpl", "supervised"], ours="cpl")[0] == "#0072B2"


def test_to_jsonable_turns_numpy_and_nan_into_json():
    out = to_jsonable({"a": np.float32(0.5), "b": np.int64(3), "c": [np.nan, np.bool_(True)]})
    assert out == {"a": 0.5, "b": 3, "c": [None, True]}


def test_metrics_contract_names_missing_keys():
    with pytest.raises(KeyError, match=r"toy.metrics lacks \['acc'\]"):
        check_metrics_contract({"loss": 1.0}, ("loss", "acc"), "toy")
    assert check_metrics_contract({"loss": np.float64(1.0)}, ("loss",), "toy") == {"loss": 1.0}


def test_results_table_puts_method_first_and_requires_it():
    frame = results_table([{"acc": 0.5, "method": "a"}, {"acc": 0.7, "method": "b"}])
    assert list(frame.columns) == ["method", "acc"]
    with pytest.raises(ValueError, match="method"):
        results_table([{"acc": 0.5}])


def test_standardise_guards_constant_columns_and_reuses_statistics():
    x = np.array([[1.0, 5.0], [3.0, 5.0]])
    z, mean, scale = standardise(x)
    assert np.allclose(z, [[-1.0, 0.0], [1.0, 0.0]]) and np.allclose(scale, [1.0, 1.0])
    z2, _, _ = standardise(np.array([[2.0, 6.0]]), mean, scale)
    assert np.allclose(z2, [[0.0, 1.0]])


def test_sklearn_tables_load_offline_and_refuse_fetchers():
    x, y = load_sklearn_table("iris")
    assert x.shape == (150, 4) and set(np.unique(y)) == {0, 1, 2}
    with pytest.raises(ValueError, match="fetch_"):
        load_sklearn_table("california_housing")


def test_causal_lm_dataset_tiny_random_in_bfloat16_stays_on_cpu():
    import torch

    from paper_pipelines.common.lm import load_causal_lm
    from paper_pipelines.datasets import CausalLMDataset

    lm = load_causal_lm("tiny_random", dtype="bfloat16", device="cpu")
    weight = next(lm.model.parameters())
    assert weight.dtype == torch.bfloat16 and weight.device.type == "cpu"
    ids = lm.tokenizer("a b c", return_tensors="pt")["input_ids"]
    with torch.no_grad():
        logits = lm.model(input_ids=ids).logits
    assert logits.dtype == torch.bfloat16 and logits.shape[-1] == len(lm.tokenizer)
    assert CausalLMDataset(source="tiny_random").load().name == "tiny-random-llama"


def test_causal_lm_dataset_refuses_a_folder_it_cannot_use(tmp_path):
    from kedro.io import DatasetError

    from paper_pipelines.datasets import CausalLMDataset

    with pytest.raises(DatasetError, match="needs path"):
        CausalLMDataset(source="hf_folder")
    dataset = CausalLMDataset(source="hf_folder", path=str(tmp_path))
    assert not dataset.exists()
    with pytest.raises(DatasetError, match="not a Hugging Face model folder"):
        dataset.load()


def test_a_model_folder_loads_spread_by_a_device_map_and_is_left_where_accelerate_put_it(
    tmp_path, monkeypatch
):
    import transformers
    from kedro.io import DatasetError

    from paper_pipelines.common.lm import load_causal_lm, tiny_random_lm
    from paper_pipelines.datasets import CausalLMDataset

    model, tok = tiny_random_lm()
    model.save_pretrained(tmp_path)
    tok.save_pretrained(tmp_path)
    real = transformers.AutoModelForCausalLM.from_pretrained
    seen = []

    def spy(*args, **kwargs):
        seen.append(kwargs.get("device_map"))
        loaded = real(*args, **kwargs)
        if kwargs.get("device_map") is not None:  # a placed model must not be moved as a whole
            loaded.to = lambda *a, **k: (_ for _ in ()).throw(AssertionError("moved"))
        return loaded

    monkeypatch.setattr(transformers.AutoModelForCausalLM, "from_pretrained", spy)
    lm = CausalLMDataset(source="hf_folder", path=str(tmp_path), device_map="auto").load()
    assert seen == ["auto"] and not lm.model.training
    load_causal_lm("hf_folder", str(tmp_path))
    assert seen == ["auto", None]  # no device_map: the loader's plain call, then .to(device)
    with pytest.raises(ValueError, match="drop device_map and set device instead"):
        load_causal_lm("tiny_random", device_map="auto")
    with pytest.raises(DatasetError, match="device_map is only for source hf_folder"):
        CausalLMDataset(source="smollm2_wheel", device_map="auto")
