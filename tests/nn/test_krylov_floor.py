"""benchmarks/krylov_floor.py: the oracle steps it reads from one long run are where a run of
that many steps first meets the tolerance, against dense linear algebra (numpy's SVD and
eigenvalues of the same matrix)."""

import importlib.util
import sys
from argparse import Namespace
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="depthdyn.nn needs the optional torch extra")

from depthdyn.nn.analysis import LayerOperator, top_singular_values  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def floor():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        spec = importlib.util.spec_from_file_location("krylov_floor", ROOT / "benchmarks" / "krylov_floor.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    return module


def _operator(n=200, seed=0):
    """``x -> J x`` with singular values ``3 * 0.97^i`` (slow enough for Lanczos to take tens of
    steps) between random orthogonal factors (whose eigenvalues Arnoldi finds)."""
    g = torch.Generator().manual_seed(seed)
    Q1 = torch.linalg.qr(torch.randn(n, n, generator=g, dtype=torch.float64)).Q
    Q2 = torch.linalg.qr(torch.randn(n, n, generator=g, dtype=torch.float64)).Q
    J = Q1 @ torch.diag(3 * 0.97 ** torch.arange(n, dtype=torch.float64)) @ Q2.T
    x = torch.randn(1, n, dtype=torch.float64, generator=g)
    return J, LayerOperator(lambda z: z @ J.T, x)


def _args(tol):
    return Namespace(k=3, tol=tol, steps=150, ref=120, ref_arnoldi=150, probes=16, seed=0)


@pytest.mark.parametrize("tol", [1e-3, 1e-6])
def test_the_lanczos_oracle_is_the_first_test_within_tol(floor, tol):
    J, op = _operator()
    exact = np.linalg.svd(J.numpy(), compute_uv=False)[:3]
    row = floor._layer(op, 1.0, _args(tol))
    s = row["lanczos_oracle"]
    assert s is not None and s % 8 == 0 and 8 < s < 120

    def error(steps):
        return np.max(np.abs(top_singular_values(op, 3, steps=steps, tol=0).values[0] - exact) / exact)

    assert error(s) <= tol < error(s - 8)  # the run of that many steps, on its own, against the SVD
    # the stopping rule (a bound) never stops before the oracle
    assert int(row["lanczos_rule"].split("(")[1].split()[0]) >= s
    assert row["lanczos_oracle_top"] <= s
    assert row["floor_layer_forwards"] > 0


def test_the_arnoldi_oracle_and_a_tighter_tol_move_it(floor):
    J, op = _operator()
    exact = float(np.abs(np.linalg.eigvals(J.numpy())).max())
    loose, tight = floor._layer(op, 1.0, _args(1e-2)), floor._layer(op, 1.0, _args(1e-6))
    assert loose["arnoldi_oracle"] < tight["arnoldi_oracle"]
    assert loose["lanczos_oracle"] < tight["lanczos_oracle"]
    assert tight["arnoldi_ref_change"] < 1e-6
    from depthdyn.nn.analysis import ritz_values

    t = tight["arnoldi_oracle"]
    assert abs(np.abs(ritz_values(op, steps=t)).max() - exact) <= 1e-6 * exact
    assert abs(np.abs(ritz_values(op, steps=t - 4)).max() - exact) > 1e-6 * exact


def test_a_step_that_changes_the_shape_has_singular_values_only(floor):
    g = torch.Generator().manual_seed(1)
    J = torch.randn(150, 120, generator=g, dtype=torch.float64)
    op = LayerOperator(lambda z: z @ J.T, torch.randn(1, 120, dtype=torch.float64, generator=g))
    args = Namespace(k=2, tol=1e-3, steps=100, ref=100, ref_arnoldi=100, probes=16, seed=0)
    row = floor._layer(op, 1.0, args)
    assert row["arnoldi_oracle"] is None and row["arnoldi_rule"] is None
    assert row["floor_layer_forwards"] is not None
