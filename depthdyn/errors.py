"""Exception hierarchy.

Every error depthdyn raises on purpose derives from :class:`DepthdynError` and from the
built-in exception a caller would naturally catch (``ValueError``, ``TypeError``,
``ImportError``), so ``except ValueError`` keeps working for code that does not know
depthdyn.
"""

from __future__ import annotations

__all__ = [
    "DepthdynError",
    "ParameterError",
    "UnknownParameterError",
    "DomainError",
    "ShapeError",
    "ParseError",
    "RuleError",
    "RuleShapeError",
    "UnknownFamilyError",
    "DegreeTooLargeError",
    "BudgetExceededError",
    "RealisationError",
    "OptionalDependencyError",
    "ArrayTooLargeError",
    "InconsistentInitialDataError",
]


class DepthdynError(Exception):
    """Base class of every error raised deliberately by depthdyn."""


class ParameterError(DepthdynError, ValueError):
    """A parameter value or combination is invalid."""


class UnknownParameterError(ParameterError):
    """A parameter name is not one of the recurrence's (or factory's) parameters."""


class DomainError(ParameterError):
    """A parameter value lies outside the parameter's domain (e.g. ``m >= 1``)."""


class ShapeError(DepthdynError, ValueError):
    """A matrix or array has the wrong shape (e.g. a non-square Gamma)."""


class ParseError(DepthdynError, ValueError):
    """An expression string could not be parsed safely."""


class RuleError(ParseError):
    """An update rule could not be read or does not define a recurrence.

    ``position`` is the 0-based index in the rule's text where the problem is (``None`` when
    it concerns the whole rule); the message shows the column and the text around it.
    """

    def __init__(self, message: str, position: int | None = None):
        self.position = position
        super().__init__(message)

    def __reduce__(self):
        return type(self), (self.args[0] if self.args else "", self.position)


class RuleShapeError(RuleError, ShapeError):
    """The terms of an update rule have inconsistent dimensions (a vector plus a matrix ...)."""


class UnknownFamilyError(DepthdynError, KeyError):
    """A family name is not in the registry."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class DegreeTooLargeError(DepthdynError, ValueError):
    """The problem is too large for exact work in reasonable time."""


class BudgetExceededError(DegreeTooLargeError):
    """One part of an exact analysis is predicted to exceed, or ran past, its budget.

    ``part`` names the part (``"discriminant"``, ``"stability conditions"``, ...), so that a
    caller can report it and still use the other parts of the analysis.
    """

    def __init__(self, part: str, reason: str):
        self.part, self.reason = part, reason
        super().__init__(
            f"{part}: past the exact-work budget ({reason}); raise it (--budget SECONDS, or "
            "depthdyn.budget(seconds)), substitute values for some parameters, or skip this part"
        )

    def __reduce__(self):  # picklable with its two arguments
        return type(self), (self.part, self.reason)


class RealisationError(DepthdynError, ValueError):
    """A state-space realisation does not exist or fails its similarity check."""


class OptionalDependencyError(DepthdynError, ImportError):
    """An optional dependency (torch, dask, tqdm) is needed but not installed."""


class ArrayTooLargeError(DepthdynError, MemoryError):
    """A requested array exceeds the memory limit (``depthdyn.limits.MAX_BYTES``)."""


class InconsistentInitialDataError(ParameterError):
    """Initial values that contradict the recurrence (more values than its order, not all consistent)."""
