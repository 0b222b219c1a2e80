"""Claims rechecked by independent computations and split into one claim per reading.

Each check here also runs on a wrong input (a mutant) and must change its answer.
"""

import dataclasses

import numpy as np
import sympy as sp

from depthdyn import dense, smooth
from depthdyn.claims import NOT_CHECKED, claims, hauser, statement_verdicts, tables


def _claim(cid):
    (cl,) = [c for c in claims() if c.id == cid]
    return cl


# ------------------------------------------------------------------ 002 §2.3 dimension
def test_dense_dimension_does_not_read_the_dense_family(monkeypatch):
    """The count is built from eq. 9's text: a wrong dense family does not change it."""
    cl = _claim("002-s2.3-dimension-reading")
    assert cl.run().verdict == "holds"
    monkeypatch.setattr(hauser, "dense", lambda k=1, **kw: smooth(k=1))  # a family of order 1 for every k
    assert cl.run().verdict == "holds"


def test_dense_dimension_agrees_with_the_charpoly_degree_and_fails_when_stated_wrong():
    for k in range(1, 5):
        for d in (1, 2):
            # second method: degree of det(sum_j A_j r^j) of the registry's family, no zero roots
            p = sp.Poly(dense(k=k).kron(d).charpoly(), sp.Symbol("r"))
            assert hauser._eq9_dimension(k, d) == p.degree() == k * d
    assert dataclasses.replace(_claim("002-s2.3-dimension-reading"), stated="d").run().verdict == "fails"
    cl = _claim("002-s2.3-dimension-reading")
    assert dataclasses.replace(cl, stated="k*d + 1").run().verdict == "fails"


# ------------------------------------------------------------------ C^k, k >= 3
def _numeric_radius(k, lam):
    """Spectral radius of (r - 1)^k - lam r^(k-1) (002 eq. 4c with sigma = lam, h = 1), from the binomials."""
    coeffs = [(-1) ** i * float(sp.binomial(k, i)) for i in range(k + 1)]
    coeffs[1] -= lam
    return np.abs(np.roots(coeffs)).max()


def test_ck_unstable_claim_holds_and_matches_numbers():
    res = _claim("002-ck-unstable").run()
    assert res.verdict == "holds"
    rng = np.random.default_rng(1)
    for k in (3, 4, 5):
        for lam in rng.normal(size=20) * 0.5 + 1j * rng.normal(size=20) * 0.5:
            assert _numeric_radius(k, lam) > 1 + 1e-9, (k, lam)
    # the family's polynomial is the one built from the binomials
    r, lam = sp.symbols("r lam")
    rec = smooth(k=3, h=1)
    assert sp.expand(rec.charpoly() - ((r - 1) ** 3 - lam * r**2)) == 0


def test_ck_unstable_fails_for_k_2():
    cl = _claim("002-ck-unstable")
    res = dataclasses.replace(cl, premises={"ks": (2,)}).run()
    assert res.verdict == "fails" and "k = 2" in str(res.computed)
    assert _numeric_radius(2, -1.0) < 1 + 1e-12  # k = 2, lam = -1: both roots on the circle
    assert "002-ck-spectrum" not in {u.key for u in NOT_CHECKED}


# ------------------------------------------------------------------ Momentum ResNets
def test_momentum_resnet_equivalence_is_checked():
    cl = _claim("000-s2-momentum-resnets")
    assert cl.run().verdict == "holds"
    assert dataclasses.replace(cl, stated="m = 1 - gamma, eta = gamma").run().verdict == "fails"
    assert dataclasses.replace(cl, stated="m = gamma, eta = 1").run().verdict == "fails"
    assert "000-s2-momentum-resnets" not in {u.key for u in NOT_CHECKED}


# ------------------------------------------------------------------ 001 table readings
def test_channel_vit_one_claim_per_reading():
    small, full = _claim("001-s4.2-channel-vit-0.1"), _claim("001-s4.2-channel-vit-1.0")
    assert small.reading_of == full.reading_of == "001-s4.2-channel-vit"
    results = [small.run(), full.run()]
    assert [r.verdict for r in results] == ["holds", "fails"]
    assert statement_verdicts(results) == {"001-s4.2-channel-vit": "holds-with-caveat"}
    # the full reading fails only because of its gamma = 1.0 rows: lift them and it holds
    base = tables.TABLES["T3"]["ViT ImageNet"]["baseline"]
    edits = {("T3", "ViT ImageNet", f"{kind} 1.0"): base + 1 for kind in ("channel", "channel+spatial")}
    assert dataclasses.replace(full, premises={**full.premises, "edits": edits}).run().verdict == "holds"


def test_spatial_small_reads_all_benchmarks_plainly():
    cl = _claim("001-s4.1-spatial-0.1")
    res = cl.run()
    assert res.verdict == "fails"
    assert "T3" in res.computed and "T5" in res.computed
    tables_read = {t for t, *_ in cl.premises["pairs"]}
    assert tables_read == {"T1", "T2", "T3", "T5"}
    restricted = [p for p in cl.premises["pairs"] if p[0] in ("T1", "T2")]
    assert dataclasses.replace(cl, premises={"pairs": tuple(restricted)}).run().verdict == "holds"


def test_dense_source_names_its_row():
    assert "n = 0 row" in dense().source
