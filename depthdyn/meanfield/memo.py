"""Bounded caches of results per activation: the last entries kept, the oldest dropped.

A kernel recurrence asks for the same variance several times per layer, and a dense network
for its lags' moments in consecutive layers. An entry is keyed by the activation's ``id`` and
holds the activation itself, so that the ``id`` is not reused by another object while it is
kept, and a look-up for another activation with a reused ``id`` finds nothing.
"""

from __future__ import annotations

from collections import OrderedDict

__all__ = ["ActivationMemo"]


class ActivationMemo:
    """The last ``size`` results per ``(activation, key)``."""

    def __init__(self, size: int):
        self.size = size
        self._entries: OrderedDict = OrderedDict()

    def get(self, act, key):
        """The value kept for ``act`` and ``key``, or ``None``."""
        entry = self._entries.get((id(act), key))
        return entry[1] if entry is not None and entry[0] is act else None

    def put(self, act, key, value):
        """Keep ``value`` for ``act`` and ``key`` (dropping the oldest past ``size``); return it."""
        entries = self._entries
        entries[(id(act), key)] = (act, value)
        if len(entries) > self.size:  # one entry in, at most one out
            entries.popitem(last=False)
        return value

    def clear(self) -> None:
        self._entries.clear()
