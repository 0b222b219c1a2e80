"""Krylov methods that read a matrix-free layer Jacobian (:class:`~.operators.LayerOperator`, or
anything with its ``matvec`` / ``rmatvec`` / ``problems`` / ``n_in`` / ``n_out``).

* :func:`top_singular_values`: Golub–Kahan–Lanczos bidiagonalisation (``J^T J`` implicitly);
* :func:`spectral_radius_estimate`: Arnoldi on ``J^T`` (same eigenvalues as ``J``), needing only ``vjp``;
* :func:`hutchinson_trace`: ``E[z^T J z]`` with Rademacher probes;
* :func:`ritz_values`: all Ritz values of an Arnoldi run.

All are batched over the operator's independent problems. Where the operator takes several
vectors in one pass for little more than one (``op.block > 1``: token-local operators), the
singular values come from block Lanczos instead (:mod:`.blockkrylov`), a block of vectors per
step.
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache

import numpy as np
import torch

from ...errors import ParameterError, ShapeError
from ...records import Record
from .blockkrylov import block_lanczos, block_singular_values
from .schedule import solo, together
from .smalldense import per_matrix

__all__ = [
    "KrylovEstimate", "check_tol", "top_singular_values", "spectral_radius_estimate",
    "singular_values_and_radius", "hutchinson_trace", "ritz_values", "arnoldi_hessenberg",
]


@dataclass(frozen=True, eq=False)
class KrylovEstimate(Record):
    """Values per problem and the bound on their error.

    ``values`` ``(P, k)``; ``accuracy`` ``(P, k)``: the Krylov residual bound on each
    value (0 for a dense computation: rounding only); ``method`` says how they were found.
    """

    values: np.ndarray
    accuracy: np.ndarray
    method: str

    def _text(self) -> str:
        return (f"{self.values.shape[1]} value(s) for {self.values.shape[0]} problem(s) by {self.method}, "
                f"largest bound {float(np.max(self.accuracy)):.3g}")

    def _latex(self) -> str:
        top, bound = float(np.max(self.values)), float(np.max(self.accuracy))
        return rf"\max \text{{value}} = {top:.6g} \pm {bound:.3g}"


def _check_steps(steps, n: int, k: int) -> int:
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise ParameterError(f"steps must be a positive integer, got {steps!r}")
    return max(min(steps, n), min(k, n))


def _orthonormalise(w: torch.Tensor, Q: torch.Tensor, j: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Gram–Schmidt of ``w`` ``(P, n)`` against ``Q[:, :j]``, repeated once where a problem's
    vector lost more than ``1 - 1/sqrt(2)`` of its norm (the Daniel–Gragg–Kaufman–Stewart test:
    one pass is then not enough for orthogonality to rounding); returns (w, coefficients)."""
    h = torch.zeros(w.shape[0], j, dtype=w.dtype, device=w.device)
    for _ in range(2):
        before = w.norm(dim=-1)
        # bmm reads the basis in place (einsum copies the strided slice on every call)
        c = torch.bmm(Q[:, :j], w[:, :, None])[:, :, 0]
        w = w - torch.bmm(c[:, None, :], Q[:, :j])[:, 0]
        h = h + c
        if bool((w.norm(dim=-1) > before / math.sqrt(2)).all()):
            break
    return w, h


def _next_basis(w: torch.Tensor, Q: torch.Tensor, j: int, gen: torch.Generator) -> tuple:
    """Normalise ``w``; where it vanished (an invariant subspace), restart with a random vector
    orthogonal to the basis and record a zero coupling, which keeps the projection exact."""
    norm = w.norm(dim=-1)
    # the basis is orthonormal (entries at most 1): the threshold is absolute past the first vector
    scale = torch.clamp(norm, min=1.0) if j == 0 else torch.ones_like(norm)
    dead = norm <= 1e3 * torch.finfo(w.dtype).eps * scale
    if bool(dead.any()):
        r = torch.randn(w.shape, generator=gen, dtype=w.dtype).to(w.device)
        r, _ = _orthonormalise(r, Q, j)
        w = torch.where(dead[:, None], r, w)
        norm = torch.where(dead, torch.zeros_like(norm), norm)
    return w / w.norm(dim=-1, keepdim=True), norm


def _start(P: int, n: int, like: torch.Tensor, seed: int) -> tuple[torch.Tensor, torch.Generator]:
    gen = torch.Generator().manual_seed(seed)
    v = torch.randn(P, n, generator=gen, dtype=like.dtype).to(like.device)
    return v / v.norm(dim=-1, keepdim=True), gen


def check_tol(tol) -> float:
    if isinstance(tol, bool) or not isinstance(tol, (int, float)) or not 0 <= tol < 1:
        raise ParameterError(f"tol must be a number in [0, 1), got {tol!r}")
    return float(tol)


def _checkpoint(j: int, s: int, every: int = 8) -> bool:
    """Test convergence after step ``j`` (0-based) every ``every`` steps and at the last (a
    test costs a small dense SVD / eigenproblem per problem: not after every step)."""
    return j + 1 == s or (j + 1) % every == 0


def _full_space(op, k: int) -> KrylovEstimate:
    """Every ``J e_i`` at once: the exact singular values (the Krylov space is everything)."""
    n = op.n_in
    Q = torch.eye(n, dtype=op.x.dtype, device=op.x.device).expand(op.problems, n, n).contiguous()
    JQ = op.matvec(Q.permute(2, 0, 1)).permute(1, 2, 0).double()  # (P, n_out, n) = J
    sigma = torch.linalg.svdvals(JQ)[:, :k]
    return KrylovEstimate(sigma.cpu().numpy(), np.zeros(tuple(sigma.shape)), "dense (full Krylov space)")


def top_singular_values(
    op, k: int = 1, *, steps: int = 100, tol: float = 1e-3, seed: int = 0
) -> KrylovEstimate:
    """The ``k`` largest singular values of ``J`` per problem, descending.

    Golub–Kahan–Lanczos bidiagonalisation with full reorthogonalisation, batched over the
    problems: step ``j`` makes one ``J v`` (``jvp``) and one ``J^T u`` (``vjp``) for every
    problem at once and extends ``J V_j = U_j B_j`` with ``B_j`` upper bidiagonal. The singular
    values of ``B_j`` are those of ``U_j^T J V_j``, so each is a lower bound of the
    corresponding one of ``J`` (interlacing), and for each Ritz triplet ``(sigma, x, y)`` of
    ``B_j``, ``J V y = sigma U x`` holds exactly while ``J^T U x - sigma V y`` has norm
    ``r = beta_j |x_j|``: a singular value of ``J`` lies within ``r`` of ``sigma``. ``accuracy``
    is that ``r`` (absolute). Every 8 steps the iteration stops once ``r <= tol * sigma`` for the
    top ``k`` of every problem (``tol=0``: always ``steps`` steps); a single-vector Krylov space
    of ``J^T J`` reaches a given accuracy in far fewer products than a block one of the same
    dimension. With ``steps >= n`` the whole space is taken at once and the values are exact.
    An operator that takes several vectors per pass cheaply (``op.block > 1``) gets block
    Lanczos instead (:func:`~.blockkrylov.block_singular_values`): ``steps`` steps of
    ``op.block`` vectors, the same kind of bound.
    """
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise ParameterError(f"steps must be a positive integer, got {steps!r}")
    tol = check_tol(tol)
    n = op.n_in
    k = min(k, n, op.n_out)
    s = max(steps, k)
    if s >= min(n, op.n_out):
        return _full_space(op, k)
    b = getattr(op, "block", 1)
    if b > 1:
        values, bounds, it = block_singular_values(op, k, b, s, tol, seed)
        return KrylovEstimate(values, bounds, f"block Lanczos ({it} steps of {b} vectors, tol {tol:g})")
    P = op.problems
    v, gen = _start(P, n, op.x, seed)
    V = v.new_zeros(P, s + 1, n)
    U = v.new_zeros(P, s, op.n_out)
    alpha = torch.zeros(P, s, dtype=torch.float64)
    beta = torch.zeros(P, s, dtype=torch.float64)
    V[:, 0] = v
    u = op.matvec(v[None])[0]
    for j in range(s):
        if j:
            u = u - beta[:, j - 1, None].to(u) * U[:, j - 1]
        u, _ = _orthonormalise(u, U, j)
        U[:, j], a = _next_basis(u, U, j, gen)
        alpha[:, j] = a.double().cpu()
        w = op.rmatvec(U[None, :, j])[0] - alpha[:, j, None].to(u) * V[:, j]
        w, _ = _orthonormalise(w, V, j + 1)
        V[:, j + 1], b = _next_basis(w, V, j + 1, gen)
        beta[:, j] = b.double().cpu()
        if _checkpoint(j, s) and j + 1 >= k:
            B = torch.diag_embed(alpha[:, : j + 1]) + torch.diag_embed(beta[:, :j], offset=1)
            # left singular vectors of B as eigenvectors of B B^T: 3x cheaper than an SVD, and
            # the top k (all that is kept) lose nothing by the squaring (relative error eps s_1^2/s_k^2)
            ev, X = per_matrix(torch.linalg.eigh, B @ B.mT)
            sig, X = ev.flip(-1)[:, :k].clamp(min=0).sqrt(), X.flip(-1)
            resid = beta[:, j, None] * X[:, j, :k].abs()
            if j + 1 == s or bool((resid <= tol * sig).all()):
                break
        u = op.matvec(V[None, :, j + 1])[0]
    return KrylovEstimate(sig.numpy(), resid.numpy(), f"Golub-Kahan-Lanczos ({j + 1} steps, tol {tol:g})")


def arnoldi_hessenberg(op, *, steps: int = 40, seed: int = 0) -> tuple[np.ndarray, int]:
    """Arnoldi on ``J^T`` (same eigenvalues as ``J``; ``vjp`` only): the ``(P, s + 1, s)``
    Hessenberg matrix in float64 and the number of steps ``s`` taken (all ``steps``: the
    stopping rule of :func:`spectral_radius_estimate` is not applied). Its leading
    ``(t + 1, t)`` part is the Hessenberg matrix of the first ``t`` steps, whose square part's
    eigenvalues are the Ritz values after ``t`` steps."""
    return solo(op, _arnoldi_steps(op, steps, seed))


def _arnoldi_steps(op, steps: int, seed: int, test=None):
    """:func:`arnoldi_hessenberg` as an iteration of :mod:`.schedule` (it yields its ``J^T`` products).
    ``test(hessenberg, s)``, where given, is asked after step ``s`` whether to stop
    (``hessenberg()`` gives the ``(P, s + 1, s)`` float64 Hessenberg matrix so far: a copy to the
    CPU only where the test is due); it answers ``None`` to go on, or the step ``t <= s`` whose
    Krylov space its values came from, which is the space returned."""
    if not op.square:
        raise ShapeError(f"no eigenvalues: the layer maps {op.n_in} numbers to {op.n_out}")
    s = _check_steps(steps, op.n_in, 1)
    v, gen = _start(op.problems, op.n_in, op.x, seed)
    Q = v.new_zeros(op.problems, s + 1, op.n_in)
    Q[:, 0] = v
    H = v.new_zeros(op.problems, s + 1, s)
    for j in range(s):
        # J^T q - q spans the same Krylov space; for a residual layer (J = I + A) it spares
        # Gram-Schmidt the cancellation of the identity part, which made its second pass the rule
        w, h = _orthonormalise((yield ("rmatvec", Q[None, :, j]))[0] - Q[:, j], Q, j + 1)
        h[:, j] += 1
        H[:, : j + 1, j] = h
        Q[:, j + 1], H[:, j + 1, j] = _next_basis(w, Q, j + 1, gen)
        so_far = lambda t=j + 1: H[:, : t + 1, :t].double().cpu().numpy()  # noqa: E731
        if test is not None and j + 1 < s and (t := test(so_far, j + 1)) is not None:
            return so_far(t), t
    return H.double().cpu().numpy(), s


def _background(op) -> bool:
    """Whether Arnoldi's tests run beside its products: where the products run on an
    accelerator, the host's cores are otherwise idle while it works."""
    return op.x.device.type != "cpu"


@cache
def _tests() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(1, thread_name_prefix="depthdyn-arnoldi-test")


def _radius_steps(op, steps: int, seed: int, tol: float):
    """Arnoldi for the dominant eigenvalue, as an iteration of :mod:`.schedule`; returns
    ``(theta, resid, s)``: ``|theta|`` and the residual ``h_{s+1,s} |y_s|`` per problem, and the
    most steps taken.

    With ``tol > 0`` and a Krylov space short of the whole space, a problem whose dominant Ritz
    value has a residual ``<= tol`` times its modulus keeps that value and bound (they hold for
    the space it had then) and takes no further Ritz work; the iteration stops when every
    problem has. A test costs an ``s x s`` eigenproblem per open problem, dearer than many
    products at ``s`` ~ 100 on a GPU, so tests are spaced by the residual's trend: after 8
    steps, then where the worst open residual, decaying at its rate since the last test, would
    meet ``tol``, at least 8 steps and at most a quarter of the steps taken later.

    Where the products run on an accelerator (:func:`_background`), a test runs on the host
    while the iteration goes on, and is waited for at the latest 8 steps later, before the next
    test can be due: every decision, value and bound is the one the test gave for its own step
    (the same as in order), and the steps taken meanwhile, when it says stop, are dropped."""
    P = op.problems
    theta, resid = np.zeros(P), np.full(P, np.inf)
    open_ = np.ones(P, dtype=bool)
    plan = {"next": 8, "last": None, "pending": None}
    whole = _check_steps(steps, op.n_in, 1) >= op.n_in  # the whole space: exact, no test
    background = _background(op)

    def decide(s: int, t: np.ndarray, r: np.ndarray) -> bool:
        """Take the test of step ``s``; whether every problem is done."""
        theta[open_], resid[open_] = t, r
        done = r <= tol * t
        open_[np.flatnonzero(open_)[done]] = False
        if not open_.any():
            return True
        worst = float(np.max(r[~done] / np.maximum(t[~done], np.finfo(float).tiny)))
        ahead = max(8, s // 4)
        last = plan["last"]
        if last is not None and 0 < worst < last[1]:
            rate = math.log(last[1] / worst) / (s - last[0])  # decay per step
            ahead = int(min(ahead, max(8, math.ceil(math.log(worst / tol) / rate))))
        plan["next"], plan["last"] = s + ahead, (s, worst)
        return False

    def settle(s: int, wait: bool) -> int | None:
        """The pending test's answer, if it is in (or ``wait``): its step where it says stop."""
        pending = plan["pending"]
        if pending is None or not (wait or pending[1].done() or s >= pending[0] + 8):
            return None
        plan["pending"] = None
        return pending[0] if decide(pending[0], *pending[1].result()) else None

    def test(hessenberg, s: int) -> int | None:
        if (stop := settle(s, wait=False)) is not None:
            return stop
        if tol <= 0 or whole or s < plan["next"] or plan["pending"] is not None:
            return None
        if background:
            plan["pending"] = (s, _tests().submit(_dominant, hessenberg()[open_], s))
            return None
        return s if decide(s, *_dominant(hessenberg()[open_], s)) else None

    H, s = yield from _arnoldi_steps(op, steps, seed, test)
    if (stop := settle(s, wait=True)) is not None:  # the cap came before the test's answer
        H, s = H[:, : stop + 1, :stop], stop
    if open_.any():  # the step cap, or the whole space (exact), reached with problems open
        theta[open_], resid[open_] = _dominant(H[open_], s)
    if s >= op.n_in:
        resid = np.zeros(P)
    return theta, resid, s


def _dominant(H: np.ndarray, s: int) -> tuple[np.ndarray, np.ndarray]:
    """``|theta|`` of the largest Ritz value of each problem and its residual ``h_{s+1,s} |y_s|``.

    Eigenvalues only (half the cost of eigenvectors too, and this runs at every checkpoint),
    then the one eigenvector needed by two steps of inverse iteration at that Ritz value.
    """
    # torch's LAPACK: numpy's threaded BLAS crawls on a shared machine (10-60x here)
    Hs = torch.from_numpy(np.ascontiguousarray(H[:, :s, :]))
    lam = per_matrix(torch.linalg.eigvals, Hs)
    theta = lam[torch.arange(lam.shape[0]), lam.abs().argmax(dim=1)]
    y = _eigenvector(Hs, theta)
    return theta.abs().numpy(), np.abs(H[:, s, s - 1] * y[:, -1].numpy())


def _eigenvector(Hs: torch.Tensor, theta: torch.Tensor) -> torch.Tensor:
    """Unit eigenvectors ``(P, s)`` of ``Hs`` ``(P, s, s)`` for its eigenvalues ``theta``: inverse
    iteration with the shift moved off ``theta`` by ~1e-10 relative, so that the LU has no exact
    zero pivot; where that still fails (not finite), the eigenvector from a full ``eig``."""
    s = Hs.shape[1]
    shift = theta * (1 + 1e-10) + 1e-10 * theta.abs().clamp(min=1)
    M = Hs.to(theta.dtype) - shift[:, None, None] * torch.eye(s, dtype=theta.dtype)
    # per_matrix runs LAPACK on one thread per matrix: MKL's threaded complex LU returned
    # invalid pivots (0) at s = 152
    y, bad = per_matrix(_inverse_iteration, M)
    bad = bad | ~torch.isfinite(y).all(dim=1)
    if bool(bad.any()):
        lam, Y = torch.linalg.eig(Hs[bad])
        top = (lam - theta[bad, None]).abs().argmin(dim=1)
        y[bad] = Y[torch.arange(Y.shape[0]), :, top]
    return y


def _inverse_iteration(M: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Two steps of inverse iteration on the shifted matrices ``M`` ``(P, s, s)`` from a flat start:
    the unit vectors ``(P, s)`` and where the LU failed (``bad``, their vectors to be redone)."""
    P, s = M.shape[0], M.shape[1]
    LU, piv, info = torch.linalg.lu_factor_ex(M)
    bad = (info != 0) | (piv < 1).any(dim=1) | (piv > s).any(dim=1)
    LU = torch.where(bad[:, None, None], torch.eye(s, dtype=LU.dtype), LU)
    piv = torch.where(bad[:, None], torch.arange(1, s + 1, dtype=piv.dtype), piv)
    y = torch.ones(P, s, 1, dtype=M.dtype) / math.sqrt(s)
    for _ in range(2):
        y = torch.linalg.lu_solve(LU, piv, y)
        y = y / torch.linalg.vector_norm(y, dim=1, keepdim=True)
    return y[..., 0], bad


def spectral_radius_estimate(op, *, steps: int = 100, tol: float = 1e-3, seed: int = 0) -> KrylovEstimate:
    """Largest ``|eigenvalue|`` of ``J`` per problem (``values`` ``(P, 1)``), by Arnoldi.

    Arnoldi on ``J^T`` (``vjp`` only) with full reorthogonalisation, at most ``steps`` steps,
    stopping once the dominant Ritz value of every problem has a residual
    ``h_{s+1,s} |y_s| <= tol * |theta|`` (tests spaced by the residual's trend; a problem that
    meets ``tol`` keeps the value and bound of that test; ``tol=0``: always ``steps``;
    ``steps >= n``: always the whole space, exact). ``accuracy`` is
    that residual: a backward-error bound (``theta`` is an eigenvalue of a matrix within it of
    ``J``), which a non-normal Jacobian can amplify; 0 when the Krylov space is the whole space.
    """
    tol = check_tol(tol)
    return _radius(op, *solo(op, _radius_steps(op, steps, seed, tol)))


def _radius(op, theta: np.ndarray, resid: np.ndarray, s: int) -> KrylovEstimate:
    method = "arnoldi (exact)" if s >= op.n_in else f"arnoldi ({s} steps)"
    return KrylovEstimate(theta[:, None], resid[:, None], method)


def singular_values_and_radius(
    op, k: int = 1, *, steps: int = 100, tol: float = 1e-3, seed: int = 0
) -> tuple[KrylovEstimate, KrylovEstimate]:
    """:func:`top_singular_values` and :func:`spectral_radius_estimate` of a square operator.

    The same iterations, with the same bounds and stops; where the operator takes several
    vectors in a pass for little more than one (``op.block > 1``) they run together
    (:func:`~.schedule.together`): each ``J^T`` pass of block Lanczos carries the next Arnoldi
    vector beside its block, so that Arnoldi takes passes of its own only once Lanczos is done.
    """
    if not op.square:
        raise ShapeError(f"no eigenvalues: the layer maps {op.n_in} numbers to {op.n_out}")
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise ParameterError(f"steps must be a positive integer, got {steps!r}")
    tol = check_tol(tol)
    n, b = op.n_in, getattr(op, "block", 1)
    kk = min(k, n)
    s = max(steps, kk)
    if b == 1 or s >= n:
        return (top_singular_values(op, k, steps=steps, tol=tol, seed=seed),
                spectral_radius_estimate(op, steps=steps, tol=tol, seed=seed))
    lanczos = block_lanczos(op, kk, b, s, tol, seed)
    (values, bounds, it), radius = together(op, [lanczos, _radius_steps(op, steps, seed, tol)])
    top = KrylovEstimate(values, bounds, f"block Lanczos ({it} steps of {b} vectors, tol {tol:g})")
    return top, _radius(op, *radius)


def ritz_values(op, *, steps: int = 40, seed: int = 0) -> np.ndarray:
    """All Ritz values of ``J`` per problem: ``(P, s)`` complex.

    With ``steps >= n`` these are the eigenvalues of ``J``; below it, a sampled spectrum whose
    extreme values converge first.
    """
    H, s = arnoldi_hessenberg(op, steps=steps, seed=seed)
    return per_matrix(torch.linalg.eigvals, torch.from_numpy(np.ascontiguousarray(H[:, :s, :]))).numpy()


def hutchinson_trace(op, *, probes: int = 16, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Hutchinson estimate of ``tr J`` per problem and its standard error: two ``(P,)`` arrays.

    ``z^T (J^T z)`` with Rademacher ``z`` (``probes`` of them, one batched ``vjp``).
    """
    if not op.square:
        raise ShapeError(f"no trace: the layer maps {op.n_in} numbers to {op.n_out}")
    if isinstance(probes, bool) or not isinstance(probes, int) or probes < 2:
        raise ParameterError(f"probes must be an integer >= 2, got {probes!r}")
    gen = torch.Generator().manual_seed(seed)
    Z = (torch.randint(0, 2, (probes, op.problems, op.n_in), generator=gen) * 2 - 1).to(op.x)
    est = (Z * op.rmatvec(Z)).sum(-1).double().cpu().numpy()
    return est.mean(0), est.std(0, ddof=1) / math.sqrt(probes)
