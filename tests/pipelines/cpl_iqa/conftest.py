"""One torch thread for the unit tests: tiny models on a shared 2-core machine spin-wait otherwise."""

import pytest
import torch


@pytest.fixture(autouse=True, scope="session")
def _one_torch_thread():
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)
