"""Every size limit of depthdyn, in one place.

Exact work whose cost grows fast with size (determinants of symbolic matrices, Schur–Cohn
conditions, products of symbolic matrices) and user input that could make it explode (huge
numbers, long texts) are refused past these limits with a clear error, before any work. The
modules that enforce a limit import it from here; a limit is changed here and nowhere else.
Budgets of CPU time per part of an analysis are in :mod:`depthdyn.budget`.
"""

from __future__ import annotations

__all__ = [
    "MAX_ORDER", "MAX_STATE", "MAX_STREAMS", "MAX_PERIOD", "MAX_UNKNOWNS", "MAX_MATRIX_POWER",
    "MAX_RULE_LENGTH", "MAX_EQUATIONS",
    "MAX_DIGITS", "MAX_TERMS", "MAX_TEXT_LENGTH", "MAX_EXPONENT", "MAX_NESTING",
    "EXPAND_TERMS", "SIGN_TERMS", "TIDY_TERMS", "MAX_DPS", "SHORTEN_DIGITS",
    "MAX_BYTES", "MAX_LAYERS", "MAX_SINKHORN_ROUNDS", "MAX_LISTING_STEPS",
    "MAX_BUDGET_SECONDS", "CHARPOLY_TERMS", "HEAVY_CHARS", "MAX_PRODUCT_DIGITS", "MAX_PARAMETERS",
]

# ------------------------------------------------------------------ exact work on recurrences
#: Largest order of a recurrence for exact work: a family's ``k``, the steps of a multistep
#: method, the layer offset of a rule (``x[l-12]``), the degree of a polynomial given directly.
MAX_ORDER = 12
#: Largest state for exact work, i.e. the degree of the characteristic polynomial: the
#: realisation of a rule (states times streams times lags), the common state of a periodic
#: pattern (period times dimension), the degree :func:`~depthdyn.symbolic.stability.stability_conditions`
#: accepts.
MAX_STATE = 12
#: Largest matrix (streams ``n``, stages) of a matrix family or a rule.
MAX_STREAMS = 8
#: Longest period of a periodic pattern (a product of this many symbolic matrices).
MAX_PERIOD = 12
#: Most unknowns (new states and stages, times streams) a rule solves for exactly.
MAX_UNKNOWNS = 24
#: Largest integer power of a matrix in a rule (``A^k``).
MAX_MATRIX_POWER = 12

# ------------------------------------------------------------------ update rules as text
#: Longest rule text accepted.
MAX_RULE_LENGTH = 4000
#: Most equations in one rule.
MAX_EQUATIONS = 32

# ------------------------------------------------------------------ user input (depthdyn.parse)
#: Most digits of a number in user input (integer, decimal or exponent form).
MAX_DIGITS = 1000
#: Most terms of an expression in user input once expanded.
MAX_TERMS = 10_000
#: Most digits of an exact number in a product over depth (a periodic pattern's monodromy),
#: below Python's 4300-digit limit on printing an integer.
MAX_PRODUCT_DIGITS = 4000
#: Longest expression text.
MAX_TEXT_LENGTH = 2000
#: Largest integer exponent of a power in user input.
MAX_EXPONENT = 1000
#: Deepest nesting of an expression in user input.
MAX_NESTING = 60

# ------------------------------------------------------------------ size of exact expressions
#: Pieces of a structured characteristic polynomial whose term bound exceeds this are left
#: unexpanded (:func:`depthdyn.structure.structured_charpoly`).
EXPAND_TERMS = 20_000
#: Expressions with more top-level terms than this are left undecided by the exact sign
#: prover (factoring them is slow).
SIGN_TERMS = 300
#: Largest discriminant (in top-level terms) that is factored and tidied for printing.
TIDY_TERMS = 400
#: Most significant digits used to isolate roots against the unit circle.
MAX_DPS = 2000
#: Integers with more digits than this are shortened to floats when printed (numerator or
#: denominator; exact rationals read from float64 have about 17).
SHORTEN_DIGITS = 12

# ------------------------------------------------------------------ numeric work
#: Largest array a numeric routine allocates, in bytes (8 GiB).
MAX_BYTES = 8 * 2**30
#: Most layers a trajectory stores in an array it allocates.
MAX_LAYERS = 10**6
#: Rounds after which Sinkhorn-Knopp run to convergence gives up (a finite input converges
#: long before); also the most rounds a family's fixed Sinkhorn iteration may ask for.
MAX_SINKHORN_ROUNDS = 10_000
#: Most loop iterations a claim's code listing may run when it is executed.
MAX_LISTING_STEPS = 1_000_000
#: Largest variance the mean-field functions take: ``sw2``, ``sb2``, an input ``q0`` and the
#: ``q_max`` an iteration stops at. Their Gaussian rules refine down to the activation's scale
#: ``1/sqrt(q)``, so a layer costs more as ``q`` grows (softplus: about 0.03 s a layer near
#: ``q = 1e9``, 1.3 s near ``1e70``; tanh's fixed point at ``sw2 = 1e20`` 2.5 s, at ``1e100`` 66 s).
MAX_VARIANCE = 1e30
#: Highest degree of a polynomial activation (``x**3 - x``): its Gaussian moments come from
#: Mehler's sum over its Hermite coefficients, with weights ``j!`` (``170!`` is float64's last).
MAX_POLYNOMIAL_DEGREE = 170

# ------------------------------------------------------------------ models built for inspection
#: Most parameters of a model that ``depthdyn inspect`` builds from a configuration (a model
#: type or a config .json): 2e9 float32 weights are 8 GB. Counted before any weight is made.
MAX_PARAMETERS = 2_000_000_000

# ------------------------------------------------------------------ budgets
#: Budgets of CPU time above this many seconds (about three years) mean no deadline: a
#: timer cannot be set that far. The command line's ``--budget`` accepts the same range (one
#: limit for the library and its front end; ``inf`` asks for none).
MAX_BUDGET_SECONDS = 1.0e8

# ------------------------------------------------------------------ what derive computes by default
#: The expanded characteristic polynomial of a matrix family is computed by default only when
#: its term bound (:func:`~depthdyn.structure.term_bound`) is at most this.
CHARPOLY_TERMS = 1000
#: Roots, Vieta, discriminant and stability are computed by default only for a characteristic
#: polynomial of at most this many characters, or one split into factors of degree at most 2.
HEAVY_CHARS = 1000
