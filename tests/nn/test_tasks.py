"""Tasks of depthdyn.nn.experiments.tasks: shapes, exact class balance, determinism, models built for them."""

import pytest

torch = pytest.importorskip("torch", reason="depthdyn.nn needs the optional torch extra")

from depthdyn.errors import ParameterError, UnknownFamilyError  # noqa: E402
from depthdyn.nn import experiments  # noqa: E402
from depthdyn.nn.blocks.stack import block_class  # noqa: E402
from depthdyn.nn.experiments.tasks import (  # noqa: E402
    TASKS,
    DepthModel,
    Task,
    UnknownTaskError,
    build_model,
    make_task,
    task_names,
)

torch.set_num_threads(1)

SHAPES = {
    "separation-1d": ((200, 1), "classify", 2),
    "separation-2d": ((400, 2), "classify", 2),
    "cubic": ((100, 1), "regress", 1),
    "blobs": ((400, 2), "classify", 2),
    "bars": ((256, 1, 8, 8), "classify", 2),
}


def test_registry_names():
    assert set(task_names()) == set(SHAPES)
    for spec in TASKS.values():
        assert spec.summary and callable(spec.factory)
        assert {"layers", "step", "steps", "lr"} <= set(spec.defaults)


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_shapes_and_kinds(name):
    shape, kind, n_out = SHAPES[name]
    t = make_task(name)
    assert isinstance(t, Task) and t.name == name
    assert tuple(t.inputs.shape) == shape and t.kind == kind and t.n_outputs == n_out
    assert t.size == shape[0] and t.input_shape == shape[1:]
    assert torch.isfinite(t.inputs).all() and t.description and t.source
    if kind == "classify":
        assert t.targets.dtype == torch.long and tuple(t.targets.shape) == (shape[0],)
        assert sum(t.class_counts()) == shape[0]
    else:
        assert tuple(t.targets.shape) == (shape[0], n_out)


@pytest.mark.parametrize("n", [4, 8, 200, 1000])
def test_separation_1d_exact_balance(n):
    t = make_task("separation-1d", n=n)
    x, y = t.inputs[:, 0], t.targets
    assert int((y == 1).sum()) * 2 == n  # exactly 50% red
    left, right = (y == 0) & (x < 0), (y == 0) & (x > 0)
    assert int(left.sum()) == int(right.sum()) == n // 4  # blue split evenly
    assert (x[y == 1].abs() < 1).all() and (x[y == 0].abs() > 1).all()
    assert torch.all(x[1:] > x[:-1])  # evenly spaced, sorted
    assert torch.allclose(x[1:] - x[:-1], torch.full((n - 1,), 4.0 / n), atol=1e-5, rtol=0)


def test_separation_1d_is_deterministic_and_checks_n():
    assert torch.equal(make_task("separation-1d", seed=0).inputs, make_task("separation-1d", seed=5).inputs)
    with pytest.raises(ParameterError, match="multiple of 4"):
        make_task("separation-1d", n=10)


def test_separation_2d_geometry():
    t = make_task("separation-2d", seed=3, n=100)
    r = t.inputs.norm(dim=1)
    assert t.class_counts() == (50, 50)
    assert r[t.targets == 1].max() < 1.0 + 1e-6 < 1.5 - 1e-6 < r[t.targets == 0].min()
    assert r[t.targets == 0].max() < 2.25 + 1e-5


def test_bars_images_show_their_bar():
    t = make_task("bars", n=64)
    assert t.class_counts() == (32, 32)
    img = t.inputs[:, 0]
    row_peak = img.mean(dim=2).max(dim=1).values  # a full row of ones stands out
    col_peak = img.mean(dim=1).max(dim=1).values
    predicted = (col_peak > row_peak).long()
    assert (predicted == t.targets).float().mean() > 0.9


@pytest.mark.parametrize("name", ["separation-2d", "blobs", "bars"])
def test_random_tasks_depend_on_seed(name):
    a, b, c = make_task(name, seed=1), make_task(name, seed=1), make_task(name, seed=2)
    assert torch.equal(a.inputs, b.inputs) and torch.equal(a.targets, b.targets)
    assert not torch.equal(a.inputs, c.inputs)


def test_unknown_task_lists_names():
    with pytest.raises(UnknownTaskError, match="separation-1d") as info:
        make_task("spiral")
    assert isinstance(info.value, UnknownFamilyError) and isinstance(info.value, KeyError)
    assert "spiral" in str(info.value)
    with pytest.raises(UnknownTaskError):
        build_model("smooth", "spiral")


def test_task_validates_itself():
    x = torch.zeros(4, 1)
    with pytest.raises(ParameterError, match="kind"):
        Task("t", "cluster", x, torch.zeros(4, dtype=torch.long), 2)
    with pytest.raises(ParameterError, match="same number of rows"):
        Task("t", "classify", x, torch.zeros(3, dtype=torch.long), 2)
    with pytest.raises(ParameterError, match="values in 0..1"):
        Task("t", "classify", x, torch.full((4,), 2, dtype=torch.long), 2)
    with pytest.raises(ParameterError, match=r"shape \(N, 1\)"):
        Task("t", "regress", x, torch.zeros(4), 1)
    with pytest.raises(ParameterError, match="regression"):
        make_task("cubic").class_counts()


def test_separation_model_is_one_node_with_a_position_hyperplane():
    t = make_task("separation-1d", n=8)
    m = build_model("smooth", t, layers=5, step=0.1, seed=0, k=2)
    assert isinstance(m, DepthModel) and m.family == "smooth" and m.layers == 5 and m.step == 0.1
    assert isinstance(m.embed, torch.nn.Identity)
    assert isinstance(m.head, torch.nn.Linear) and m.head.in_features == 1 and m.head.out_features == 2
    for block in m.stack.blocks:
        assert block.dim == 1 and block.k == 2
        lin = block.f[0]
        assert lin.weight.shape == (1, 1)  # one node per layer: f = tanh(w x + b)
    out = m(t.inputs)
    assert out.shape == (8, 2)
    # the logits are an affine function of the final position only
    xL = m.stack(t.inputs)
    assert torch.allclose(out, m.head(xL))
    assert m.trace(t.inputs).positions.shape == (6, 8, 1)


def test_build_model_is_seeded_and_leaves_global_rng_alone():
    torch.manual_seed(123)
    before = torch.rand(1)
    torch.manual_seed(123)
    a = build_model("smooth", "separation-2d", seed=4)
    after = torch.rand(1)
    b = build_model("smooth", "separation-2d", seed=4)
    c = build_model("smooth", "separation-2d", seed=5)
    assert torch.equal(before, after)
    pa, pb, pc = (torch.cat([p.flatten() for p in m.parameters()]) for m in (a, b, c))
    assert torch.equal(pa, pb) and not torch.equal(pa, pc)


@pytest.mark.parametrize(
    ("family", "name", "options", "out_shape"),
    [
        ("residual", "cubic", {}, (100, 1)),
        ("momentum", "cubic", {"a_init": -2.0}, (100, 1)),
        ("smooth", "separation-2d", {"k": 3}, (400, 2)),
        ("residual", "blobs", {"norm": True}, (400, 2)),
        ("dense", "blobs", {"k": 2}, (400, 2)),
        ("residual", "bars", {}, (256, 2)),
    ],
)
def test_build_model_output_shapes(family, name, options, out_shape):
    t = make_task(name)
    m = build_model(family, t, layers=3, seed=0, **options)
    with torch.no_grad():
        assert m(t.inputs).shape == out_shape


def test_cubic_model_reads_the_position_directly():
    m = build_model("momentum", "cubic", layers=2, a_init=-2.0)
    assert isinstance(m.head, torch.nn.Identity) and m.stack.blocks[0].dim == 1
    assert float(m.stack.blocks[0].m.detach()[0]) == pytest.approx(1 / (1 + 2.718281828**2), rel=1e-6)


def test_build_model_rejects_bad_arguments():
    with pytest.raises(ParameterError, match="layers"):
        build_model("smooth", "separation-1d", layers=0)
    with pytest.raises(UnknownFamilyError):
        build_model("no-such-family", "separation-1d")
    with pytest.raises(ParameterError, match="family"):
        build_model(3, "separation-1d")


def test_hyper_connection_block_on_blobs():
    hyper = pytest.importorskip("depthdyn.nn.blocks.hyper", reason="no hyper-connection blocks")
    family = hyper.HyperConnectionBlock
    try:
        family = block_class("hyper_connection")
    except UnknownFamilyError:
        pass
    t = make_task("blobs", n=16)
    m = build_model(family, t, layers=2, n=2)
    assert m(t.inputs).shape == (16, 2)


def test_conv_entangled_block_on_bars():
    entangled = pytest.importorskip("depthdyn.nn.blocks.entangled", reason="no entangled blocks")
    t = make_task("bars", n=8)
    m = build_model(entangled.ConvEntangledBlock, t, layers=2, kind="spatial")
    assert isinstance(m.embed, torch.nn.Conv2d)
    assert m(t.inputs).shape == (8, 2)
    v = build_model(entangled.EntangledBlock, "blobs", layers=2)
    assert v(make_task("blobs", n=8).inputs).shape == (8, 2)


def test_documented_separation_step_lies_in_the_measured_window():
    lo, hi = experiments.SEPARATION_WINDOW
    assert lo <= experiments.SEPARATION_STEP <= hi
