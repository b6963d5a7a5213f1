"""Shared fixtures: an isolated project copy for end-to-end runs, and a socket guard."""

from __future__ import annotations

import os
import shutil
import socket
from pathlib import Path

import pytest

os.environ.setdefault("KEDRO_DISABLE_TELEMETRY", "1")
os.environ.setdefault("DO_NOT_TRACK", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

PROJECT_ROOT = Path(__file__).resolve().parents[1]


def make_project_copy(dest: Path) -> Path:
    """A throw-away project: the real conf/ and pyproject.toml, an empty data/ and src/.

    The package itself is imported from the installed (editable) source, so only configuration and
    data are copied; runs write under ``dest/data`` and never touch the repository's data/.
    """
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copytree(PROJECT_ROOT / "conf", dest / "conf", ignore=shutil.ignore_patterns("local"))
    (dest / "conf" / "local").mkdir(exist_ok=True)
    shutil.copy(PROJECT_ROOT / "pyproject.toml", dest / "pyproject.toml")
    shutil.copy(PROJECT_ROOT / ".telemetry", dest / ".telemetry")
    (dest / "src").mkdir(exist_ok=True)
    (dest / "data").mkdir(exist_ok=True)
    authored = PROJECT_ROOT / "data" / "authored"
    if authored.exists():
        shutil.copytree(authored, dest / "data" / "authored")
    return dest


@pytest.fixture
def project_copy(tmp_path: Path) -> Path:
    return make_project_copy(tmp_path / "project")


def run_session(project_path: Path, pipeline: str, env: str = "fast", **run_kwargs):
    """Run one registered pipeline through a real KedroSession in ``project_path``."""
    from kedro.framework.session import KedroSession
    from kedro.framework.startup import bootstrap_project

    bootstrap_project(project_path)
    with KedroSession.create(project_path=project_path, env=env) as session:
        return session.run(pipeline_names=[pipeline], **run_kwargs)


def versions_of(path: Path) -> list[str]:
    """Version folders of a versioned dataset at ``path`` (a directory named like the file)."""
    return sorted(p.name for p in path.iterdir() if p.is_dir()) if path.exists() else []


@pytest.fixture
def no_network(monkeypatch):
    """Any attempt to open a network connection fails the test (Unix sockets stay allowed)."""
    attempts: list[object] = []
    real_connect = socket.socket.connect

    def guarded_connect(self, address):
        if self.family in (socket.AF_INET, socket.AF_INET6):
            attempts.append(address)
            raise OSError(f"network access attempted during an offline run: {address}")
        return real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", guarded_connect)

    def guarded_create_connection(address, *args, **kwargs):
        attempts.append(address)
        raise OSError(f"network access attempted during an offline run: {address}")

    monkeypatch.setattr(socket, "create_connection", guarded_create_connection)
    return attempts
