"""Every differentiable op and construct, through forward and reverse mode, from one table.

Each row is (name, program, arguments[, check_grads options]); ``check_grads`` compares
``zymase.jvp`` and ``zymase.grad`` with central differences of the same program run by CPython,
and the two modes with each other (the projection identity).  ``test_rule_coverage`` fails when a
derivative rule in ``zymase.autodiff.rules`` has no row whose compiled IR uses its op, so a new
rule comes with a row here.
"""

from __future__ import annotations

import os
import weakref

import numpy as np
import programs as P
import pytest
from ad_check import check_grads, is_active

import zymase
import zymase.driver.cache
from zymase.autodiff.rules import LINEAR, PARTIALS

POS2 = np.array([1.2, 0.6, 1.5, 0.8, 1.9])  # positive
SGN = np.array([-0.8, 0.45, 1.3, -1.6, 0.2])  # signed, away from 0 and from POS2
MAT = np.array(
    [[0.5, -1.2, 0.3, 0.8, 1.1], [1.4, 0.2, -0.7, 0.6, -0.3], [-0.9, 0.4, 1.0, -0.2, 0.7]]
)
MAT2 = np.array([[0.3, -0.5], [1.1, 0.4], [-0.6, 0.9], [0.2, 0.8], [0.7, -1.3]])


def row(name, fn, *args, **opts):
    marks = opts.pop("marks", ())
    return pytest.param(fn, args, opts, id=name, marks=marks)


CASES = [
    # scalar arithmetic
    row("add", P.add, 1.3, -0.4),
    row("sub", P.sub, 1.3, -0.4),
    row("mul", P.mul, 1.3, -0.4),
    row("div", P.div, 1.3, -0.4),
    row("neg", P.neg, 1.3, -0.4),
    row("pow_int", P.pow_int, 1.3),
    row("pow_negint", P.pow_negint, 1.3),
    row("pow_float", P.pow_float, 1.3),
    row("pow_half", P.pow_half, 1.3),
    row("pow_xy", P.pow_xy, 1.3, 0.7),
    row("pow_const_base", P.pow_const_base, 1.3),
    row("pow_builtin", P.pow_builtin, 1.3, 2.2),
    row("pow_negative_base", P.pow_negative_base, -1.3),
    row("pow_zero_base", P.pow_zero_base, 0.0),
    row("mod", P.mod, 2.7, 1.1),
    row("mod_negative", P.mod, -2.7, 1.1),
    row("mod_negative_divisor", P.mod, 2.7, -1.1),
    row("mod_const", P.mod_const, 1.9),
    row("floordiv", P.floordiv, 2.7, 1.1),
    # math module
    row("sqrt", P.m_sqrt, 2.3),
    row("exp", P.m_exp, 0.7),
    row("log", P.m_log, 1.9),
    row("log_base", P.m_log_base, 1.9, 3.0),
    row("log1p", P.m_log1p, 0.4),
    row("expm1", P.m_expm1, 0.3),
    row("log10", P.m_log10, 2.2),
    row("log2", P.m_log2, 3.1),
    row("sin", P.m_sin, 0.9),
    row("cos", P.m_cos, 0.9),
    row("tan", P.m_tan, 0.4),
    row("asin", P.m_asin, 0.3),
    row("acos", P.m_acos, 0.3),
    row("atan", P.m_atan, 0.8),
    row("atan2", P.m_atan2, 0.6, -1.1),
    row("sinh", P.m_sinh, 0.8),
    row("cosh", P.m_cosh, 0.8),
    row("tanh", P.m_tanh, 0.8),
    row("asinh", P.m_asinh, 0.9),
    row("acosh", P.m_acosh, 1.7),
    row("atanh", P.m_atanh, 0.4),
    row("fabs", P.m_fabs, -1.3),
    row("erf", P.m_erf, 0.6),
    row("erfc", P.m_erfc, 0.6),
    row("lgamma", P.m_lgamma, 2.7),
    row("lgamma_small", P.m_lgamma, 0.3),
    row("gamma", P.m_gamma, 2.7),
    row("hypot", P.m_hypot, 0.6, -1.1),
    row("copysign", P.m_copysign, -1.3, 0.8),
    row("math_pow", P.m_pow, 1.3, 2.2),
    row("fmod", P.m_fmod, 2.7, 1.1),
    row("fmod_negative", P.m_fmod, -2.7, 1.1),
    row("floor_ceil", P.m_floor, 1.3, 2.6),
    # builtins and selects
    row("abs", P.b_abs, -1.3),
    row("min", P.b_min, 0.6, 1.4),
    row("max", P.b_max, 0.6, 1.4),
    row("cond_true", P.cond_expr, 1.5, 0.7),
    row("cond_false", P.cond_expr, 0.3, 0.9),
    row("if_then", P.if_branches, 1.5, 0.9),
    row("if_else", P.if_branches, 0.5, 0.9),
    row("round", P.round_float, 1.2312),
    # NumPy elementwise
    row("np_arith", P.np_arith, SGN, POS2),
    row("np_neg", P.np_neg, SGN, POS2),
    row("np_pow", P.np_pow, SGN, POS2),
    row("np_maximum", P.np_maximum, SGN, POS2),
    row("np_where", P.np_where, SGN, POS2 - 0.5),
    row("np_unary", P.np_unary, SGN, POS2),
    row("np_unary2", P.np_unary2, SGN, POS2),
    row("np_trig", P.np_trig, SGN, POS2),
    row("np_clip", P.np_clip, SGN, POS2),
    row("np_mod", P.np_mod, SGN, POS2),
    row("np_hypot", P.np_hypot, SGN, POS2),
    row("np_misc", P.np_misc, SGN, POS2),
    # broadcasting, views, shapes
    row("broadcast_scalar", P.bcast_scalar, SGN, 0.7),
    row("broadcast_2d", P.bcast_2d, MAT, SGN),
    row("views", P.views, np.r_[SGN, 0.6, 1.7], MAT),
    row("shapes", P.shapes, SGN, POS2),
    row("cumsum_cumprod", P.scans, SGN),
    row("gather_repeats", P.gather, SGN, np.array([0, 3, 3, 1, 4, 0])),
    # reductions and products
    row("sum_mean", P.r_sum_mean, SGN, POS2),
    row("prod", P.r_prod, SGN),
    row("prod_with_zero", P.r_prod, np.array([0.7, 0.0, -1.3, 0.9])),
    row("max_min", P.r_max_min, SGN, POS2),
    row("norm", P.r_norm, SGN),
    row("dot", P.r_dot, SGN, POS2),
    row("axis", P.r_axis, MAT),
    row("matmul_2d", P.mm_2d, MAT, MAT2),
    row("matmul_1d", P.mm_1d, MAT, SGN),
    row("matmul_norm", P.mm_norm, MAT),
    row("linalg_misc", P.linalg_misc, MAT, SGN),
    # casts
    row("f32_roundtrip", P.cast_f32_roundtrip, SGN, eps=0.5, rtol=1e-5, mode_rtol=1e-6),
    row("f32_array", P.cast_f32_arith, SGN.astype(np.float32)),
    row("f32_to_f64", P.cast_f32_to_f64, SGN.astype(np.float32)),
    row("f32_scalar", P.cast_scalar_f32, 1.3, eps=1e-2, rtol=1e-4, mode_rtol=1e-6),
    row("int_to_float", P.cast_int_to_float, 1.3, 4),
    # complex intermediates, real inputs and output
    row("complex_abs", P.c_abs_product, 0.7, -0.4),
    row("complex_exp", P.c_exp_real, SGN),
    row("complex_conj", P.c_conj, SGN, POS2),
    row("complex_parts", P.c_parts, 0.7, -0.4),
    row("complex_funcs", P.c_funcs, 0.7, -0.4),
    row("complex_abs_array", P.c_abs_array, SGN, POS2),
    row("complex_pow", P.c_pow, 0.7, -0.4),
    # loops and calls
    row("loop_series", P.loop_series, 0.5, 8),
    row("calls_helper", P.calls_helper, 0.5, 1.2),
]


@pytest.mark.parametrize("fn,args,opts", CASES)
def test_op(fn, args, opts):
    check_grads(fn, args, **opts)


# ---------------------------------------------------------------------- rule coverage

# ops that only derivative rules emit (no Python or NumPy function lowers to them), with the row
# whose reverse-mode IR must contain them
DERIVATIVE_ONLY = {"math.digamma": "lgamma"}


def primal_ops(fn, args, reverse=False) -> set[str]:
    """Op names of ``fn``'s optimized IR for ``args`` (the IR AD starts from), or of its
    reverse-mode derivative; lowered and optimized only (no machine code)."""
    from zymase.autodiff.reverse import grad_function
    from zymase.frontend.args import param_template
    from zymase.frontend.module import ModuleLowerer
    from zymase.options import Options
    from zymase.passes.pipeline import run_pipeline

    ml = ModuleLowerer(Options())
    func = ml.lower_entry(fn, [param_template(a, "argument") for a in args])
    run_pipeline(ml.module)
    if reverse:
        active = [k for k, a in enumerate(args) if is_active(a)]
        grad_function(ml.module, ml.module[func.sym_name], active, [0])
    return {op.name for op in ml.module.walk()}


def test_rule_coverage():
    seen: dict[str, str] = {}
    for p in CASES:
        fn, args, _ = p.values
        for name in primal_ops(fn, args):
            seen.setdefault(name, p.id)
    for op, case_id in DERIVATIVE_ONLY.items():
        fn, args, _ = next(p.values for p in CASES if p.id == case_id)
        assert op in primal_ops(fn, args, reverse=True), f"{op} not in the derivative of {case_id}"
        seen.setdefault(op, case_id)
    missing = sorted((set(PARTIALS) | set(LINEAR)) - set(seen))
    assert not missing, f"derivative rules with no row in test_ops.CASES: {missing}"


# ---------------------------------------------------------------------- errors


def _line_of(path, marker: str) -> int:
    with open(path) as f:
        return next(k + 1 for k, text in enumerate(f) if marker in text)


def _names_line(msg: str, path: str, marker: str) -> bool:
    return f"{os.path.basename(path)}:{_line_of(path, marker)}:" in msg


def test_grad_of_int_argument_names_the_call():
    with pytest.raises(zymase.DifferentiationError) as info:
        zymase.grad(P.int_times, 1)(0.5, 3)  # ERR int-grad
    msg = str(info.value)
    assert _names_line(msg, __file__, "# ERR int-grad"), msg
    assert "int" in msg and "argument `n`" in msg, msg


def test_jvp_with_int_tangent_names_the_call():
    with pytest.raises(zymase.DifferentiationError) as info:
        zymase.jvp(P.int_times, (0.5, 3), (1.0, 1))  # ERR int-jvp
    assert _names_line(str(info.value), __file__, "# ERR int-jvp"), str(info.value)


def test_grad_of_array_result_asks_for_a_scalar():
    with pytest.raises(zymase.DifferentiationError) as info:
        zymase.grad(P.returns_array)(np.ones(3))
    msg = str(info.value)
    assert "scalar" in msg, msg
    assert _names_line(msg, P.__file__, "the line DifferentiationError names"), msg


def test_every_scalar_op_has_a_rule():
    """Ops Python or NumPy code lowers to all have a rule, so no program reaches the "no
    derivative rule" error; math.trigamma has none but only the rule of math.digamma (itself only
    made by the rule of math.lgamma) would emit it, and second derivatives are not exposed."""
    from zymase.autodiff.rules import has_rule
    from zymase.ir.ops import arith, complex, math

    names = {
        cls.name
        for mod in (arith, complex, math)
        for cls in vars(mod).values()
        if isinstance(cls, type) and getattr(cls, "name", None)
    }
    assert {n for n in names if not has_rule(n)} <= {"math.trigamma"}


@pytest.mark.parametrize("mode", ["fwd", "rev"])
def test_missing_rule_names_the_line(monkeypatch, mode):
    monkeypatch.delitem(PARTIALS, "math.erf")
    monkeypatch.setattr(zymase.driver.cache, "_SHARED", weakref.WeakKeyDictionary())
    with pytest.raises(zymase.DifferentiationError) as info:
        if mode == "fwd":
            zymase.jvp(P.uses_erf, (0.6,), (1.0,))
        else:
            zymase.grad(P.uses_erf)(0.6)
    msg = str(info.value)
    assert "math.erf" in msg and _names_line(msg, P.__file__, "a missing rule must name"), msg
