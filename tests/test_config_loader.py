"""The project's config loader reads the parameter files once per session, and hands out copies."""

from pathlib import Path

from paper_pipelines.context import ProjectConfigLoader

CONF = str(Path(__file__).resolve().parents[1] / "conf")


def test_parameters_are_read_once_and_each_caller_gets_its_own_copy(monkeypatch):
    loader = ProjectConfigLoader(CONF, base_env="base", default_run_env="fast",
                                 merge_strategy={"parameters": "soft"})  # fmt: skip
    reads = []
    original = ProjectConfigLoader._read_raw_config

    def counting(self, key):
        reads.append(key)
        return original(self, key)

    monkeypatch.setattr(ProjectConfigLoader, "_read_raw_config", counting)
    first = loader["parameters"]
    first["dlp"]["seed"] = -1  # a caller's edit stays its own
    second = loader["parameters"]
    assert reads == ["parameters"]
    assert second["dlp"]["seed"] != -1 and second["dlp"]["model"] == first["dlp"]["model"]
    assert loader["catalog"] and reads == ["parameters", "catalog"]  # other keys as before
    loader["parameters"] = {"only": 1}  # set explicitly, as Kedro allows: that value wins
    assert loader["parameters"] == {"only": 1}


def test_runtime_params_are_part_of_what_is_read_once():
    loader = ProjectConfigLoader(CONF, base_env="base", default_run_env="fast",
                                 merge_strategy={"parameters": "soft"},
                                 runtime_params={"dlp": {"seed": 11}})  # fmt: skip
    assert loader["parameters"]["dlp"]["seed"] == 11 == loader["parameters"]["dlp"]["seed"]
