"""Shared small fixtures: the authored desktop (16 apps) and its gold subtasks (enumerated, no faults)."""

import functools

import numpy as np
import pytest
import yaml

from paper_pipelines.pipelines.omnibench import data, discovery, study
from tests.kedro_helpers import PROJECT_ROOT


@functools.cache
def _desktop():
    raw = yaml.safe_load((PROJECT_ROOT / data.APPS_FILE).read_text())
    return data.load_desktop(raw, None, 3)


@functools.cache
def _gold():
    desktop = _desktop()
    candidates = discovery.discover_subtasks(
        desktop, "enumerate", 1, 2, 4, np.random.default_rng(0)
    )
    records, _ = study.synthesize_all(desktop, candidates, 1, 0.0, np.random.default_rng(0))
    return records


@pytest.fixture
def desktop():
    return _desktop()


@pytest.fixture
def gold():
    return _gold()


@pytest.fixture
def gold_by_id():
    return {g["id"]: g for g in _gold()}
