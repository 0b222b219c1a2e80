"""Monte-Carlo harness: wide random networks of every family, batched over seeds, in torch.

Two inputs with per-unit variance ``q0`` and correlation ``c0`` (exactly: orthonormalised
Gaussian directions) run through ``seeds`` independent networks of width ``N``; at every
recorded layer the harness measures ``q_l = (|x_a|^2 + |x_b|^2) / (2N)`` and
``c_l = <x_a, x_b> / (|x_a| |x_b|)`` of the read-out (stream 0 for hyper-connections) and
gives their mean over seeds with a confidence band ``mean +- t_{(1+level)/2, S-1} * sd / sqrt(S)``.

Two ways to draw a network:

* ``method="weights"``: depthdyn's torch blocks (:mod:`depthdyn.nn.blocks`) with the branch
  ``f = Linear o phi`` and weights ``N(0, sw2/N)``, ``N(0, sb2)`` drawn layer by layer for
  all seeds at once and applied through :func:`torch.func.functional_call` under
  :func:`torch.vmap` (the blocks' own ``forward`` runs). Post-LN has no depthdyn block: it
  is the residual block followed by ``layer_norm``. The plain chain is ``Linear o phi``.
* ``method="gaussian"``: the same networks sampled through Gaussian conditioning. Each
  layer's ``W`` meets only the ``m`` columns ``Phi`` (the branch inputs of both inputs) once,
  so the rows of ``W Phi`` are independent ``N(0, (sw2/N) Phi^T Phi)`` vectors given the past:
  drawing them directly is exact in distribution for every recorded ``q_l, c_l``, at
  ``O(N m^2)`` work per layer instead of the ``O(N^2)`` random numbers of a weight matrix.

torch is imported inside the functions (``import depthdyn.meanfield`` does not import it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import OptionalDependencyError, ParameterError
from ..records import Record
from .checks import as_count, as_real, as_variance, check_weights
from .kernels import LN_EPS, KernelSpec, kernel_spec, resolve_activation

__all__ = [
    "MonteCarloKernel",
    "simulate_kernel",
    "MonteCarloJacobian",
    "simulate_jacobian_moments",
    "simulate_gradient_norm",
]

_METHODS = ("weights", "gaussian")


def _torch():
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is installed where this runs
        raise OptionalDependencyError(
            "the Monte-Carlo harness needs torch: pip install depthdyn[torch]"
        ) from None
    return torch


@dataclass(frozen=True, eq=False)
class MonteCarloKernel(Record):
    """Measured ``q_l`` and ``c_l`` over seeds with their confidence bands.

    ``layers`` are the recorded layer indices; ``q``, ``c`` the means over seeds; ``q_band``,
    ``c_band`` arrays ``(2, len(layers))`` (low, high); ``q_seeds``, ``c_seeds`` the per-seed
    values ``(seeds, len(layers))``.
    """

    family: str
    method: str
    width: int
    seeds: int
    level: float
    layers: np.ndarray
    q: np.ndarray
    c: np.ndarray
    q_band: np.ndarray
    c_band: np.ndarray
    q_seeds: np.ndarray = field(repr=False)
    c_seeds: np.ndarray = field(repr=False)
    params: dict = field(default_factory=dict)

    def covers(self, trajectory, *, rtol: float = 1e-9) -> tuple[np.ndarray, np.ndarray]:
        """Whether a theory trajectory (``.q``, ``.c`` per layer) lies in the bands, per recorded layer.

        The bands are widened by ``rtol`` relative (so that layer 0, where the inputs are set
        exactly and the band has zero width, compares up to rounding).
        """
        idx = self.layers
        if idx[-1] >= len(trajectory.q):
            raise ParameterError(
                f"the trajectory has {len(trajectory.q)} layers; "
                f"the simulation recorded up to layer {idx[-1]}"
            )
        tq, tc = np.asarray(trajectory.q)[idx], np.asarray(trajectory.c)[idx]

        def inside(band, value):
            slack = rtol * (1 + np.abs(value))
            return (band[0] - slack <= value) & (value <= band[1] + slack)

        inside_q, inside_c = inside(self.q_band, tq), inside(self.c_band, tc)
        return inside_q, inside_c

    def _text(self) -> str:
        rows = [
            f"{self.family}: {self.seeds} seeds, width {self.width}, {self.method}, {self.level:.0%} bands"
        ]
        for i, layer in enumerate(self.layers):
            rows.append(
                f"  l={layer:4d}  q={self.q[i]:.5g} [{self.q_band[0, i]:.5g}, {self.q_band[1, i]:.5g}]"
                f"  c={self.c[i]:.5g} [{self.c_band[0, i]:.5g}, {self.c_band[1, i]:.5g}]"
            )
        return "\n".join(rows)

    def _latex(self) -> str:
        return f"\\text{{Monte-Carlo kernel of {self.family}, {self.seeds} seeds, width {self.width}}}"


def _band(values: np.ndarray, level: float):
    from scipy.stats import t as student

    s = values.shape[0]
    mean = values.mean(axis=0)
    half = student.ppf((1 + level) / 2, s - 1) * values.std(axis=0, ddof=1) / math.sqrt(s)
    return mean, np.stack((mean - half, mean + half))


def _inputs(torch, gen, seeds, width, q0, c0, dtype, device):
    """Two inputs per seed with empirical variance exactly q0 and correlation exactly c0."""
    z = torch.randn(seeds, width, 2, generator=gen, dtype=torch.float64)
    u, _ = torch.linalg.qr(z)
    u = u * math.sqrt(width * q0)
    xa = u[..., 0]
    xb = c0 * u[..., 0] + math.sqrt(max(1 - c0 * c0, 0.0)) * u[..., 1]
    return torch.stack((xa, xb), dim=1).to(dtype=dtype, device=device)  # (S, 2, N)


def _initial_state(torch, spec: KernelSpec, x):
    """(S, 2, k, N) state of layer 0, built as depthdyn's blocks build it: ``spec.inputs`` applied
    to the input and, where there is a second field (hyper-connections' expansion), the input
    rolled by one unit (an independent field of the same variance across the width)."""
    fields = torch.stack([torch.roll(x, b, dims=-1) for b in range(spec.inputs.shape[1])], dim=2)
    inputs = torch.as_tensor(spec.inputs, dtype=x.dtype, device=x.device)
    return torch.einsum("kb,sjbn->sjkn", inputs, fields)


def _layer_norm(torch, y):
    return torch.nn.functional.layer_norm(y, y.shape[-1:], eps=LN_EPS)


def _gaussian_branch(torch, gen, phi, cols, gain2, bias2):
    """``W phi(cols) + b`` for fresh W, b: cols (S, N, m) -> (S, N, m), exact in distribution."""
    s, n, m = cols.shape
    a = phi(cols)
    gram = (a.transpose(1, 2) @ a) * (gain2 / n)
    lam, vec = torch.linalg.eigh(gram)
    root = vec * torch.sqrt(torch.clamp(lam, min=0.0))[:, None, :]
    z = torch.randn(s, n, m, generator=gen, dtype=cols.dtype, device=cols.device)
    b = torch.randn(s, n, 1, generator=gen, dtype=cols.dtype, device=cols.device) * math.sqrt(bias2)
    return z @ root.transpose(1, 2) + b


def _gaussian_run(torch, gen, spec, phi, X, sw2, sb2, depth, keep):
    C = torch.as_tensor(spec.C, dtype=X.dtype, device=X.device)
    e = torch.as_tensor(spec.e, dtype=X.dtype, device=X.device)
    R = torch.as_tensor(spec.R, dtype=X.dtype, device=X.device)
    out = [X[:, :, 0]] if 0 in keep else []
    s, _, k, n = X.shape
    for layer in range(1, depth + 1):
        Y = R @ X  # branch inputs (S, 2, r, N)
        if spec.norm == "pre":
            Y = _layer_norm(torch, Y)
        r = Y.shape[2]
        cols = Y.reshape(s, 2 * r, n).transpose(1, 2)  # (S, N, 2r)
        if spec.branch == "two":
            cols = _gaussian_branch(torch, gen, lambda t: t, cols, sw2, sb2)
            F = _gaussian_branch(torch, gen, phi, cols, spec.sv2, spec.sa2)
        else:
            F = _gaussian_branch(torch, gen, phi, cols, sw2, sb2)
        F = F.transpose(1, 2).reshape(s, 2, r, n).sum(dim=2)  # one W for every term: sum (S, 2, N)
        X = C @ X + e[:, None] * F[:, :, None, :]
        if spec.norm == "post":
            X = _layer_norm(torch, X)
        if layer in keep:
            out.append(X[:, :, 0])
    return out


class _Phi:
    """Builds the torch module applying the activation (``Activation.torch`` or ``.function``)."""

    @staticmethod
    def module(torch, act):
        fn = getattr(act, "torch", None) or getattr(act, "function", None)
        if fn is None:
            raise ParameterError("the activation has no torch function (Activation.torch)")

        class Phi(torch.nn.Module):
            def forward(self, x):
                return fn(x)

        return Phi()


def _block(torch, spec: KernelSpec, phi_module, width: int, depth: int):
    """The depthdyn torch block of ``spec`` (or the plain layer), and the names of its random Linears."""
    from torch import nn

    from ..nn.blocks import (
        DenseBlock,
        HighwayBlock,
        HyperConnectionBlock,
        MomentumBlock,
        ResidualBlock,
        ReZeroBlock,
        SmoothBlock,
        WeightedBlock,
    )

    p = spec.params
    pre = spec.norm == "pre"
    h = float(p.get("h", 1.0))
    if spec.branch == "two":
        f = nn.Sequential(nn.Linear(width, width), phi_module, nn.Linear(width, width))
    else:
        f = nn.Sequential(phi_module, nn.Linear(width, width))
    fam = spec.family
    if fam == "plain":
        block = f
    elif fam in ("residual", "full_residual", "scaled_residual"):
        step = h / math.sqrt(depth) if fam == "scaled_residual" else h
        block = ResidualBlock(width, f, step=step, norm=pre)
    elif fam == "weighted":
        block = WeightedBlock(width, f, step=h, norm=pre, skip=float(p.get("a", 1.0)))
    elif fam == "rezero":
        block = ReZeroBlock(width, f, step=h, norm=pre)
        block.a.data.fill_(float(p.get("a", 0.0)))
    elif fam == "highway":
        g = float(spec.e[0] / h)
        bias = math.log(g / (1 - g)) if 0 < g < 1 else math.copysign(1e4, g - 0.5)
        block = HighwayBlock(width, f, step=h, norm=pre, gate_bias=bias)
        block.gate.weight.data.zero_()
    elif fam == "momentum":
        m, eta = float(spec.C[1, 1]), float(spec.e[0] / h)
        a = math.log(m / (1 - m)) if m > 0 else -1e4
        b = math.log(math.expm1(eta)) if eta > 0 else -1e4
        block = MomentumBlock(width, f, step=h, norm=pre, a_init=a, b_init=b)
    elif fam == "smooth":
        block = SmoothBlock(width, f, k=spec.k, step=h, norm=pre)
    elif fam == "dense":
        block = DenseBlock(width, f, k=spec.k, step=h, norm=pre)
    else:
        block = HyperConnectionBlock(width, f, n=spec.k, mixing="static", step=h, norm=pre)
        with torch.no_grad():
            block.H_res.copy_(torch.as_tensor(spec.C))
            block.H_pre.copy_(torch.as_tensor(spec.R[0]))
            block.H_post.copy_(torch.as_tensor(spec.e / h))
            if spec.params.get("expansion") is not None:  # else the block's own (1, n - 1, 0, ...)
                block.expansion.copy_(torch.as_tensor(spec.params["expansion"]))
    if spec.norm == "post":
        inner = block

        class PostNorm(nn.Module):
            def __init__(self):
                super().__init__()
                self.inner = inner

            def forward(self, x):
                return _layer_norm(torch, self.inner(x))

        block = PostNorm()
    prefix = ("inner." if spec.norm == "post" else "") + ("" if fam == "plain" else "f.")
    linears = [prefix + name for name, mod in f.named_modules() if isinstance(mod, nn.Linear)]
    return block, linears


def _weights_run(torch, gen, spec, act, X, sw2, sb2, depth, keep, width, dtype, device, grad=False):
    from torch.func import functional_call

    block, linears = _block(torch, spec, _Phi.module(torch, act), width, depth)
    block = block.to(dtype=dtype, device=device)
    block.requires_grad_(False)
    s = X.shape[0]
    variances = [(sw2, sb2), (spec.sv2, spec.sa2)]
    state = X if spec.k > 1 else X[:, :, 0]  # the blocks' own state layout per seed: (2, k, N) or (2, N)

    def one(params, st):
        return functional_call(block, params, (st,))

    run = torch.vmap(one)
    read = (lambda st: st[:, :, 0]) if spec.k > 1 else (lambda st: st)
    out = [read(state)] if 0 in keep else []
    for layer in range(1, depth + 1):
        params = {}
        for name, (g2, b2) in zip(linears, variances, strict=False):
            params[name + ".weight"] = torch.randn(
                s, width, width, generator=gen, dtype=dtype, device=device
            ) * math.sqrt(g2 / width)
            params[name + ".bias"] = torch.randn(
                s, width, generator=gen, dtype=dtype, device=device
            ) * math.sqrt(b2)
        with torch.set_grad_enabled(grad):
            state = run(params, state)
        if layer in keep:
            out.append(read(state))
    return out


def simulate_kernel(
    act,
    sw2,
    sb2,
    *,
    depth: int,
    width: int = 1024,
    seeds: int = 16,
    q0=1.0,
    c0=0.0,
    family: str = "residual",
    method: str = "weights",
    every: int = 1,
    level: float = 0.99,
    seed: int = 0,
    device=None,
    dtype=None,
    **params,
) -> MonteCarloKernel:
    """Measure ``q_l`` and ``c_l`` of ``seeds`` random width-``width`` networks of ``family``.

    Parameters
    ----------
    act, sw2, sb2, depth, q0, c0, family, params
        As for :func:`~depthdyn.meanfield.kernels.iterate_family` (the same conventions).
    width, seeds : int
        Network width ``N`` and number of independent networks (``seeds >= 2``).
    method : {"weights", "gaussian"}
        Draw weight matrices and run depthdyn's blocks, or sample the same networks by
        Gaussian conditioning (see the module docstring).
    every : int
        Record layers ``0, every, 2 every, ...`` (and the last).
    level : float
        Confidence level of the bands (Student ``t`` over seeds).
    seed : int
        Seeds a :class:`torch.Generator`: the same arguments give the same numbers on one device.
    device : str or torch.device, optional
        ``None`` picks CUDA when available.
    dtype : torch.dtype, optional
        float32 for ``"weights"`` (random matrices dominate the cost), float64 for ``"gaussian"``.
    """
    torch = _torch()
    from ..nn.blocks import pick_device

    act = resolve_activation(act)
    sw2, sb2 = check_weights(sw2, sb2)
    depth = as_count(depth, "depth", 10**6)
    width = as_count(width, "width", 10**6)
    seeds = as_count(seeds, "seeds", 10**6)
    if seeds < 2:
        raise ParameterError("seeds must be >= 2 for a confidence band")
    every = as_count(every, "every", 10**6)
    q0 = as_variance(q0, "q0", positive=True)
    c0 = as_real(c0, "c0", low=-1, high=1)
    level = as_real(level, "level", low=0, high=1, low_open=True, high_open=True)
    if method not in _METHODS:
        raise ParameterError(f"method must be one of {', '.join(_METHODS)}, got {method!r}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ParameterError(f"seed must be an integer, got {seed!r}")
    spec = kernel_spec(family, depth=depth, sw2=sw2, sb2=sb2, **params)
    dev = pick_device(device)
    if dtype is None:
        dtype = torch.float32 if method == "weights" else torch.float64
    gen = torch.Generator(device=dev).manual_seed(seed)
    keep = sorted(set(range(0, depth + 1, every)) | {depth})
    x = _inputs(torch, torch.Generator().manual_seed(seed), seeds, width, q0, c0, dtype, dev)
    X = _initial_state(torch, spec, x)
    if method == "gaussian":
        phi = getattr(act, "torch", None) or act.function
        outs = _gaussian_run(torch, gen, spec, phi, X, sw2, sb2, depth, set(keep))
    else:
        outs = _weights_run(torch, gen, spec, act, X, sw2, sb2, depth, set(keep), width, dtype, dev)
    xs = torch.stack(outs, dim=1).to("cpu", torch.float64)  # (S, layers, 2, N)
    qa, qb = (xs**2).mean(dim=-1).unbind(-1)
    cross = (xs[..., 0, :] * xs[..., 1, :]).mean(dim=-1)
    q_seeds = ((qa + qb) / 2).numpy()
    c_seeds = (cross / torch.sqrt(qa * qb)).numpy()
    if not (np.all(np.isfinite(q_seeds)) and np.all(np.isfinite(c_seeds))):
        raise ParameterError(
            "the simulated variances overflowed (exploding phase); lower sw2, the depth or the branch scale"
        )
    qm, qband = _band(q_seeds, level)
    cm, cband = _band(c_seeds, level)
    return MonteCarloKernel(
        family,
        method,
        width,
        seeds,
        level,
        np.array(keep),
        qm,
        cm,
        qband,
        cband,
        q_seeds,
        c_seeds,
        dict(params),
    )


@dataclass(frozen=True, eq=False)
class MonteCarloJacobian(Record):
    """Measured moments ``tr((J J^T)^k) / N`` over seeds with their confidence bands.

    ``moments`` has shape ``(order,)``, ``band`` ``(2, order)``, ``per_seed`` ``(seeds, order)``.
    """

    weights: str
    depth: int
    width: int
    seeds: int
    level: float
    q0: float
    moments: np.ndarray
    band: np.ndarray
    per_seed: np.ndarray = field(repr=False)

    def _text(self) -> str:
        parts = [
            f"m{k + 1} = {m:.6g} [{lo:.6g}, {hi:.6g}]"
            for k, (m, lo, hi) in enumerate(zip(self.moments, *self.band, strict=True))
        ]
        return f"J J^T moments, {self.weights}, depth {self.depth}, width {self.width}: " + ", ".join(parts)

    def _latex(self) -> str:
        return f"\\text{{{self._text()}}}"


def _haar(torch, gen, s, n, dtype, device):
    z = torch.randn(s, n, n, generator=gen, dtype=dtype, device=device)
    q, r = torch.linalg.qr(z)
    return q * torch.sign(torch.diagonal(r, dim1=-2, dim2=-1))[:, None, :]


def simulate_jacobian_moments(
    act,
    sw2,
    sb2,
    *,
    depth: int,
    q0,
    width: int = 512,
    seeds: int = 8,
    weights: str = "gaussian",
    order: int = 3,
    level: float = 0.99,
    seed: int = 0,
    device=None,
    dtype=None,
) -> MonteCarloJacobian:
    """Moments of ``J J^T`` of the plain chain ``h_{l+1} = W phi(h_l) + b``, measured.

    ``J = dh_L / dh_0 = W_L D_{L-1} ... W_1 D_0`` is built as a dense ``N x N`` product for
    each of ``seeds`` networks (``D_l = diag(phi'(h_l))`` by autograd on the forward pass
    from an input of per-unit variance ``q0``, usually the fixed point ``q*``). ``weights``:
    ``"gaussian"`` (``N(0, sw2/N)``) or ``"orthogonal"`` (``sqrt(sw2)`` times Haar). The mean
    over seeds differs from the infinite-width moments by ``O(1/N)`` as well as by chance.
    """
    torch = _torch()
    from ..nn.blocks import pick_device

    act = resolve_activation(act)
    sw2, sb2 = check_weights(sw2, sb2)
    depth = as_count(depth, "depth", 10**4)
    width = as_count(width, "width", 10**5)
    seeds = as_count(seeds, "seeds", 10**5)
    order = as_count(order, "order", 8)
    q0 = as_variance(q0, "q0", positive=True)
    level = as_real(level, "level", low=0, high=1, low_open=True, high_open=True)
    if seeds < 2:
        raise ParameterError("seeds must be >= 2 for a confidence band")
    if weights not in ("gaussian", "orthogonal"):
        raise ParameterError(f"weights must be 'gaussian' or 'orthogonal', got {weights!r}")
    dev = pick_device(device)
    dtype = torch.float64 if dtype is None else dtype
    gen = torch.Generator(device=dev).manual_seed(seed)
    phi = getattr(act, "torch", None) or act.function
    h = _inputs(torch, torch.Generator().manual_seed(seed), seeds, width, q0, 0.0, dtype, dev)[:, 0]
    J = torch.eye(width, dtype=dtype, device=dev).expand(seeds, width, width)
    for _ in range(depth):
        with torch.enable_grad():
            hv = h.detach().requires_grad_(True)
            out = phi(hv)
            (d,) = torch.autograd.grad(out.sum(), hv)
        if weights == "gaussian":
            W = torch.randn(seeds, width, width, generator=gen, dtype=dtype, device=dev) * math.sqrt(
                sw2 / width
            )
        else:
            W = _haar(torch, gen, seeds, width, dtype, dev) * math.sqrt(sw2)
        b = torch.randn(seeds, width, generator=gen, dtype=dtype, device=dev) * math.sqrt(sb2)
        J = W @ (d[:, :, None] * J)
        h = (W @ out.detach()[:, :, None])[:, :, 0] + b
    M = J @ J.transpose(1, 2)
    power, rows = M, []
    for k in range(order):
        if k:
            power = power @ M
        rows.append(torch.diagonal(power, dim1=-2, dim2=-1).sum(-1) / width)
    per_seed = torch.stack(rows, dim=1).to("cpu", torch.float64).numpy()
    if not np.all(np.isfinite(per_seed)):
        raise ParameterError("the Jacobian moments overflowed; lower sw2 or the depth")
    mean, band = _band(per_seed, level)
    return MonteCarloJacobian(weights, depth, width, seeds, level, q0, mean, band, per_seed)


def simulate_gradient_norm(
    act,
    sw2,
    sb2,
    *,
    depth: int,
    width: int = 256,
    seeds: int = 8,
    q0=1.0,
    family: str = "residual",
    level: float = 0.99,
    seed: int = 0,
    device=None,
    dtype=None,
    **params,
):
    """``|d<u, x_L>/dx_0|^2 / |u|^2`` of ``seeds`` networks (weights through depthdyn's blocks).

    ``u`` is a standard Gaussian vector per network; autograd runs through the blocks' own
    ``forward``. Returns ``(mean, band, per_seed)`` with the Student-``t`` band at ``level``
    (compare with ``gradient_norms(...)[0]`` of :mod:`depthdyn.meanfield.asymptotics`).
    """
    torch = _torch()
    from ..nn.blocks import pick_device

    act = resolve_activation(act)
    sw2, sb2 = check_weights(sw2, sb2)
    depth, width, seeds = (
        as_count(depth, "depth", 10**4),
        as_count(width, "width", 10**5),
        as_count(seeds, "seeds", 10**5),
    )
    level = as_real(level, "level", low=0, high=1, low_open=True, high_open=True)
    if seeds < 2:
        raise ParameterError("seeds must be >= 2 for a confidence band")
    spec = kernel_spec(family, depth=depth, sw2=sw2, sb2=sb2, **params)
    dev = pick_device(device)
    dtype = torch.float64 if dtype is None else dtype
    gen = torch.Generator(device=dev).manual_seed(seed)
    x = _inputs(
        torch,
        torch.Generator().manual_seed(seed),
        seeds,
        width,
        as_real(q0, "q0", low=0, low_open=True),
        0.0,
        dtype,
        dev,
    )[:, :1].requires_grad_(True)
    out = _weights_run(
        torch,
        gen,
        spec,
        act,
        _initial_state(torch, spec, x),
        sw2,
        sb2,
        depth,
        {depth},
        width,
        dtype,
        dev,
        grad=True,
    )[-1]
    u = torch.randn(out.shape, generator=gen, dtype=dtype, device=dev)
    (g,) = torch.autograd.grad((u * out).sum(), x)
    per_seed = ((g**2).sum(-1) / (u**2).sum(-1))[:, 0].detach().to("cpu", torch.float64).numpy()
    if not np.all(np.isfinite(per_seed)):
        raise ParameterError("the gradient overflowed (exploding gradients); lower sw2 or the depth")
    mean, band = _band(per_seed[:, None], level)
    return float(mean[0]), band[:, 0], per_seed
