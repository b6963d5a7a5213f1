"""Project CLI: `kedro run` finds the paper from the names it is given when no pipeline is named.

kedro-viz shows, for every dataset, the command that produces it: `kedro run --to-outputs=ata.metrics`,
without `--pipelines`. Plain `kedro run` runs `__default__`, which is only the main job (dlp), so that
command would fail for every other paper. This `run` is Kedro's own command (same options, same code path);
when no pipeline is given and the dataset, node or namespace names all belong to paper namespaces, it runs
those papers' pipelines. `kedro run` with no names still runs the main job only.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

import click
from kedro.framework.cli.project import run as kedro_run

logger = logging.getLogger(__name__)

# options whose values are dataset or node names ("<slug>.<name>") or namespaces ("<slug>")
NAMED = ("to_outputs", "from_inputs", "node_names", "from_nodes", "to_nodes", "namespaces")


def _names(value: Any) -> list[str]:
    if not value:
        return []
    if isinstance(value, str):
        value = value.split(",")
    return [str(v).strip() for v in value if str(v).strip()]


def papers_named(values: dict[str, Any], slugs: Iterable[str]) -> list[str]:
    """The paper slugs that the run's names belong to, or [] when any name is outside every paper."""
    slugs = set(slugs)
    found: list[str] = []
    for option in NAMED:
        for name in _names(values.get(option)):
            slug = name.split(".")[0]
            if slug not in slugs:
                return []
            if slug not in found:
                found.append(slug)
    return found


@click.group(name="paper-pipelines")
def cli() -> None:
    """Project commands (they replace Kedro's commands of the same name)."""


@cli.command(name="run", params=list(kedro_run.params), help=kedro_run.help)
@click.pass_context
def run(ctx: click.Context, **values: Any) -> Any:
    if not values.get("pipeline") and not values.get("pipelines"):
        from paper_pipelines.pipeline_registry import paper_slugs

        inferred = papers_named(values, paper_slugs())
        if inferred:
            logger.info("No pipeline named: running %s, the paper(s) the names belong to", inferred)
            values["pipelines"] = inferred
    from paper_pipelines.common.params import ParameterError

    try:
        return ctx.invoke(kedro_run, **values)
    except ParameterError as exc:
        # A user's typo, not a crash: the message alone (it names the key and the fix), exit status 1.
        raise click.ClickException(str(exc)) from None
