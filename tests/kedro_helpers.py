"""Helpers for end-to-end tests: an isolated project copy and a real KedroSession run."""

from __future__ import annotations

import os
import shutil
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from paper_pipelines.common.params import nest_dotted

PROJECT_ROOT = Path(__file__).resolve().parents[1]


def make_project_copy(dest: Path) -> Path:
    """A throw-away project: the real conf/ and pyproject.toml, an empty data/ and src/.

    The package is imported from the installed (editable) source, so only configuration and
    authored data are copied; runs write under ``dest/data`` and never touch the repository's data/.
    """
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copytree(PROJECT_ROOT / "conf", dest / "conf", ignore=shutil.ignore_patterns("local"))
    (dest / "conf" / "local").mkdir(exist_ok=True)
    for name in ("pyproject.toml", ".telemetry"):
        shutil.copy(PROJECT_ROOT / name, dest / name)
    (dest / "src").mkdir(exist_ok=True)
    (dest / "data").mkdir(exist_ok=True)
    authored = PROJECT_ROOT / "data" / "authored"
    if authored.exists():
        shutil.copytree(authored, dest / "data" / "authored")
    return dest


def run_session(project_path: Path, pipeline: str, env: str = "fast", **run_kwargs: Any) -> dict:
    """Run one registered pipeline through a real KedroSession rooted at ``project_path``.

    Extra keyword arguments go to ``session.run`` (e.g. ``load_versions``); ``runtime_params``
    (dotted keys, like ``kedro run --params "dlp.seed=1"``) go to ``KedroSession.create``.
    """
    from kedro.framework.session import KedroSession
    from kedro.framework.startup import bootstrap_project

    runtime_params = nest_dotted(run_kwargs.pop("runtime_params", None) or {})
    bootstrap_project(project_path)
    with KedroSession.create(
        project_path=project_path, env=env, runtime_params=runtime_params or None
    ) as session:
        return session.run(pipeline_names=[pipeline], **run_kwargs)


# A shared switch for the papers' fast-run fixtures (tca, srca, core_kernel, neutrality, si_pipeline):
# unset, they run at the paper's default seed, as in `make test`; set to an integer s, they run with
# runtime_params {"<slug>.seed": s}, so the modules' acceptance-style tests can be checked at other seeds.
# benchmarks/fast_acceptance_seeds.py sets it for seeds 0-4 and runs only those tests: with it set, a
# test that compares against a default-seed run or another seed's run in the same module is not meant.
FAST_SEED_ENV = "PAPER_PIPELINES_FAST_SEED"


def fast_seed_params(slug: str) -> dict:
    """``runtime_params`` for a paper's fast-run fixture: ``{"<slug>.seed": s}`` when the environment
    variable PAPER_PIPELINES_FAST_SEED is set to ``s``, else ``{}`` (the paper's default seed)."""
    value = os.environ.get(FAST_SEED_ENV, "").strip()
    if not value:
        return {}
    try:
        seed = int(value)
    except ValueError:
        raise ValueError(f"{FAST_SEED_ENV} = {value!r} is not an integer seed") from None
    return {f"{slug}.seed": seed}


def log_messages(caplog: Any, logger: str) -> list[str]:
    """The messages pytest's ``caplog`` captured from one logger, in order."""
    return [r.getMessage() for r in caplog.records if r.name == logger]


def versions_of(path: Path) -> list[str]:
    """Version folders of a versioned dataset stored at ``path`` (a folder named like the file)."""
    return sorted(p.name for p in path.iterdir() if p.is_dir()) if path.exists() else []


def files_under(path: Path) -> set[Path]:
    """Every file below ``path`` (to prove a failed run wrote nothing)."""
    return {p for p in path.rglob("*") if p.is_file()} if path.exists() else set()


def latest_json(path: Path) -> dict:
    """The newest version of a versioned JSON dataset stored at ``path``."""
    import json

    version = versions_of(path)[-1]
    return json.loads((path / version / path.name).read_text())


@contextmanager
def block_network() -> Iterator[list]:
    """Inside the block any internet connection raises; yields the list of attempted addresses."""
    attempts: list = []
    real_connect, real_create = socket.socket.connect, socket.create_connection

    def guarded_connect(self, address):
        if self.family in (socket.AF_INET, socket.AF_INET6):
            attempts.append(address)
            raise OSError(f"network access attempted during an offline run: {address}")
        return real_connect(self, address)

    def guarded_create_connection(address, *args, **kwargs):
        attempts.append(address)
        raise OSError(f"network access attempted during an offline run: {address}")

    socket.socket.connect, socket.create_connection = guarded_connect, guarded_create_connection
    try:
        yield attempts
    finally:
        socket.socket.connect, socket.create_connection = real_connect, real_create


OTHER_SEED = 7  # tests.test_other_seed: every paper's fast run at a seed other than its default


def assert_other_seed_contract(project_path: Path, slug: str, seed: int = OTHER_SEED) -> None:
    """The latest fast run of ``slug`` in ``project_path``, made with ``{slug}.seed = seed`` only,
    kept the paper's metrics contract, reported every claim and recorded success."""
    import importlib

    import pandas as pd

    report = importlib.import_module(f"paper_pipelines.pipelines.{slug}.report")
    reporting = project_path / "data/fast/08_reporting" / slug
    metrics = latest_json(reporting / "metrics.json")
    assert set(report.METRICS) <= set(metrics)
    claims_path = reporting / "claims.parquet"
    claims = pd.read_parquet(claims_path / versions_of(claims_path)[-1] / "claims.parquet")
    assert list(claims["claim"]) == [c.id for c in report.CLAIMS]
    record = latest_json(project_path / "data/fast/09_tracking/run_record.json")
    assert record["status"] == "success"
    assert record["runtime_params"] == {slug: {"seed": seed}}
