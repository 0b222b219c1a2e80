"""Chunked parameter sweeps: serial, thread and process pools, dask (depthdyn.numeric.sweep)."""

from __future__ import annotations

import functools
import sys
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

import numpy as np
import pytest

from depthdyn import momentum
from depthdyn.errors import OptionalDependencyError, ParameterError, ShapeError
from depthdyn.numeric.bridge import batch_coefficients
from depthdyn.numeric.sweep import grid_chunks, sweep

AXES = {"lam": np.linspace(-3.0, 0.5, 37), "m": np.linspace(0.0, 0.95, 23), "eta": np.array([0.5, 1.0, 2.0])}


def momentum_radius(lam, m, eta):
    """Spectral radius of r^2 - (1 + m + eta lam) r + m, vectorised (module level: picklable)."""
    b = 1 + m + eta * lam
    disc = (b * b - 4 * m).astype(complex)
    root = np.sqrt(disc)
    return np.maximum(abs((b + root) / 2), abs((b - root) / 2))


def stats(lam, m, eta, scale=1.0):
    """Two outputs, one with a trailing axis."""
    return {"radius": scale * momentum_radius(lam, m, eta), "pair": np.stack([lam, m * eta], axis=-1)}


def reference(func, axes, **fixed):
    grids = np.meshgrid(*axes.values(), indexing="ij")
    return func(**dict(zip(axes, grids, strict=True)), **fixed)


@pytest.mark.parametrize("chunk", [1, 7, 500, 10**6])
def test_serial_sweep_equals_whole_grid_evaluation(chunk):
    got = sweep(momentum_radius, AXES, chunk_size=chunk)
    want = reference(momentum_radius, AXES)
    assert got.shape == (37, 23, 3)
    assert np.array_equal(got, want)


def test_chunks_bound_the_memory_and_cover_the_grid():
    seen = []

    def spy(lam, m):
        seen.append(lam.size)
        return lam * 10 + m

    got = sweep(spy, {"lam": np.arange(5.0), "m": np.arange(3.0)}, chunk_size=4)
    assert seen == [4, 4, 4, 3] and max(seen) <= 4
    assert np.array_equal(got, np.arange(5.0)[:, None] * 10 + np.arange(3.0)[None, :])
    assert grid_chunks((5, 3), 4) == [(0, 4), (4, 8), (8, 12), (12, 15)]


def test_structured_outputs_and_fixed_arguments():
    got = sweep(stats, AXES, chunk_size=100, fixed={"scale": 2.0})
    want = reference(stats, AXES, scale=2.0)
    assert set(got) == {"radius", "pair"}
    assert got["pair"].shape == (37, 23, 3, 2)
    assert np.array_equal(got["radius"], want["radius"]) and np.array_equal(got["pair"], want["pair"])
    tup = sweep(lambda lam, m: (lam + m, lam > m), {"lam": np.arange(3.0), "m": np.arange(2.0)}, chunk_size=2)
    assert isinstance(tup, tuple) and tup[1].dtype == bool and tup[1].shape == (3, 2)


def test_library_function_over_a_grid():
    rec = momentum()
    func = functools.partial(batch_coefficients, rec)
    axes = {"lam": np.linspace(-2, 0, 11), "m": np.array([0.0, 0.5])}
    got = sweep(func, axes, chunk_size=5, fixed={"eta": 1.0})
    assert got.shape == (11, 2, 3)
    want = batch_coefficients(rec, lam=axes["lam"][:, None], m=axes["m"][None, :], eta=1.0)
    assert np.array_equal(got, want)


def test_preallocated_out(tmp_path):
    out = np.lib.format.open_memmap(tmp_path / "grid.npy", mode="w+", dtype=float, shape=(37, 23, 3))
    res = sweep(momentum_radius, AXES, chunk_size=300, out=out)
    assert res is out
    assert np.array_equal(np.load(tmp_path / "grid.npy"), reference(momentum_radius, AXES))
    with pytest.raises(ShapeError, match="out has shape"):
        sweep(momentum_radius, AXES, out=np.empty((2, 2)))


def test_thread_pool_gives_identical_bits():
    serial = sweep(momentum_radius, AXES, chunk_size=97)
    with ThreadPoolExecutor(max_workers=2) as pool:
        threaded = sweep(momentum_radius, AXES, chunk_size=97, executor=pool, max_pending=3)
    assert threaded.tobytes() == serial.tobytes()


def test_process_pool_gives_identical_bits():
    serial = sweep(stats, AXES, chunk_size=211, fixed={"scale": 3.0})
    with ProcessPoolExecutor(max_workers=2) as pool:
        parallel = sweep(stats, AXES, chunk_size=211, executor=pool, fixed={"scale": 3.0})
    for key in serial:
        assert parallel[key].tobytes() == serial[key].tobytes()


def test_dask_cluster_gives_identical_bits():
    distributed = pytest.importorskip("dask.distributed")
    serial = sweep(momentum_radius, AXES, chunk_size=301)
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                  dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            on_client = sweep(momentum_radius, AXES, chunk_size=301, executor=client)
            assert len(client.scheduler_info()["workers"]) == 2
            current = sweep(momentum_radius, AXES, chunk_size=301, executor="dask")  # the active client
        on_cluster = sweep(momentum_radius, AXES, chunk_size=301, executor=cluster)
    for got in (on_client, current, on_cluster):
        assert got.tobytes() == serial.tobytes()
    temporary = sweep(momentum_radius, AXES, chunk_size=301, executor="dask")  # a local cluster of its own
    assert temporary.tobytes() == serial.tobytes()


def test_dask_missing_raises_with_the_install_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "dask", None)  # import dask -> ImportError
    with pytest.raises(OptionalDependencyError, match="pip install"):
        sweep(momentum_radius, AXES, executor="dask")
    with pytest.raises(ImportError):  # also an ImportError for callers that don't know depthdyn
        sweep(momentum_radius, AXES, executor="dask")


def test_progress_counter_without_tqdm(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "tqdm", None)
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    sweep(momentum_radius, {"lam": np.arange(3.0), "m": np.arange(2.0), "eta": np.ones(1)}, chunk_size=2,
          progress=True)
    assert "sweep: 3/3 chunks" in capsys.readouterr().err


def test_progress_with_tqdm(capsys):
    pytest.importorskip("tqdm")
    got = sweep(momentum_radius, AXES, chunk_size=500, progress=True)
    assert np.array_equal(got, reference(momentum_radius, AXES))
    assert "sweep" in capsys.readouterr().err


def test_bad_input():
    with pytest.raises(ParameterError, match="non-empty mapping"):
        sweep(momentum_radius, {})
    with pytest.raises(ShapeError, match="1-D"):
        sweep(momentum_radius, {"lam": np.ones((2, 2))})
    with pytest.raises(ParameterError, match="chunk_size"):
        sweep(momentum_radius, AXES, chunk_size=0)
    with pytest.raises(ParameterError, match="both grid axes and fixed"):
        sweep(momentum_radius, AXES, fixed={"m": 0.5})
    with pytest.raises(ShapeError, match="one entry per grid point"):
        sweep(lambda lam: lam[:1], {"lam": np.arange(5.0)}, chunk_size=3)
    with pytest.raises(ParameterError, match="executor"):
        sweep(momentum_radius, AXES, executor="spark")
