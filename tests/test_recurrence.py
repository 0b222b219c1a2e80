"""The core Recurrence object: validation, substitution, hashing, iteration."""

import pytest
import sympy as sp

import depthdyn as dd
from depthdyn import Param, Recurrence
from depthdyn.recurrence import r


def test_frozen_and_hashable():
    a, b = dd.momentum(), dd.momentum()
    assert a == b and hash(a) == hash(b)
    assert len({a, b, dd.residual()}) == 2
    with pytest.raises(AttributeError):
        a.name = "other"


def test_subs_returns_new_object_and_drops_parameter():
    rec = dd.momentum()
    sub = rec.subs(m=sp.Rational(1, 2))
    assert sub is not rec
    assert "m" in rec.param_names and "m" not in sub.param_names
    lam, eta = sub.symbols["lam"], sub.symbols["eta"]
    assert sp.expand(sub.charpoly() - (r**2 - (sp.Rational(3, 2) + eta * lam) * r + sp.Rational(1, 2))) == 0


@pytest.mark.parametrize("value", [0.5, "1/2", sp.Rational(1, 2), "0.5"])
def test_subs_values_are_exact(value):
    rec = dd.momentum().subs(m=value)
    assert rec.coeffs[2][0, 0] == sp.Rational(1, 2)


def test_float_reads_as_printed_decimal():
    rec = dd.highway(g=0.1)
    lam = rec.lam_symbol
    assert sp.expand(rec.charpoly() - (r - sp.Rational(9, 10) - lam / 10)) == 0


@pytest.mark.parametrize(
    "kwargs, error",
    [
        ({"m": sp.Rational(3, 2)}, dd.errors.DomainError),
        ({"m": 1}, dd.errors.DomainError),
        ({"m": -sp.Rational(1, 10)}, dd.errors.DomainError),
        ({"eta": -1}, dd.errors.DomainError),
        ({"m": float("nan")}, dd.errors.ParameterError),
        ({"m": float("inf")}, dd.errors.ParameterError),
        ({"m": sp.I}, dd.errors.DomainError),
        ({"mu": 1}, dd.errors.UnknownParameterError),
        ({"m": "m + q"}, dd.errors.ParseError),
    ],
)
def test_bad_values_raise_typed_errors(kwargs, error):
    with pytest.raises(error):
        dd.momentum().subs(**kwargs)


def test_errors_are_builtin_subclasses():
    with pytest.raises(ValueError):
        dd.momentum(m=2)
    assert issubclass(dd.errors.UnknownFamilyError, KeyError)
    assert issubclass(dd.errors.OptionalDependencyError, ImportError)


def test_symbolic_substitution_keeps_other_parameters():
    rec = dd.momentum()
    m, eta = rec.symbols["m"], rec.symbols["eta"]
    crit = rec.subs(lam=(2 * sp.sqrt(m) - 1 - m) / eta)
    assert "lam" not in crit.param_names
    assert sp.expand(crit.charpoly() - (r - sp.sqrt(m)) ** 2) == 0
    (double,) = dd.roots(crit).roots
    assert double.value == sp.sqrt(m) and double.multiplicity == 2


def test_validation_of_coefficients():
    with pytest.raises(dd.errors.ShapeError):
        Recurrence([1])
    with pytest.raises(dd.errors.ShapeError):
        Recurrence([sp.eye(2), sp.ones(3, 3)])
    with pytest.raises(dd.errors.ShapeError):
        Recurrence([[[1, 2]], [[1, 2]]])
    with pytest.raises(dd.errors.UnknownParameterError):
        Recurrence([1, sp.Symbol("q")])
    with pytest.raises(dd.errors.ParameterError):
        Recurrence([0, 1])  # leading coefficient identically zero
    with pytest.raises(dd.errors.ParameterError):
        Recurrence([1, sp.nan])
    with pytest.raises(dd.errors.ParameterError):
        Recurrence([1, 1], params=[Param("a"), Param("a")])
    with pytest.raises(dd.errors.ParameterError):
        Param("lambda")
    with pytest.raises(dd.errors.ParameterError):
        Recurrence([1, 1], lam="lam")


def test_string_coefficients_are_parsed_safely(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rec = Recurrence([1, "-(1 + a)"], params=[Param("a")])
    assert rec.subs(a=1).charpoly() == r - 2
    with pytest.raises(dd.errors.ParseError):
        Recurrence([1, "__import__('os').system('touch PWNED')"])
    assert not (tmp_path / "PWNED").exists()


def test_iterate_matches_hand_computation():
    # x_{l+1} = (1 + 1/4) x_l from x_0 = 1: 000 §1 with alpha = 1, L = 4
    rec = dd.residual(scaled=True, lam=1, L=4)
    xs = rec.iterate([1], 4)
    assert xs == [sp.Rational(5, 4) ** j for j in range(5)]


def test_iterate_matrix_recurrence():
    rec = dd.entangled(n=2, gamma=sp.Rational(1, 2), lam=0)
    xs = rec.iterate([[1, 0]], 2)
    G = sp.Matrix([[sp.Rational(3, 4), sp.Rational(1, 4)], [sp.Rational(1, 4), sp.Rational(3, 4)]])
    assert xs[2] == G**2 * sp.Matrix([1, 0])


def test_kron_expansion_repeats_spectrum():
    rec = dd.hyper_connection(n=2, H_res=[[1, 0], [0, 1]], H_pre=[1, 0], H_post=[1, 0])
    big = rec.kron(3)
    assert big.dim == 6
    assert sp.factor(big.charpoly()) == sp.factor(rec.charpoly() ** 3)
    with pytest.raises(dd.errors.ParameterError):
        rec.kron(0)


def test_rho_sigma_split():
    rho, sigma = dd.smooth(k=3).rho_sigma()
    h = dd.smooth(k=3).symbols["h"]
    assert sp.factor(rho) == (r - 1) ** 3
    assert sp.expand(sigma - h**3 * r**2) == 0
    assert dd.oscillator().rho_sigma() is None


def test_printing():
    rec = dd.momentum()
    text = str(rec)
    assert "momentum" in text and "m in Interval.Ropen(0, 1)" in text and "000" in text
    assert rec._repr_latex_().startswith("$")


# -- names that cannot collide ---------------------------------------------------------------
def test_reserved_names_are_refused_with_the_reason():
    from depthdyn import general
    from depthdyn.errors import ParameterError

    with pytest.raises(ParameterError, match="layer index"):
        general(rho="r**2 - l*r")
    with pytest.raises(ParameterError, match="layer index"):
        Param("l")
    with pytest.raises(ParameterError, match="characteristic variable"):
        Param("r")


def test_plain_sympy_symbols_are_parameters():
    from depthdyn import from_coefficients

    a = sp.Symbol("a")
    for params in (("a",), (a,)):
        rec = from_coefficients([1, -a], params=params)
        assert rec.param_names == ("a",)
        assert rec.subs(a=sp.Rational(1, 2)).charpoly() == sp.Symbol("r") - sp.Rational(1, 2)
    # a symbol that is not declared is still refused
    with pytest.raises(dd.errors.UnknownParameterError):
        from_coefficients([1, -sp.Symbol("b")], params=("a",))


def test_undecidable_domain_values_are_decided_or_refused():
    from depthdyn import highway, momentum
    from depthdyn.errors import DomainError

    # exactly 1 (SymPy cannot tell): refused with a clear message, not accepted
    with pytest.raises(DomainError, match="cannot decide"):
        momentum(m="sin(1)**2 + cos(1)**2")
    # 10**-40 below 1: decided by evaluation with error control, accepted
    assert momentum(m="sin(1)**2 + cos(1)**2 - 10**-40").param_names == ("lam", "eta")
    # 10**-40 above 1: decided, refused
    with pytest.raises(DomainError, match="outside"):
        momentum(m="sin(1)**2 + cos(1)**2 + 10**-40")
    assert highway(g="sqrt(2) - 1/2").param_names == ("lam",)  # 0.914 lies in [0, 1]
    with pytest.raises(DomainError, match="outside"):
        highway(g="sqrt(2) - 1/3")
    assert momentum(m="0.99999999999999999999").param_names == ("lam", "eta")
    with pytest.raises(DomainError):
        momentum(m="1.00000000000000000001")


def test_depth_argument_does_not_clash_with_a_parameter_called_L():
    import numpy as np

    from depthdyn import oscillator, residual, simulate

    traj = simulate(residual(scaled=True), [1.0], 10, lam=1, L=10)
    assert traj.values[-1] == pytest.approx(1.1**10)
    # oscillator at depth 4 with beta = 2: x_{l+1} = (2 - 1/4) x_l - x_{l-1}
    x = simulate(oscillator(), [1.0, 1.0], 4, beta=2, L=4).values
    ref = [1.0, 1.0]
    for _ in range(3):
        ref.append(1.75 * ref[-1] - ref[-2])
    assert np.allclose(x, ref)
