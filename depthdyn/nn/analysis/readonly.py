"""Read-only NumPy arrays: the arrays that the analysis records hold cannot be changed after the fact."""

from __future__ import annotations

import numpy as np

__all__ = ["frozen"]


def frozen(a) -> np.ndarray:
    """A read-only copy of ``a`` as an array."""
    a = np.array(a)
    a.flags.writeable = False
    return a
