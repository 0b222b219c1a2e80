"""Exact analyses of a :class:`~depthdyn.Recurrence` (SymPy)."""
