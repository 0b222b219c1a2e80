"""The bounded per-activation caches of the mean-field series (depthdyn.meanfield.memo)."""

from depthdyn.meanfield.activations import get_activation
from depthdyn.meanfield.memo import ActivationMemo


def test_an_entry_is_found_only_for_its_activation_and_the_oldest_is_dropped():
    tanh, erf = get_activation("tanh"), get_activation("erf")
    memo = ActivationMemo(2)
    assert memo.put(tanh, (1.0,), "a") == "a"
    assert memo.get(tanh, (1.0,)) == "a"
    assert memo.get(erf, (1.0,)) is None  # another activation, the same key
    assert memo.get(tanh, (2.0,)) is None  # the same activation, another key
    memo.put(tanh, (2.0,), "b")
    memo.put(tanh, (3.0,), "c")  # past the size: the oldest goes
    assert memo.get(tanh, (1.0,)) is None and memo.get(tanh, (3.0,)) == "c"


def test_a_reused_id_does_not_find_another_objects_entry():
    class Probe:
        pass

    first = Probe()
    memo = ActivationMemo(4)
    memo.put(first, "k", 1)
    stranger = Probe()
    memo._entries[(id(stranger), "k")] = (first, 1)  # as if ``stranger`` had taken first's id
    assert memo.get(stranger, "k") is None
    memo.clear()
    assert memo.get(first, "k") is None
