"""Helpers shared by the tests of models as their libraries ship them (imported by the test
modules of this folder, which pytest puts on ``sys.path``)."""

import importlib

import numpy as np
import pytest


def library(name):
    """The module, or a skip: beside a torch it was not built for, torchvision (imported by timm
    at import time) fails with a RuntimeError, not an ImportError."""
    try:
        return importlib.import_module(name)
    except Exception as exc:  # noqa: BLE001
        pytest.skip(f"{name} is not importable here: {type(exc).__name__}: {str(exc)[:120]}")


def full_jacobian(fn, x):
    """``d fn(x) / d x`` of the whole batch, ``(*y.shape, *x.shape)``, by reverse mode (attention
    on its math backend: vmap of the fused CPU kernel's backward falls back)."""
    import torch  # here: this module is also collected (for doctests) where torch is not installed
    from torch.nn.attention import SDPBackend, sdpa_kernel

    with sdpa_kernel([SDPBackend.MATH]):
        return torch.func.jacrev(fn)(x.detach()).detach()


def rel(a, b) -> float:
    """Largest relative difference of ``a`` from the reference ``b``."""
    a, b = np.asarray(a), np.asarray(b)
    return float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-300)))
