"""kedro-mlflow (the optional [tracking] extra) must never be active in tests or by default.

Once installed, kedro-mlflow registers its hooks for every Kedro run through an entry point; the
project keeps it off unless a user opts in (docs/operations.md, "Experiment tracking").
"""

from kedro.framework.hooks.manager import _create_hook_manager, _register_hooks_entry_points
from kedro.framework.project import settings
from kedro.framework.startup import bootstrap_project

from tests.kedro_helpers import PROJECT_ROOT


def test_no_mlflow_hooks_are_registered_for_runs():
    bootstrap_project(PROJECT_ROOT)
    manager = _create_hook_manager()
    _register_hooks_entry_points(manager, settings.DISABLE_HOOKS_FOR_PLUGINS)
    plugins = [f"{name} ({type(hook).__module__})" for name, hook in manager.list_name_plugin()]
    assert not [p for p in plugins if "mlflow" in p.lower()], plugins
