"""Shared fixtures: an isolated project copy for end-to-end runs, and a network guard."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from tests.kedro_helpers import make_project_copy

for _var in ("KEDRO_DISABLE_TELEMETRY", "DO_NOT_TRACK", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
    os.environ.setdefault(_var, "1")


@pytest.fixture
def project_copy(tmp_path: Path) -> Path:
    """A fresh project copy whose data/ is empty; see tests.kedro_helpers.make_project_copy."""
    return make_project_copy(tmp_path / "project")


@pytest.fixture
def no_network(monkeypatch):
    """Any attempt to open an internet connection raises; returns the list of attempted addresses."""
    attempts: list[object] = []
    real_connect = socket.socket.connect

    def guarded_connect(self, address):
        if self.family in (socket.AF_INET, socket.AF_INET6):
            attempts.append(address)
            raise OSError(f"network access attempted during an offline run: {address}")
        return real_connect(self, address)

    def guarded_create_connection(address, *args, **kwargs):
        attempts.append(address)
        raise OSError(f"network access attempted during an offline run: {address}")

    monkeypatch.setattr(socket.socket, "connect", guarded_connect)
    monkeypatch.setattr(socket, "create_connection", guarded_create_connection)
    return attempts
