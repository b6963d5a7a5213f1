"""The project's KedroContext: parameters are checked for the pipelines being run before any node starts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kedro.config import OmegaConfigLoader
from kedro.framework.context import KedroContext
from kedro.framework.project import settings


class ProjectConfigLoader(OmegaConfigLoader):
    """OmegaConfigLoader that reads and merges the parameter files once per session.

    A run reads them twice (the project's check below, then Kedro's own validation), and with twenty
    papers each read costs about a second. Callers get a deep copy, so none can change another's view;
    setting ``loader["parameters"]`` replaces the cached value as it would the loaded one.
    """

    def __getitem__(self, key: str) -> dict[str, Any]:
        if key != "parameters" or key in self:
            return super().__getitem__(key)
        import copy

        memo = self.__dict__.get("_parameters_memo")
        if memo is None:
            memo = self.__dict__["_parameters_memo"] = super().__getitem__(key)
        return copy.deepcopy(memo)


class ProjectContext(KedroContext):
    """Adds :func:`paper_pipelines.common.params.check_parameters` in front of Kedro's own validation.

    Kedro builds validated parameter models when the session builds the catalog, i.e. before the first
    node and before any dataset is saved. The check here runs at that same moment and additionally catches
    misspelt block names, misspelt paper slugs and bad scalars (``seed``), with messages that name
    ``<slug>.<block>.<key>`` and the file to fix.
    """

    def _get_validated_params(self) -> dict[str, Any]:
        if not (
            self._validated_params_cache is not None
            and self._cached_validation_scope == self._pipelines_to_validate
        ):
            from kedro.framework.project import pipelines as registry

            from paper_pipelines.common.params import ParameterError, check_parameters
            from paper_pipelines.pipeline_registry import paper_slugs

            names = self._pipelines_to_validate or [n for n in registry if n != "__default__"]
            try:
                raw = self.config_loader["parameters"]
            except TypeError as exc:  # OmegaConf: a list and a mapping under one key, in two envs
                raise ParameterError(self._container_clash() or str(exc)) from None
            except Exception:  # no parameters at all: Kedro and InputCheckHooks report that
                raw = {}
            check_parameters(raw, [registry[n] for n in names], paper_slugs())
        return super()._get_validated_params()

    def _container_clash(self) -> str | None:
        """Name the key that is a list in one environment and a mapping (or scalar) in the other.

        OmegaConf's merge says only "Cannot merge incompatible container types"; this reads the
        parameter files of the base and the run environment to find where.
        """
        import yaml

        conf = Path(self.project_path) / settings.CONF_SOURCE
        base_env = settings.CONFIG_LOADER_ARGS.get("base_env", "base")
        run_env = self.env or settings.CONFIG_LOADER_ARGS.get("default_run_env", "local")

        def read(env: str) -> dict:
            merged: dict = {}
            root = conf / env
            files = (
                sorted(
                    p
                    for p in root.rglob("*.yml")
                    if p.relative_to(root).parts[0].startswith("parameters")
                )
                if root.exists()
                else []
            )
            for path in files:
                merged.update(yaml.safe_load(path.read_text()) or {})
            return merged

        def walk(a, b, key: str) -> str | None:
            if isinstance(a, dict) and isinstance(b, dict):
                for name in a.keys() & b.keys():
                    found = walk(a[name], b[name], f"{key}.{name}" if key else name)
                    if found:
                        return found
                return None
            if isinstance(a, list) != isinstance(b, list) and (
                isinstance(a, list | dict) or isinstance(b, list | dict)
            ):
                return key
            return None

        key = walk(read(base_env), read(run_env), "")
        if key is None:
            return None
        return (
            f"parameter {key} has a different shape in conf/{run_env} than in conf/{base_env} (a list "
            f"in one, a mapping or a single value in the other); give it the shape of conf/{base_env}."
        )
