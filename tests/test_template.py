"""`kedro pipeline create <slug>` lays out a paper with the house shape, and the result runs at once."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.kedro_helpers import PROJECT_ROOT, files_under

KEDRO = str(Path(sys.executable).with_name("kedro"))
SLUG = "demo_paper"


@pytest.fixture(scope="module")
def created(tmp_path_factory) -> Path:
    """A project copy (with its own src/) in which `kedro pipeline create demo_paper` has run."""
    project = tmp_path_factory.mktemp("template") / "project"
    project.mkdir()
    for name in ("pyproject.toml", ".telemetry"):
        shutil.copy(PROJECT_ROOT / name, project / name)
    for name in ("conf", "templates"):
        shutil.copytree(PROJECT_ROOT / name, project / name, ignore=shutil.ignore_patterns("local"))
    (project / "conf/local").mkdir()
    shutil.copytree(
        PROJECT_ROOT / "src/paper_pipelines",
        project / "src/paper_pipelines",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    tests = project / "tests"
    tests.mkdir()
    for name in ("__init__.py", "kedro_helpers.py", "conftest.py"):
        shutil.copy(PROJECT_ROOT / "tests" / name, tests / name)
    (tests / "pipelines").mkdir()
    (tests / "pipelines/__init__.py").touch()
    (project / "docs/papers").mkdir(parents=True)
    (project / "data").mkdir()
    result = _run([KEDRO, "pipeline", "create", SLUG], project)
    assert result.returncode == 0, result.stdout + result.stderr
    return project


def _run(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(cwd / "src") + os.pathsep + str(cwd)}
    env["KEDRO_DISABLE_TELEMETRY"] = "1"
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_create_lays_out_every_file_of_the_shape(created):
    from tests.test_registry import ROOM_FILES

    room = created / "src/paper_pipelines/pipelines" / SLUG
    assert all((room / name).is_file() for name in ROOM_FILES)
    assert not (room / "_project").exists() and not (room / "config").exists()
    for path in (
        f"conf/base/parameters/{SLUG}.yml",
        f"conf/base/catalog/{SLUG}.yml",
        f"conf/fast/parameters/{SLUG}.yml",
        f"conf/paper/parameters/{SLUG}.yml",
        f"conf/paper/catalog/{SLUG}.yml",
        f"docs/papers/{SLUG}.md",
        f"tests/pipelines/{SLUG}/test_pipeline.py",
    ):
        assert (created / path).is_file(), path
    assert "{{" not in (room / "pipeline.py").read_text()


def test_created_files_are_ruff_clean(created):
    ruff = str(Path(sys.executable).with_name("ruff"))
    paths = [f"src/paper_pipelines/pipelines/{SLUG}", f"tests/pipelines/{SLUG}"]
    for cmd in ([ruff, "check", *paths], [ruff, "format", "--check", *paths]):
        result = _run(cmd, created)
        assert result.returncode == 0, result.stdout + result.stderr


def test_created_paper_runs_fast_and_its_tests_pass(created):
    run = _run([KEDRO, "run", f"--pipeline={SLUG}", "--env", "fast"], created)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    reporting = created / "data/fast/08_reporting" / SLUG
    assert {p.name for p in files_under(reporting)} >= {"metrics.json", "results.parquet"}
    tests = _run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"tests/pipelines/{SLUG}"],
        created,
    )
    assert tests.returncode == 0, tests.stdout[-3000:]


def test_created_paper_rejects_a_bad_parameter_before_writing(created):
    before = files_under(created / "data")
    run = _run(
        [KEDRO, "run", f"--pipeline={SLUG}", "--env", "fast", "--params", f"{SLUG}.data.n=3"],
        created,
    )
    assert run.returncode != 0
    assert f"{SLUG}.data.n" in run.stdout + run.stderr
    assert files_under(created / "data") == before
