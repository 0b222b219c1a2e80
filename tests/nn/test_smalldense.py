"""Batches of small eigenproblems spread one matrix per thread (depthdyn.nn.analysis.smalldense):
the same numbers, in the same order, as the batched call, and torch's thread count restored."""

import pytest

torch = pytest.importorskip("torch", reason="depthdyn.nn needs the optional torch extra")

from depthdyn.nn.analysis.smalldense import per_matrix  # noqa: E402


@pytest.fixture
def two_threads():
    saved = torch.get_num_threads()
    torch.set_num_threads(2)
    yield
    torch.set_num_threads(saved)


def test_per_matrix_gives_the_batched_results_in_order(two_threads):
    g = torch.Generator().manual_seed(0)
    H = torch.triu(torch.randn(7, 40, 40, generator=g, dtype=torch.float64), -1)
    want = torch.stack([torch.linalg.eigvals(h) for h in H])  # one at a time: the reference
    got = per_matrix(torch.linalg.eigvals, H)
    assert torch.equal(got, want) and torch.get_num_threads() == 2
    S = H @ H.mT
    vals, vecs = per_matrix(torch.linalg.eigh, S)
    for i in range(7):
        v, w = torch.linalg.eigh(S[i])
        assert torch.equal(vals[i], v) and torch.equal(vecs[i], w)
    # the order matters: a batch read in another order is not the same
    assert not torch.equal(per_matrix(torch.linalg.eigvals, H.flip(0)), want)
    small = H[:, :8, :8]  # below the size where spreading pays: one call
    alone = torch.stack([torch.linalg.eigvals(h) for h in small])
    assert torch.equal(per_matrix(torch.linalg.eigvals, small), alone)


def test_threads_restored_when_the_solver_raises(two_threads):
    def broken(X):
        raise RuntimeError("no")

    with pytest.raises(RuntimeError, match="no"):
        per_matrix(broken, torch.zeros(4, 40, 40))
    assert torch.get_num_threads() == 2
