"""The project's KedroContext: parameters are checked for the pipelines being run before any node starts."""

from __future__ import annotations

from typing import Any

from kedro.framework.context import KedroContext


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

            from paper_pipelines.common.params import check_parameters
            from paper_pipelines.pipeline_registry import paper_slugs

            names = self._pipelines_to_validate or [n for n in registry if n != "__default__"]
            try:
                raw = self.config_loader["parameters"]
            except Exception:  # no parameters at all: Kedro and InputCheckHooks report that
                raw = {}
            check_parameters(raw, [registry[n] for n in names], paper_slugs())
        return super()._get_validated_params()
