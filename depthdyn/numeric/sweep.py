"""Parameter sweeps over Cartesian grids in bounded-memory chunks, serial or scaled out.

:func:`sweep` walks the grid in C order, hands each chunk of at most ``chunk_size`` points
to a vectorised function as flat 1-D arrays (one per axis), and writes the result into the
grid-shaped output. Chunks are the same whoever computes them (this process, any
:class:`concurrent.futures.Executor`, or a ``dask.distributed`` cluster), so every way of
running gives the bit-identical array for a deterministic function.
"""

from __future__ import annotations

import sys
from collections import deque
from collections.abc import Callable, Mapping

import numpy as np

from ..errors import OptionalDependencyError, ParameterError, ShapeError

__all__ = ["sweep", "grid_chunks", "DEFAULT_CHUNK"]

#: Default number of grid points per chunk (a few MB per float64 temporary).
DEFAULT_CHUNK = 1 << 18

_DASK_HINT = 'pip install "depthdyn[dask]"  (or: pip install "dask[distributed]")'


def _axes(grid_axes: Mapping) -> tuple[tuple[str, ...], tuple[np.ndarray, ...]]:
    if not isinstance(grid_axes, Mapping) or not grid_axes:
        raise ParameterError("grid_axes must be a non-empty mapping name -> 1-D array of values")
    names, values = [], []
    for name, vals in grid_axes.items():
        arr = np.asarray(vals)
        if arr.ndim != 1 or arr.size == 0:
            raise ShapeError(f"grid axis {name!r} must be a non-empty 1-D array, got shape {arr.shape}")
        names.append(str(name))
        values.append(arr)
    return tuple(names), tuple(values)


def grid_chunks(shape: tuple, chunk_size: int) -> list[tuple[int, int]]:
    """Flat ``[start, stop)`` ranges of at most ``chunk_size`` points covering the grid.

    Examples
    --------
    >>> grid_chunks((3, 4), 5)
    [(0, 5), (5, 10), (10, 12)]
    """
    total = int(np.prod(shape, dtype=np.int64))
    return [(s, min(s + chunk_size, total)) for s in range(0, total, chunk_size)]


def _evaluate(func: Callable, names: tuple, values: tuple, shape: tuple, start: int, stop: int,
              fixed: Mapping):
    """Run ``func`` on one chunk (top level, so process pools can pickle it)."""
    index = np.unravel_index(np.arange(start, stop), shape)
    kwargs = {n: v[i] for n, v, i in zip(names, values, index, strict=True)}
    return func(**kwargs, **fixed)


def _leaves(result) -> list:
    if isinstance(result, Mapping):
        return list(result.values())
    if isinstance(result, tuple):
        return list(result)
    return [result]


def _rebuild(template, leaves: list):
    if isinstance(template, Mapping):
        return dict(zip(template.keys(), leaves, strict=True))
    if isinstance(template, tuple):
        return tuple(leaves)
    return leaves[0]


def _store(out, result, start: int, stop: int, shape: tuple, out_given):
    """Write one chunk's result into the flat output arrays (allocated from the first chunk)."""
    parts = [np.asarray(x) for x in _leaves(result)]
    for part in parts:
        if part.ndim == 0 or part.shape[0] != stop - start:
            raise ShapeError(
                f"the swept function must return arrays whose first axis has one entry per grid point "
                f"({stop - start} in this chunk), got shape {part.shape}"
            )
    if out is None:
        if out_given is not None:
            arrays = _leaves(out_given)
            for arr, part in zip(arrays, parts, strict=True):
                if arr.shape != shape + part.shape[1:]:
                    want = shape + part.shape[1:]
                    raise ShapeError(f"out has shape {arr.shape}; the sweep produces {want}")
        else:
            arrays = [np.empty(shape + p.shape[1:], p.dtype) for p in parts]
        out = (result, arrays)
    template, arrays = out
    if len(parts) != len(arrays):
        raise ShapeError("the swept function returned a different structure for different chunks")
    for arr, part in zip(arrays, parts, strict=True):
        arr.reshape((-1,) + arr.shape[len(shape):])[start:stop] = part
    return out


class _Progress:
    """tqdm if installed, else a one-line counter on stderr; nothing when disabled."""

    def __init__(self, enabled: bool, total: int):
        self.bar, self.total, self.done, self.enabled = None, total, 0, enabled
        if enabled:
            try:
                from tqdm.auto import tqdm
            except ImportError:
                tqdm = None
            if tqdm is not None:
                self.bar = tqdm(total=total, desc="sweep", unit="chunk")

    def update(self) -> None:
        self.done += 1
        if self.bar is not None:
            self.bar.update(1)
        elif self.enabled:
            end = "\n" if self.done == self.total else ""
            print(f"\rsweep: {self.done}/{self.total} chunks", end=end, file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _dask_client(executor):
    """``(client, close)`` for ``"dask"``, a dask Client or a dask cluster; else ``(None, None)``.

    ``close`` shuts down what this sweep created (a client, and a cluster only if it made one).
    """
    module = type(executor).__module__ or ""
    if isinstance(executor, str):
        is_dask = executor == "dask"
    else:
        is_dask = module.split(".")[0] in ("distributed", "dask")
    if not is_dask:
        if isinstance(executor, str):
            raise ParameterError(f"executor must be an Executor, a dask Client or 'dask', got {executor!r}")
        return None, None
    try:
        from dask import distributed
    except ImportError:
        raise OptionalDependencyError(f"a sweep on dask needs dask.distributed: {_DASK_HINT}") from None
    if isinstance(executor, distributed.Client):
        return executor, None
    if isinstance(executor, str):
        try:
            return distributed.get_client(), None
        except ValueError:  # no client yet: a local cluster for this sweep only
            cluster = distributed.LocalCluster(processes=False)
            client = distributed.Client(cluster)
            return client, lambda: (client.close(), cluster.close())
    client = distributed.Client(executor)  # a cluster object: borrow it, close only our client
    return client, client.close


def sweep(func: Callable, grid_axes: Mapping, *, chunk_size: int = DEFAULT_CHUNK, executor=None,
          progress: bool = False, fixed: Mapping | None = None, out=None, max_pending: int | None = None):
    """Evaluate a vectorised ``func`` over the Cartesian grid of ``grid_axes``, chunk by chunk.

    Parameters
    ----------
    func : callable
        ``func(**{name: values}, **fixed)`` with one flat 1-D array per axis (the grid
        points of one chunk, C order) returns an array whose first axis runs over those
        points (extra trailing axes are kept), or a tuple or dict of such arrays. For a
        process pool or dask it must be picklable (a module-level function or a
        :func:`functools.partial` of one).
    grid_axes : mapping
        Axis name -> 1-D array of values; the grid has shape ``(len(a1), len(a2), ...)``.
    chunk_size : int
        Points per chunk: the memory bound for ``func``'s temporaries.
    executor : concurrent.futures.Executor, dask Client or cluster, or "dask", optional
        Where chunks run; ``None`` runs them here, in order. ``"dask"`` uses the current
        ``dask.distributed`` client (or a temporary local cluster); a cluster object gets a
        temporary client. Needs the ``dask`` extra.
    progress : bool
        Show a progress bar (tqdm if installed, else a counter on stderr).
    fixed : mapping, optional
        Constant keyword arguments passed to every call.
    out : array or tuple/dict of arrays, optional
        Preallocated grid-shaped output (e.g. :class:`numpy.memmap` for grids larger than
        memory), with the structure ``func`` returns.
    max_pending : int, optional
        Chunks in flight at once with an executor (default: twice its workers, at least 4),
        which bounds the memory held by finished but unwritten chunks.

    Returns
    -------
    numpy.ndarray or tuple or dict
        Shape ``grid_shape + trailing``, the same structure as ``func`` returns.

    Raises
    ------
    ParameterError, ShapeError
        Bad grid axes, chunk size or return shapes.
    OptionalDependencyError
        A dask executor without ``dask.distributed`` installed.

    Examples
    --------
    >>> import numpy as np
    >>> def radius(lam, m):
    ...     return np.maximum(abs(lam), m)
    >>> sweep(radius, {"lam": np.array([-2.0, 0.5]), "m": np.array([0.0, 1.0, 3.0])}, chunk_size=4)
    array([[2. , 2. , 3. ],
           [0.5, 1. , 3. ]])
    """
    names, values = _axes(grid_axes)
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, (int, np.integer)) or chunk_size < 1:
        raise ParameterError(f"chunk_size must be a positive integer, got {chunk_size!r}")
    fixed = dict(fixed or {})
    clash = sorted(set(fixed) & set(names))
    if clash:
        raise ParameterError(f"{clash} are both grid axes and fixed arguments")
    shape = tuple(v.size for v in values)
    chunks = grid_chunks(shape, int(chunk_size))
    bar = _Progress(progress, len(chunks))
    client, close = _dask_client(executor)
    state = None
    try:
        if executor is None:
            for start, stop in chunks:
                res = _evaluate(func, names, values, shape, start, stop, fixed)
                state = _store(state, res, start, stop, shape, out)
                bar.update()
        else:
            submit = (lambda *a: client.submit(*a, pure=False)) if client is not None else executor.submit
            workers = _workers(client, executor)
            limit = max_pending or max(4, 2 * workers)
            pending: deque = deque()
            for start, stop in chunks:
                future = submit(_evaluate, func, names, values, shape, start, stop, fixed)
                pending.append((start, stop, future))
                if len(pending) >= limit:
                    state = _collect(pending.popleft(), state, shape, out, bar)
            while pending:
                state = _collect(pending.popleft(), state, shape, out, bar)
    finally:
        bar.close()
        if close is not None:
            close()
    template, arrays = state
    return _rebuild(template, arrays)


def _workers(client, executor) -> int:
    if client is not None:
        return max(1, len(client.scheduler_info().get("workers", {})))
    return int(getattr(executor, "_max_workers", 1) or 1)


def _collect(item, state, shape, out, bar):
    start, stop, future = item
    state = _store(state, future.result(), start, stop, shape, out)
    bar.update()
    return state
