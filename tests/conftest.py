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


# `make test` runs the suite on both cores (pytest-xdist). Each file goes to one worker, so its
# module-scoped fast run happens once; the files below have no shared fixture and one fast run per
# test (one per paper), so their tests are spread one by one. (xdist_group marks added at collection
# are not seen by xdist's own grouping, hence a scheduler.)
SPREAD_PER_TEST = ("tests/test_other_seed.py",)


def pytest_xdist_make_scheduler(config, log):
    from xdist.scheduler import LoadScopeScheduling

    class FileOrTestScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return nodeid if path in SPREAD_PER_TEST else path

    return FileOrTestScheduling(config, log)
