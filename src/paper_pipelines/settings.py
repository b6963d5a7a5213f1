"""Kedro project settings: config loading, hooks and offline defaults."""

import os

from paper_pipelines.catalog import AtomicDataCatalog
from paper_pipelines.context import ProjectConfigLoader, ProjectContext
from paper_pipelines.hooks import InputCheckHooks, RunRecordHooks

# Offline by default for every run, test and notebook: no model hub, no telemetry.
for _var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE"):
    os.environ.setdefault(_var, "1")
os.environ.setdefault("KEDRO_DISABLE_TELEMETRY", "1")
os.environ.setdefault("DO_NOT_TRACK", "1")

HOOKS = (InputCheckHooks(), RunRecordHooks())

# Optional MLflow tracking (pip install -e ".[tracking]") stays off unless asked for, so that tests and
# ordinary runs never log to a tracking store: PAPER_PIPELINES_MLFLOW=1 kedro run ... (docs/operations.md).
if os.environ.get("PAPER_PIPELINES_MLFLOW") != "1":
    DISABLE_HOOKS_FOR_PLUGINS = ("kedro-mlflow",)

# Parameters are checked for the pipelines being run before any node starts (see context.py).
CONTEXT_CLASS = ProjectContext

# Versioned saves are write-then-rename: a killed run never leaves a broken newest version (catalog.py).
DATA_CATALOG_CLASS = AtomicDataCatalog

# The parameter files are read once per session however often they are asked for (context.py).
CONFIG_LOADER_CLASS = ProjectConfigLoader
CONFIG_LOADER_ARGS = {
    "base_env": "base",
    "default_run_env": "local",
    # An environment overrides only the keys it names (conf/fast/parameters/<slug>.yml sets sizes only).
    "merge_strategy": {"parameters": "soft", "globals": "soft"},
}
