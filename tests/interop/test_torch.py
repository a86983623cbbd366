"""``zymase.to_torch``: PyTorch operations whose derivatives are zymase's, checked with PyTorch's
own checkers (gradcheck, gradgradcheck, opcheck) and against eager PyTorch and NumPy."""

import os
import pathlib
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed (pip install torch)")
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import interop_programs as P  # noqa: E402

import zymase  # noqa: E402
from zymase.errors import DifferentiationError, ZymaseError  # noqa: E402

F64 = torch.float64


def _rand(*shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.rand(*shape, dtype=F64, generator=g)


def test_primal_matches_numpy_and_results_are_fresh():
    op = zymase.to_torch(P.heat)
    u, k = _rand(8), _rand(8, seed=1)
    out, e = op(u, k, 0.1, 3)
    ref = P.heat(u.numpy(), k.numpy(), 0.1, 3)
    np.testing.assert_allclose(out.numpy(), ref[0], rtol=1e-14)
    assert e.shape == () and abs(float(e) - ref[1]) < 1e-12
    assert not np.shares_memory(out.numpy(), u.numpy())


def test_gradcheck_both_modes_several_outputs():
    op = zymase.to_torch(P.heat)
    u, k = _rand(8).requires_grad_(), _rand(8, seed=1).requires_grad_()
    assert torch.autograd.gradcheck(lambda u, k: op(u, k, 0.1, 4), (u, k),
                                    check_forward_ad=True)


def test_backward_matches_zymase_grad():
    op = zymase.to_torch(P.energy)
    x = torch.tensor([0.0, 1.0, 3.0], dtype=F64, requires_grad=True)
    op(x, 0.5).backward()
    np.testing.assert_allclose(x.grad.numpy(), [-1.0, -1.0, 2.0])


def test_second_order_gradgradcheck_and_hessian():
    op = zymase.to_torch(P.loss)
    x = _rand(5).requires_grad_()
    assert torch.autograd.gradgradcheck(op, (x,))
    h = torch.func.hessian(op)(x.detach())
    ref = zymase.hessian(P.loss)(x.detach().numpy())
    np.testing.assert_allclose(h.numpy(), ref, rtol=1e-10)


def test_second_order_refused_for_several_inputs():
    op = zymase.to_torch(P.heat)
    u, k = _rand(6).requires_grad_(), _rand(6, seed=1).requires_grad_()
    e = op(u, k, 0.1, 2)[1]
    (g,) = torch.autograd.grad(e, (u,), create_graph=True)
    with pytest.raises(DifferentiationError, match="second derivatives"):
        torch.autograd.grad(g.sum(), (u,))


def test_func_transforms_match_finite_differences():
    op = zymase.to_torch(P.heat)
    u, k = _rand(7), _rand(7, seed=1)
    f = lambda u: op(u, k, 0.1, 3)[0]  # noqa: E731
    jr = torch.func.jacrev(f)(u)
    jf = torch.func.jacfwd(f)(u)
    eps = 1e-6
    fd = torch.stack([(f(u + eps * e) - f(u - eps * e)) / (2 * eps)
                      for e in torch.eye(7, dtype=F64)], dim=1)
    np.testing.assert_allclose(jr.numpy(), fd.numpy(), atol=1e-8)
    np.testing.assert_allclose(jf.numpy(), jr.numpy(), rtol=1e-12, atol=1e-14)
    xs = _rand(4, 7, seed=2)
    batched = torch.func.vmap(lambda u: op(u, k, 0.1, 3)[1], in_dims=1)(xs.T)
    np.testing.assert_allclose(batched.numpy(), [P.heat(x, k.numpy(), 0.1, 3)[1]
                                                 for x in xs.numpy()], rtol=1e-13)
    # one compiled loop over the examples (zymase.vmap), not one call per example
    assert sum(len(p.batched) for p in op.patterns.values()) == 1
    per_example = torch.func.vmap(torch.func.grad(lambda u: op(u, k, 0.1, 3)[1]))(xs)
    kn = k.numpy()
    want = [zymase.grad(lambda u, kk: P.heat(u, kk, 0.1, 3)[1])(x, kn) for x in xs.numpy()]
    np.testing.assert_allclose(per_example.numpy(), want, rtol=1e-12)


def test_forward_ad_api():
    import torch.autograd.forward_ad as fwAD
    op = zymase.to_torch(P.energy)
    x, t = _rand(5), _rand(5, seed=3)
    with fwAD.dual_level():
        y = op(fwAD.make_dual(x, t), 2.0)
        tangent = fwAD.unpack_dual(y).tangent
    g = zymase.grad(P.energy)(x.numpy(), 2.0)
    assert abs(float(tangent) - float(np.dot(g, t.numpy()))) < 1e-12


def test_opcheck_of_every_operator():
    op = zymase.to_torch(P.outer_and_count)
    a, b = _rand(4), _rand(6, seed=1)
    m, mt, n = op(a, b, 3)
    assert m.shape == (4, 3) and mt.shape == (3, 4) and n.dtype == torch.int64 and int(n) == 7
    ops, (layout,) = op.ops, list(op.patterns)
    xs = [a, b]
    for o, args in ((ops.fwd, (xs, layout)), (ops.vjp, (xs, [_rand(4, 3), _rand(3, 4)], layout)),
                    (ops.jvp, (xs, [_rand(4), _rand(6)], layout))):
        report = torch.library.opcheck(o, args)
        assert set(report.values()) == {"SUCCESS"}, report


def test_compile_fullgraph_training_step_matches_eager():
    op = zymase.to_torch(P.heat)

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.logk = torch.nn.Parameter(torch.zeros(12, dtype=F64))

        def forward(self, u0):
            u, _ = op(u0, torch.exp(self.logk), 0.1, 10)
            return ((u - 0.5) ** 2).sum()

    m = Model()
    u0 = _rand(12)
    eager = m(u0)
    eager.backward()
    g_eager = m.logk.grad.clone()
    m.logk.grad = None
    compiled = torch.compile(m, fullgraph=True, backend="aot_eager")
    c = compiled(u0)
    c.backward()
    assert torch.allclose(c, eager) and torch.allclose(m.logk.grad, g_eager)


def test_float32_tensors_and_number_operand():
    op = zymase.to_torch(P.scale_rows)
    m = torch.rand(3, 4, dtype=torch.float32, requires_grad=True)
    s = torch.tensor(1.5, dtype=torch.float32, requires_grad=True)
    out = op(m, s)
    assert out.dtype == torch.float32
    out.sum().backward()
    np.testing.assert_allclose(m.grad.numpy(), 3.0 * m.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(float(s.grad), float((m.detach() ** 2).sum()), rtol=1e-5)


def test_errors_say_what_to_do():
    op = zymase.to_torch(P.positives)
    with pytest.raises(ZymaseError, match="out_shapes="):
        op(_rand(5))
    declared = zymase.to_torch(P.positives, out_shapes=lambda s: (s[0],))
    with pytest.raises(ZymaseError, match=r"has shape \(\d,\), not the \(5,\) declared"):
        declared(torch.tensor([1.0, -1.0, 2.0, -3.0, 4.0], dtype=F64))
    x = torch.tensor([1.0, -1.0, 2.0], dtype=F64)
    ok = zymase.to_torch(P.positives, out_shapes=lambda s: (int((x > 0).sum()),))
    np.testing.assert_allclose(ok(x).numpy(), [2.0, 4.0])
    with pytest.raises(ZymaseError, match="neither a tensor nor a constant"):
        zymase.to_torch(P.energy)(x, [1.0])
    with pytest.raises(ZymaseError, match="complex64"):
        zymase.to_torch(P.energy)(x.to(torch.complex64), 1.0)


def test_written_argument_is_an_output_and_the_tensor_is_unchanged():
    def fill(x, out):
        for i in range(x.shape[0]):
            out[i] = out[i] * 0.5 + np.sin(x[i])

    op = zymase.to_torch(fill, writes="out")
    x, o = _rand(5).requires_grad_(), _rand(5, seed=1).requires_grad_()
    before = o.detach().clone()
    (r,) = op(x, o)
    assert torch.equal(o.detach(), before)
    np.testing.assert_allclose(r.detach().numpy(),
                               0.5 * before.numpy() + np.sin(x.detach().numpy()), rtol=1e-14)
    assert torch.autograd.gradcheck(op, (x, o), check_forward_ad=True)
    with pytest.raises(ZymaseError, match="has no parameter 'y'"):
        zymase.to_torch(fill, writes="y")


@pytest.mark.slow
def test_compile_with_inductor():
    op = zymase.to_torch(P.energy)
    x = _rand(6).requires_grad_()
    f = torch.compile(lambda x: op(x * 2.0, 0.5) + x.sum(), fullgraph=True)
    y = f(x)
    y.backward()
    g = zymase.grad(P.energy)(2.0 * x.detach().numpy(), 0.5) * 2.0 + 1.0
    np.testing.assert_allclose(x.grad.numpy(), g, rtol=1e-12)
    want = P.energy(2.0 * x.detach().numpy(), 0.5) + float(x.detach().sum())
    assert abs(float(y.detach()) - want) < 1e-12


def test_inputs_that_need_no_gradient_are_held_constant():
    """A tensor that does not require grad is not active in the reverse pass (no shadow, no
    adjoint computed for it): only kappa's derivative is compiled."""
    from zymase.driver.cache import shared
    from zymase.options import transform_options

    def rod(kappa, u0, steps):
        u = u0.copy()
        for _ in range(steps):
            u[1:-1] = u[1:-1] + 0.1 * kappa[1:-1] * (u[2:] - 2.0 * u[1:-1] + u[:-2])
        return u

    op = zymase.to_torch(rod)
    kappa, u0 = _rand(8).requires_grad_(), _rand(8, seed=1)
    op(kappa, u0, 5).sum().backward()
    reqs = {key[1] for key in shared(rod, transform_options()).compiled if key[1].mode == "rev"}
    assert {r.active for r in reqs} == {(0,)}, reqs
    kn = kappa.detach().numpy()
    want = zymase.grad(lambda k, u: np.sum(rod(k, u, 5)))(kn, u0.numpy())
    np.testing.assert_allclose(kappa.grad.numpy(), want, rtol=1e-13)


def test_one_operation_per_function_and_settings():
    """to_torch / to_jax of the same function and settings give the same operation (making
    one registers operators: a call inside a loop must not make a new one each time)."""
    assert zymase.to_torch(P.energy) is zymase.to_torch(P.energy)
    assert zymase.to_torch(P.energy) is not zymase.to_torch(P.energy, fastmath=True)


def test_errors_name_the_users_line_and_no_zymase_path():
    with pytest.raises(ZymaseError) as info:
        zymase.to_torch(P.positives)(_rand(5))  # the line named
    text = str(info.value)
    package = os.path.dirname(zymase.__file__)  # (no path inside zymase in the message)
    assert text.startswith(__file__ + ":") and "out_shapes=" in text and package not in text, \
        text
    with pytest.raises(ZymaseError) as info:
        zymase.to_torch(P.energy)(_rand(3), [1.0])
    assert str(info.value).startswith(__file__ + ":") and package not in str(info.value)
