"""Claims of source 001 about its own experiment tables, and its Fig. 3 code listing as printed.

The tables (top-1 accuracies in percent, Tables 1-5) are transcribed as the source prints
them: they are premises, not results of depthdyn. Each sentence of 001 that summarises a
table is a claim checked against the numbers of that table: "worse than", "improves",
"consistently" are read as strict comparisons of the printed means (the source gives no
test of significance). A summary that holds for some rows and not others fails, and the
counterexample rows are the computed value.

The Fig. 3 listing is checked as printed (does it run?) and, with its blanks filled and its
typo fixed, against :func:`depthdyn.numeric.conv.conv_kernel`.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from ..numeric.conv import conv_kernel
from .base import Claim, Outcome, stated_expr, verdict
from .listing import run_listing

__all__ = ["CLAIMS", "TABLES"]

SOURCE = "001_5f70fa795114e580.txt"
_CLAIMS: list[Claim] = []

#: The tables as printed: table -> column -> row -> accuracy (%).
TABLES = {
    "T1": {"ImageNet": {
        "baseline": 76.12, "channel 0.1": 76.09, "channel 0.5": 75.63, "channel 1.0": 72.57,
        "channel+spatial 0.1": 76.08, "channel+spatial 0.5": 75.69, "channel+spatial 1.0": 72.72,
        "spatial 0.1": 76.31, "spatial 0.5": 75.45, "spatial 1.0": 74.65, "orthogonal": 75.53,
        "entanglement+": 76.69, "no residual": 72.47}},
    "T2": {
        "CIFAR-10": {"baseline": 96.37, "channel 0.1": 96.32, "channel 0.5": 96.37, "channel 1.0": 95.00,
                     "channel+spatial 0.1": 96.43, "channel+spatial 0.5": 96.33, "channel+spatial 1.0": 95.86,
                     "spatial 0.1": 96.49, "spatial 0.5": 96.41, "spatial 1.0": 95.96, "orthogonal": 96.27,
                     "no residual": 95.73, "entanglement+": 96.72},
        "CIFAR-100": {"baseline": 80.56, "channel 0.1": 80.59, "channel 0.5": 78.97, "channel 1.0": 75.89,
                      "channel+spatial 0.1": 80.78, "channel+spatial 0.5": 79.08, "channel+spatial 1.0": 77.39,
                      "spatial 0.1": 80.82, "spatial 0.5": 79.70, "spatial 1.0": 79.14, "orthogonal": 80.33,
                      "no residual": 77.55, "entanglement+": 81.27}},
    "T3": {"ViT ImageNet": {
        "baseline": 72.75, "channel 0.1": 73.14, "channel 1.0": 0.1, "channel+spatial 0.1": 73.39,
        "channel+spatial 1.0": 0.1, "spatial 0.1": 71.86, "spatial 1.0": 57.29, "orthogonal": 72.49}},
    "T4": {
        "sMNIST": {"0": 98.79, "0.1": 82.87, "0.25": 46.80, "0.5": 37.06, "0.75": 34.00, "1.0": 45.39,
                   "orthogonal": 98.01, "no residual": 26.47},
        "psMNIST": {"0": 93.31, "0.1": 92.16, "0.25": 90.74, "0.5": 87.06, "0.75": 87.11, "1.0": 85.49,
                    "orthogonal": 95.74, "no residual": 85.13},
        "IMDB uni": {"0": 86.33, "0.1": 84.74, "0.25": 82.95, "0.5": 82.89, "0.75": 81.59, "1.0": 79.23,
                     "orthogonal": 75.67, "no residual": 78.12},
        "IMDB bi": {"0": 86.42, "0.1": 83.44, "0.25": 83.31, "0.5": 81.44, "0.75": 79.65, "1.0": 76.85,
                    "orthogonal": 74.06, "no residual": 73.84}},
    "T5": {
        "ResNet34": {"identity": 72.15, "orthogonal": 71.36, "spatial 0.1": 70.96},
        "ResNet50": {"identity": 76.12, "orthogonal": 75.53, "spatial 0.1": 76.31},
        "ResNet101": {"identity": 79.00, "orthogonal": 78.25, "spatial 0.1": 80.19},
        "ResNet152": {"identity": 80.47, "orthogonal": 79.54, "spatial 0.1": 81.67}},
}

_RELATIONS = {"below": lambda a, b: a < b, "above": lambda a, b: a > b, "at most": lambda a, b: a <= b}


def _table(cl) -> dict:
    tables = {k: {c: dict(rows) for c, rows in cols.items()} for k, cols in TABLES.items()}
    for (t, col, row), value in cl.premises.get("edits", {}).items():  # a changed entry (mutation tests)
        tables[t][col][row] = value
    return tables


def _compare(cl):
    """Every (table, column, row, reference) pair of the premises stands in the stated relation."""
    tables, rel = _table(cl), _RELATIONS[cl.stated]
    bad, rows = [], []
    for t, col, row, ref in cl.premises["pairs"]:
        if row not in tables[t][col]:
            bad.append(f"{t} {col}: no row '{row}' (no such experiment)")
            continue
        a, b = tables[t][col][row], tables[t][col][ref]
        (rows if rel(a, b) else bad).append(f"{t} {col}: {row} {a}% vs {ref} {b}%")
    return Outcome("; ".join(bad) if bad else "; ".join(rows), verdict(not bad),
                   f"{len(rows)} of {len(rows) + len(bad)} comparisons are '{cl.stated}'")


def _add(id, section, statement, stated, method, pairs, mutant, reading_of="") -> None:
    _CLAIMS.append(Claim(id, SOURCE, section, statement, stated, method, _compare, {"pairs": tuple(pairs)},
                         mutant, reading_of))


_VISION = [("T1", "ImageNet"), ("T2", "CIFAR-10"), ("T2", "CIFAR-100")]
_FLIP = {"below": "above", "above": "below", "at most": "above"}


def _claim(id, section, statement, stated, pairs, reading_of=""):
    """A summary claim; its mutant flips a relation that holds, or moves each counterexample entry of one that
    fails just past its reference (so the edited table satisfies the sentence)."""
    rel, edits = _RELATIONS[stated], {}
    for t, col, row, ref in pairs:
        if row not in TABLES[t][col]:
            edits[(t, col, row)] = TABLES[t][col][ref] + (1.0 if stated == "above" else -1.0)  # add the row
            continue
        a, b = TABLES[t][col][row], TABLES[t][col][ref]
        if not rel(a, b):
            edits[(t, col, row)] = b + (1.0 if stated == "above" else -1.0)
    mutant = {"premises": {"edits": edits}} if edits else {"stated": _FLIP[stated]}
    _add(id, section, statement, stated, "strict comparison of the printed table means", pairs, mutant, reading_of)


_claim("001-s3.3-gamma-0.1-better", "§3.3 (after Lemma 1)",
       "in all experiments a small amount of entanglement (gamma = 0.1) leads to a better generalization",
       "above", [(t, c, f"{kind} 0.1", "baseline") for t, c in _VISION + [("T3", "ViT ImageNet")]
                 for kind in ("channel", "channel+spatial", "spatial")]
       + [("T4", c, "0.1", "0") for c in TABLES["T4"]])
for _g, _how in (("0.9", "as printed"), ("1.0", "read with gamma = 1.0, the largest value in the tables")):
    _claim(f"001-s3.3-gamma-{_g}-hurts", "§3.3 (after Lemma 1)",
           f"in all experiments a larger entanglement coefficient (gamma = 0.9) hurts the performance consistently "
           f"({_how})", "below", [(t, c, f"{kind} {_g}", "baseline") for t, c in _VISION + [("T3", "ViT ImageNet")]
                                  for kind in ("channel", "channel+spatial", "spatial")]
           + [("T4", c, _g, "0") for c in TABLES["T4"]], reading_of="001-s3.3-gamma-hurts")
_claim("001-s4.1-full-entanglement", "§4.1",
       "full (gamma = 1) channel-wise or channel+spatial entangled residual connections are as bad or even "
       "worse than having no skip connections",
       "at most", [(t, c, f"{kind} 1.0", "no residual") for t, c in _VISION for kind in ("channel", "channel+spatial")])
# "all benchmarks" read plainly: every table that has a spatial 0.1 row (the ViT of Table 3 and the
# depths of Table 5 included), not only the two tables of §4.1
_claim("001-s4.1-spatial-0.1", "§4.1", "small spatial entanglement (gamma = 0.1) consistently improves the "
       "performance across all benchmarks (every table with a spatial 0.1 row: Tables 1, 2, 3, 5)",
       "above", [(t, c, "spatial 0.1", "baseline") for t, c in _VISION + [("T3", "ViT ImageNet")]]
       + [("T5", c, "spatial 0.1", "identity") for c in TABLES["T5"]])
_claim("001-s4.1-orthogonal", "§4.1", "networks with orthogonal maps perform worse than identity maps "
       "(Tables 1, 2)", "below", [(t, c, "orthogonal", "baseline") for t, c in _VISION])
_claim("001-fig2-orthogonal-depth", "Fig. 2 caption, appendix",
       "orthogonal connections consistently reduce accuracy (at every depth of Table 5)",
       "below", [("T5", c, "orthogonal", "identity") for c in TABLES["T5"]])
_claim("001-s4.2-spatial-vit", "§4.2", "a spatial entanglement degrades the performance of a ViT",
       "below", [("T3", "ViT ImageNet", f"spatial {g}", "baseline") for g in ("0.1", "1.0")])
for _g, _how in (("0.1", "read as the small gamma = 0.1 of Table 3"),
                 ("1.0", "read as the full gamma = 1.0 of Table 3")):
    _claim(f"001-s4.2-channel-vit-{_g}", "§4.2", "a channel-wise and channel+spatial entanglement improves (ViT) "
           f"accuracy ({_how})", "above",
           [("T3", "ViT ImageNet", f"{kind} {_g}", "baseline") for kind in ("channel", "channel+spatial")],
           reading_of="001-s4.2-channel-vit")
_claim("001-s4.3-lstm-long-term", "§4.3", "entangling an LSTM's memory toward a constant-ones matrix "
       "consistently decreases its long-term learning performance (sequential and permuted MNIST, every "
       "gamma > 0 against gamma = 0)", "below",
       [("T4", c, g, "0") for c in ("sMNIST", "psMNIST") for g in ("0.1", "0.25", "0.5", "0.75", "1.0")],
       reading_of="001-s4.3-lstm-long-term")
_claim("001-s4.3-lstm-monotone", "§4.3", "the same sentence read as: accuracy decreases consistently as "
       "gamma grows toward the ones matrix (each gamma step against the previous one)", "below",
       [("T4", c, b, a) for c in ("sMNIST", "psMNIST")
        for a, b in zip(("0", "0.1", "0.25", "0.5", "0.75"), ("0.1", "0.25", "0.5", "0.75", "1.0"), strict=True)],
       reading_of="001-s4.3-lstm-long-term")
_claim("001-s4.3-sentiment", "§4.3", "this reduction is also present in the sentiment datasets (IMDB)",
       "below", [("T4", c, g, "0") for c in ("IMDB uni", "IMDB bi") for g in ("0.1", "0.25", "0.5", "0.75", "1.0")])
_claim("001-s4.3-orthogonal-psmnist", "§4.3", "the orthogonal LSTM outperforms the standard LSTM on permuted "
       "sequential MNIST", "above", [("T4", "psMNIST", "orthogonal", "0")])
_claim("001-s4.3-orthogonal-nlp", "§4.3", "the orthogonal LSTM performs worse than having no memory at all in "
       "both NLP experiments", "below", [("T4", c, "orthogonal", "no residual") for c in ("IMDB uni", "IMDB bi")])
_claim("001-app-spatial-depth", "appendix (Table 5)", "spatial entanglement slightly degrades the performance "
       "on the shallow network, but improves accuracy with increasing depth (ResNet50 and deeper)", "above",
       [("T5", c, "spatial 0.1", "identity") for c in ("ResNet50", "ResNet101", "ResNet152")])


def _deviations(cl):
    """Table 1's parenthesised deviations from the baseline, against the printed accuracies."""
    tables, bad, n = _table(cl), [], 0
    col = tables["T1"]["ImageNet"]
    for row, dev in cl.premises["deviations"].items():
        n += 1
        got = round(float(stated_expr(cl.stated, "accuracy", "baseline").subs(
            {sp.Symbol("accuracy"): col[row], sp.Symbol("baseline"): col["baseline"]})), 2)
        if abs(got - dev) > 0.005:  # printed to two decimals
            bad.append(f"{row}: {cl.stated} = {got:+.2f} ({col[row]}, {col['baseline']}), printed {dev:+.2f}")
    return Outcome("; ".join(bad) if bad else f"all {n} deviations equal accuracy - baseline to 0.01",
                   verdict(not bad))


_DEVIATIONS = {"channel 0.1": -0.03, "channel 0.5": -0.49, "channel 1.0": -3.55, "channel+spatial 0.1": -0.04,
               "channel+spatial 0.5": -0.43, "channel+spatial 1.0": -3.40, "spatial 0.1": 0.19, "spatial 0.5": -0.67,
               "spatial 1.0": -1.47, "orthogonal": -0.59, "entanglement+": 0.57, "no residual": -3.65}
_CLAIMS.append(Claim("001-table1-deviations", SOURCE, "Table 1", "the parentheses give each row's deviation "
                     "from the baseline model", "accuracy - baseline", "differences of the printed accuracies, "
                     "rounded to 0.01", _deviations, {"deviations": _DEVIATIONS},
                     {"premises": {"edits": {("T1", "ImageNet", "baseline"): 76.02}}}))


# ---------------------------------------------------------------- Fig. 3 code listing
#: The listing of Fig. 3 as printed (blanks and the ``gamme`` typo included).
LISTING = """import numpy as np
num_channels = # number of channels
gamme = # Entanglement factor
kernel_size = # Spatial entanglement size
# Orthogonal entanglement
A = np.random.normal(size=(num_channels, num_channels))
orth_kernel, r = np.linalg.qr(A)
orth_kernel = orth_kernel.reshape((1, 1, num_channels, num_channels))
# Spatial entanglement
sp_kernel = np.zeros((kernel_size, kernel_size, num_channels, num_channels))
for i in range(num_channels):
    sp_kernel[:, :, i, i] += gamma / np.square(kernel_size)
    sp_kernel[kernel_size // 2, kernel_size // 2, i, i] += 1.0 - gamma
# Channel-wise (and channel+spatial) entanglement
ch_kernel = np.ones((kernel_size, kernel_size, num_channels, num_channels)) \\
    * gamma / (np.square(kernel_size) * num_channels)
for i in range(num_channels):
    ch_kernel[kernel_size // 2, kernel_size // 2, i, i] += 1.0 - gamma
"""


def _run_listing(text: str):
    """Interpret a listing (our own transcription, numpy only); the error type, or the namespace."""
    return run_listing(text)


def _fill(text: str, values: dict) -> str:
    for name, value in values.items():
        text = text.replace(f"{name} = #", f"{name} = {value} #")
    return text


def _listing_runs(cl):
    text = LISTING.replace("gamme", "gamma") if cl.premises["fix_typo"] else LISTING
    error, _ = _run_listing(_fill(text, cl.premises["fill"]))
    return Outcome(f"{error} when run" if error else "runs", verdict((error is None) == (cl.stated == "runs")),
                   "as printed the assignments 'num_channels = # ...' are empty (a SyntaxError); filled in, "
                   "the code still uses gamma where it assigned gamme (a NameError)")


_CLAIMS.append(Claim("001-fig3-listing-runs", SOURCE, "Fig. 3", "the Python listing creates the 2D "
                     "entanglement kernels (as printed, blanks to be filled)", "runs",
                     "the printed listing compiled and executed with numpy", _listing_runs,
                     {"fill": {}, "fix_typo": False},
                     {"premises": {"fill": {"num_channels": 4, "gamma": 0.5, "kernel_size": 3}, "fix_typo": True}},
                     "001-fig3-listing"))
_CLAIMS.append(Claim("001-fig3-listing-runs-filled", SOURCE, "Fig. 3", "the same listing with its blanks "
                     "filled in (num_channels = 4, gamme = 0.5, kernel_size = 3)", "runs",
                     "the filled listing executed with numpy", _listing_runs,
                     {"fill": {"num_channels": 4, "gamme": 0.5, "kernel_size": 3}, "fix_typo": False},
                     {"premises": {"fill": {"num_channels": 4, "gamma": 0.5, "kernel_size": 3}, "fix_typo": True}},
                     "001-fig3-listing"))


def _listing_kernels(cl):
    p = cl.premises
    _, space = _run_listing(_fill(LISTING.replace("gamme", "gamma"), {
        "num_channels": p["channels"], "gamma": p["listing_gamma"], "kernel_size": p["kernel_size"]}))
    rows, ok = [], True
    for name, kind in (("sp_kernel", "spatial"), ("ch_kernel", "channel")):
        ours = conv_kernel(kind, gamma=p["gamma"], kernel_size=p["kernel_size"], channels=p["channels"])
        dev = float(np.abs(space[name] - ours).max())
        ok = ok and dev <= 1e-15
        rows.append(f"{name} vs conv_kernel('{kind}'): max |difference| = {dev:.1e}")
    return Outcome("; ".join(rows), verdict(ok), "the listing with gamme read as gamma")


_CLAIMS.append(Claim("001-fig3-listing-kernels", SOURCE, "Fig. 3, eq. 4, 7", "the listing's spatial and "
                     "channel kernels are eq. 4's entanglement as 2D convolutions (read with gamme = gamma)",
                     "conv_kernel", "the fixed listing (4 channels, gamma = 0.5, 3x3) against "
                     "depthdyn.numeric.conv.conv_kernel, tolerance 1e-15", _listing_kernels,
                     {"channels": 4, "kernel_size": 3, "gamma": 0.5, "listing_gamma": 0.5},
                     {"premises": {"listing_gamma": 0.25}}))

CLAIMS: tuple[Claim, ...] = tuple(_CLAIMS)
