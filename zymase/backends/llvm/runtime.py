"""Run-time support written in LLVM IR and linked into every module: allocation and the per-call
arena (allocations that outlive their block are freed when the call returns, unless returned:
``zy.arena_keep`` takes a returned one out), Python's integer ``//``, ``%`` and ``**``, CPython's
float ``%`` and ``//``, complex arithmetic, digamma and trigamma.  (Matrix-product kernels are
emitted on demand: ``matmul.py``.)"""

from __future__ import annotations

from ...ir import special
from .tape import TAPE_RUNTIME
from .types import float_literal

CACHED_MIN, CACHED_MAX = 1 << 18, 1 << 24  # sizes of freed arrays kept (cpu/tape_pool.py)

HEADER = """
declare ptr @malloc(i64)
declare ptr @calloc(i64, i64)
declare ptr @realloc(ptr, i64)
declare void @free(ptr)
attributes #0 = { nounwind }
attributes #1 = { nounwind willreturn memory(none) }
attributes #2 = { nounwind alwaysinline }

declare ptr @zy.alloc_big(i64, i32)  ; (kept buffers: cpu/tape_pool.py, compiled once)
declare void @zy.cache_put(ptr)

define internal ptr @zy.alloc(i64 %n, i32 %zero) #2 {
entry:
  %n1 = call i64 @llvm.umax.i64(i64 %n, i64 1)
  %big = icmp uge i64 %n1, """ + str(CACHED_MIN) + """
  br i1 %big, label %kept, label %fresh
kept:
  %k = call ptr @zy.alloc_big(i64 %n1, i32 %zero)
  ret ptr %k
fresh:
  %z = icmp ne i32 %zero, 0
  br i1 %z, label %c, label %m
c:
  %p = call ptr @calloc(i64 %n1, i64 1)
  ret ptr %p
m:
  %q = call ptr @malloc(i64 %n1)
  ret ptr %q
}

; free an array's memory (%n bytes, or unknown: -1), or keep it for zy.alloc when it is between
; 256 KiB and 16 MiB (8 of them at most: 128 MiB)
define internal void @zy.release(ptr %p, i64 %n) #2 {
entry:
  %unknown = icmp slt i64 %n, 0
  %lo = icmp uge i64 %n, """ + str(CACHED_MIN) + """
  %hi = icmp ule i64 %n, """ + str(CACHED_MAX) + """
  %sized = and i1 %lo, %hi
  %maybe = or i1 %unknown, %sized
  br i1 %maybe, label %keep, label %drop
keep:
  call void @zy.cache_put(ptr %p)
  ret void
drop:
  call void @free(ptr %p)
  ret void
}

define internal void @zy.arena_free_all(ptr %ctx) #0 {
entry:
  %bufp = getelementptr i8, ptr %ctx, i64 24
  %lenp = getelementptr i8, ptr %ctx, i64 32
  %len = load i64, ptr %lenp
  %buf = load ptr, ptr %bufp
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%i1, %body]
  %more = icmp slt i64 %i, %len
  br i1 %more, label %body, label %done
body:
  %slot = getelementptr ptr, ptr %buf, i64 %i
  %p = load ptr, ptr %slot
  call void @zy.release(ptr %p, i64 -1)
  %i1 = add i64 %i, 1
  br label %loop
done:
  call void @free(ptr %buf)
  store ptr null, ptr %bufp
  store i64 0, ptr %lenp
  ret void
}

; take %p (a returned array's memory) out of the arena: it now belongs to the caller
define internal void @zy.arena_keep(ptr %ctx, ptr %p) #0 {
entry:
  %none = icmp eq ptr %p, null
  br i1 %none, label %done, label %start
start:
  %bufp = getelementptr i8, ptr %ctx, i64 24
  %lenp = getelementptr i8, ptr %ctx, i64 32
  %len = load i64, ptr %lenp
  %buf = load ptr, ptr %bufp
  br label %loop
loop:  ; from the end: results are allocated late
  %i = phi i64 [%len, %start], [%i1, %next]
  %more = icmp sgt i64 %i, 0
  br i1 %more, label %body, label %done
body:
  %i1 = sub i64 %i, 1
  %slot = getelementptr ptr, ptr %buf, i64 %i1
  %q = load ptr, ptr %slot
  %hit = icmp eq ptr %q, %p
  br i1 %hit, label %take, label %next
next:
  br label %loop
take:
  %last = sub i64 %len, 1
  %lastp = getelementptr ptr, ptr %buf, i64 %last
  %moved = load ptr, ptr %lastp
  store ptr %moved, ptr %slot
  store i64 %last, ptr %lenp
  br label %done
done:
  ret void
}

define internal void @zy.arena_push(ptr %ctx, ptr %p) #0 {
  %bufp = getelementptr i8, ptr %ctx, i64 24
  %lenp = getelementptr i8, ptr %ctx, i64 32
  %capp = getelementptr i8, ptr %ctx, i64 40
  %len = load i64, ptr %lenp
  %cap = load i64, ptr %capp
  %full = icmp eq i64 %len, %cap
  br i1 %full, label %grow, label %put
grow:
  %twice = mul i64 %cap, 2
  %nc = call i64 @llvm.umax.i64(i64 %twice, i64 16)
  %old = load ptr, ptr %bufp
  %nbytes = mul i64 %nc, 8
  %nb = call ptr @realloc(ptr %old, i64 %nbytes)
  store ptr %nb, ptr %bufp
  store i64 %nc, ptr %capp
  br label %put
put:
  %b = load ptr, ptr %bufp
  %slot = getelementptr ptr, ptr %b, i64 %len
  store ptr %p, ptr %slot
  %len1 = add i64 %len, 1
  store i64 %len1, ptr %lenp
  ret void
}
"""

INT_TEMPLATE = """
define internal {t} @zy.floordiv.{n}({t} %a, {t} %b) #2 {{
  %m1 = icmp eq {t} %b, -1
  br i1 %m1, label %neg, label %div
neg:
  %n = sub {t} 0, %a
  ret {t} %n
div:
  %q = sdiv {t} %a, %b
  %r = srem {t} %a, %b
  %rnz = icmp ne {t} %r, 0
  %x = xor {t} %r, %b
  %sgn = icmp slt {t} %x, 0
  %adj = and i1 %rnz, %sgn
  %q1 = sub {t} %q, 1
  %res = select i1 %adj, {t} %q1, {t} %q
  ret {t} %res
}}

define internal {t} @zy.mod.{n}({t} %a, {t} %b) #2 {{
  %m1 = icmp eq {t} %b, -1
  br i1 %m1, label %zero, label %div
zero:
  ret {t} 0
div:
  %r = srem {t} %a, %b
  %rnz = icmp ne {t} %r, 0
  %x = xor {t} %r, %b
  %sgn = icmp slt {t} %x, 0
  %adj = and i1 %rnz, %sgn
  %r1 = add {t} %r, %b
  %res = select i1 %adj, {t} %r1, {t} %r
  ret {t} %res
}}

define internal {t} @zy.powi.{n}({t} %a, {t} %b) #0 {{
entry:
  br label %loop
loop:
  %r = phi {t} [1, %entry], [%r2, %body]
  %x = phi {t} [%a, %entry], [%x2, %body]
  %e = phi {t} [%b, %entry], [%e2, %body]
  %done = icmp eq {t} %e, 0
  br i1 %done, label %exit, label %body
body:
  %bit = and {t} %e, 1
  %odd = icmp ne {t} %bit, 0
  %rm = mul {t} %r, %x
  %r2 = select i1 %odd, {t} %rm, {t} %r
  %x2 = mul {t} %x, %x
  %e2 = lshr {t} %e, 1
  br label %loop
exit:
  ret {t} %r
}}
"""

FLOAT_TEMPLATE = """
define internal {t} @zy.pymod.{n}({t} %x, {t} %w) #2 {{
  ; frem, not a call of fmod: instcombine folds fmod(x * 0.0, w) to 0 for w != 0, though it is
  ; nan when x is infinite
  %mod = frem {t} %x, %w
  %nz = fcmp une {t} %mod, 0.0
  %wneg = fcmp olt {t} %w, 0.0
  %mneg = fcmp olt {t} %mod, 0.0
  %diff = xor i1 %wneg, %mneg
  %adj = and i1 %nz, %diff
  %madj = fadd {t} %mod, %w
  %m1 = select i1 %adj, {t} %madj, {t} %mod
  %z = call {t} @llvm.copysign.{s}({t} 0.0, {t} %w)
  %res = select i1 %nz, {t} %m1, {t} %z
  ret {t} %res
}}

define internal {t} @zy.pyfloordiv.{n}({t} %x, {t} %w) #2 {{
  %mod = frem {t} %x, %w
  %sub = fsub {t} %x, %mod
  %div = fdiv {t} %sub, %w
  %nz = fcmp une {t} %mod, 0.0
  %wneg = fcmp olt {t} %w, 0.0
  %mneg = fcmp olt {t} %mod, 0.0
  %diff = xor i1 %wneg, %mneg
  %adj = and i1 %nz, %diff
  %dm1 = fsub {t} %div, 1.0
  %d = select i1 %adj, {t} %dm1, {t} %div
  %dnz = fcmp une {t} %d, 0.0
  %fl = call {t} @llvm.floor.{s}({t} %d)
  %gap = fsub {t} %d, %fl
  %up = fcmp ogt {t} %gap, 0.5
  %fl1 = fadd {t} %fl, 1.0
  %f2 = select i1 %up, {t} %fl1, {t} %fl
  %q = fdiv {t} %x, %w
  %z = call {t} @llvm.copysign.{s}({t} 0.0, {t} %q)
  %res = select i1 %dnz, {t} %f2, {t} %z
  %w0 = fcmp oeq {t} %w, 0.0
  %np = select i1 %w0, {t} %q, {t} %res
  ret {t} %np
}}
"""

COMPLEX_TEMPLATE = """
define internal {c} @zy.cfadd.{n}({c} %a, {c} %b) #2 {{
  %ar = extractvalue {c} %a, 0
  %ai = extractvalue {c} %a, 1
  %br = extractvalue {c} %b, 0
  %bi = extractvalue {c} %b, 1
  %r = fadd {t} %ar, %br
  %i = fadd {t} %ai, %bi
  %x = insertvalue {c} poison, {t} %r, 0
  %y = insertvalue {c} %x, {t} %i, 1
  ret {c} %y
}}

define internal {c} @zy.cfsub.{n}({c} %a, {c} %b) #2 {{
  %ar = extractvalue {c} %a, 0
  %ai = extractvalue {c} %a, 1
  %br = extractvalue {c} %b, 0
  %bi = extractvalue {c} %b, 1
  %r = fsub {t} %ar, %br
  %i = fsub {t} %ai, %bi
  %x = insertvalue {c} poison, {t} %r, 0
  %y = insertvalue {c} %x, {t} %i, 1
  ret {c} %y
}}

define internal {c} @zy.cfmul.{n}({c} %a, {c} %b) #2 {{
  %ar = extractvalue {c} %a, 0
  %ai = extractvalue {c} %a, 1
  %br = extractvalue {c} %b, 0
  %bi = extractvalue {c} %b, 1
  %rr = fmul {t} %ar, %br
  %ii = fmul {t} %ai, %bi
  %ri = fmul {t} %ar, %bi
  %ir = fmul {t} %ai, %br
  %r = fsub {t} %rr, %ii
  %i = fadd {t} %ri, %ir
  %x = insertvalue {c} poison, {t} %r, 0
  %y = insertvalue {c} %x, {t} %i, 1
  ret {c} %y
}}

define internal {c} @zy.cfdiv.{n}({c} %a, {c} %b) #2 {{
entry:
  %ar = extractvalue {c} %a, 0
  %ai = extractvalue {c} %a, 1
  %br = extractvalue {c} %b, 0
  %bi = extractvalue {c} %b, 1
  %abr = call {t} @llvm.fabs.{s}({t} %br)
  %abi = call {t} @llvm.fabs.{s}({t} %bi)
  %big = fcmp oge {t} %abr, %abi
  br i1 %big, label %real, label %imag
real:
  %rat = fdiv {t} %bi, %br
  %t1 = fmul {t} %bi, %rat
  %den = fadd {t} %br, %t1
  %n1 = fmul {t} %ai, %rat
  %n2 = fadd {t} %ar, %n1
  %r1 = fdiv {t} %n2, %den
  %n3 = fmul {t} %ar, %rat
  %n4 = fsub {t} %ai, %n3
  %i1 = fdiv {t} %n4, %den
  br label %done
imag:
  %rat2 = fdiv {t} %br, %bi
  %t2 = fmul {t} %br, %rat2
  %den2 = fadd {t} %bi, %t2
  %m1 = fmul {t} %ar, %rat2
  %m2 = fadd {t} %m1, %ai
  %r2 = fdiv {t} %m2, %den2
  %m3 = fmul {t} %ai, %rat2
  %m4 = fsub {t} %m3, %ar
  %i2 = fdiv {t} %m4, %den2
  br label %done
done:
  %r = phi {t} [%r1, %real], [%r2, %imag]
  %i = phi {t} [%i1, %real], [%i2, %imag]
  %x = insertvalue {c} poison, {t} %r, 0
  %y = insertvalue {c} %x, {t} %i, 1
  ret {c} %y
}}
"""


def _horner(prefix: str, coeffs, q: str) -> tuple[list[str], str]:
    """LLVM lines computing sum_k coeffs[k] q^k (Horner), returning (lines, result name)."""
    lines, acc = [], float_literal(coeffs[-1])
    for k in range(len(coeffs) - 2, -1, -1):
        lines.append(f"  %{prefix}m{k} = fmul double {q}, {acc}")
        lines.append(f"  %{prefix}a{k} = fadd double %{prefix}m{k}, {float_literal(coeffs[k])}")
        acc = f"%{prefix}a{k}"
    return lines, acc


def _pos_function(name: str, step_lines: list[str], tail: list[str]) -> str:
    head = [f"define internal double @zy.{name}.pos(double %x0) #0 {{", "entry:",
            "  br label %loop", "loop:",
            "  %x = phi double [%x0, %entry], [%x1, %body]",
            "  %acc = phi double [0.0, %entry], [%acc1, %body]",
            f"  %small = fcmp olt double %x, {float_literal(special.SHIFT)}",
            "  br i1 %small, label %body, label %series", "body:", *step_lines,
            "  %x1 = fadd double %x, 1.0", "  br label %loop", "series:",
            "  %inv = fdiv double 1.0, %x", "  %q = fmul double %inv, %inv"]
    return "\n".join(head + tail + ["}"])


def _special_ir() -> str:
    """digamma and trigamma (see zymase/ir/special.py for the method and the coefficients)."""
    d_lines, d_acc = _horner("d", special.DIGAMMA_SERIES, "%q")
    digamma = _pos_function("digamma", ["  %r = fdiv double 1.0, %x",
                                         "  %acc1 = fsub double %acc, %r"],
                            d_lines + [f"  %ser = fmul double %q, {d_acc}",
                                       "  %lg = call double @llvm.log.f64(double %x)",
                                       "  %half = fmul double %inv, 0.5",
                                       "  %r1 = fsub double %lg, %half",
                                       "  %r2 = fsub double %r1, %ser",
                                       "  %res = fadd double %acc, %r2", "  ret double %res"])
    t_lines, t_acc = _horner("t", special.TRIGAMMA_SERIES, "%q")
    trigamma = _pos_function("trigamma", ["  %sq = fmul double %x, %x",
                                          "  %r = fdiv double 1.0, %sq",
                                          "  %acc1 = fadd double %acc, %r"],
                             t_lines + ["  %p3 = fmul double %q, %inv",
                                        f"  %ser = fmul double %p3, {t_acc}",
                                        "  %h = fmul double %q, 0.5",
                                        "  %r1 = fadd double %inv, %h",
                                        "  %r2 = fadd double %r1, %ser",
                                        "  %res = fadd double %acc, %r2", "  ret double %res"])
    return "\n".join([digamma, trigamma, REFLECT.format(name="digamma", fn="tan",
                                                          combine=DIGAMMA_REFLECT),
                      REFLECT.format(name="trigamma", fn="sin", combine=TRIGAMMA_REFLECT)])


PI = float_literal(3.141592653589793)
DIGAMMA_REFLECT = f"""  %c = fdiv double {PI}, %t
  %res = fsub double %r, %c"""  # psi(x) = psi(1 - x) - pi / tan(pi x)
TRIGAMMA_REFLECT = f"""  %c = fdiv double {PI}, %t
  %c2 = fmul double %c, %c
  %res = fsub double %c2, %r"""  # psi1(x) = pi^2 / sin^2(pi x) - psi1(1 - x)
REFLECT = """
define internal double @zy.{name}(double %x) #0 {{
entry:
  %nan = fcmp uno double %x, %x
  %le0 = fcmp ole double %x, 0.0
  %fl = call double @llvm.floor.f64(double %x)
  %int = fcmp oeq double %x, %fl
  %pole = and i1 %le0, %int
  %bad = or i1 %nan, %pole
  br i1 %bad, label %isnan, label %ok
isnan:
  ret double 0x7FF8000000000000
ok:
  %neg = fcmp olt double %x, 0.0
  br i1 %neg, label %reflect, label %pos
reflect:
  %om = fsub double 1.0, %x
  %r = call double @zy.{name}.pos(double %om)
  %pix = fmul double %x, """ + PI + """
  %t = call double @llvm.{fn}.f64(double %pix)
{combine}
  ret double %res
pos:
  %p = call double @zy.{name}.pos(double %x)
  ret double %p
}}
"""


def int_runtime(t) -> str:
    """The floor division, modulo and power functions of int type ``t`` (i16, u8, ...)."""
    return INT_TEMPLATE.format(t="i" + str(t)[1:], n=str(t))


def runtime_ir() -> str:
    parts = [HEADER, _special_ir(), TAPE_RUNTIME]
    for n in ("i64", "i32"):  # (the other int types' copies: ``int_runtime``, when used)
        parts.append(INT_TEMPLATE.format(t="i" + n[1:], n=n))
    for t, n in (("double", "f64"), ("float", "f32")):
        parts.append(FLOAT_TEMPLATE.format(t=t, n=n, s=n))
    for c, t, n, s in (("{double, double}", "double", "c128", "f64"),
                       ("{float, float}", "float", "c64", "f32")):
        parts.append(COMPLEX_TEMPLATE.format(c=c, t=t, n=n, s=s))
    return "\n".join(parts)
