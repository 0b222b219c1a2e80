"""The registry of families: look-up, specifications, help and update rules.

One place owns what every front end needs to know about the families: the command line
(``derive --list``, ``-p NAME=VALUE``), :func:`depthdyn.compare` (``"momentum:m=1/2"``),
the report and the torch blocks of :mod:`depthdyn.nn` all look families up here, in the
one table :data:`~depthdyn.families.catalogue.FAMILIES`.

* :func:`get_family` looks an entry up and suggests the nearest names for a misspelt one;
* :meth:`Family.params` gives the parameters with their domains, :meth:`Family.help` and
  :func:`families_help` the help text;
* :func:`paper_rule`, :func:`rule_arguments` and :func:`rule_recurrence` give a family's
  update rule, as its paper writes it and as the arguments that re-derive it;
* :func:`parse_spec` reads ``FAMILY[:NAME=VALUE,...]``, :func:`build_from_assignments`
  builds a family from ``NAME=VALUE`` strings (structural arguments converted, parameter
  values parsed safely), :func:`resolve_spec` fills what a specification leaves open from
  the entry's example.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence

from ..errors import ParameterError, UnknownFamilyError, UnknownParameterError
from ..parse import parse_expr, parse_value
from ..recurrence import Recurrence
from .catalogue import FAMILIES, Family

__all__ = [
    "get_family",
    "build",
    "suggest",
    "families_help",
    "parse_spec",
    "split_top",
    "build_from_assignments",
    "resolve_spec",
    "paper_rule",
    "rule_arguments",
    "rule_recurrence",
]


def suggest(name: str, choices: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the choices nearest to a misspelt ``name``, else ``""``.

    Examples
    --------
    >>> print(suggest("hamiltonain", FAMILIES))
     (did you mean 'hamiltonian'?)
    >>> suggest("zzz", FAMILIES)
    ''
    """
    close = difflib.get_close_matches(str(name), list(choices), n=3, cutoff=0.6)
    return f" (did you mean {' or '.join(map(repr, close))}?)" if close else ""


def get_family(name: str) -> Family:
    """Look a family up by name; raises :class:`UnknownFamilyError` with the nearest names
    and the choices.

    Examples
    --------
    >>> print(get_family("rezero").summary)
    ReZero x' = x + a f(x)
    """
    try:
        return FAMILIES[name]
    except (KeyError, TypeError):
        raise UnknownFamilyError(
            f"unknown family {name!r}{suggest(name, FAMILIES)}; choose one of {', '.join(FAMILIES)}"
        ) from None


def build(name: str, **kwargs) -> Recurrence:
    """Build family ``name`` with structural arguments and parameter values."""
    return get_family(name)(**kwargs)


def families_help() -> str:
    """One line per family: name, summary and structural arguments (``depthdyn derive --list``)."""
    width = max(map(len, FAMILIES))
    lines = []
    for name, fam in FAMILIES.items():
        extra = ", ".join(f"{k}={v!r}" for k, v in fam.options.items())
        lines.append(f"{name:<{width}}  {fam.summary}" + (f"  [{extra}]" if extra else ""))
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ specifications
def _split_assignment(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip() or not value.strip():
        raise ParameterError(f"-p expects NAME=VALUE, got {text!r}")
    return name.strip(), value.strip()


def _structural_value(name: str, default, text: str):
    """Convert a -p value for a factory's structural (keyword-only) argument."""
    if isinstance(default, bool):
        lowered = text.lower()
        if lowered in ("1", "true", "yes"):
            return True
        if lowered in ("0", "false", "no"):
            return False
        raise ParameterError(f"{name} must be true or false, got {text!r}")
    if isinstance(default, int):
        value = parse_expr(text)
        if not value.is_Integer:
            raise ParameterError(f"{name} must be an integer, got {text!r}")
        return int(value)
    if isinstance(default, str):
        return text
    return parse_value(text)  # matrices and vectors: nested lists, parsed safely


def build_from_assignments(
    family: str, assignments: Sequence[str] = (), rho: str | None = None, sigma: str | None = None
):
    """Build family ``family`` from ``NAME=VALUE`` strings (``-p`` of the command line).

    A structural argument (``k``, ``n``, ``kind`` ...) is converted to its default's type;
    any other name is a parameter whose value is parsed safely against the recurrence's
    own parameter names. ``rho``/``sigma`` are the polynomials of ``general``.

    Examples
    --------
    >>> build_from_assignments("smooth", ["k=3", "h=1/2"]).charpoly()
    r**3 + r**2*(-lam/8 - 3) + 3*r - 1
    >>> try:
    ...     build_from_assignments("momentum", ["mm=1/2"])
    ... except UnknownParameterError as exc:
    ...     print(str(exc).partition(";")[0])
    momentum has no parameter 'mm' (did you mean 'm'?)
    """
    fam = get_family(family)
    structural = fam.structural
    kwargs: dict[str, object] = {}
    if family == "general":
        kwargs.update({"rho": rho, "sigma": sigma})
    elif rho is not None or sigma is not None:
        raise ParameterError("--rho and --sigma apply to the 'general' family only")
    values: dict[str, str] = {}
    for item in assignments:
        name, text = _split_assignment(item)
        if name in kwargs or name in values:
            raise ParameterError(f"{name} is given twice")
        if name in structural and name not in ("rho", "sigma"):
            kwargs[name] = _structural_value(name, structural[name], text)
        else:
            values[name] = text  # parsed safely against the recurrence's own parameter names
    rec = fam(**kwargs)
    for name in values:
        if name not in rec.param_names:
            raise UnknownParameterError(
                f"{family} has no parameter {name!r}{suggest(name, [*rec.param_names, *structural])}; "
                f"its parameters: {', '.join(rec.param_names) or 'none'}"
                + (f"; structural arguments: {', '.join(structural)}" if structural else "")
            )
    return rec.subs(values) if values else rec


def split_top(text: str) -> list[str]:
    """Split at commas outside brackets (matrix values contain commas)."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += (ch in "([") - (ch in ")]")
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    return [p.strip() for p in parts + [cur] if p.strip()]


def parse_spec(text: str) -> tuple[str, list[str]]:
    """``"FAMILY[:NAME=VALUE,...]"`` -> ``(family, ["NAME=VALUE", ...])``; a name given twice is refused.

    Examples
    --------
    >>> parse_spec("momentum:m=1/2,eta=1")
    ('momentum', ['m=1/2', 'eta=1'])
    >>> parse_spec("hc_static:A_r=[[1, 0], [0, 1]]")
    ('hc_static', ['A_r=[[1, 0], [0, 1]]'])
    """
    if not isinstance(text, str) or not text.strip():
        raise ParameterError(f"a family specification must be FAMILY[:NAME=VALUE,...], got {text!r}")
    name, _, rest = text.strip().partition(":")
    given = split_top(rest)
    seen = set()
    for item in given:
        key = item.partition("=")[0].strip()
        if key in seen:
            raise ParameterError(f"{text.strip()[:80]}: {key} is given twice")
        seen.add(key)
    return name.strip(), given


def resolve_spec(spec) -> tuple[str, Recurrence, dict]:
    """``(label, recurrence, values filled from the example)`` for one specification of :func:`depthdyn.compare`."""
    if isinstance(spec, Recurrence):
        return spec.name, spec, {}
    if isinstance(spec, tuple) and len(spec) == 2 and isinstance(spec[1], dict):
        name, given = spec[0], [f"{k}={v}" for k, v in spec[1].items()]
        label = name + (":" + ",".join(given) if given else "")
    else:
        name, given = parse_spec(spec)
        label = str(spec).strip()
    fam = get_family(name)
    keys = {a.partition("=")[0].strip() for a in given}
    structural = fam.structural
    extra = [f"{k}={v}" for k, v in fam.example.items() if k in structural and k not in keys
             and k not in ("rho", "sigma")]
    rho = sigma = None
    if name == "general":
        pairs = dict(a.split("=", 1) for a in given if a.split("=", 1)[0].strip() in ("rho", "sigma"))
        given = [a for a in given if a.split("=", 1)[0].strip() not in ("rho", "sigma")]
        rho = pairs.get("rho", fam.example.get("rho"))
        sigma = pairs.get("sigma", fam.example.get("sigma"))
    rec = build_from_assignments(name, given + extra, rho, sigma)
    filled = {k: v for k, v in fam.example.items() if k in rec.param_names and k != rec.lam}
    return label, (rec.subs(filled) if filled else rec), filled


# ------------------------------------------------------------------ update rules
def paper_rule(family: str) -> str:
    """The update rule of ``family`` as its paper writes it, with the reading used (``""`` for a
    name that is no built-in family, such as a recurrence made by :func:`~depthdyn.rules.from_rule`).

    >>> paper_rule("momentum")
    "v' = m v + eta f(LN(x)); x' = x + v'"
    """
    entry = FAMILIES.get(family)
    return entry.paper_rule() if entry is not None else ""


def rule_arguments(family: str, **structural) -> dict:
    """The :func:`~depthdyn.rules.from_rule` arguments of ``family`` at its structural arguments."""
    return get_family(family).rule_arguments(**structural)


def rule_recurrence(family: str, *, rule: str | None = None, **structural) -> Recurrence:
    """``family`` derived from its update rule (``rule`` replaces the text, e.g. to mutate it)."""
    return get_family(family).from_rule(rule=rule, **structural)
