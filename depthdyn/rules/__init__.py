"""Architectures from their update rules: ``from_rule("v' = m*v + eta*f(x); x' = x + v'")``.

:func:`from_rule` reads a rule in paper notation through an allow-list parser
(:mod:`depthdyn.rules.parse`), linearises its branch functions in one declared mode
(:mod:`depthdyn.rules.linearise`) and solves it for the new states
(:mod:`depthdyn.rules.build`). The catalogue of families (:mod:`depthdyn.families.catalogue`) holds the update rule of every
built-in family, from which each family is re-derived in the tests.
"""

from .build import from_rule, parse_domain

__all__ = ["from_rule", "parse_domain"]
