"""``zymase.to_jax``: JAX operations that XLA runs as zymase's machine code (an FFI custom call,
no Python callback), with zymase's derivatives, checked with ``jax.test_util.check_grads`` and
against the same functions in ``jax.numpy``."""

import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="JAX is not installed (pip install jax)")
import jax.numpy as jnp  # noqa: E402
from jax.test_util import check_grads  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import interop_programs as P  # noqa: E402

import zymase  # noqa: E402
from zymase.errors import DifferentiationError, ZymaseError  # noqa: E402


@pytest.fixture(autouse=True)
def x64():
    before = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", before)


def _rand(*shape, seed=0):
    return jnp.asarray(np.random.default_rng(seed).random(shape))


def heat_jnp(u0, kappa, dt, steps):
    u = u0
    for _ in range(steps):
        lap = jnp.zeros_like(u).at[1:-1].set(u[2:] - 2.0 * u[1:-1] + u[:-2])
        u = u + dt * kappa * lap
    return u, jnp.sum(u * u)


def test_primal_under_jit_matches_numpy():
    op = zymase.to_jax(P.heat)
    u, k = _rand(9), _rand(9, seed=1)
    out, e = jax.jit(lambda u, k: op(u, k, 0.1, 3))(u, k)
    ref = P.heat(np.array(u), np.array(k), 0.1, 3)
    np.testing.assert_allclose(out, ref[0], rtol=1e-14)
    assert e.shape == () and e.dtype == jnp.float64 and abs(float(e) - ref[1]) < 1e-12


def test_derivatives_match_jax_numpy():
    op = zymase.to_jax(P.heat)
    u, k = _rand(9), _rand(9, seed=1)
    ours = lambda u, k: op(u, k, 0.1, 5)[1]  # noqa: E731
    theirs = lambda u, k: heat_jnp(u, k, 0.1, 5)[1]  # noqa: E731
    for a, b in zip(jax.jit(jax.grad(ours, (0, 1)))(u, k), jax.grad(theirs, (0, 1))(u, k)):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    t = _rand(9, seed=2)
    np.testing.assert_allclose(jax.jvp(ours, (u, k), (t, t))[1],
                               jax.jvp(theirs, (u, k), (t, t))[1], rtol=1e-12)
    jr = jax.jacrev(lambda u: op(u, k, 0.1, 5)[0])(u)
    jf = jax.jacfwd(lambda u: op(u, k, 0.1, 5)[0])(u)
    ref = jax.jacrev(lambda u: heat_jnp(u, k, 0.1, 5)[0])(u)
    np.testing.assert_allclose(jr, ref, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(jf, ref, rtol=1e-12, atol=1e-15)


def test_check_grads_first_order_both_modes():
    op = zymase.to_jax(P.heat)
    check_grads(lambda u, k: op(u, k, 0.1, 3), (_rand(6), _rand(6, seed=1)), order=1,
                modes=("fwd", "rev"))


def test_second_order_and_hessian():
    op = zymase.to_jax(P.loss)
    x = _rand(5)
    check_grads(op, (x,), order=2, modes=("rev",))
    np.testing.assert_allclose(jax.jit(jax.hessian(op))(x), zymase.hessian(P.loss)(np.array(x)),
                               rtol=1e-10)
    two = zymase.to_jax(P.heat)
    with pytest.raises(DifferentiationError, match="second derivatives"):
        jax.hessian(lambda u: two(u, _rand(5, seed=1), 0.1, 2)[1])(_rand(5))


def test_vmap_of_primal_and_gradient():
    op = zymase.to_jax(P.loss)
    xs = _rand(4, 5)
    np.testing.assert_allclose(jax.vmap(op)(xs), [P.loss(np.array(x)) for x in xs],
                               rtol=1e-13)
    # the primal is batched by zymase.vmap's compiled loop: one custom call on all examples
    text = jax.jit(jax.vmap(op)).lower(xs).as_text()
    assert "zymase_batched_primal" in text and "zymase_loss_primal" not in text
    heat = zymase.to_jax(P.heat)
    us, k = _rand(6, 9), _rand(9, seed=1)
    u, e = jax.vmap(lambda u: heat(u, k, 0.1, 3), in_axes=1)(us.T)
    want = [P.heat(np.array(x), np.array(k), 0.1, 3) for x in us]
    np.testing.assert_allclose(u, [w[0] for w in want], rtol=1e-14)
    np.testing.assert_allclose(e, [w[1] for w in want], rtol=1e-14)
    g = jax.jit(jax.vmap(jax.grad(op)))(xs)
    np.testing.assert_allclose(g, [zymase.grad(P.loss)(np.array(x)) for x in xs], rtol=1e-12)


def test_several_results_ints_numbers_and_float32():
    op = zymase.to_jax(P.outer_and_count)
    m, mt, n = jax.jit(lambda a, b: op(a, b, 3))(_rand(4), _rand(6, seed=1))
    assert m.shape == (4, 3) and mt.shape == (3, 4) and int(n) == 7
    g = jax.grad(lambda a: jnp.sum(op(a, _rand(6, seed=1), 3)[0]))(_rand(4))
    np.testing.assert_allclose(g, 2.0 * np.sum(np.asarray(_rand(6, seed=1))[:3]), rtol=1e-13)
    sr = zymase.to_jax(P.scale_rows)
    m32 = _rand(3, 4).astype(jnp.float32)
    s = jnp.float32(1.5)
    out = sr(m32, s)
    assert out.dtype == jnp.float32
    gm, gs = jax.grad(lambda m, s: jnp.sum(sr(m, s)), (0, 1))(m32, s)
    np.testing.assert_allclose(gm, 3.0 * np.asarray(m32), rtol=1e-6)
    np.testing.assert_allclose(gs, np.sum(np.asarray(m32) ** 2), rtol=1e-5)


def test_errors():
    with pytest.raises(ZymaseError, match="out_shapes="):
        zymase.to_jax(P.positives)(_rand(5))
    declared = zymase.to_jax(P.positives, out_shapes=lambda s: s)
    # the compiled code finds the real shape differs: XLA raises zymase's message
    with pytest.raises(Exception, match="elements along axis 0 at run time"):
        declared(jnp.array([1.0, -1.0, 2.0])).block_until_ready()
    at = zymase.to_jax(P.at)
    with pytest.raises(Exception, match=r"interop_programs.py:\d+:\d+: IndexError"):
        jax.jit(at)(_rand(3), jnp.int64(7)).block_until_ready()
    np.testing.assert_allclose(at(_rand(3), jnp.int64(1)), 2.0 * np.asarray(_rand(3))[1])


def test_x64_off_needs_float32():
    jax.config.update("jax_enable_x64", False)
    op = zymase.to_jax(P.loss)
    x = jnp.asarray(np.random.default_rng(0).random(4), dtype=jnp.float32)
    np.testing.assert_allclose(op(x), P.loss(np.asarray(x, np.float64)), rtol=1e-5)
    with pytest.raises(ZymaseError, match="jax_enable_x64"):
        zymase.to_jax(P.outer_and_count)(x, x, 2)  # returns an int64


SHARD_MAP = textwrap.dedent("""
    import numpy as np, jax, jax.numpy as jnp, zymase
    from jax.sharding import PartitionSpec as P, NamedSharding
    jax.config.update("jax_enable_x64", True)

    def smooth(x, w):
        out = np.empty_like(x)
        for i in range(x.shape[0]):
            out[i] = np.tanh(w * x[i]) + x[i] ** 2
        return out

    op = zymase.to_jax(smooth)
    mesh = jax.make_mesh((8,), ("d",))
    assert len(jax.devices()) == 8
    x = jax.device_put(jnp.asarray(np.random.default_rng(0).random(64)),
                       NamedSharding(mesh, P("d")))
    per_shard = jax.shard_map(lambda x: op(x, 0.5), mesh=mesh, in_specs=P("d"),
                              out_specs=P("d"))
    ref = lambda x: jnp.tanh(0.5 * x) + x ** 2
    with jax.set_mesh(mesh):
        np.testing.assert_allclose(jax.jit(per_shard)(x), ref(x), rtol=1e-14)
        g = jax.jit(jax.grad(lambda x: jnp.sum(per_shard(x) ** 2)))(x)
        want = jax.grad(lambda x: jnp.sum(ref(x) ** 2))(x)
    np.testing.assert_allclose(g, want, rtol=1e-12)
    assert g.sharding.spec == P("d"), g.sharding
    # each device ran the compiled code on its own block of 8: the custom call's operand
    text = jax.jit(per_shard).lower(x).compile().as_text()
    assert "zymase_smooth_primal" in text and "f64[8]" in text, text
    print("shard_map ok")
""")


def test_shard_map_on_eight_virtual_devices(tmp_path):
    script = tmp_path / "shard.py"
    script.write_text(SHARD_MAP)
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=8")
    r = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0 and "shard_map ok" in r.stdout, r.stderr[-3000:]


def test_written_argument_is_an_output():
    def both(x, out):
        out[:] = x * 2.0
        return np.sum(out)

    op = zymase.to_jax(both, writes="out")
    x, o = _rand(5), _rand(5, seed=1)
    s, out = jax.jit(op)(x, o)
    np.testing.assert_allclose(out, 2.0 * np.asarray(x), rtol=1e-15)
    assert abs(float(s) - 2.0 * float(np.sum(x))) < 1e-12
    check_grads(lambda x, o: op(x, o)[1], (x, o), order=1, modes=("fwd", "rev"))


def test_operands_without_tangents_are_held_constant():
    """jax.grad with respect to one operand runs zymase's reverse mode with only that operand
    active (the others get no shadow); jax.jvp with one tangent, forward mode likewise."""
    op = zymase.to_jax(P.heat, boundscheck=True)  # (an operation of its own: other settings)
    u, k = _rand(9), _rand(9, seed=1)
    g = jax.jit(jax.grad(lambda k: op(u, k, 0.1, 3)[1]))(k)
    t = jax.jvp(lambda k: op(u, k, 0.1, 3)[1], (k,), (jnp.ones(9),))[1]
    (kern,) = op.kernels.values()
    assert set(kern.handlers) == {("primal", ()), ("jvp", (1,)), ("vjp", (1,))}, kern.handlers
    want = jax.grad(lambda k: heat_jnp(u, k, 0.1, 3)[1])(k)
    np.testing.assert_allclose(g, want, rtol=1e-12)
    np.testing.assert_allclose(t, jnp.sum(want), rtol=1e-12)


def test_errors_name_the_users_line_and_no_zymase_path():
    with pytest.raises(ZymaseError) as info:
        zymase.to_jax(P.positives)(_rand(5))  # the line named
    text = str(info.value)
    package = os.path.dirname(zymase.__file__)  # (no path inside zymase in the message)
    assert text.startswith(__file__ + ":") and "out_shapes=" in text and package not in text, \
        text
    with pytest.raises(ZymaseError) as info:
        zymase.to_jax(P.outer_and_count, out_shapes=lambda a, b, n: [(4,), (3, 4), (2,)])(
            _rand(4), _rand(6), 3)
    assert "test_jax.py:" in str(info.value) and "dimensions" in str(info.value)
