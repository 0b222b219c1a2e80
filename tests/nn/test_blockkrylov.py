"""The block orthonormalisation of block Lanczos (depthdyn.nn.analysis.blockkrylov.orthonormal_rows):
Householder QR on the CPU; on an accelerator CholeskyQR2 where the block is well conditioned,
Householder QR where it is not; either way orthonormal rows with the block's span. The
accelerator's path is run here on the CPU."""

import pytest

torch = pytest.importorskip("torch", reason="depthdyn.nn needs the optional torch extra")

from depthdyn.nn.analysis import blockkrylov  # noqa: E402
from depthdyn.nn.analysis.blockkrylov import _cholesky_qr2, orthonormal_rows  # noqa: E402


@pytest.fixture
def qr_calls(monkeypatch):
    calls = []
    plain = torch.linalg.qr

    def counted(*args, **kwargs):
        calls.append(args[0].shape)
        return plain(*args, **kwargs)

    monkeypatch.setattr(blockkrylov.torch.linalg, "qr", counted)
    return calls


def _gap(X: torch.Tensor, Y: torch.Tensor) -> float:
    """The largest Frobenius distance between the orthogonal projectors on two sets of rows."""
    P, Q = X.mT.double() @ X.double(), Y.mT.double() @ Y.double()
    return float(torch.linalg.matrix_norm(P - Q).max())


@pytest.mark.parametrize("dtype, tol", [(torch.float64, 1e-13), (torch.float32, 1e-5)])
def test_well_conditioned_block_is_orthonormalised_by_cholesky_qr2(qr_calls, dtype, tol):
    g = torch.Generator().manual_seed(0)
    Z = torch.randn(5, 4, 300, generator=g, dtype=dtype)
    X = _cholesky_qr2(Z)
    assert X.dtype == dtype and X.shape == Z.shape and not qr_calls
    eye = torch.eye(4, dtype=torch.float64)
    assert float((X.double() @ X.double().mT - eye).abs().max()) < tol
    # the same span as Householder QR's rows (the reference): equal orthogonal projectors
    Q = torch.linalg.qr(Z.mT.double()).Q.mT
    assert _gap(X, Q) < tol
    # a block with one row changed spans something else
    W = Z.clone()
    W[:, 2] = torch.randn(5, 300, generator=g, dtype=dtype)
    assert _gap(_cholesky_qr2(W), Q) > 0.5
    # on the CPU: Householder QR, the same span
    before = len(qr_calls)
    assert _gap(orthonormal_rows(Z), Q) < tol and len(qr_calls) == before + 1


@pytest.mark.parametrize("gap", [0.0, 1e-15])
def test_rank_deficient_block_falls_back_to_householder(qr_calls, gap):
    g = torch.Generator().manual_seed(1)
    Z = torch.randn(3, 4, 200, generator=g, dtype=torch.float64)
    # one row repeated, or nearly: Cholesky of the Gram matrix breaks down
    Z[:, 3] = Z[:, 2] + gap * torch.randn(3, 200, generator=g, dtype=torch.float64)
    L, info = torch.linalg.cholesky_ex(Z @ Z.mT)
    X = torch.linalg.solve_triangular(L, Z, upper=False)
    plain = float((X @ X.mT - torch.eye(4, dtype=torch.float64)).abs().amax())
    assert not plain < 1e-6  # CholeskyQR alone would give no orthonormal rows here
    X = _cholesky_qr2(Z)
    assert len(qr_calls) == 1
    assert float((X @ X.mT - torch.eye(4, dtype=torch.float64)).abs().max()) < 1e-12
