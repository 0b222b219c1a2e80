"""Budgets for exact work whose cost can explode.

Exact algebra on symbolic polynomials (discriminants, Hurwitz or Schur-Cohn determinants,
multivariate factorisation) can grow from milliseconds to hours with one more stream or
one more symbol. Each such *part* of an analysis runs inside :func:`part`, which enforces
one budget in seconds of **CPU time** of the process (never the wall clock, so the same
input gets the same answer on an idle laptop and on a loaded CI runner) in two ways:

* **up front**, from a size estimate: the number of term products a sparse polynomial
  computation will make (:func:`require`), converted to seconds at the conservative rate
  :data:`TERM_RATE`. A part predicted to exceed
  the budget is refused at once, before any work is done;
* **as a deadline**, for what the estimate cannot foresee: in the main thread of a
  platform with ``SIGPROF``, a CPU-time timer (``ITIMER_PROF``) interrupts the part when
  its budget of processor time is spent. Time the process spends waiting for a core on
  a busy machine does not count. SymPy's
  polynomial code is pure Python and the interpreter checks signals between bytecodes, so
  the interruption lands within one arithmetic operation (or just after a finaliser or a
  garbage-collector callback, where the interpreter would drop it); the part's partial
  results are local and dropped, and SymPy's caches only ever store finished results. In other threads
  (or without ``SIGPROF``) only the up-front estimates apply.

Each public analysis (root structure, closed form, root condition, stability numbers, ...)
also runs as one part as a whole (:func:`bounded`), so no path through it outlasts the
budget, and optional refinements (tidying a printed form, proving a sign) give up after
:data:`REFINE_SECONDS` with a plainer answer (:func:`at_most`).

Past the budget a :class:`~depthdyn.errors.BudgetExceededError` names the part; callers
that assemble several parts (the ``derive`` and ``check`` commands) report that part and
keep the others.

Examples
--------
>>> import depthdyn
>>> from depthdyn.budget import budget_seconds
>>> with depthdyn.budget(60):
...     budget_seconds()
60.0
"""

from __future__ import annotations

import functools
import gc
import math
import signal
import sys
import threading
import time
import weakref
from contextlib import contextmanager
from contextvars import ContextVar

from .errors import BudgetExceededError, ParameterError
from .limits import MAX_BUDGET_SECONDS

__all__ = ["budget", "budget_seconds", "part", "bounded", "require", "at_most",
           "DEFAULT_SECONDS", "REFINE_SECONDS", "TERM_RATE"]

#: Default budget of one part of an analysis, in seconds of CPU time.
DEFAULT_SECONDS = 20.0
#: Seconds spent at most on one optional refinement (a shorter printed form, a sign proof).
REFINE_SECONDS = 3.0
#: Sparse term products per second assumed by the up-front estimates (conservative).
TERM_RATE = 1.0e6

_seconds: ContextVar[float] = ContextVar("depthdyn_budget", default=DEFAULT_SECONDS)
_active: list[tuple[str, float]] = []  # (part, deadline) of the running parts, main thread only


class _Expired(BaseException):
    """Raised by the timer inside a part; BaseException so that ``except Exception`` in
    library code cannot swallow it."""


def budget_seconds() -> float:
    """The budget of one part in the current context (``inf`` means none)."""
    return _seconds.get()


def budget(seconds):
    """Set the per-part budget (CPU seconds; ``None``, ``inf`` or anything above
    :data:`MAX_BUDGET_SECONDS` for no limit) inside a ``with``.

    A bad value (negative, zero, NaN, not a number) raises
    :class:`~depthdyn.errors.ParameterError` at the call, before the ``with``.
    """
    return _budget(_budget_value(seconds))


def _budget_value(seconds) -> float:
    value = math.inf if seconds is None else seconds
    if isinstance(value, bool):
        raise ParameterError(f"budget must be a number of seconds, got {seconds!r}")
    try:
        value = float(value)
    except (TypeError, ValueError, OverflowError):
        raise ParameterError(f"budget must be a number of seconds, got {seconds!r}") from None
    if not value > 0:  # also NaN
        raise ParameterError(f"budget must be a positive number of seconds, got {seconds!r}")
    if value > MAX_BUDGET_SECONDS:  # a timer cannot be set that far; no deadline is what was meant
        value = math.inf
    return value


@contextmanager
def _budget(value: float):
    token = _seconds.set(value)
    try:
        yield value
    finally:
        _seconds.reset(token)


def require(name: str, term_products: float, what: str = "") -> None:
    """Refuse part ``name`` up front when its estimated cost exceeds the budget."""
    limit = _seconds.get()
    predicted = term_products / TERM_RATE
    if predicted > limit:
        detail = f" ({what})" if what else ""
        raise BudgetExceededError(name, f"estimated {predicted:.3g} s{detail} > budget {limit:g} s")


#: CPU seconds after which the timer fires again should its first interruption be swallowed.
_RETRY = 0.25
#: What a budget counts: CPU time of the process (user + system, all threads), which is what
#: ``ITIMER_PROF`` measures too. Waiting for a core on a loaded machine is not counted.
_clock = time.process_time
_SIGNAL, _TIMER = getattr(signal, "SIGPROF", None), getattr(signal, "ITIMER_PROF", None)
_installed: list = []  # the handler that was there before ours, while ours is installed


def _on_alarm(signum, frame):
    if not _active:
        return  # late delivery of a timer whose part has ended
    left = _active[-1][1] - _clock()
    if left > 1e-3:
        # the kernel samples CPU time at its tick, so the timer can fire a little before the
        # precise clock reaches the deadline: wait for the rest (never drop the deadline)
        signal.setitimer(_TIMER, left)
        return
    if _cannot_raise_in(frame):  # again in a moment, once out of there
        signal.setitimer(_TIMER, 1e-3)
        return
    # should the exception still be dropped somewhere, firing again until the part has ended
    # makes that a delay of a quarter second, not a part without a deadline
    signal.setitimer(_TIMER, _RETRY)
    raise _Expired


def _cannot_raise_in(frame) -> bool:
    """Whether raising in ``frame`` would be lost or would break bookkeeping.

    An exception raised in a finaliser (``__del__``), a garbage-collector callback (hypothesis
    registers one), a weakref callback or a generator closed at deallocation is printed and
    dropped by the interpreter, and the part would run on; and entering or leaving a part
    (this module) must not be cut half-way. The caller tries again a millisecond later.
    """
    if frame is None:
        return False
    code = frame.f_code
    if code.co_filename in (__file__, weakref.__file__):
        return True
    if isinstance(sys.exc_info()[1], GeneratorExit):
        return True  # a generator being closed (one running is interrupted like any code)
    callbacks = {getattr(cb, "__code__", None) for cb in gc.callbacks}
    for _ in range(64):  # what a finaliser or callback calls is inside it too
        if frame is None:
            return False
        if frame.f_code.co_name == "__del__" or frame.f_code in callbacks:
            return True
        frame = frame.f_back
    return False


def _timer_usable() -> bool:
    return _SIGNAL is not None and threading.current_thread() is threading.main_thread()


class part:  # noqa: N801 - used as ``with part(name):``, like a function
    """Run the body as part ``name`` under the budget (a deadline where a timer is usable).

    Nested parts share the earliest deadline; the innermost running part is the one named.
    A class in this module rather than a generator-based context manager: the timer's handler
    never raises in this module's frames, so entering and leaving a part, its bookkeeping
    included, is never cut half-way. Python's default action for SIGPROF ends the process,
    so where that was the handler before, ours stays installed (it ignores alarms while no
    part runs); any other previous handler is restored when the outermost part ends.
    """

    def __init__(self, name: str):
        self.name, self.timed = name, False

    def __enter__(self):
        self.limit = _seconds.get()
        if math.isinf(self.limit) or not _timer_usable():
            return self
        now = _clock()
        deadline = min([now + self.limit] + [d for _, d in _active])
        if signal.getsignal(_SIGNAL) is not _on_alarm:
            _installed[:] = [signal.signal(_SIGNAL, _on_alarm)]
        _active.append((self.name, deadline))
        self.timed = True
        signal.setitimer(_TIMER, max(deadline - now, 1e-3))
        return self

    def __exit__(self, kind, value, traceback):
        if not self.timed:
            return False
        signal.setitimer(_TIMER, 0)  # first, so the timer cannot fire in here
        _active.pop()
        if _active:
            signal.setitimer(_TIMER, max(_active[-1][1] - _clock(), 1e-3))
        elif _installed and _installed[0] not in (signal.SIG_DFL, None):
            signal.signal(_SIGNAL, _installed.pop())
        if kind is _Expired:
            raise BudgetExceededError(self.name, f"ran past {self.limit:g} s") from None
        return False


def bounded(name: str):
    """Decorator: the whole analysis runs as part ``name``, so that no path through it (a
    slow factorisation nobody foresaw) outlasts the budget; inner parts keep their names."""
    def decorate(fn):
        @functools.wraps(fn)
        def run(*args, **kwargs):
            with part(name):
                return fn(*args, **kwargs)
        return run
    return decorate


def at_most(seconds: float, name: str, work, fallback):
    """``work()`` if it finishes within ``seconds`` (and the current budget), else ``fallback``.

    For optional refinements (a shorter printed form, a proof that a case cannot occur or
    that a condition is implied): multivariate factoring, over ``QQ<I>`` in particular, can
    take minutes, and SymPy's randomised evaluation points make its time vary from run to run.
    """
    try:
        with budget(min(seconds, budget_seconds())), part(name):
            return work()
    except BudgetExceededError:
        return fallback
