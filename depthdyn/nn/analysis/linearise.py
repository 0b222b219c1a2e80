"""Linearise a trained depth stack along its trajectory and compare it with the theory.

Around the trajectory ``x_0, ..., x_L`` of one input, a small perturbation ``delta`` of the
input moves every layer by ``dx_l = R_l delta + O(|delta|^2)``. :func:`linearise` records
what the theory needs at every layer ``l`` and sample: the Jacobian of the block's branch
``h f(LN(x_l))``, the Jacobian of the whole block on its (flattened) state, the family's
``lam`` and the layer's learned coefficients, and the layer's depthdyn
:class:`~depthdyn.Recurrence` (learned numbers in place of ``m``, ``eta``, ...; ``lam`` free).

:func:`predict_response` then computes ``R_l delta`` *from the recurrences*: for a scalar
(``d = 1``) stack of a family in :data:`RECURRENCE_EXACT` the time-varying recurrence, e.g.
for the momentum block

.. math::

    dx_{l+1} = (1 + m_l + \\eta_l \\lambda_l)\\, dx_l - m_l\\, dx_{l-1}, \\qquad dx_{-1} = dx_0

(``v_0 = 0``), with the coefficients of layer ``l`` evaluated for all samples at once by
:func:`depthdyn.numeric.batch_coefficients`; otherwise the product of the per-layer state
Jacobians. :func:`measure_response` finite-differences the real network and
:func:`response_agreement` compares the two. :func:`~.placement.place` puts each layer on
its family's stability region.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np
import torch

from ...errors import DepthdynError, ParameterError, ShapeError
from ...families import build
from ...numeric.bridge import batch_coefficients
from ...records import Record
from ..blocks.stack import DepthStack, check_stack
from .readonly import frozen

__all__ = [
    "RECURRENCE_EXACT",
    "Linearisation",
    "Agreement",
    "linearise",
    "predict_response",
    "measure_response",
    "response_agreement",
]

#: Families whose per-layer recurrence, with ``lam_l`` the derivative of the branch at
#: ``x_l``, is *exactly* the linearised block (the block is affine in ``f(x_l)`` with
#: constant coefficients). Highway gates depend on ``x`` and dense blocks apply ``f`` at
#: every lag, so their recurrence is an approximation; they are predicted from Jacobians.
RECURRENCE_EXACT = frozenset({"residual", "rezero", "weighted", "momentum", "smooth"})


def _double(stack: DepthStack) -> DepthStack:
    """``stack`` itself if already float64, else a float64 copy (the original is untouched)."""
    p = next(stack.parameters(), None)
    if p is None or p.dtype == torch.float64:
        return stack
    return copy.deepcopy(stack).to(torch.float64)


def _device(stack: DepthStack) -> torch.device:
    p = next(stack.parameters(), None)
    return p.device if p is not None else torch.device("cpu")


def _input(stack: DepthStack, x, what: str = "x") -> torch.Tensor:
    """``x`` as a float64 ``(B, d)`` tensor on the stack's device, checked."""
    if isinstance(x, np.ndarray):
        x = torch.from_numpy(np.array(x, dtype=np.float64))
    if not isinstance(x, torch.Tensor):
        raise ParameterError(f"{what} must be a torch.Tensor or numpy array, got {type(x).__name__}")
    d = stack.blocks[0].dim
    if x.dim() != 2 or x.shape[1] != d or x.shape[0] < 1:
        raise ShapeError(f"{what} must have shape (B, {d}) with B >= 1, got {tuple(x.shape)}")
    x = x.detach().to(_device(stack), torch.float64)
    if not torch.isfinite(x).all():
        raise ParameterError(f"{what} contains NaN or infinite entries")
    return x


def _per_sample(fn, inputs: torch.Tensor) -> torch.Tensor:
    """Jacobian of ``fn`` (one unbatched sample in, one out) at every sample of ``inputs``."""
    return torch.func.vmap(torch.func.jacrev(fn))(inputs).detach()


def _state_jacobians(stack: DepthStack, states) -> torch.Tensor:
    """``(L, B, S, S)``: ``d state_{l+1} / d state_l`` per sample, states flattened."""
    out = []
    for block, s in zip(stack.blocks, states[:-1], strict=False):
        J = _per_sample(lambda t, b=block: b(t.unsqueeze(0)).squeeze(0), s)
        size = s[0].numel()
        out.append(J.reshape(s.shape[0], size, size))
    return torch.stack(out)


def layer_recurrences(block) -> tuple:
    """The block's recurrence(s) with ``lam`` free: one, or one per channel; ``()`` if none."""
    try:
        return (block.recurrence(),)
    except ParameterError:
        pass
    except (DepthdynError, NotImplementedError):
        return ()
    try:
        return tuple(block.recurrence(channel=c) for c in range(block.dim))
    except (DepthdynError, NotImplementedError):
        return ()


@dataclass(frozen=True, eq=False)
class Linearisation(Record):
    """A stack linearised along the trajectory of a batch of inputs.

    Attributes
    ----------
    family : str
    x : ndarray
        ``(B, d)`` inputs (float64).
    positions : ndarray
        ``(L + 1, B, d)`` unperturbed trajectory ``x_l``.
    jacobians : ndarray
        ``(L, B, d, d)`` Jacobian of the branch ``h f(LN(x))`` at the branch input ``x_l``
        (``H_pre X_l`` for hyper-connections; step and norm included).
    state_jacobians : ndarray
        ``(L, B, S, S)`` Jacobian of the whole block on its flattened state (``S = slots * d``).
    lam_eigenvalues : ndarray
        ``(L, B, d)``: eigenvalues of the matrix that plays ``lam``'s role in the family's
        recurrence: the branch Jacobian, divided by the step when the family carries the
        step itself as its parameter ``h`` (``smooth``, ``dense``).
    lam : ndarray
        ``(L, B)``: for ``d = 1`` the family's ``lam`` per sample (``step * f'(x_l)`` for the
        momentum block); for ``d > 1`` the dominant (largest-modulus) eigenvalue.
    coefficients : tuple of dict
        Per layer, the learned coefficients (``m``, ``eta``, ``a``, ...) as float64 arrays.
    recurrences : tuple of tuple of Recurrence
        Per layer, the block's recurrence with ``lam`` free: one, or one per channel when
        the coefficients are per channel; empty when the block has none.
    family_recurrence : Recurrence or None
        The symbolic family (no learned numbers), for its exact stability conditions.
    initial_map, readout : ndarray
        ``(S, d)`` and ``(d, S)``: the linear maps ``x -> state_0`` and ``state -> x``.
    """

    family: str
    x: np.ndarray
    positions: np.ndarray
    jacobians: np.ndarray
    state_jacobians: np.ndarray
    lam_eigenvalues: np.ndarray
    lam: np.ndarray
    coefficients: tuple
    recurrences: tuple
    family_recurrence: object
    initial_map: np.ndarray
    readout: np.ndarray

    @property
    def depth(self) -> int:
        return self.jacobians.shape[0]

    @property
    def batch(self) -> int:
        return self.x.shape[0]

    @property
    def dim(self) -> int:
        return self.x.shape[1]

    def _latex(self) -> str:
        return (rf"\text{{{self.family}}}\ \text{{linearised}}: L = {self.depth},\ "
                rf"\lambda \in [{np.min(self.lam.real):.4g}, {np.max(self.lam.real):.4g}]")

    def _text(self) -> str:
        lam = self.lam
        return (
            f"Linearisation({self.family}, L={self.depth}, B={self.batch}, d={self.dim}, "
            f"lam in [{np.min(lam.real):.4g}, {np.max(lam.real):.4g}], "
            f"{sum(map(len, self.recurrences))} recurrences)"
        )


def linearise(stack: DepthStack, x) -> Linearisation:
    """Linearise ``stack`` along the trajectory of the inputs ``x`` (``(B, d)``), in float64.

    Parameters
    ----------
    stack : DepthStack
        Any stack; a float32 stack is copied to float64 (the original is not changed).
    x : torch.Tensor or ndarray
        ``(B, d)`` inputs.

    Returns
    -------
    Linearisation

    Raises
    ------
    ParameterError
        ``stack`` is not a :class:`DepthStack`, or ``x`` is not finite.
    ShapeError
        ``x`` does not have shape ``(B, d)``.
    """
    check_stack(stack)
    stack = _double(stack)
    x = _input(stack, x)
    with torch.no_grad():
        tr = stack.trace(x)
    states, positions = tr.states, tr.positions
    first = stack.blocks[0]
    jac, lam_eigs, coeffs, recs = [], [], [], []
    for block, state in zip(stack.blocks, states[:-1], strict=False):
        u = block.branch_input(state)  # x_l; H_pre X_l for hyper-connections
        J = _per_sample(lambda t, b=block: b.branch(t.unsqueeze(0)).squeeze(0), u)
        jac.append(J)
        c = {k: v.detach().to("cpu", torch.float64).numpy() for k, v in block.coefficients().items()}
        scale = block.step if "h" in c else 1.0  # the family then carries the step as h
        lam_eigs.append(torch.linalg.eigvals(J / scale))
        coeffs.append({k: frozen(v) for k, v in c.items()})
        recs.append(layer_recurrences(block))
    jac = torch.stack(jac).cpu().numpy()
    eigs = torch.stack(lam_eigs).cpu().numpy()
    if not np.any(eigs.imag):
        eigs = eigs.real.copy()
    idx = np.argmax(np.abs(eigs), axis=-1)[..., None]
    lam = np.take_along_axis(eigs, idx, axis=-1)[..., 0]
    sj = _state_jacobians(stack, states).cpu().numpy()
    init = torch.func.jacrev(lambda t: stack.initial_state(t.unsqueeze(0)).reshape(-1))(x[0]).detach()
    read = torch.func.jacrev(lambda s: stack.position(s.unsqueeze(0)).reshape(-1))(states[0][0]).detach()
    try:
        # exact conditions of the symbolic n-stream family take minutes beyond n = 2: the
        # placement of such layers rests on the numeric mask alone
        if first.family == "hyper_connection" and first.n > 2:
            raise DepthdynError("no exact conditions for n > 2 streams")
        fam = build(first.family, **first.structure())
    except DepthdynError:
        fam = None
    return Linearisation(
        family=first.family,
        x=frozen(x.cpu().numpy()),
        positions=frozen(positions.cpu().numpy()),
        jacobians=frozen(jac),
        state_jacobians=frozen(sj),
        lam_eigenvalues=frozen(eigs),
        lam=frozen(lam),
        coefficients=tuple(coeffs),
        recurrences=tuple(recs),
        family_recurrence=fam,
        initial_map=frozen(init.reshape(-1, x.shape[1]).cpu().numpy()),
        readout=frozen(read.reshape(x.shape[1], -1).cpu().numpy()),
    )


# ---------------------------------------------------------------- responses
def _delta(delta, shape: tuple) -> np.ndarray:
    if isinstance(delta, torch.Tensor):
        delta = delta.detach().cpu().numpy()
    try:
        d = np.asarray(delta, dtype=np.float64)
    except (TypeError, ValueError):
        raise ParameterError(f"delta must be a numeric array, got {type(delta).__name__}") from None
    try:
        d = np.broadcast_to(d, shape)
    except ValueError:
        raise ShapeError(f"delta must broadcast to the input shape {shape}, got {d.shape}") from None
    if not np.isfinite(d).all():
        raise ParameterError("delta contains NaN or infinite entries")
    return d


def _method(lin: Linearisation, method: str) -> str:
    if method not in ("auto", "recurrence", "jacobian"):
        raise ParameterError(f"method must be 'auto', 'recurrence' or 'jacobian', got {method!r}")
    exact = lin.dim == 1 and lin.family in RECURRENCE_EXACT and all(len(r) == 1 for r in lin.recurrences)
    if method == "recurrence" and not exact:
        raise ParameterError(
            f"the recurrence path needs a d = 1 stack of one of {sorted(RECURRENCE_EXACT)}; "
            f"got family {lin.family!r} with d = {lin.dim}; use method='jacobian'"
        )
    return method if method != "auto" else "recurrence" if exact else "jacobian"


def predict_response(lin: Linearisation, delta, *, method: str = "auto") -> np.ndarray:
    """Linear response ``dx_l`` of every layer to the input perturbation ``delta``.

    Parameters
    ----------
    lin : Linearisation
    delta : array_like
        ``(B, d)`` (or broadcastable) input perturbation.
    method : {"auto", "recurrence", "jacobian"}
        ``"recurrence"`` iterates the layers' depthdyn recurrences (``d = 1`` stacks of a
        family in :data:`RECURRENCE_EXACT`; the blocks start at rest, ``dx_{-j} = dx_0``),
        with their monic coefficients from :func:`depthdyn.numeric.batch_coefficients` at
        ``lam = lin.lam[l]``. ``"jacobian"`` multiplies the per-layer state Jacobians (any
        stack, any ``d``). ``"auto"`` picks the recurrence where it is exact.

    Returns
    -------
    ndarray
        ``(L + 1, B, d)``; entry 0 is ``delta``.
    """
    if not isinstance(lin, Linearisation):
        raise ParameterError(f"expected a Linearisation (from linearise), got {type(lin).__name__}")
    d = _delta(delta, lin.x.shape)
    if _method(lin, method) == "recurrence":
        p = lin.recurrences[0][0].order
        hist = [d[:, 0]] * p  # dx_l, dx_{l-1}, ..., dx_{l-p+1}
        out = [d[:, 0]]
        for i, (rec,) in enumerate(lin.recurrences):
            a = batch_coefficients(rec, lam=lin.lam[i])  # (B, p + 1), a[:, 0] == 1
            new = -sum(a[:, j] * hist[j - 1] for j in range(1, p + 1))
            hist = [new] + hist[:-1]
            out.append(new)
        return np.stack(out)[..., None]
    s = d @ lin.initial_map.T
    out = [s @ lin.readout.T]
    for J in lin.state_jacobians:
        s = np.einsum("bij,bj->bi", J, s)
        out.append(s @ lin.readout.T)
    return np.stack(out)


def measure_response(stack: DepthStack, x, delta, eps: float = 1e-6, *, central: bool = False) -> np.ndarray:
    """Finite-difference response ``(x_l(x + eps delta) - x_l(x)) / eps`` in float64.

    ``central=True`` uses ``(x_l(x + eps delta) - x_l(x - eps delta)) / (2 eps)``.

    Returns
    -------
    ndarray
        ``(L + 1, B, d)``.
    """
    check_stack(stack)
    if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not np.isfinite(eps) or eps <= 0:
        raise ParameterError(f"eps must be a finite positive number, got {eps!r}")
    stack = _double(stack)
    x = _input(stack, x)
    dt = torch.from_numpy(np.array(_delta(delta, tuple(x.shape)))).to(x.device)
    with torch.no_grad():
        hi = stack.trace(x + eps * dt).positions
        lo = stack.trace(x - eps * dt).positions if central else stack.trace(x).positions
    return ((hi - lo) / (2 * eps if central else eps)).cpu().numpy()


@dataclass(frozen=True)
class Agreement(Record):
    """Predicted (linear theory) against measured (finite differences) response.

    Errors are ``max_c |pred - meas|`` per ``(layer, sample)`` divided by the largest
    ``|meas|`` of that sample over layers and channels; ``max`` and ``median`` are over
    all ``(layer, sample)``. With ``eps = 1e-6`` in float64 the forward difference is
    accurate to ``O(eps)`` (the network's curvature) plus ``O(1e-16 / eps)`` rounding:
    expect about ``1e-8 .. 1e-6``. At ``eps_large`` (``1e-2``) the nonlinearity shows.
    """

    method: str
    eps: float
    max_rel: float
    median_rel: float
    eps_large: float
    max_rel_large: float
    median_rel_large: float

    def to_json(self) -> dict:
        return dict(self.__dict__)

    def _latex(self) -> str:
        return rf"\max \text{{rel. error}} = {self.max_rel:.3g}\ (\varepsilon = {self.eps:g})"

    def _text(self) -> str:
        return (
            f"predicted ({self.method}) vs measured response: eps={self.eps:g}: max {self.max_rel:.3g}, "
            f"median {self.median_rel:.3g}; eps={self.eps_large:g}: max {self.max_rel_large:.3g}, "
            f"median {self.median_rel_large:.3g}"
        )


def _relative(pred: np.ndarray, meas: np.ndarray) -> np.ndarray:
    scale = np.abs(meas).max(axis=(0, 2))
    return np.abs(pred - meas).max(axis=2) / np.where(scale > 0, scale, 1.0)


def response_agreement(
    stack: DepthStack,
    x,
    delta=None,
    eps: float = 1e-6,
    *,
    eps_large: float = 1e-2,
    method: str = "auto",
    lin: Linearisation | None = None,
) -> Agreement:
    """Compare :func:`predict_response` with :func:`measure_response` at two step sizes.

    ``delta`` defaults to a fixed standard-normal draw (seed 0) of the input's shape. ``lin``:
    the stack's :func:`linearise` at ``x`` where the caller has it already (it is not rebuilt).
    """
    check_stack(stack)
    if lin is None:
        lin = linearise(stack, x)
    elif not isinstance(lin, Linearisation):
        raise ParameterError(f"lin must be a Linearisation, got {type(lin).__name__}")
    if delta is None:
        g = torch.Generator().manual_seed(0)
        delta = torch.randn(lin.x.shape, generator=g, dtype=torch.float64).numpy()
    pred = predict_response(lin, delta, method=method)
    small = _relative(pred, measure_response(stack, lin.x, delta, eps))
    large = _relative(pred, measure_response(stack, lin.x, delta, eps_large))
    return Agreement(
        method=_method(lin, method),
        eps=float(eps),
        max_rel=float(small.max()),
        median_rel=float(np.median(small)),
        eps_large=float(eps_large),
        max_rel_large=float(large.max()),
        median_rel_large=float(np.median(large)),
    )
