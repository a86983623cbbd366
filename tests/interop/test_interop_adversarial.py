"""An adversarial survey of ``zymase.to_torch`` / ``zymase.to_jax``: realistic programs (heat and
wave equations, RK4, an MLP, in-place updates, views, writes=, int and bool operands, 0-d arrays,
float32, empty arrays) checked against plain NumPy, jax.numpy / torch references and finite
differences, under the transforms users combine (jit, grad, jvp, vmap, hessian, scan, remat,
gradcheck, torch.func, torch.compile).

The tests at the end each failed before the fix of a bug this survey found."""

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed (pip install torch)")
jax = pytest.importorskip("jax", reason="JAX is not installed (pip install jax)")
import jax.numpy as jnp  # noqa: E402
from jax.test_util import check_grads  # noqa: E402

import zymase  # noqa: E402
from zymase.errors import ZymaseError  # noqa: E402

F64 = torch.float64


@pytest.fixture(autouse=True)
def x64():
    before = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", before)


def _rng(seed=0):
    return np.random.default_rng(seed)


def _np(a):
    return a.detach().numpy() if isinstance(a, torch.Tensor) else np.asarray(a)


def _close(a, b, rtol=1e-12, atol=1e-14):
    np.testing.assert_allclose(_np(a), _np(b), rtol=rtol, atol=atol)


# ---------------------------------------------------------------------- the programs


def rk4(y0, k, dt, steps):
    y = y0.copy()
    for _ in range(steps):
        k1 = -k * y + np.sin(y)
        k2 = -k * (y + 0.5 * dt * k1) + np.sin(y + 0.5 * dt * k1)
        k3 = -k * (y + 0.5 * dt * k2) + np.sin(y + 0.5 * dt * k2)
        k4 = -k * (y + dt * k3) + np.sin(y + dt * k3)
        y = y + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
    return y


def heat2d(u0, kappa, dt, steps):
    u = u0.copy()
    n, m = u.shape
    for _ in range(steps):
        new = u.copy()
        for i in range(1, n - 1):
            for j in range(1, m - 1):
                new[i, j] = u[i, j] + dt * kappa[i, j] * (
                    u[i + 1, j] + u[i - 1, j] + u[i, j + 1] + u[i, j - 1] - 4.0 * u[i, j])
        u = new
    return u


def heat1d(u0, kappa, dt, steps):
    u = u0.copy()
    for _ in range(steps):
        lap = np.zeros_like(u)
        lap[1:-1] = u[2:] - 2.0 * u[1:-1] + u[:-2]
        u = u + dt * kappa * lap
    return u, np.sum(u * u)


def wave3(u, c, dt, steps, damp):
    """u: (2, n, m), the current and previous fields; a Python bool flag."""
    cur = u[0].copy()
    prev = u[1].copy()
    for _ in range(steps):
        lap = np.zeros_like(cur)
        lap[1:-1, 1:-1] = (cur[2:, 1:-1] + cur[:-2, 1:-1] + cur[1:-1, 2:] + cur[1:-1, :-2]
                           - 4.0 * cur[1:-1, 1:-1])
        nxt = 2.0 * cur - prev + (c * dt) ** 2 * lap
        if damp:
            nxt = nxt * 0.99
        prev = cur
        cur = nxt
    return cur, np.sum(cur ** 2)


def mlp(x, w1, b1, w2, b2):
    h = np.tanh(x @ w1 + b1)
    out = h @ w2 + b2
    return np.sum(out ** 2) / x.shape[0]


def tail(x):
    return x[1:]


def ident(x):
    return x


def twice(x):
    return x, x


def views(m, x):
    return x[::-1], m.T, m[:, ::-2], m[1], x[None, :] * np.ones((2, 1))


def _set_first(a, v):
    a[0] = v


def mut_helper(x):
    _set_first(x, 100.0)
    return x * 1.0


def mut_view(x):
    v = x[1:]
    v[0] = 100.0
    return x * 1.0


def mut_sort_fill(x, y):
    x.sort()
    y.fill(7.0)
    return x + y


def mut_reshape_T(m):
    f = m.reshape(-1)
    f[0] = 100.0
    t = m.T
    t[0, 1] = -5.0
    return m * 1.0


def mutate(x):
    x[0] = x[0] * 3.0
    return x * x


def fill2d(src, out, scale):
    n, m = out.shape
    for i in range(n):
        for j in range(m):
            out[i, j] = out[i, j] + scale * src[j] * (i + 1)


def hist(x, counts):
    for k in range(x.shape[0]):
        b = int(x[k] * 4.0)
        counts[b] += 1
    return np.sum(x)


def pick(x, idx):
    out = np.zeros(idx.shape[0])
    for k in range(idx.shape[0]):
        out[k] = x[idx[k]] ** 2
    return out


def masked(x, m):
    return np.sum(np.where(m, x * x, 0.0))


def mixed(x32, w64):
    return np.sum(x32 * w64), x32 * 2.0


def norm2(x):
    return np.sum(x * x)


def scale(x):
    return x * 2.0


def loss2(c, x, idx):
    return c * np.sum(np.sin(x) ** 2) * x[0] + np.dot(x, x) ** 1.5 + np.sum(x[idx] ** 3)


def loss_and_count(x):
    return np.sum(x ** 3), x.shape[0]


def count_and_loss(x):
    return x.shape[0], np.sum(x ** 3)


def at(x, i):
    return x[i] * 2.0


def nested(x):
    return x * 2.0, (np.sum(x), x[::2] * 1.0)


def with_const_out(x, c):
    return x * 2.0, c * 3


def angle_of(x, c):
    return x * np.arctan2(c, -1.0)


TABLE = np.array([1.0, 2.0, 3.0, 4.0])


def table(x):
    return TABLE


def scalar_poly(s):
    return np.sin(s) * s ** 3


def accumulate(a, s, n):
    acc = 0.0
    for _ in range(n):
        acc += s * np.sum(a)
    return acc


def flagged(x, flag):
    if flag:
        return x * 2.0
    return x * 3.0


def above(x):
    return x > 0.5


def shapes_zoo(x, m, n):
    return (x[:n], x[n:], x[::n], m.reshape(-1, 2), np.concatenate((x, x[1:])),
            np.arange(n) * 1.0, m[:, None, :], np.outer(x, x[:2]).T)


# ---------------------------------------------------------------------- references


def rk4_jnp(y, k, dt, steps):
    for _ in range(steps):
        k1 = -k * y + jnp.sin(y)
        k2 = -k * (y + 0.5 * dt * k1) + jnp.sin(y + 0.5 * dt * k1)
        k3 = -k * (y + 0.5 * dt * k2) + jnp.sin(y + 0.5 * dt * k2)
        k4 = -k * (y + dt * k3) + jnp.sin(y + dt * k3)
        y = y + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
    return y


def rk4_torch(y, k, dt, steps):
    for _ in range(steps):
        k1 = -k * y + torch.sin(y)
        k2 = -k * (y + 0.5 * dt * k1) + torch.sin(y + 0.5 * dt * k1)
        k3 = -k * (y + 0.5 * dt * k2) + torch.sin(y + 0.5 * dt * k2)
        k4 = -k * (y + dt * k3) + torch.sin(y + dt * k3)
        y = y + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
    return y


def heat1d_jnp(u0, kappa, dt, steps):
    u = u0
    for _ in range(steps):
        lap = jnp.zeros_like(u).at[1:-1].set(u[2:] - 2.0 * u[1:-1] + u[:-2])
        u = u + dt * kappa * lap
    return u, jnp.sum(u * u)


def wave3_jnp(u, c, dt, steps, damp):
    cur, prev = u[0], u[1]
    for _ in range(steps):
        lap = jnp.zeros_like(cur).at[1:-1, 1:-1].set(
            cur[2:, 1:-1] + cur[:-2, 1:-1] + cur[1:-1, 2:] + cur[1:-1, :-2] - 4.0 * cur[1:-1, 1:-1])
        nxt = 2.0 * cur - prev + (c * dt) ** 2 * lap
        if damp:
            nxt = nxt * 0.99
        prev, cur = cur, nxt
    return cur, jnp.sum(cur ** 2)


def mlp_jnp(x, w1, b1, w2, b2):
    return jnp.sum((jnp.tanh(x @ w1 + b1) @ w2 + b2) ** 2) / x.shape[0]


def loss2_jnp(c, x, idx):
    return c * jnp.sum(jnp.sin(x) ** 2) * x[0] + jnp.dot(x, x) ** 1.5 + jnp.sum(x[idx] ** 3)


# ---------------------------------------------------------------------- realistic programs


def test_rk4_jax_grad_jvp_jit_match_jax_numpy():
    op = zymase.to_jax(rk4)
    rng = _rng(1)
    y0, k = jnp.asarray(rng.random(6)), jnp.asarray(rng.random(6))
    _close(jax.jit(lambda y, k: op(y, k, 0.05, 20))(y0, k),
           rk4(np.array(y0), np.array(k), 0.05, 20))
    ours = jax.jit(jax.grad(lambda y, k: jnp.sum(op(y, k, 0.05, 20) ** 2), (0, 1)))(y0, k)
    ref = jax.grad(lambda y, k: jnp.sum(rk4_jnp(y, k, 0.05, 20) ** 2), (0, 1))(y0, k)
    for a, b in zip(ours, ref):
        _close(a, b, rtol=1e-10)
    t = jnp.asarray(rng.random(6))
    _close(jax.jvp(lambda k: op(y0, k, 0.05, 20), (k,), (t,))[1],
           jax.jvp(lambda k: rk4_jnp(y0, k, 0.05, 20), (k,), (t,))[1], rtol=1e-10)


def test_rk4_torch_gradcheck_and_autograd_match_torch():
    op = zymase.to_torch(rk4)
    g = torch.Generator().manual_seed(0)
    y0 = torch.rand(6, dtype=F64, generator=g).requires_grad_()
    k = torch.rand(6, dtype=F64, generator=g).requires_grad_()
    assert torch.autograd.gradcheck(lambda y, k: op(y, k, 0.05, 5), (y0, k),
                                    check_forward_ad=True)
    ours = torch.autograd.grad((op(y0, k, 0.05, 20) ** 2).sum(), (y0, k))
    ref = torch.autograd.grad((rk4_torch(y0, k, 0.05, 20) ** 2).sum(), (y0, k))
    for a, b in zip(ours, ref):
        _close(a, b, rtol=1e-10)
    one = torch.ones(6, dtype=F64)
    _close(torch.func.jvp(lambda k: op(y0.detach(), k, 0.05, 5), (k.detach(),), (one,))[1],
           torch.func.jvp(lambda k: rk4_torch(y0.detach(), k, 0.05, 5), (k.detach(),), (one,))[1],
           rtol=1e-10)


def test_heat2d_jax_matches_numpy_and_finite_differences():
    op = zymase.to_jax(heat2d)
    rng = _rng(2)
    u0, kap = rng.random((5, 6)), rng.random((5, 6))
    _close(op(jnp.asarray(u0), jnp.asarray(kap), 0.1, 4), heat2d(u0, kap, 0.1, 4), rtol=1e-14)
    w = rng.random((5, 6))
    f = lambda k: jnp.sum(op(jnp.asarray(u0), k, 0.1, 4) * w)  # noqa: E731
    g = np.asarray(jax.jit(jax.grad(f))(jnp.asarray(kap)))
    fn = lambda k: float(np.sum(heat2d(u0, k, 0.1, 4) * w))  # noqa: E731
    for d in (rng.standard_normal((5, 6)) for _ in range(3)):
        eps = 1e-6
        fd = (fn(kap + eps * d) - fn(kap - eps * d)) / (2 * eps)
        assert abs(fd - np.sum(g * d)) < 1e-7 * max(1.0, abs(fd))


def test_heat2d_torch_gradcheck_on_transposed_non_contiguous_tensors():
    op = zymase.to_torch(heat2d)
    g = torch.Generator().manual_seed(3)
    u = torch.rand(6, 5, dtype=F64, generator=g)
    k = torch.rand(6, 5, dtype=F64, generator=g)
    ut, kt = u.T, k.T  # non-contiguous views
    assert not ut.is_contiguous()
    _close(op(ut, kt, 0.1, 3), heat2d(ut.numpy().copy(), kt.numpy().copy(), 0.1, 3), rtol=1e-14)
    assert torch.autograd.gradcheck(lambda u, k: op(u.T, k.T, 0.1, 3),
                                    (u.clone().requires_grad_(), k.clone().requires_grad_()),
                                    check_forward_ad=True)


def test_wave_3d_operand_bool_flag_tuple_results_jax():
    op = zymase.to_jax(wave3)
    u = jnp.asarray(_rng(4).random((2, 6, 7)))
    for damp in (True, False):
        cur, e = op(u, 0.5, 0.1, 5, damp)
        rc, re = wave3(np.array(u), 0.5, 0.1, 5, damp)
        _close(cur, rc, rtol=1e-13)
        _close(e, re, rtol=1e-13)
        ours = jax.jit(jax.grad(lambda u: op(u, 0.5, 0.1, 5, damp)[1]))(u)
        ref = jax.grad(lambda u: wave3_jnp(u, 0.5, 0.1, 5, damp)[1])(u)
        _close(ours, ref, rtol=1e-10, atol=1e-13)


def test_mlp_jax_grads_jvp_and_vmap_with_in_axes():
    op = zymase.to_jax(mlp)
    rng = _rng(5)
    args = [jnp.asarray(rng.random(s)) for s in ((5, 3), (3, 4), (4,), (4, 2), (2,))]
    for a, b in zip(jax.jit(jax.grad(op, argnums=(0, 1, 2, 3, 4)))(*args),
                    jax.grad(mlp_jnp, argnums=(0, 1, 2, 3, 4))(*args)):
        _close(a, b, rtol=1e-10)
    ts = tuple(jnp.asarray(rng.random(a.shape)) for a in args)
    _close(jax.jvp(op, tuple(args), ts)[1], jax.jvp(mlp_jnp, tuple(args), ts)[1], rtol=1e-12)
    xs = jnp.asarray(rng.random((5, 3, 4)))  # batch along axis 2
    axes = (2, None, None, None, None)
    _close(jax.vmap(op, in_axes=axes)(xs, *args[1:]),
           jax.vmap(mlp_jnp, in_axes=axes)(xs, *args[1:]), rtol=1e-13)
    _close(jax.vmap(jax.grad(op, 1), in_axes=axes)(xs, *args[1:]),
           jax.vmap(jax.grad(mlp_jnp, 1), in_axes=axes)(xs, *args[1:]), rtol=1e-10)


def test_mlp_torch_matches_torch_autograd_and_func_vmap():
    op = zymase.to_torch(mlp)
    g = torch.Generator().manual_seed(6)
    args = [torch.rand(*s, dtype=F64, generator=g).requires_grad_()
            for s in ((5, 3), (3, 4), (4,), (4, 2), (2,))]
    ours = torch.autograd.grad(op(*args), args)
    x, w1, b1, w2, b2 = args
    ref = torch.autograd.grad((((torch.tanh(x @ w1 + b1) @ w2 + b2) ** 2).sum() / 5), args)
    for a, b in zip(ours, ref):
        _close(a, b, rtol=1e-10)
    xs = torch.rand(3, 5, 3, dtype=F64, generator=g)
    batched = torch.func.vmap(lambda x: op(x, *[a.detach() for a in args[1:]]))(xs)
    _close(batched, [mlp(x.numpy(), *[a.detach().numpy() for a in args[1:]]) for x in xs],
           rtol=1e-13)


def test_traced_dt_steps_scan_remat_and_cond_jax():
    op = zymase.to_jax(heat1d)
    rng = _rng(7)
    u, k = jnp.asarray(rng.random(7)), jnp.asarray(rng.random(7))
    # steps traced under jit: a 0-d int operand; dt a differentiable 0-d float operand
    _close(jax.jit(lambda u, k, s: op(u, k, 0.1, s)[0])(u, k, 3), heat1d_jnp(u, k, 0.1, 3)[0])
    dts = jnp.array([0.1, 0.2, 0.05])
    _close(jax.vmap(jax.grad(lambda dt: op(u, k, dt, 4)[1]))(dts),
           jax.vmap(jax.grad(lambda dt: heat1d_jnp(u, k, dt, 4)[1]))(dts), rtol=1e-10)
    r = zymase.to_jax(rk4)

    def scanned(k, f):
        def body(y, _):
            y = f(y, k, 0.05, 3)
            return y, jnp.sum(y)
        y, ys = jax.lax.scan(body, u[:5], None, length=4)
        return jnp.sum(ys) + jnp.sum(y ** 2)

    k5 = k[:5]
    _close(jax.jit(jax.grad(lambda k: scanned(k, r)))(k5),
           jax.grad(lambda k: scanned(k, rk4_jnp))(k5), rtol=1e-10)
    _close(jax.grad(lambda k: jnp.sum(jax.checkpoint(lambda k: r(u[:5], k, 0.05, 5))(k) ** 2))(k5),
           jax.grad(lambda k: jnp.sum(rk4_jnp(u[:5], k, 0.05, 5) ** 2))(k5), rtol=1e-10)
    cond = jax.grad(lambda k, p: jax.lax.cond(p, lambda k: jnp.sum(r(u[:5], k, 0.05, 5)),
                                              jnp.sum, k))(k5, True)
    _close(cond, jax.grad(lambda k: jnp.sum(rk4_jnp(u[:5], k, 0.05, 5)))(k5), rtol=1e-10)


# ---------------------------------------------------------------------- views, aliasing, mutation


@pytest.mark.parametrize("fn", [tail, ident, twice, mutate], ids=lambda f: f.__name__)
def test_results_that_are_argument_views_jax_and_torch(fn):
    x = np.array([0.3, 0.7, 1.1, 2.0])
    w = np.array([1.0, 10.0, 100.0, 1000.0])
    ref = fn(x.copy())
    refs = ref if isinstance(ref, tuple) else (ref,)
    # exact gradient of sum(out * w[:len]) for each program
    grads = {"tail": np.r_[0.0, w[:3]], "ident": w, "twice": 2 * w,
             "mutate": 2 * x * w * np.r_[9.0, 1, 1, 1]}
    jop, top = zymase.to_jax(fn), zymase.to_torch(fn)

    def L(x):
        out = jop(x)
        outs = out if isinstance(out, tuple) else (out,)
        return sum(jnp.sum(o * w[:o.shape[0]]) for o in outs)

    xj = jnp.asarray(x)
    outs = jax.jit(jop)(xj)
    for a, b in zip(outs if isinstance(outs, tuple) else (outs,), refs):
        _close(a, b, rtol=0)
    _close(jax.jit(jax.grad(L))(xj), grads[fn.__name__], rtol=1e-14)
    _close(xj, x, rtol=0)
    xt = torch.tensor(x, requires_grad=True)
    out = top(xt)
    outs = out if isinstance(out, tuple) else (out,)
    for o in outs:
        assert not np.shares_memory(o.detach().numpy(), xt.detach().numpy())
    sum((o * torch.tensor(w[:o.shape[0]])).sum() for o in outs).backward()
    _close(xt.grad, grads[fn.__name__], rtol=1e-14)
    _close(xt.detach(), x, rtol=0)


def test_strided_transposed_broadcast_result_views():
    m, x = np.arange(12.0).reshape(3, 4), np.arange(4.0) + 0.5
    ref = views(m, x)
    for outs in (zymase.to_jax(views)(jnp.asarray(m), jnp.asarray(x)),
                 jax.jit(zymase.to_jax(views))(jnp.asarray(m), jnp.asarray(x)),
                 zymase.to_torch(views)(torch.tensor(m), torch.tensor(x))):
        for a, b in zip(outs, ref):
            assert np.array_equal(np.asarray(a), b)
    ws = [_rng(i).random(np.shape(r)) for i, r in enumerate(ref)]
    op = zymase.to_jax(views)
    g = jax.grad(lambda m, x: sum(jnp.sum(o * w) for o, w in zip(op(m, x), ws)), (0, 1))(
        jnp.asarray(m), jnp.asarray(x))

    def views_jnp(m, x):
        return x[::-1], m.T, m[:, ::-2], m[1], x[None, :] * jnp.ones((2, 1))

    gr = jax.grad(lambda m, x: sum(jnp.sum(o * w) for o, w in zip(views_jnp(m, x), ws)), (0, 1))(
        jnp.asarray(m), jnp.asarray(x))
    for a, b in zip(g, gr):
        _close(a, b, rtol=1e-14)
    assert torch.autograd.gradcheck(zymase.to_torch(views),
                                    (torch.tensor(m, requires_grad=True),
                                     torch.tensor(x, requires_grad=True)), check_forward_ad=True)


MUTATORS = [(mut_helper, (np.array([3.0, 1.0, 2.0]),)),
            (mut_view, (np.array([3.0, 1.0, 2.0]),)),
            (mut_sort_fill, (np.array([3.0, 1.0, 2.0]), np.array([4.0, 5.0, 6.0]))),
            (mut_reshape_T, (np.array([[3.0, 1.0, 2.0], [5.0, 4.0, 6.0]]),))]


@pytest.mark.parametrize("fn,args", MUTATORS, ids=lambda a: getattr(a, "__name__", ""))
def test_functions_writing_their_arguments_leave_operands_unchanged(fn, args):
    ref = fn(*[a.copy() for a in args])
    ts = [torch.tensor(a) for a in args]
    out = zymase.to_torch(fn)(*ts)
    _close(out, ref, rtol=0)
    for t, a in zip(ts, args):
        assert np.array_equal(t.numpy(), a)
    js = [jnp.asarray(a) for a in args]
    op = zymase.to_jax(fn)
    # the operands are read again after the call inside the same XLA computation
    out, *after = jax.jit(lambda *a: (op(*a),) + tuple(b * 1.0 for b in a))(*js)
    _close(out, ref, rtol=0)
    for b, a in zip(after, args):
        assert np.array_equal(b, a)


def test_jvp_and_vjp_leave_tangent_and_cotangent_buffers_unchanged():
    op = zymase.to_jax(mutate)
    x = jnp.array([0.3, 0.7, 1.1, 2.0])
    t = jnp.array([1.0, 10.0, 100.0, 1000.0])

    def both(x, t):
        _, tout = jax.jvp(op, (x,), (t,))
        _, pb = jax.vjp(op, x)
        return tout, pb(t)[0], t + 0.0, x + 0.0

    tout, ct, t_after, x_after = jax.jit(both)(x, t)
    want = 2 * np.asarray(x) * np.asarray(t) * np.r_[9.0, 1, 1, 1]
    _close(tout, want, rtol=1e-14)
    _close(ct, want, rtol=1e-14)
    assert np.array_equal(t_after, t) and np.array_equal(x_after, x)
    top = zymase.to_torch(mutate)
    xt = torch.tensor(np.asarray(x), requires_grad=True)
    ctt = torch.tensor(np.asarray(t))
    top(xt).backward(ctt)
    assert np.array_equal(ctt.numpy(), np.asarray(t))
    _close(xt.grad, want, rtol=1e-14)


def test_writes_2d_output_and_int_counts():
    rng = _rng(8)
    src, out = rng.random(4), rng.random((3, 4))
    ref = out.copy()
    fill2d(src, ref, 0.5)
    (r,) = zymase.to_jax(fill2d, writes="out")(jnp.asarray(src), jnp.asarray(out), 0.5)
    _close(r, ref, rtol=1e-15)
    o_t = torch.tensor(out, requires_grad=True)
    (rt,) = zymase.to_torch(fill2d, writes=1)(torch.tensor(src), o_t, 0.5)
    _close(rt, ref, rtol=1e-15)
    assert np.array_equal(o_t.detach().numpy(), out)
    assert torch.autograd.gradcheck(lambda s, o: zymase.to_torch(fill2d, writes="out")(s, o, 0.5),
                                    (torch.tensor(src, requires_grad=True), o_t),
                                    check_forward_ad=True)
    check_grads(lambda s, o: zymase.to_jax(fill2d, writes="out")(s, o, 0.5), (jnp.asarray(src),
                jnp.asarray(out)), order=1, modes=("fwd", "rev"))
    x, c = rng.random(6), np.array([0, 1, 0, 0])
    rc = c.copy()
    rs = hist(x, rc)
    s, counts = zymase.to_jax(hist, writes="counts")(jnp.asarray(x), jnp.asarray(c))
    assert counts.dtype == jnp.int64 and np.array_equal(counts, rc) and abs(float(s) - rs) < 1e-14
    st, ct = zymase.to_torch(hist, writes="counts")(torch.tensor(x), torch.tensor(c))
    assert ct.dtype == torch.int64 and np.array_equal(ct.numpy(), rc)
    _close(jax.grad(lambda x: zymase.to_jax(hist, writes="counts")(x, jnp.asarray(c))[0])(
        jnp.asarray(x)), np.ones(6), rtol=0)


# ---------------------------------------------------------------------- dtypes and ranks


def test_int_index_arrays_and_bool_masks():
    x = jnp.array([0.3, 0.7, 1.1, 2.0])
    for idx in (jnp.array([3, 0, 0]), jnp.array([3, 0, 0], dtype=jnp.int32), jnp.array([-1, 2])):
        op = zymase.to_jax(pick)
        _close(op(x, idx), pick(np.array(x), np.array(idx)), rtol=0)
        g = jax.grad(lambda x: jnp.sum(op(x, idx)))(x)
        _close(g, jax.grad(lambda x: jnp.sum(x[idx] ** 2))(x), rtol=1e-15)
    m = jnp.array([True, False, True, False])
    s, g = jax.value_and_grad(zymase.to_jax(masked))(x, m)
    _close(s, 0.3 ** 2 + 1.1 ** 2, rtol=1e-14)
    _close(g, [0.6, 0.0, 2.2, 0.0], rtol=1e-14)
    X = torch.tensor(np.asarray(x), requires_grad=True)
    zymase.to_torch(pick)(X, torch.tensor([2, 0])).sum().backward()
    _close(X.grad, [0.6, 0.0, 2.2, 0.0], rtol=1e-14)
    b = zymase.to_jax(above)(x)
    assert b.dtype == jnp.bool_ and np.array_equal(b, np.asarray(x) > 0.5)


def test_float32_and_mixed_precision_results_and_gradients():
    a32 = np.array([0.3, 0.9, 1.1], np.float32)
    w = np.array([1.0, 2.0, 3.0])
    ref = mixed(a32, w)
    s, y = zymase.to_jax(mixed)(jnp.asarray(a32), jnp.asarray(w))
    assert s.dtype == jnp.float64 and y.dtype == jnp.float32
    _close(s, ref[0], rtol=1e-15)
    _close(y, ref[1], rtol=0)
    ga, gw = jax.grad(lambda a, w: zymase.to_jax(mixed)(a, w)[0], (0, 1))(jnp.asarray(a32),
                                                                           jnp.asarray(w))
    assert ga.dtype == jnp.float32 and gw.dtype == jnp.float64
    _close(ga, w, rtol=1e-7)
    _close(gw, a32.astype(np.float64), rtol=1e-15)
    A, W = torch.tensor(a32, requires_grad=True), torch.tensor(w, requires_grad=True)
    st, yt = zymase.to_torch(mixed)(A, W)
    (st + yt.sum()).backward()
    assert A.grad.dtype == torch.float32 and W.grad.dtype == F64
    _close(A.grad, w + 2.0, rtol=1e-7)
    n32 = zymase.to_jax(norm2)(jnp.asarray(a32))
    assert n32.dtype == jnp.float32 and abs(float(n32) - float(np.sum(a32 * a32))) < 1e-6


def test_empty_arrays():
    e = jnp.zeros((0,))
    assert zymase.to_jax(scale)(e).shape == (0,)
    assert float(zymase.to_jax(norm2)(e)) == 0.0
    assert jax.grad(zymase.to_jax(norm2))(e).shape == (0,)
    assert jax.vmap(zymase.to_jax(scale))(jnp.zeros((0, 3))).shape == (0, 3)
    assert zymase.to_torch(scale)(torch.zeros(0, dtype=F64)).shape == (0,)
    t = torch.zeros(0, dtype=F64, requires_grad=True)
    zymase.to_torch(norm2)(t).backward()
    assert t.grad.shape == (0,)


def test_shape_inference_of_slices_reshapes_and_constants():
    x, m = np.arange(7.0), np.arange(12.0).reshape(3, 4)
    op = zymase.to_jax(shapes_zoo)
    for n in (2, 3, -2, -1):
        for a, b in zip(op(jnp.asarray(x), jnp.asarray(m), n), shapes_zoo(x, m, n)):
            assert np.array_equal(np.asarray(a), b)


def test_nested_tuple_results():
    x = jnp.array([0.3, 0.9, 1.1, 0.5, 2.0])
    a, (s, c) = zymase.to_jax(nested)(x)
    _close(s, float(np.sum(np.asarray(x))), rtol=1e-15)
    g = jax.grad(lambda x: (lambda a, sc: a.sum() + 10 * sc[0] + 100 * sc[1].sum())(
        *zymase.to_jax(nested)(x)))(x)
    _close(g, [112.0, 12.0, 112.0, 12.0, 112.0], rtol=1e-15)
    X = torch.tensor(np.asarray(x), requires_grad=True)
    a, (s, c) = zymase.to_torch(nested)(X)
    (a.sum() + 10 * s + 100 * c.sum()).backward()
    _close(X.grad, [112.0, 12.0, 112.0, 12.0, 112.0], rtol=1e-15)


def test_repeated_calls_with_new_shapes_and_dtypes():
    jop, top = zymase.to_jax(heat1d), zymase.to_torch(heat1d)
    f = jax.jit(jax.grad(lambda u, k: jop(u, k, 0.1, 3)[1], (0, 1)))
    for n, seed in ((5, 0), (9, 1), (5, 2), (12, 3)):
        u, k = _rng(seed).random(n), _rng(seed + 10).random(n)
        ref = jax.grad(lambda u, k: heat1d_jnp(u, k, 0.1, 3)[1], (0, 1))(u, k)
        for a, b in zip(f(jnp.asarray(u), jnp.asarray(k)), ref):
            _close(a, b, rtol=1e-12)
        out, _ = top(torch.tensor(u), torch.tensor(k), 0.1, 3)
        _close(out, heat1d(u, k, 0.1, 3)[0], rtol=1e-14)
    u32 = _rng(0).random(5).astype(np.float32)
    out32, _ = top(torch.tensor(u32), torch.tensor(u32), 0.1, 3)
    assert out32.dtype == torch.float32
    _close(out32, heat1d(u32, u32, 0.1, 3)[0], rtol=1e-6)


# ---------------------------------------------------------------------- second order


def test_second_order_with_int_operand_and_float_constant():
    x, idx = jnp.array([0.3, 0.9, 1.1, 0.5]), jnp.array([1, 3, 3])
    op = zymase.to_jax(loss2)
    H = jax.hessian(loss2_jnp, 1)(0.7, x, idx)
    _close(jax.hessian(op, 1)(0.7, x, idx), H, rtol=1e-12)
    _close(jax.jit(jax.hessian(op, 1), static_argnums=0)(0.7, x, idx), H, rtol=1e-12)
    _close(jax.jacrev(jax.jacrev(op, 1), 1)(0.7, x, idx), H, rtol=1e-12)
    v = jnp.array([1.0, -2.0, 0.5, 3.0])
    _close(jax.grad(lambda x: jnp.vdot(jax.grad(op, 1)(0.7, x, idx), v))(x), H @ v, rtol=1e-12)

    def jvp_of_vjp(f):  # along x and the cotangent together
        h = lambda x, c: jax.vjp(lambda x: f(0.7, x, idx), x)[1](c)[0]  # noqa: E731
        return jax.jvp(h, (x, 2.0), (v, 0.5))[1]

    _close(jvp_of_vjp(op), jvp_of_vjp(loss2_jnp), rtol=1e-12)
    t = zymase.to_torch(loss2)
    X, ix = torch.tensor(np.asarray(x)), torch.tensor(np.asarray(idx))
    _close(torch.func.hessian(lambda x: t(0.7, x, ix))(X), H, rtol=1e-12)
    assert torch.autograd.gradgradcheck(lambda x: t(0.7, x, ix), (X.clone().requires_grad_(),))
    # a float result first, an int after it
    _close(jax.hessian(lambda x: zymase.to_jax(loss_and_count)(x)[0])(x), np.diag(6 * x),
           rtol=1e-14)


def test_second_order_refusals_are_clear():
    x = jnp.array([0.3, 0.9, 1.1])
    with pytest.raises(ZymaseError, match="second derivatives go through its reverse mode"):
        jax.jacfwd(jax.jacfwd(zymase.to_jax(norm2)))(x)
    rng = _rng(5)
    args = [jnp.asarray(rng.random(s)) for s in ((5, 3), (3, 4), (4,), (4, 2), (2,))]
    with pytest.raises(ZymaseError, match="second derivatives"):
        jax.hessian(lambda w: zymase.to_jax(mlp)(args[0], w, *args[2:]))(args[1])


# ---------------------------------------------------------------------- torch transforms


def test_torch_func_transforms_and_compile_after_a_warm_up():
    op = zymase.to_torch(rk4)
    g = torch.Generator().manual_seed(9)
    y0 = torch.rand(6, dtype=F64, generator=g)
    k = torch.rand(6, dtype=F64, generator=g, requires_grad=True)
    Y = torch.rand(6, 4, dtype=F64, generator=g)
    kd = k.detach()
    _close(torch.func.vmap(lambda y: op(y, kd, 0.05, 5), in_dims=1, out_dims=1)(Y),
           torch.stack([rk4_torch(Y[:, b], kd, 0.05, 5) for b in range(4)], dim=1), rtol=1e-13)
    gf = torch.func.vmap(torch.func.grad(lambda kk, y: (op(y, kk, 0.05, 5) ** 2).sum()),
                         in_dims=(None, 1))(kd, Y)
    gr = torch.func.vmap(torch.func.grad(lambda kk, y: (rk4_torch(y, kk, 0.05, 5) ** 2).sum()),
                         in_dims=(None, 1))(kd, Y)
    _close(gf, gr, rtol=1e-10)
    jr = torch.func.jacrev(lambda y, k: op(y, k, 0.05, 5), argnums=(0, 1))(y0, kd)
    jf = torch.func.jacfwd(lambda y, k: op(y, k, 0.05, 5), argnums=(0, 1))(y0, kd)
    for a, b in zip(jr, jf):
        _close(a, b, rtol=1e-12, atol=1e-15)

    def loss(k, y0):
        return (op(y0, k, 0.05, 20) ** 2).sum()

    eager = loss(k, y0)  # the calling pattern is seen once outside the compiled region
    compiled = torch.compile(loss, fullgraph=True, backend="eager")
    c = compiled(k, y0)
    _close(c.detach(), eager.detach(), rtol=1e-15)
    _close(torch.autograd.grad(c, k)[0], torch.autograd.grad((rk4_torch(y0, k, 0.05, 20) ** 2)
                                                            .sum(), k)[0], rtol=1e-10)
    y1 = torch.rand(9, dtype=F64, generator=g)  # a new shape inside the compiled function
    k1 = torch.rand(9, dtype=F64, generator=g)
    _close(compiled(k1, y1), (rk4_torch(y1, k1, 0.05, 20) ** 2).sum(), rtol=1e-12)
    torch._dynamo.reset()


# ---------------------------------------------------------------------- errors


def test_runtime_index_error_names_the_users_line_in_every_mode():
    x = jnp.array([0.3, 2.7, 1.1, 5.0])
    op = zymase.to_jax(at)
    i = jnp.int64(7)
    where = r"test_interop_adversarial.py:\d+:\d+: IndexError: index 7 is out of bounds"
    for run in (lambda: op(x, i), lambda: jax.jit(op)(x, i), lambda: jax.grad(op)(x, i),
                lambda: jax.jvp(lambda x: op(x, i), (x,), (x,)),
                lambda: jax.vmap(op, in_axes=(None, 0))(x, jnp.array([1, 7])),
                lambda: jax.hessian(op)(x, i)):
        with pytest.raises(Exception, match=where):
            jax.block_until_ready(run())
    with pytest.raises(ZymaseError, match=r"test_interop_adversarial.py:\d+:\d+: index 9"):
        zymase.to_torch(at)(torch.tensor(np.asarray(x)), 9)


def test_wrong_out_shapes_torch_raises_and_unsupported_inputs_are_named():
    x = np.array([0.3, 2.7, 1.1, 5.0])
    with pytest.raises(ZymaseError, match=r"the shape \(3,\), but it is a number"):
        zymase.to_torch(norm2, out_shapes=lambda s: (3,))(torch.tensor(x))
    with pytest.raises(Exception, match="elements along axis 0 at run time"):
        jax.block_until_ready(zymase.to_jax(scale, out_shapes=lambda s: (3,))(jnp.asarray(x)))
    with pytest.raises(ZymaseError, match="float16"):
        zymase.to_jax(scale)(jnp.ones(3, dtype=jnp.float16))
    with pytest.raises(ZymaseError, match="hashable"):
        zymase.to_jax(scale)([1.0, 2.0])
    with pytest.raises(ZymaseError, match="at least one array"):
        zymase.to_jax(scale)(2.0)
    with pytest.raises(ZymaseError, match="at least one tensor"):
        zymase.to_torch(scale)(x)


# ---------------------------------------------------------------------- fixed since HEAD
# (both failed on commit 9af40a4; the working tree's to_torch / to_jax changes fix them)


def test_torch_compile_fullgraph_without_an_eager_warm_up():
    op = zymase.to_torch(rk4)
    g = torch.Generator().manual_seed(10)
    y0 = torch.rand(6, dtype=F64, generator=g)
    k = torch.rand(6, dtype=F64, generator=g, requires_grad=True)
    try:
        c = torch.compile(lambda k, y0: (op(y0, k, 0.05, 20) ** 2).sum(), fullgraph=True,
                          backend="eager")(k, y0)
        _close(c.detach(), (rk4_torch(y0, k, 0.05, 20) ** 2).sum().detach(), rtol=1e-13)
    finally:
        torch._dynamo.reset()


def test_jax_x64_off_numpy_float64_operand_eager():
    jax.config.update("jax_enable_x64", False)
    x = np.array([0.3, 0.9])
    assert np.array_equal(np.asarray(jax.jit(zymase.to_jax(above))(x)), x > 0.5)
    assert np.array_equal(np.asarray(zymase.to_jax(above)(x)), x > 0.5)


# ---------------------------------------------------------------------- bugs found by the survey
# (each failed before its fix)


def test_jax_equal_but_different_constants_get_their_own_specialization():
    x = jnp.arange(1.0, 5.0)
    op = zymase.to_jax(with_const_out)
    op(x, 2)
    _, c = op(x, 2.0)
    assert c.dtype == jnp.float64  # numpy: 2.0 * 3 == 6.0, a float
    ang = zymase.to_jax(angle_of)
    ang(x, 0.0)
    _close(ang(x, -0.0), angle_of(np.asarray(x), -0.0), rtol=1e-15)  # -pi * x, not +pi * x


def test_torch_equal_but_different_constants_get_their_own_specialization():
    x = torch.arange(1.0, 5.0, dtype=F64)
    ang = zymase.to_torch(angle_of)
    ang(x, 0.0)
    _close(ang(x, -0.0), angle_of(x.numpy(), -0.0), rtol=1e-15)
    op = zymase.to_torch(with_const_out)
    op(x, 2)
    assert op(x, 2.0)[1].dtype == F64


def test_jax_out_shapes_of_the_wrong_rank_raise():
    x = jnp.array([0.3, 2.7, 1.1, 5.0])
    with pytest.raises(Exception, match="out_shapes"):
        jax.block_until_ready(zymase.to_jax(norm2, out_shapes=lambda s: (3,))(x))
    with pytest.raises(Exception, match="out_shapes"):
        jax.block_until_ready(zymase.to_jax(scale, out_shapes=lambda s: ())(x))


def test_torch_result_does_not_alias_a_module_global():
    op = zymase.to_torch(table, out_shapes=[(4,)])
    before = TABLE.copy()
    try:
        t = op(torch.zeros(2, dtype=F64))
        t += 100.0
        assert np.array_equal(TABLE, before)
        _close(op(torch.zeros(2, dtype=F64)), before, rtol=0)
    finally:
        TABLE[:] = before


@pytest.mark.parametrize("case", ["poly", "index", "accumulate"])
def test_torch_0d_tensors_are_numbers(case):
    if case == "poly":
        s = torch.tensor(0.8, dtype=F64, requires_grad=True)
        y = zymase.to_torch(scalar_poly)(s)
        assert y.shape == () and abs(float(y.detach()) - float(scalar_poly(0.8))) < 1e-15
    elif case == "index":
        x = torch.tensor([0.3, 2.7, 1.1], dtype=F64)
        assert float(zymase.to_torch(at)(x, torch.tensor(2))) == 2.0 * 1.1
    else:
        a = torch.tensor([1.0, 2.0], dtype=F64)
        r = zymase.to_torch(accumulate)(a, torch.tensor(0.5, dtype=F64), 3)
        assert abs(float(r) - 4.5) < 1e-15


def test_jax_hessian_when_the_float_result_is_not_first():
    x = jnp.array([0.3, 0.7, 1.1])
    op = zymase.to_jax(count_and_loss)
    _close(jax.hessian(lambda x: op(x)[1])(x), np.diag(6 * np.asarray(x)), rtol=1e-14)


def test_torch_hessian_of_a_tuple_returning_function():
    x = torch.tensor([0.3, 0.7, 1.1], dtype=F64)
    op = zymase.to_torch(loss_and_count)
    _close(torch.func.hessian(lambda x: op(x)[0])(x), np.diag(6 * x.numpy()), rtol=1e-14)


def test_torch_vmap_over_an_empty_batch():
    out = torch.func.vmap(zymase.to_torch(scale))(torch.zeros(0, 3, dtype=F64))
    assert out.shape == (0, 3)


def test_shape_inference_through_a_data_dependent_branch():
    x = jnp.array([0.3, 0.9, 1.1])
    _close(zymase.to_jax(flagged)(x, jnp.bool_(False)), 3 * np.asarray(x), rtol=1e-15)
