"""Bounded caches of results per activation: the last entries kept, the oldest dropped.

A kernel recurrence asks for the same variance several times per layer, and a dense network
for its lags' moments in consecutive layers. Each activation has its own entries, found by the
activation's ``id``; they hold the activation itself, so that the ``id`` is not reused by another
object while they are kept, and a look-up for another activation with a reused ``id`` finds
nothing. A hot loop takes an activation's :class:`Entries` once (:meth:`ActivationMemo.of`) and
looks up its keys with ``get``.
"""

from __future__ import annotations

from collections import OrderedDict

__all__ = ["ActivationMemo", "Entries"]


class Entries(OrderedDict):
    """One activation's entries, the last ``size`` kept (in the order of insertion; an ``OrderedDict``
    drops its oldest in constant time, where a dict scans the holes its deletions left)."""

    __slots__ = ("size",)

    def put(self, key, value):
        """Keep ``value`` for ``key`` (dropping the oldest entry past ``size``); return it."""
        self[key] = value
        if len(self) > self.size:  # one entry in, at most one out
            self.popitem(last=False)
        return value


class ActivationMemo:
    """The last ``size`` results per activation, for the last ``activations`` activations met."""

    def __init__(self, size: int, activations: int = 4):
        self.size, self.activations = size, activations
        self._kept: dict = {}  # id(act) -> (act, its Entries)

    def of(self, act) -> Entries:
        """The entries of ``act`` (new and empty where none are kept)."""
        kept = self._kept.get(id(act))
        if kept is not None and kept[0] is act:
            return kept[1]
        entries = Entries()
        entries.size = self.size
        self._kept.pop(id(act), None)  # a reused id: the entries of an activation no longer alive
        self._kept[id(act)] = (act, entries)
        if len(self._kept) > self.activations:
            del self._kept[next(iter(self._kept))]
        return entries

    def get(self, act, key):
        """The value kept for ``act`` and ``key``, or ``None``."""
        kept = self._kept.get(id(act))
        return kept[1].get(key) if kept is not None and kept[0] is act else None

    def put(self, act, key, value):
        """Keep ``value`` for ``act`` and ``key``; return it."""
        return self.of(act).put(key, value)

    def clear(self) -> None:
        self._kept.clear()
