"""Every si_pipeline test runs under a per-test time limit (a mutant that stalls a line search fails
instead of hanging); tests that need longer say so with their own ``timeout`` mark."""

import pytest

PER_TEST_SECONDS = 240  # the slowest test here takes about 100 s on the loaded 2-core machine


def pytest_collection_modifyitems(items):
    for item in items:
        if "si_pipeline" in str(item.fspath) and item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(PER_TEST_SECONDS))
