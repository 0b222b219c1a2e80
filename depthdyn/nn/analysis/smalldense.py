"""The small dense eigenproblems of the Krylov iterations, one matrix per thread.

Every convergence test of :mod:`.krylov` and :mod:`.blockkrylov` solves a batch of dense
eigenproblems of the iteration's size (tens to a few hundred), one per problem. LAPACK's own
threads do not pay at that size and can cost far more than they give: on a shared 2-core
machine a batch of 96 symmetric 120 x 120 problems took 0.14 s on one thread and 1.7 s on two.
So each matrix runs on one thread, and a batch is spread over torch's threads instead (1.8x on
two cores for the nonsymmetric eigenvalues of Arnoldi; on a GPU's host, with its many cores and
the products on the GPU, this work is most of what is left of an analysis). Batches on a GPU
come to the CPU for this: CUDA's batched symmetric solver serves matrices of at most 32 rows,
larger ones go through a loop of one solver call per matrix (pytorch/pytorch#175585), each
slower than the CPU's on matrices of this size.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from threading import Lock

import torch

__all__ = ["per_matrix"]


def per_matrix(fn: Callable, X: torch.Tensor, *, spread_from: int = 32):
    """``fn(X)`` for a batch ``X`` ``(P, s, s)`` (its result a tensor or a tuple of tensors,
    batched along the first axis), on ``X``'s device: computed on the CPU, LAPACK on one thread per matrix,
    batches of matrices of ``spread_from`` rows or more spread over ``torch.get_num_threads()``
    threads."""
    if X.device.type != "cpu":
        out = per_matrix(fn, X.cpu(), spread_from=spread_from)
        return out.to(X.device) if isinstance(out, torch.Tensor) else type(out)(o.to(X.device) for o in out)
    with _ONE_AT_A_TIME:  # torch's thread count is global: a second caller would restore a 1
        threads = torch.get_num_threads()
        workers = min(threads, X.shape[0])
        torch.set_num_threads(1)
        try:
            if workers <= 1 or X.shape[-1] < spread_from:
                return fn(X)
            parts = list(_pool(workers).map(fn, X.chunk(workers)))
        finally:
            torch.set_num_threads(threads)
    if isinstance(parts[0], torch.Tensor):
        return torch.cat(parts)
    return type(parts[0])(torch.cat(p) for p in zip(*parts, strict=True))


_ONE_AT_A_TIME = Lock()


@cache
def _pool(workers: int) -> ThreadPoolExecutor:
    """One pool per size, kept: starting its threads anew cost 3 ms a call (16 threads), and an
    analysis makes a few dozen calls."""
    return ThreadPoolExecutor(workers, thread_name_prefix="depthdyn-dense")
