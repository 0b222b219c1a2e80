"""inspect() on vision models as timm, torchvision and momentumnet ship them (random weights,
tiny configurations, float64), cross-checked against dense ``torch.func.jacrev`` Jacobians of
the whole batch, the cross-batch blocks included.

These libraries need torchvision, whose PyPI build imports only beside a matching torch: the
tests run in the models set-up (``pip install -e ".[test,models]" -c constraints-models.txt``,
the second stage of ``.ci/run``) and are skipped, with the reason, beside the CPU torch of
the main test set-up."""

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="depthdyn.nn needs the optional torch extra")

torch.set_num_threads(1)  # a second thread on a shared 2-core machine makes each op ~100x slower

from shipped_models import full_jacobian as _full_jacobian  # noqa: E402
from shipped_models import library as _library  # noqa: E402
from shipped_models import rel as _rel  # noqa: E402

from depthdyn.errors import ParameterError  # noqa: E402
from depthdyn.nn.analysis import find_layers, inspect, record  # noqa: E402
from depthdyn.nn.analysis.checks import ModelSetupError  # noqa: E402
from depthdyn.nn.analysis.steps import Split  # noqa: E402

TOL = 1e-8


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)


def _per_input(J, B):
    """The diagonal blocks ``d y_b / d x_b`` of a whole-batch Jacobian ``(B, n_out, B, n_in)``,
    after checking that every cross-batch block ``d y_b / d x_c`` (b != c) is exactly zero."""
    for b in range(B):
        for c in range(B):
            if b != c:
                assert float(J[b, :, c].abs().max()) == 0
    return [J[b, :, b] for b in range(B)]


# ------------------------------------------------------------ timm ViT
def _timm_vit(img=32, **kw):
    _library("timm")
    from timm.models.vision_transformer import VisionTransformer

    model = VisionTransformer(
        img_size=img, patch_size=8, embed_dim=64, depth=2, num_heads=2, num_classes=10, **kw
    )
    return model.double().eval()


def test_timm_vit_whole_sequence_spectra_against_jacrev():
    model = _timm_vit()  # 16 patches + the class token: a (2, 17, 64) stream
    assert type(find_layers(model)[0][1]).__name__ == "Block"
    px = torch.randn(2, 3, 32, 32, dtype=torch.float64)
    ins = inspect(model, px, k=3, dense_max=17 * 64)
    assert not ins.causal and ins.streams == 1 and ins.blocks.tolist() == [[0, -1], [1, -1]]
    assert ins.methods == ("dense", "dense") and np.all(ins.accuracy["recording"] == 0)
    rec = record(model, px)
    for layer in range(2):
        call = rec.calls[layer]
        J = _full_jacobian(call.function(), call.state)  # (2, 17, 64, 2, 17, 64)
        D = _per_input(J.reshape(2, 1088, 2, 1088), 2)
        assert float(D[0][:64, 64:].abs().max()) > 1e-3  # the class token reads the patches
        for b in range(2):
            assert _rel(ins.top_singular_values[layer, b], torch.linalg.svdvals(D[b])[:3].numpy()) < TOL
            rho = float(torch.linalg.eigvals(D[b]).abs().max())
            assert _rel(ins.spectral_radius[layer, b], rho) < TOL
            assert ins.jacobian_trace[layer, b] == pytest.approx(float(torch.trace(D[b])), rel=1e-10)
    # a bidirectional layer is no causal sequence layer: asking for per-token blocks is refused
    with pytest.raises(ParameterError, match="not causal"):
        inspect(model, px, causal=True)


def test_timm_vit_krylov_path_with_its_default_fused_attention():
    model = _timm_vit(img=16)  # (1, 5, 64): 320 unknowns per input
    assert model.blocks[0].attn.fused_attn  # as shipped: F.scaled_dot_product_attention
    px = torch.randn(1, 3, 16, 16, dtype=torch.float64)
    ins = inspect(model, px, k=2, dense_max=0, steps=320, tol=1e-12)
    assert all(m != "dense" for m in ins.methods)
    assert any("math backend" in n for n in ins.notes)  # the fused CPU kernel has no forward mode
    call = record(model, px).calls[1]
    D = _full_jacobian(call.function(), call.state).reshape(320, 320)
    assert _rel(ins.top_singular_values[1, 0], torch.linalg.svdvals(D)[:2].numpy()) < TOL
    assert _rel(ins.spectral_radius[1, 0], float(torch.linalg.eigvals(D).abs().max())) < TOL


def test_timm_vit_block_split_into_attention_and_mlp_steps():
    model = _timm_vit(img=16, init_values=0.3)  # LayerScale on: ls1/ls2 are part of the steps
    px = torch.randn(1, 3, 16, 16, dtype=torch.float64)
    ins = inspect(model, px, k=2, dense_max=320, split=True)
    assert ins.kinds == ("attention", "mlp") * 2 and ins.layers.tolist() == [0, 0, 1, 1]
    assert ins.names == ("blocks.0.attention", "blocks.0.mlp", "blocks.1.attention", "blocks.1.mlp")
    assert np.all(ins.accuracy["recording"] == 0)
    A = ins.step_matrices(0)  # (4, 320, 320)
    call = record(model, px).calls[1]
    J = _full_jacobian(call.function(), call.state).reshape(320, 320).numpy()
    np.testing.assert_allclose(A[3] @ A[2], J, atol=1e-10)  # the two steps make the layer
    blk, x = model.blocks[1], call.state
    Ja = _full_jacobian(lambda t: t + blk.ls1(blk.attn(blk.norm1(t))), x).reshape(320, 320)
    np.testing.assert_allclose(A[2], Ja.numpy(), atol=1e-12)
    # each step on its own is not the layer (the split point matters)
    assert np.abs(A[2] - J).max() > 1e-3 and np.abs(A[3] - J).max() > 1e-3
    # a split whose MLP step forgets the LayerScale does not reproduce the recording: refused
    wrong = {"Block": Split("norm2", lambda b, h: h + b.mlp(b.norm2(h)))}
    with pytest.raises(ModelSetupError, match="does not reproduce"):
        inspect(model, px, dense_max=320, split=wrong)


# ------------------------------------------------------------ ResNets (BatchNorm: eval mode)
def _check_resnet(model, px, ins, layers=None):
    """Every recorded layer's top singular values (and the spectral radius of square layers)
    against the per-input blocks of its whole-batch jacrev Jacobian."""
    B, k = px.shape[0], ins.top_singular_values.shape[2]
    rec = record(model, px, layers)
    for layer, call in enumerate(rec.calls):
        J = _full_jacobian(call.function(), call.state)
        n_out, n_in = call.output[0].numel(), call.state[0].numel()
        for b, D in enumerate(_per_input(J.reshape(B, n_out, B, n_in), B)):
            assert _rel(ins.top_singular_values[layer, b], torch.linalg.svdvals(D)[:k].numpy()) < TOL
            if n_in == n_out:
                rho = float(torch.linalg.eigvals(D).abs().max())
                assert _rel(ins.spectral_radius[layer, b], rho) < TOL
            else:
                assert np.isnan(ins.spectral_radius[layer, b])  # no eigenvalues across a stage change


def test_timm_resnet_basic_blocks_in_eval_against_jacrev():
    _library("timm")
    from timm.models.resnet import BasicBlock, ResNet

    # timm's ResNet always has four stages; narrow ones (8..32 channels) behind a deep stem of width 4
    model = ResNet(
        BasicBlock, [1, 1, 1, 1], channels=(8, 16, 32, 32), stem_type="deep", stem_width=4, num_classes=10
    ).double()
    px = torch.randn(2, 3, 16, 16, dtype=torch.float64)  # stream (2, 8, 4, 4) .. (2, 32, 1, 1)
    with pytest.raises(ModelSetupError, match=r"model\.eval\(\)"):
        inspect(model, px, "layer*.*")
    model.eval()
    ins = inspect(model, px, "layer*.*", k=3, dense_max=0, steps=128, tol=1e-12)
    assert ins.names == ("layer1.0", "layer2.0", "layer3.0", "layer4.0")
    assert ins.shapes == ((8, 4, 4), (8, 4, 4), (16, 2, 2), (32, 1, 1), (32, 1, 1))
    assert ins.stages.tolist() == [0, 1, 2, 2]
    assert all(m != "dense" for m in ins.methods)
    _check_resnet(model, px, ins, "layer*.*")


def test_torchvision_resnet_found_by_its_stages_against_jacrev():
    tv = _library("torchvision")
    model = tv.models.resnet.ResNet(tv.models.resnet.BasicBlock, [1, 1, 1, 1], num_classes=10).double()
    px = torch.randn(2, 3, 16, 16, dtype=torch.float64)  # stream (2, 64, 4, 4) .. (2, 512, 1, 1)
    with pytest.raises(ModelSetupError, match=r"model\.eval\(\)"):
        inspect(model, px)
    model.eval()
    assert [n for n, _ in find_layers(model)] == ["layer1.0", "layer2.0", "layer3.0", "layer4.0"]
    ins = inspect(model, px, k=3, dense_max=1024)
    assert ins.methods == ("dense",) * 4 and ins.stages.tolist() == [0, 1, 2, 3]
    _check_resnet(model, px, ins)


# ------------------------------------------------------------ momentumnet's own ResNet conversion
def test_momentumnet_from_a_torchvision_resnet_by_its_helper():
    _library("torchvision")
    mn = _library("momentumnet")
    from torchvision.models.resnet import BasicBlock, ResNet

    resnet = ResNet(BasicBlock, [2, 1, 1, 1], num_classes=10).double().eval()
    px = torch.randn(2, 3, 8, 8, dtype=torch.float64)  # layer1's stream: (2, 64, 2, 2)
    # the library's default (is_residual=False: f(x) - x as the branch) is refused with the reason
    plain = mn.transform_to_momentumnet(resnet, ["layer1"], keep_first_layer=False, gamma=0.9)
    with pytest.raises(ParameterError, match="is_residual=False"):
        inspect(plain, px)
    model = mn.transform_to_momentumnet(
        resnet, ["layer1"], keep_first_layer=False, gamma=0.9, is_residual=True
    ).eval()
    ins = inspect(model, px, k=2, dense_max=256)
    assert ins.kinds == ("branch", "branch") and ins.momentum == 0.9
    placed = ins.placement(steps=256)
    assert placed.families == ("momentum", "momentum")
    for layer, f in enumerate(model.layer1[0].functions):
        J = _full_jacobian(f, ins._states[layer]).reshape(2, 256, 2, 256)
        assert float(J[0, :, 1].abs().max()) == 0
        lam = np.concatenate([np.linalg.eigvals(J[b, :, b].numpy()) for b in range(2)])
        assert np.allclose(np.sort_complex(placed.lam[layer].reshape(-1)), np.sort_complex(lam), atol=1e-9)
        # textbook: v' = g v + (1 - g) lam x, x' = x + v'  ->  r^2 - (1 + g + (1 - g) lam) r + g = 0
        roots = [np.roots([1, -(1 + 0.9 + 0.1 * v), 0.9]) for v in lam]
        assert placed.inside[layer] == pytest.approx(np.mean([np.all(np.abs(r) < 1) for r in roots]))


def test_momentumnet_conversion_of_every_stage_gives_the_branches_of_all():
    _library("torchvision")
    mn = _library("momentumnet")
    from torchvision.models.resnet import BasicBlock, ResNet

    resnet = ResNet(BasicBlock, [2, 2, 2, 2], num_classes=10).double().eval()
    # the helper's default stages and keep_first_layer: each stage is (block 0, MomentumNet(block 1))
    model = mn.transform_to_momentumnet(resnet, gamma=0.9, is_residual=True).eval()
    px = torch.randn(2, 3, 8, 8, dtype=torch.float64)  # streams (2, 64, 2, 2) .. (2, 512, 1, 1)
    ins = inspect(model, px, k=2, dense_max=512)
    assert ins.kinds == ("branch",) * 4 and ins.momentum == 0.9
    assert ins.names == tuple(f"layer{s}.1.0.network.0" for s in range(1, 5))
    fs = [getattr(model, f"layer{s}")[1][0].functions[0] for s in range(1, 5)]
    for layer, f in enumerate(fs):
        J = _full_jacobian(f, ins._states[layer])
        n = ins._states[layer][0].numel()
        for b, D in enumerate(_per_input(J.reshape(2, n, 2, n), 2)):
            assert _rel(ins.top_singular_values[layer, b], torch.linalg.svdvals(D)[:2].numpy()) < TOL
            assert _rel(ins.spectral_radius[layer, b], float(torch.linalg.eigvals(D).abs().max())) < TOL
    # MomentumNets of different gamma are not one momentum recurrence: refused with the way out
    half = mn.transform_to_momentumnet(resnet, ["layer1"], gamma=0.9, is_residual=True)
    mixed = mn.transform_to_momentumnet(half, ["layer2"], gamma=0.5, is_residual=True)
    with pytest.raises(ParameterError, match="different gamma"):
        inspect(mixed.eval(), px)
