"""State-space realisations and the similarity transforms between them.

Every realisation of a recurrence of order ``p`` on ``n``-vectors is ``s_{l+1} = A s_l``
with ``s_l = T w_{l+shift}``, where ``w_l = (x_l, x_{l-1}, ..., x_{l-p+1})`` is the
companion state. Realisations provided:

``companion``
    ``w_l`` itself (block companion for matrix coefficients).
``difference``
    The binomial-inversion states of 002, ``q_n = (delta^-)^(n-1) x_l``, ``n = 1..p``,
    derived through the difference identity (002 eq. 10)
    ``delta^+ (delta^-)^(n-1) x_l = sum_i (-1)^i C(n, i) x_{l+1-i}``, not by conjugating
    the companion matrix, so the similarity check is a real check.
``content_velocity`` / ``content_velocity_forward`` (order 2)
    ``(x_l, v_l)`` with ``v_l = x_l - x_{l-1}`` (the block convention of 000 §2) or
    ``v_l = x_{l+1} - x_l`` (the reading of 000 §3).

plus any native realisation the family defines.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from ..budget import bounded
from ..errors import RealisationError
from ..printing import tex
from ..records import Record
from ..recurrence import signed_pascal

__all__ = [
    "signed_pascal",
    "companion",
    "difference",
    "content_velocity",
    "realisations",
    "realisation",
    "Similarity",
    "similarity",
]


def next_rows(rec):
    """Block row ``R`` with ``x_{l+1} = R w_l`` (``R = -A_0^-1 [A_1 ... A_p]``)."""
    A0inv = rec.coeffs[0].inv()
    return sp.Matrix(sp.Matrix.hstack(*[(-A0inv * A).applyfunc(sp.cancel) for A in rec.coeffs[1:]]))


def companion(rec):
    """Block companion realisation ``w_{l+1} = C w_l``."""
    from ..recurrence import Realisation

    p, n = rec.order, rec.dim
    C = sp.zeros(p * n)
    C[:n, :] = next_rows(rec)
    for i in range(1, p):
        C[i * n : (i + 1) * n, (i - 1) * n : i * n] = sp.eye(n)
    return Realisation(
        "companion",
        _state_names(rec, "x[l-{j}]"),
        C,
        sp.eye(p * n),
        0,
        "w_l = (x_l, x_{l-1}, ..., x_{l-p+1})",
    )


def _state_names(rec, pattern: str) -> tuple[str, ...]:
    names = []
    for j in range(rec.order):
        base = pattern.format(j=j, n=j + 1).replace("[l-0]", "[l]")
        names += [base] if rec.is_scalar else [f"{base}_{c + 1}" for c in range(rec.dim)]
    return tuple(names)


def difference(rec):
    """Binomial-inversion (difference-state) realisation of 002, any order.

    Row ``n`` of the update is ``q_n' = q_n + delta^+ (delta^-)^(n-1) x_l`` with the
    difference expanded by 002 eq. 10, ``x_{l+1}`` taken from the recurrence, and the
    window ``w_l = P q_l`` recovered by binomial inversion.
    """
    from ..recurrence import Realisation

    p, n = rec.order, rec.dim
    eye = sp.eye(n)
    R = next_rows(rec)  # x_{l+1} = R w_l
    D = sp.zeros(p * n)
    for row in range(p):  # q_{row+1}: (delta^-)^row x, its forward difference has order row+1
        acc = sp.zeros(n, p * n)
        for i in range(row + 2):
            c = (-1) ** i * sp.binomial(row + 1, i)
            if i == 0:
                acc = sp.Matrix(acc + c * R)
            else:  # x_{l+1-i} is window entry i-1
                acc[:, (i - 1) * n : i * n] += c * eye
        D[row * n : (row + 1) * n, :] = acc
    P = sp.ImmutableMatrix(sp.kronecker_product(signed_pascal(p), eye))
    A = (sp.eye(p * n) + D * P).applyfunc(sp.cancel)
    return Realisation(
        "difference",
        _state_names(rec, "q{n}"),
        A,
        P,
        0,
        "q_n = (delta^-)^(n-1) x_l (002 eq. 12), w = P q by binomial inversion",
    )


def content_velocity(rec, forward: bool = False):
    """Content/velocity realisation ``(x_l, v_l)`` of an order-2 recurrence (000 §5).

    ``forward=False``: ``v_l = x_l - x_{l-1}`` (the block convention of 000 §2);
    ``forward=True``: ``v_l = x_{l+1} - x_l`` (shift 1).
    """
    from ..recurrence import Realisation

    if rec.order != 2:
        raise RealisationError(f"content/velocity needs order 2, {rec.name} has order {rec.order}")
    n = rec.dim
    eye = sp.eye(n)
    R = next_rows(rec)  # x_{l+1} = R1 x_l + R2 x_{l-1}
    R1, R2 = R[:, :n], R[:, n:]
    if not forward:
        # x_{l-1} = x_l - v_l
        X = (R1 + R2).applyfunc(sp.cancel)
        V = -R2
        A = sp.Matrix.vstack(sp.Matrix.hstack(X, V), sp.Matrix.hstack(X - eye, V))
        T = sp.Matrix([[1, 0], [1, -1]])
    else:
        # state (x_l, v_l = x_{l+1} - x_l); x_{l+2} = R1 x_{l+1} + R2 x_l
        top = sp.Matrix.hstack(eye, eye)  # x_{l+1} = x_l + v_l
        nxt = sp.Matrix.hstack(R1 + R2, R1)  # x_{l+2} in (x_l, v_l)
        A = sp.Matrix.vstack(top, nxt - top)
        T = sp.Matrix([[0, 1], [1, -1]])
    names = ("x", "v") if n == 1 else tuple(f"{s}_{c + 1}" for s in "xv" for c in range(n))
    return Realisation(
        "content_velocity_forward" if forward else "content_velocity",
        names,
        A.applyfunc(sp.cancel),
        sp.kronecker_product(T, eye),
        int(forward),
        "v_l = x_{l+1} - x_l" if forward else "v_l = x_l - x_{l-1}",
    )


def realisations(rec) -> dict:
    """All realisations of ``rec`` by name (generic ones, then the family's native ones)."""
    out = {"companion": companion(rec), "difference": difference(rec)}
    if rec.order == 2:
        out["content_velocity"] = content_velocity(rec)
        if sp.expand(rec.coeffs[-1].det()) != 0:  # else x_{l-1} is not recoverable from it
            out["content_velocity_forward"] = content_velocity(rec, forward=True)
    for real in rec.native:
        out[real.name] = real
    return out


def realisation(rec, name: str):
    """One realisation by name; :class:`RealisationError` lists the choices."""
    reals = realisations(rec)
    if name not in reals:
        raise RealisationError(f"{rec.name} has no realisation {name!r}; choose one of {sorted(reals)}")
    return reals[name]


@dataclass(frozen=True)
class Similarity(Record):
    """``A_target = T A_source T^-1`` with ``s_target = T s_source``; ``verified`` is exact."""

    source: str
    target: str
    T: sp.ImmutableMatrix
    T_inv: sp.ImmutableMatrix
    verified: bool
    residual: sp.ImmutableMatrix

    def _text(self) -> str:
        return f"{self.target} = T {self.source} T^-1 with T = {self.T.tolist()}: " + (
            "verified exactly" if self.verified else f"FAILS, residual {self.residual.tolist()}"
        )

    def _latex(self) -> str:
        return f"T = {tex(self.T)}"


def _is_zero_matrix(M: sp.MatrixBase) -> bool:
    return all(sp.simplify(sp.cancel(e)) == 0 for e in M)


@bounded("similarity transform")
def similarity(rec, source: str = "companion", target: str = "difference") -> Similarity:
    """The similarity transform between two realisations, checked exactly.

    With ``s_a = T_a w_{l+a}`` and ``s_b = T_b w_{l+b}``,
    ``T = T_b C^(b-a) T_a^-1`` (``C`` the companion matrix) maps ``s_a`` to ``s_b``;
    ``verified`` is the exact identity ``T A_a T^-1 == A_b``.
    """
    a, b = realisation(rec, source), realisation(rec, target)
    C = companion(rec).A
    shift = b.shift - a.shift
    try:
        T_a_inv = a.T.inv()
        step = C**shift if shift >= 0 else C.inv() ** (-shift)
        T = sp.ImmutableMatrix((b.T * step * T_a_inv).applyfunc(sp.cancel))
        T_inv = sp.ImmutableMatrix(T.inv().applyfunc(sp.cancel))
    except (ValueError, ZeroDivisionError, sp.matrices.exceptions.NonInvertibleMatrixError) as exc:
        raise RealisationError(f"no invertible transform from {source} to {target}: {exc}") from None
    residual = sp.ImmutableMatrix((T * a.A * T_inv - b.A).applyfunc(sp.cancel))
    return Similarity(source, target, T, T_inv, _is_zero_matrix(residual), residual)
