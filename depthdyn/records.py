"""The record protocol: small frozen results that print as text, as LaTeX and as JSON.

Every analysis of depthdyn returns a record: a frozen dataclass that subclasses
:class:`Record` and implements ``_text`` and ``_latex``. The protocol gives it

* ``str(record)`` from ``_text()``;
* ``record._repr_latex_()`` (Jupyter) and ``sympy.latex(record)`` from ``_latex()``; SymPy's
  printers call ``_latex(printer)`` and ``_sympystr(printer)``, so records also print
  inside SymPy containers;
* ``record.to_json()``: a JSON-ready ``dict`` of its dataclass fields (see :func:`jsonable`);
  a record overrides it where its JSON is not simply its fields.

This module imports neither SymPy nor NumPy: purely numeric records do not pull in the
exact engine, and values of either library are converted by duck typing.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Mapping

__all__ = ["Record", "jsonable"]


def jsonable(value):
    """``value`` as JSON-ready data: what ``json.dumps`` writes with no custom encoder.

    Records give their ``to_json()``; other dataclasses, mappings and sequences are converted
    item by item; NumPy arrays and scalars become lists and numbers; SymPy expressions become
    the string that ``sympy.parse_expr`` reads back; complex numbers ``{"re": .., "im": ..}``;
    a non-finite float becomes the string ``"inf"``, ``"-inf"`` or ``"nan"`` (JSON has no
    such numbers).

    >>> jsonable({"a": (1, 2.5, float("inf")), "b": complex(1, -2)})
    {'a': [1, 2.5, 'inf'], 'b': {'re': 1.0, 'im': -2.0}}
    """
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, complex):
        return {"re": jsonable(value.real), "im": jsonable(value.imag)}
    if isinstance(value, Record):
        return value.to_json()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: jsonable(getattr(value, f.name)) for f in dataclasses.fields(value) if f.repr}
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if hasattr(value, "free_symbols") and hasattr(value, "subs"):  # a SymPy object
        from sympy import sstr

        return sstr(value)
    if hasattr(value, "tolist"):  # NumPy arrays and scalars (and torch tensors)
        return jsonable(value.tolist())
    if isinstance(value, (list, tuple, set, frozenset)):
        items = sorted(value, key=repr) if isinstance(value, (set, frozenset)) else value
        return [jsonable(v) for v in items]
    return str(value)


class Record:
    """Mixin: ``__str__`` from ``_text()``, ``_repr_latex_`` from ``_latex()``, ``to_json`` from the fields.

    Subclasses are frozen dataclasses; they implement ``_text`` and ``_latex``. SymPy's
    printers call ``_sympystr(printer)`` and ``_latex(printer)``, so ``sympy.latex(record)``
    and records inside SymPy containers print: a subclass's ``_latex(self)`` is wrapped here
    to accept (and ignore) the printer argument.
    """

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        body = cls.__dict__.get("_latex")
        if body is not None and not getattr(body, "_takes_printer", False):

            @functools.wraps(body)
            def _latex(self, printer=None, _body=body) -> str:
                return _body(self)

            _latex._takes_printer = True
            cls._latex = _latex

    def _text(self) -> str:  # pragma: no cover - every record overrides
        raise NotImplementedError

    def _latex(self, printer=None) -> str:  # pragma: no cover
        raise NotImplementedError

    def __str__(self) -> str:
        return self._text()

    def _repr_latex_(self) -> str:
        return f"$\\displaystyle {self._latex()}$"

    def _sympystr(self, printer) -> str:
        return self._text()

    def to_json(self) -> dict:
        """The record's dataclass fields as JSON-ready data (:func:`jsonable`)."""
        if not dataclasses.is_dataclass(self):
            raise TypeError(f"{type(self).__name__} is not a dataclass: it must define to_json()")
        return {f.name: jsonable(getattr(self, f.name)) for f in dataclasses.fields(self) if f.repr}
