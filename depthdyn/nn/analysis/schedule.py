"""Krylov iterations that share the passes of one operator.

An iteration is written as a generator that yields the products it needs, ``("matvec", V)``
or ``("rmatvec", V)`` with ``V`` of shape ``(K, P, n)``, receives ``J V`` or ``J^T V`` back and
returns its result. :func:`solo` runs one alone; :func:`together` runs several, serving the
requests of one kind in one call: where the operator takes several vectors in a pass for
little more than one (token-local operators, :mod:`.local`), an Arnoldi vector rides along
with each block of block Lanczos instead of costing a pass of its own.
"""

from __future__ import annotations

import torch

__all__ = ["solo", "together"]


def solo(op, iteration):
    """Run one iteration against ``op``; return what it returns."""
    return together(op, [iteration])[0]


def together(op, iterations) -> list:
    """Run ``iterations`` against ``op``; return their results, in order.

    Each round serves one kind of product: ``J V`` while any iteration waits for one (the others
    wait for the next round), else ``J^T V`` for every waiting iteration in one call. An iteration
    that asks only ``J^T`` (Arnoldi) thus advances once for every ``J^T`` pass of one that
    alternates (Lanczos), with no pass of its own until the other is done.
    """
    results = [None] * len(iterations)
    asks: dict = {}

    def advance(i: int, value) -> None:
        try:
            asks[i] = iterations[i].send(value)
        except StopIteration as stop:
            asks.pop(i, None)
            results[i] = stop.value

    for i in range(len(iterations)):
        advance(i, None)
    while asks:
        kind = "matvec" if any(k == "matvec" for k, _ in asks.values()) else "rmatvec"
        who = [i for i, (k, _) in asks.items() if k == kind]
        sizes = [asks[i][1].shape[0] for i in who]
        V = torch.cat([asks[i][1] for i in who]) if len(who) > 1 else asks[who[0]][1]
        R = op.matvec(V) if kind == "matvec" else op.rmatvec(V)
        for i, part in zip(who, R.split(sizes), strict=True):
            advance(i, part)
    return results
