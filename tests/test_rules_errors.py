"""Malformed update rules: a typed error that points at the place, exit 2 on one line, no evaluation."""

import subprocess
import sys

import numpy as np
import pytest
import sympy as sp
from sympy.parsing import sympy_parser

from depthdyn import from_rule
from depthdyn.cli import main
from depthdyn.errors import DegreeTooLargeError, DepthdynError, ParameterError, RuleError, RuleShapeError

_H = {"H": [[1, 0], [0, 1]]}
_ROW = {"P": [[1, 1]]}

# (rule, from_rule keywords, error type, text the position points at; None: the whole rule)
MALFORMED = [
    ("x' = x + g(x)", {}, RuleError, "g(x)"),  # unknown function
    ("x' = x + a*f(x)", {"strict": True, "params": {}}, RuleError, "a*f"),  # unknown symbol (strict)
    ("x' = x + r*f(x)", {}, RuleError, "r*f"),  # r is the characteristic variable
    ("x[l+1] = x[l] + l*f(x[l])", {}, RuleError, "l*f"),  # the index is not a parameter
    ("x' = x*x", {}, RuleError, "x*x"),  # non-linear: a product of states
    ("x' = x + x**2", {}, RuleError, "x**2"),  # non-linear: a power of a state
    ("x' = x + 2**x", {}, RuleError, "x"),  # a state in an exponent (points at the exponent)
    ("x' = 1/x", {}, RuleError, "x"),  # division by a state
    ("x' = x + sin(x)", {}, RuleError, "sin(x)"),  # a state inside a maths function
    ("x' = x + f(x)*f(x)", {}, RuleError, "f(x)*f(x)"),  # product of two branch outputs
    ("v' = m*v + eta*f(x); x' = x + w'", {}, RuleError, "w'"),  # no equation for the new state w
    ("x = x + f(x)", {}, RuleError, "x = x"),  # the current state set, no new state
    ("k = f(k); y = k", {}, RuleError, "k = f"),  # no state at all
    ("x' = x - x'", {"branches": {}}, None, None),  # valid: implicit, 2 x' = x (control case)
    ("x' = x' + f(x)", {}, RuleError, None),  # x' cancels: the rule does not determine x'
    ("x' = x + f(x); x' = 2*x", {}, RuleError, None),  # two equations for one new state
    ("X' = H*X + P*X", {"n": 2, "matrices": {**_H, **_ROW}}, RuleShapeError, "P*X"),  # 1x2 plus 2x1
    ("X' = H*X + f(P)", {"n": 2, "matrices": {**_H, **_ROW}}, RuleError, "f(P)"),  # no state in f
    ("x' = H*x", {"matrices": _H}, RuleShapeError, "H*x"),  # a 2x2 map of a one-stream state
    ("X' = X*H", {"n": 2, "matrices": _H}, RuleShapeError, "H"),  # 2x1 times 2x2
    ("x' = __import__('os').system('ls')", {}, RuleError, "'os'"),  # code: quotes refused
    ("x' = x + __import__(os)", {}, RuleError, "__import__"),  # code: dunder names refused
    ("x' = x + os.system(x)", {}, RuleError, "os.system"),  # attribute calls refused
    ("x' = x + (lambda: x)", {}, RuleError, "lambda"),  # lambdas are syntax we do not read
    ("x' = [y for y in x]", {}, RuleError, "[y for"),  # comprehensions refused
    ("x' = x + f(x=1)", {}, RuleError, "=1"),  # keyword arguments: a second '='
    ("x' = x + f(x, x)", {}, RuleError, "f(x, x)"),  # one argument per call
    ("x' = x + \"a\"", {}, RuleError, "\"a\""),  # strings refused
    ("x' = x + 1", {}, RuleError, None),  # a bias: no state in the term
    ("x' == x", {}, RuleError, "x' =="),  # not an equation
    ("x' = ", {}, RuleError, ""),  # empty side (position at its end)
    ("x[l+1] = x[n] + f(x[l])", {}, RuleError, "n]"),  # two index letters
    ("x[l+1] = x[l-100]", {}, RuleError, "l-100"),  # lag past the limit
    ("x' = 10**10**10*x", {}, RuleError, "10**10**10"),  # a number too large for exact work
    ("x' = x" + " + x" * 1200, {}, RuleError, None),  # longer than the limit
    ("x' = x + eta*f(x) # comment", {}, RuleError, "#"),  # stray syntax
    ("x' = x + \u03b7*f(x)", {}, RuleError, "\u03b7"),  # non-ASCII
    ("y = 2; y = 3; x' = y*x", {}, RuleError, "y = 3"),  # a name defined twice
    ("x' = x + f'(x)", {}, RuleError, "f'(x)"),  # a primed function
]
MALFORMED = [case for case in MALFORMED if case[2] is not None]


def _no_eval(*args, **kwargs):  # pragma: no cover - called only if the parser evaluated something
    raise AssertionError("a rule reached SymPy's string parser")


@pytest.mark.parametrize("rule, kwargs, kind, marker", MALFORMED, ids=[c[0][:40] for c in MALFORMED])
def test_malformed_rule_is_a_typed_error_with_its_position(rule, kwargs, kind, marker, monkeypatch):
    # SymPy's string parser is how sympify evaluates text (eval itself runs in imports, e.g.
    # namedtuple, so it cannot be patched out)
    monkeypatch.setattr(sympy_parser, "parse_expr", _no_eval)
    with pytest.raises(kind) as info:
        from_rule(rule, **kwargs)
    err = info.value
    assert isinstance(err, ValueError) and isinstance(err, DepthdynError)
    if marker is not None:
        expected = rule.rindex(marker) if marker else len(rule)
        assert err.position == expected, str(err)
        assert f"column {expected + 1}" in str(err)


def test_at_least_twenty_malformed_cases():
    assert len(MALFORMED) >= 20


def test_the_control_cases_are_valid():
    # a new state on both sides is fine when it does not cancel: 2 x' = x
    rec = from_rule("x' = x - x'", branches={})
    assert sp.expand(rec.charpoly() - (sp.Symbol("r") - sp.Rational(1, 2))) == 0


def test_sizes_past_the_limits_are_refused():
    many = "; ".join(f"x{i}' = x{i}" for i in range(20))  # 20 states: past the realisation limit
    with pytest.raises(DegreeTooLargeError):
        from_rule(many)
    with pytest.raises(RuleError, match="more than 32 equations"):
        from_rule("; ".join(f"x{i}' = x{i}" for i in range(40)))
    with pytest.raises(ParameterError):
        from_rule("x' = x", n=9)
    stages = "; ".join(f"k{i} = f(X)" for i in range(4))  # 4 stages + 1 state, 8 streams: 40 unknowns
    with pytest.raises(DegreeTooLargeError, match="unknowns"):
        from_rule(stages + "; X' = X + k0 + k1 + k2 + k3", n=8)


PAYLOADS = ("__import__('os').system('touch pwned')", "__import__('pathlib').Path('pwned').touch()",
            "exec(\"open('pwned', 'w')\")")


@pytest.mark.parametrize("payload", PAYLOADS)
def test_no_argument_evaluates_a_payload(payload, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    containers = [payload, [payload], (payload,), {payload: payload}, {payload}, np.array([payload]),
                  [[payload, "1"], ["0", payload]]]
    for c in containers:
        calls = [
            lambda c=c: from_rule(c),
            lambda c=c: from_rule("x' = x + f(x)", branches={"f": c}),
            lambda c=c: from_rule("x' = x + f(x)", branches=c),
            lambda c=c: from_rule("x' = a*x + f(x)", params={"a": c}),
            lambda c=c: from_rule("x' = a*x + f(x)", params=c),
            lambda c=c: from_rule("X' = H*X + f(X)", n=2, matrices={"H": c}),
            lambda c=c: from_rule("X' = H*X + f(X)", n=2, matrices=c),
            lambda c=c: from_rule("x' = a*x + f(x)", a=c),
        ]
        for call in calls:
            try:
                call()
            except DepthdynError:
                pass
            assert not (tmp_path / "pwned").exists()


def test_cli_derive_rule_malformed_exits_2_with_one_line(capsys):
    for rule in ("x' = x + g(x)", "x' = x*x", "x' = x + v'", "x' = __import__(os)"):
        assert main(["derive", "--rule", rule]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("depthdyn: error:") and "column" in err
    assert main(["derive", "momentum", "--rule", "x' = x + f(x)"]) == 2
    assert "not both" in capsys.readouterr().err


def test_cli_derive_rule_prints_the_same_analysis_as_derive_momentum():
    run = [sys.executable, "-m", "depthdyn", "derive", "--json"]
    family = subprocess.run([*run, "momentum"], capture_output=True, text=True, check=True)
    rule = subprocess.run([*run, "--rule", "v' = m*v + eta*f(x); x' = x + v'", "--domain", "m=[0,1)",
                           "--domain", "eta=nonnegative"], capture_output=True, text=True)
    assert rule.returncode == 0, rule.stderr
    import json

    a, b = json.loads(family.stdout), json.loads(rule.stdout)
    for key in ("charpoly", "roots", "vieta", "discriminant", "root_structure", "stability", "order", "dim"):
        assert a[key] == b[key], key
    assert b["rule"] == "v' = m*v + eta*f(x); x' = x + v'"
    assert a["rule"].startswith("v' = m v + eta f(LN(x))")  # derive FAMILY shows the paper's rule
    assert b["transforms"]["rule"]["verified"]
