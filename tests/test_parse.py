"""The safe expression parser never evaluates Python."""

import pytest
import sympy as sp

from depthdyn.errors import ParseError
from depthdyn.parse import parse_expr, parse_value

r, m = sp.symbols("r m")


@pytest.mark.parametrize(
    "text, expected",
    [
        ("r**2 - 0.5*r", r**2 - r / 2),
        ("r^2", r**2),
        ("r^2 - 2*r^3", r**2 - 2 * r**3),
        ("(23*r**2 - 16*r + 5)/12", (23 * r**2 - 16 * r + 5) / 12),
        ("sqrt(m) + 1/3", sp.sqrt(m) + sp.Rational(1, 3)),
        ("0.1", sp.Rational(1, 10)),
        ("1e-3", sp.Rational(1, 1000)),
        ("-m", -m),
        ("2*I + pi", 2 * sp.I + sp.pi),
    ],
)
def test_allowed(text, expected):
    assert parse_expr(text, {"r": r, "m": m}) == expected


@pytest.mark.parametrize(
    "text",
    [
        "__import__('os').system('touch PWNED')",
        "().__class__.__bases__[0].__subclasses__()",
        "m.__class__",
        "lambda: 1",
        "[x for x in (1, 2)]",
        "exec('1')",
        "eval('1')",
        "open('f')",
        "'text'",
        "sqrt(x=1)",
        "2**10**10",
        "r**100000",
        "1/0",
        "q + 1",
        "r if m else 1",
        "r == 1",
        "",
        "r +",
        "x" * 3000,
    ],
)
def test_rejected(text, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ParseError):
        parse_expr(text, {"r": r, "m": m})
    assert not (tmp_path / "PWNED").exists()


def test_lists_only_in_parse_value():
    assert parse_value("[[1, 1/2], [0, 1]]") == [[1, sp.Rational(1, 2)], [0, 1]]
    with pytest.raises(ParseError):
        parse_expr("[1, 2]")
    with pytest.raises(ParseError):
        parse_value("[1, 2] + 1")


# -- the budget covers the whole expression ------------------------------------------------
@pytest.mark.parametrize(
    "text, part",
    [
        ("((2**999)**999)**999", "digits"),
        ("(2**999)**999", "digits"),
        ("binomial(10**100, 10**50)", "digits"),
        ("binomial(10**6, 5*10**5)", "digits"),
        ("exp(exp(exp(10)))", "too large"),
        ("cosh(10**4)", "too large"),
        ("(1 + sqrt(2))**999 * 10**999", "digits"),
        ("(r + m + 1)**200", "terms"),
        ("1e999999999", "digits"),
        ("10**999 * 10**999", "digits"),
    ],
)
def test_whole_expression_budget(text, part):
    import time

    start = time.perf_counter()
    with pytest.raises(ParseError, match=part):
        parse_expr(text, {"r": r, "m": m})
    assert time.perf_counter() - start < 5  # refused before the work, not after


def test_within_budget_values_are_exact():
    from math import comb

    assert parse_expr("binomial(3000, 1500)") == comb(3000, 1500)
    assert parse_expr("10**1000") == 10**1000
    assert parse_expr("(r + m + 1)**20", {"r": r, "m": m}) == (r + m + 1) ** 20
    assert parse_expr("exp(100)") == sp.exp(100)


def test_huge_integer_literals_are_one_line_errors():
    with pytest.raises(ParseError):
        parse_expr("1" * 5000)  # past Python's 4,300-digit str limit and our length limit
    with pytest.raises(ParseError, match="digits"):
        parse_expr("0x" + "f" * 1000)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("1e-400", sp.Rational(1, 10**400)),
        ("0.99999999999999999999", sp.Rational(10**20 - 1, 10**20)),
        ("0.1000000000000000000001", sp.Rational(10**21 + 1, 10**22)),
        ("1_000.5", sp.Rational(2001, 2)),
        ("2.5e3", 2500),
        ("1.5j", sp.Rational(3, 2) * sp.I),
        ("-1e-30", -sp.Rational(1, 10**30)),
    ],
)
def test_decimals_are_read_exactly_from_their_text(text, expected):
    assert parse_expr(text) == expected


def test_exact_decimals_differ_from_the_binary_float():
    # the float route would give 0, 1 and 1/10: the exact values are strictly different
    assert parse_expr("1e-400") != 0
    assert parse_expr("0.99999999999999999999") < 1
    assert parse_expr("0.1000000000000000000001") != sp.Rational(1, 10)


def test_as_sympy_refuses_what_is_not_an_expression():
    from depthdyn.parse import as_sympy

    for bad in ({"a": 1}, {1, 2}, object(), None, True, float("nan"), 10**5000):
        with pytest.raises(ParseError):
            as_sympy(bad)
    with pytest.raises(ParseError, match="scalar"):
        as_sympy([1, 2], scalar=True)
