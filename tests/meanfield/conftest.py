"""Shared set-up of the mean-field tests."""

import pytest


@pytest.fixture(scope="module")
def one_torch_thread():
    """One torch thread per module: the harness's tensors are small, more threads only spin."""
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
