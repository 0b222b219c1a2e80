"""The one NumPy Sinkhorn-Knopp: against the plain alternating normalisation written here."""

import numpy as np
import pytest

from depthdyn.errors import ParameterError
from depthdyn.mixing import sinkhorn


def plain(K, rounds):
    """Textbook Sinkhorn-Knopp on a positive matrix: rows, then columns, ``rounds`` times."""
    K = np.array(K, dtype=float)
    for _ in range(rounds):
        K = K / K.sum(axis=-1, keepdims=True)
        K = K / K.sum(axis=-2, keepdims=True)
    return K


def test_fixed_rounds_match_the_textbook_iteration():
    M = np.random.default_rng(0).normal(size=(3, 4, 4))
    for k in (1, 2, 7, 20):
        np.testing.assert_allclose(sinkhorn(M, k), plain(np.exp(M), k), rtol=1e-13, atol=1e-15)
    # one round is not converged on a random matrix: the rows are still off
    assert np.abs(sinkhorn(M, 1).sum(-1) - 1).max() > 1e-3


def test_until_converged_is_doubly_stochastic_and_a_scaling():
    M = np.random.default_rng(1).normal(size=(5, 5)) * 3
    A = sinkhorn(M)
    assert np.abs(A.sum(-1) - 1).max() <= 1e-14 and np.abs(A.sum(-2) - 1).max() <= 1e-13
    # A = diag(u) K diag(v): every 2x2 cross-ratio of K is kept (Sinkhorn's theorem)
    K = np.exp(M)
    ratio = lambda X: X[0, 0] * X[1, 1] / (X[0, 1] * X[1, 0])  # noqa: E731
    assert ratio(A) == pytest.approx(ratio(K), rel=1e-12)
    # logits far beyond exp's range do not overflow in the log domain
    big = sinkhorn(M * 300, 50)
    assert np.isfinite(big).all() and np.abs(big.sum(-2) - 1).max() < 1e-12
    assert np.abs(M * 300).max() > np.log(np.finfo(float).max)  # exp(M) itself would overflow


@pytest.mark.parametrize("bad", [np.ones((2, 3)), np.ones(3), [[0.0, np.nan], [0.0, 0.0]],
                                 [["a", "b"], ["c", "d"]]])
def test_bad_logits_raise(bad):
    with pytest.raises(ParameterError):
        sinkhorn(bad)


@pytest.mark.parametrize("bad", [0, -1, 2.5, True])
def test_bad_iterations_raise(bad):
    with pytest.raises(ParameterError, match="iterations"):
        sinkhorn(np.zeros((2, 2)), bad)
