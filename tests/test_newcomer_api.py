"""What a newcomer passes to the transforms: mistakes refused at the call with what to do
(transforms of transforms, non-functions, NumPy functions given directly, results reverse mode
cannot seed, has_aux without a pair, typos in disable=, complex directions for real inputs, a
module edited after import), and the forms that work (functools.partial, lists for argnums)."""

import functools
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import zymase

HERE = "test_newcomer_api.py:"


def refused(call, cls=zymase.ZymaseError) -> str:
    with pytest.raises(cls) as info:
        call()
    msg = str(info.value)
    assert " object at 0x" not in msg and os.path.dirname(zymase.__file__) not in msg, msg
    return msg


def _square(x):
    return (x * x).sum()


def _power(x, p=2.0, scale=1.0):
    return (x ** p).sum() * scale


@pytest.mark.parametrize("outer", [zymase.grad, zymase.jit, zymase.jacfwd, zymase.jacrev])
def test_a_transform_of_a_transform_is_refused_with_what_to_write(outer):
    msg = refused(lambda: outer(zymase.grad(_square))(np.ones(3)))
    assert HERE in msg and "zymase.hessian(f)" in msg, msg


def test_things_that_are_not_python_functions():
    assert "the float 3.0" in refused(lambda: zymase.grad(3.0)(1.0))
    msg = refused(lambda: zymase.grad(np.sin)(1.0))
    assert "lambda x: np.sin(x)" in msg and HERE in msg, msg
    msg = refused(lambda: zymase.jit(np.sum)(np.ones(2)))
    assert "lambda x: np.sum(x)" in msg, msg

    class Model:
        def __call__(self, x):
            return 2.0 * x

    msg = refused(lambda: zymase.grad(Model())(1.0))
    assert "a Model object" in msg and "plain function" in msg, msg


def test_functools_partial_and_lru_cache_functions_compile():
    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(zymase.grad(functools.partial(_power, p=3.0))(x), 3 * x ** 2)
    np.testing.assert_allclose(zymase.grad(functools.partial(_power, scale=2.0))(x), 4 * x)
    assert zymase.jit(functools.partial(_power, x, 3.0))(scale=2.0) == _power(x, 3.0, 2.0)

    @functools.lru_cache
    def cube(v):
        return v * v * v

    assert zymase.grad(cube)(2.0) == 12.0


def test_argnums_as_a_list_is_a_tuple():
    assert zymase.grad(lambda x, y: x * y, argnums=[0, 1])(1.0, 2.0) == (2.0, 1.0)
    jx, jy = zymase.jacrev(lambda x, y: x * y, argnums=[0, 1])(np.ones(2), 2 * np.ones(2))
    np.testing.assert_allclose(jx, 2 * np.eye(2))
    np.testing.assert_allclose(jy, np.eye(2))


def test_has_aux_needs_a_pair():
    x = np.ones(3)
    msg = refused(lambda: zymase.grad(lambda v: (v.sum(), 1.0, 2.0), has_aux=True)(x))
    assert "a pair (value, aux)" in msg and "a tuple of 3" in msg and HERE in msg, msg
    msg = refused(lambda: zymase.value_and_grad(lambda v: v.sum(), has_aux=True)(x))
    assert "a pair (value, aux)" in msg and "float64 scalar" in msg, msg


def test_reverse_autodiff_refuses_results_it_cannot_seed():
    x, dx = np.arange(1.0, 4.0), np.zeros(3)
    msg = refused(lambda: zymase.autodiff(zymase.Reverse, lambda a: a * 2.0,
                                          zymase.Duplicated(x, dx)))
    assert "returns an array" in msg and "Duplicated(out, dout)" in msg and HERE in msg, msg
    msg = refused(lambda: zymase.autodiff(zymase.Reverse, lambda a, k: a[0] * k,
                                          zymase.Const(x), zymase.Duplicated(2.0, 0.0)))
    assert "argument `k`" in msg and "Active(2.0)" in msg, msg
    msg = refused(lambda: zymase.autodiff("reverse", _square, x))
    assert "zymase.Reverse" in msg, msg

    def into(out, a):  # writes its result: the Enzyme style still works
        for i in range(a.shape[0]):
            out[i] = a[i] * a[i]

    out, dout, da = np.zeros(3), np.ones(3), np.zeros(3)
    zymase.autodiff(zymase.Reverse, into, zymase.Duplicated(out, dout), zymase.Duplicated(x, da))
    np.testing.assert_allclose(da, 2 * x)


def test_tape_report_of_a_non_scalar_function_is_refused_not_a_crash():
    msg = refused(lambda: zymase.tape_report(lambda a: a * 2.0, np.ones(4)))
    assert "real float scalar" in msg and "returns an array" in msg, msg


def test_disable_names_are_checked():
    with pytest.raises(ValueError, match="'typo'.*it takes .*licm"):
        zymase.grad(_square, disable={"typo"})
    with pytest.raises(ValueError, match="'nonsense'"):
        zymase.jit(_square, disable={"nonsense"})
    with pytest.raises(TypeError, match=r"disable=\{'fuse'\}"):
        zymase.jit(_square, disable="fuse")
    assert zymase.grad(lambda v: v * v, disable={"licm", "mincut", "vector-math"})(3.0) == 6.0


def test_complex_directions_for_real_inputs_are_refused():
    msg = refused(lambda: zymase.jvp(lambda a: a * 2.0, (np.ones(3),), (1j * np.ones(3),)))
    assert "complex tangent" in msg and HERE in msg, msg


def test_missing_arguments_are_located_and_hvp_names_the_vector():
    msg = refused(lambda: zymase.grad(_power)(), TypeError)
    assert HERE in msg and "missing a required argument: 'x'" in msg, msg
    msg = refused(lambda: zymase.hvp(lambda a, b: (a * b).sum())(np.ones(2)))
    assert "then the vector v" in msg, msg


def test_a_module_edited_after_import_is_refused_until_reloaded(tmp_path):
    (tmp_path / "edited_mod.py").write_text("import numpy as np\ndef f(x):\n"
                                            "    return np.sum(3.0 * x)\n")
    script = textwrap.dedent("""
        import importlib, numpy as np, zymase, edited_mod
        open("edited_mod.py", "w").write("import numpy as np\\ndef f(x):\\n"
                                         "    return np.sum(5.0 * x)\\n")
        try:
            zymase.grad(edited_mod.f)(np.ones(2))
            print("compiled")
        except zymase.UnsupportedError as e:
            print("refused:", e)
        importlib.reload(edited_mod)
        print(zymase.grad(edited_mod.f)(np.ones(2)))
    """)
    run = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "refused:" in run.stdout and "importlib.reload" in run.stdout, run.stdout
    assert run.stdout.strip().endswith("[5. 5.]"), run.stdout


def _reshape_argument(a):
    a.shape = (2, 2)
    return a.sum(axis=0)


def _reshape_copy(a):
    b = a.copy()
    b.shape = (2, 2)
    return b.sum(axis=0)


def test_shape_assignment_to_a_parameter_is_refused_a_local_array_works():
    msg = refused(lambda: zymase.jit(_reshape_argument)(np.arange(4.0)))
    assert "would reshape the caller's array" in msg and "a = a.reshape(...)" in msg, msg
    assert HERE in msg, msg
    np.testing.assert_array_equal(zymase.jit(_reshape_copy)(np.arange(4.0)),
                                  _reshape_copy(np.arange(4.0)))


def _affine_loss(x, w, b=0.5):
    return ((x * w).sum() + b) ** 2


_W = np.array([0.3, 0.1, -0.7])
_BOUND = functools.partial(_affine_loss, w=_W)


@functools.lru_cache(maxsize=None)
def _coefficient(n):
    return 1.0 / (n + 1)


def _calls_the_partial(x):
    return _BOUND(x) * 2.0


def _calls_the_cached(x):
    return x * _coefficient(3)


def test_partials_and_cached_functions_called_from_compiled_code_and_vmap():
    x = np.array([1.0, -2.0, 0.5])
    want = 2.0 * 2.0 * ((x * _W).sum() + 0.5) * _W
    np.testing.assert_allclose(zymase.grad(_calls_the_partial)(x), want, rtol=1e-12)
    assert zymase.grad(_calls_the_cached)(2.0) == 0.25
    xs = np.stack([x, 2.0 * x])
    np.testing.assert_allclose(zymase.vmap(_BOUND)(xs), [_affine_loss(r, _W) for r in xs])
    np.testing.assert_allclose(zymase.vmap(zymase.grad(_BOUND))(xs),
                               [2.0 * ((r * _W).sum() + 0.5) * _W for r in xs], rtol=1e-12)


def test_argnums_counts_positional_parameters_only():
    x = np.array([1.0, -2.0, 0.5])
    msg = refused(lambda: zymase.grad(_BOUND, argnums=1)(x))  # w is bound: a constant
    assert "out of range for the 1 positional parameters" in msg and HERE in msg, msg
    np.testing.assert_allclose(zymase.grad(_BOUND)(x), 2.0 * ((x * _W).sum() + 0.5) * _W)
