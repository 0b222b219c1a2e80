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
    memo.put(tanh, (1.0,), "a2")  # a key kept again keeps its place: nothing dropped
    assert memo.get(tanh, (1.0,)) == "a2" and memo.get(tanh, (2.0,)) == "b"
    memo.put(tanh, (3.0,), "c")  # past the size: the oldest goes
    assert memo.get(tanh, (1.0,)) is None and memo.get(tanh, (3.0,)) == "c"
    # a hot loop's view of the same entries
    kept = memo.of(tanh)
    assert kept.get((3.0,)) == "c" and kept.get((1.0,)) is None
    kept.put((4.0,), "d")
    assert memo.get(tanh, (4.0,)) == "d" and memo.get(tanh, (2.0,)) is None and len(kept) == 2


def test_the_oldest_activation_met_is_dropped():
    names = ("tanh", "erf", "relu")
    acts = [get_activation(name) for name in names]
    memo = ActivationMemo(4, activations=2)
    for act in acts:
        memo.put(act, "k", act.name)
    assert memo.get(acts[0], "k") is None
    assert [memo.get(act, "k") for act in acts[1:]] == list(names[1:])


def test_a_reused_id_does_not_find_another_objects_entry():
    class Probe:
        pass

    first = Probe()
    memo = ActivationMemo(4)
    memo.put(first, "k", 1)
    stranger = Probe()
    memo._kept[id(stranger)] = memo._kept.pop(id(first))  # as if ``stranger`` had taken first's id
    assert memo.get(stranger, "k") is None
    assert memo.of(stranger).get("k") is None and memo.get(stranger, "k") is None  # new, empty entries
    memo.put(first, "k", 1)
    memo.clear()
    assert memo.get(first, "k") is None
