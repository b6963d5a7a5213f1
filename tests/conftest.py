"""Shared fixtures: an isolated project copy for end-to-end runs, and a network guard."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.kedro_helpers import block_network, make_project_copy

for _var in ("KEDRO_DISABLE_TELEMETRY", "DO_NOT_TRACK", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
    os.environ.setdefault(_var, "1")


@pytest.fixture
def project_copy(tmp_path: Path) -> Path:
    """A fresh project copy whose data/ is empty; see tests.kedro_helpers.make_project_copy."""
    return make_project_copy(tmp_path / "project")


@pytest.fixture
def no_network():
    """Any attempt to open an internet connection raises; yields the attempted addresses."""
    with block_network() as attempts:
        yield attempts
