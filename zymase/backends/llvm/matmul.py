"""Matrix-product kernels in LLVM IR: ``linalg.matmul`` calls ``@zy.matmul.<ranks>.<dtype>``
(``.acc`` when it adds to its output).

The kernel sees every operand as a strided 2-D matrix (a vector as one row or column), a stack
as one such matrix per batch index, and picks one of two paths at run time:

* BLAS, when the target has it for the element type and the product is big enough: gemm for
  matrix @ matrix, gemv for matrix @ vector and vector @ matrix (``x @ B`` is ``B^T x``).  A matrix
  is passed as it lies: row-major (unit column stride) as it is, column-major (unit row stride, a
  transposed view such as ``x.T``) with the transpose flag; an output that is column-major makes
  the call column-major.  An operand with other strides (``A[:, ::2]``, a reversed or broadcast
  view) is copied into a row-major temporary for gemm, and an output with other strides gets its
  result through one; gemv runs the loops instead (see GEMV_MIN).  Accumulating is beta = 1.
  Complex types pass alpha and beta by pointer, as CBLAS wants.
* loops (``i, j, k``) on any strides: small products, where a BLAS call costs more than it saves,
  and every product when BLAS was not found.

The thresholds were measured on this machine class (AMD EPYC, one OpenBLAS thread), inside a
compiled loop so that no call overhead counts: ``benchmarks/bench_matmul.py --crossover``.
"""

from __future__ import annotations

from .types import SCALAR, array_struct

ROW_MAJOR, COL_MAJOR = 101, 102  # CBLAS_ORDER
NO_TRANS, TRANS = 111, 112  # CBLAS_TRANSPOSE; NO_TRANS + TRANS - t flips t
# m * n * k from which gemm beats the loops.  Per product (us), loops / gemm, square float64,
# over row-major, transposed and strided ``a`` (a strided one is packed for gemm):
#   n=3: 0.033 / 0.045-0.060   n=4: 0.050-0.058 / 0.044-0.060   n=5: 0.081-0.096 / 0.058-0.076
#   n=6: 0.12-0.16 / 0.05-0.07  n=8: 0.19-0.24 / 0.06-0.11    n=16: 1.39 / 0.21-0.33
#   n=64: 139-158 / 9.4-11.0    n=128: 1750-2430 / 88-95
GEMM_MIN = 125
# m * k from which gemv beats the loops, per product (us), loops / gemv, row-major and
# transposed ``A``:
#   n=10: 0.048 / 0.053-0.069   n=12: 0.064 / 0.054-0.063   n=16: 0.094 / 0.064-0.069
#   n=32: 0.42 / 0.12           n=128: 9.4-14.1 / 1.2
# A matrix gemv cannot read runs the loops at any size: packing it costs as much as they do
# (``A[:, ::2]``, n=128: loops 9.3, copy + gemv 8.3).
GEMV_MIN = 144
BLAS_NAMES = {"f64": "d", "f32": "s", "c128": "z", "c64": "c"}
OPERAND = "{i32, i64, ptr, ptr}"  # (NO_TRANS or TRANS as seen row-major, ld, data, temporary)


def blas_declarations(dtype: str) -> list[str]:
    """The CBLAS functions (bound as ``zy.cblas_<x>gemm`` / ``gemv``) for one element type."""
    x, e = BLAS_NAMES[dtype], SCALAR[dtype]
    scalar = "ptr" if dtype.startswith("c") else e
    return [f"declare void @zy.cblas_{x}gemm(i32, i32, i32, i64, i64, i64, {scalar}, ptr, i64, "
            f"ptr, i64, {scalar}, ptr, i64)",
            f"declare void @zy.cblas_{x}gemv(i32, i32, i64, i64, {scalar}, ptr, i64, ptr, i64, "
            f"{scalar}, ptr, i64)"]


def matmul_kernels(ranks: tuple[int, int], dtype: str, acc: bool,
                   blas: frozenset[str]) -> dict[str, str]:
    """{LLVM name: definition} of the kernel for ``ranks`` and ``dtype`` (``acc``: adding the
    product to the output) and of the helpers it calls (the module keeps one of each)."""
    e = SCALAR[dtype]
    out = {f"zy.mm.loops.{dtype}": _loops(dtype, e)}
    use_blas = dtype in blas
    if use_blas:
        out["zy.mm.layout"] = LAYOUT
        out[f"zy.mm.copy.{dtype}"] = COPY.format(t=dtype, e=e)
        out[f"zy.mm.operand.{dtype}"] = OPERAND_FN.format(t=dtype, e=e, o=OPERAND)
        if ranks[0] == ranks[1]:
            out[f"zy.mm.gemm.{dtype}"] = _gemm(dtype, e)
        else:
            out[f"zy.mm.gemv.{dtype}"] = _gemv(dtype, e)
    out[kernel_name(ranks, dtype, acc)] = _kernel(ranks, dtype, acc, use_blas)
    return out


def kernel_name(ranks: tuple[int, int], dtype: str, acc: bool) -> str:
    return f"zy.matmul.{ranks[0]}{ranks[1]}.{dtype}{'.acc' if acc else ''}"


def _kernel(ranks, dtype, acc, use_blas) -> str:
    """Unpack the operands into strided matrices (m x k) @ (k x n) -> (m x n), then branch; for
    stacks (ranks (r, r), r > 2, equal batch dims), once per matrix of the batch."""
    ra, rb = ranks
    rs = (ra, rb, ra if ra == rb else 1)
    sa, sb, so = (array_struct(r) for r in rs)
    lines = [f"define internal void @{kernel_name(ranks, dtype, acc)}({sa} %a, {sb} %b, "
             f"{so} %o) #0 {{", "entry:"]
    for x, s, r in zip("abo", (sa, sb, so), rs):
        lines.append(f"  %{x}.p = extractvalue {s} %{x}, 1")
        for k in range(r):
            lines.append(f"  %{x}.n{k} = extractvalue {s} %{x}, 2, {k}")
            lines.append(f"  %{x}.s{k} = extractvalue {s} %{x}, 3, {k}")
    nb = ra - 2 if ra == rb else 0  # batch dims; a stack's matrix dims follow them
    m, n, k, a2, b2, o2 = _matrices(ranks, nb)
    flag = f"i1 {'true' if acc else 'false'}"
    if use_blas:
        work = f"{m}, {n}" if ra == rb else f"{m if ra == 2 else n}, 1"
        lines += [f"  %mn = mul i64 {work}", f"  %work = mul i64 %mn, {k}",
                  f"  %big = icmp sge i64 %work, {GEMM_MIN if ra == rb else GEMV_MIN}"]
    pa, pb, po = ("%a.q", "%b.q", "%o.q") if nb else ("%a.p", "%b.p", "%o.p")
    if nb:
        lines += _batch_loop(nb, SCALAR[dtype])
    tail = "  br label %next" if nb else "  ret void"
    args = (f"i64 {m}, i64 {n}, i64 {k}, ptr {pa}, i64 {a2[0]}, i64 {a2[1]}, "
            f"ptr {pb}, i64 {b2[0]}, i64 {b2[1]}, ptr {po}, i64 {o2[0]}, i64 {o2[1]}, {flag}")
    if use_blas:
        if ra == rb:
            call = f"@zy.mm.gemm.{dtype}({args})"
        elif ra == 2:
            call = (f"@zy.mm.gemv.{dtype}(i64 {m}, i64 {k}, ptr {pa}, i64 {a2[0]}, "
                    f"i64 {a2[1]}, ptr {pb}, i64 {b2[0]}, ptr {po}, i64 {o2[0]}, {flag})")
        else:  # x @ B = B^T x
            call = (f"@zy.mm.gemv.{dtype}(i64 {n}, i64 {k}, ptr {pb}, i64 {b2[1]}, "
                    f"i64 {b2[0]}, ptr {pa}, i64 {a2[1]}, ptr {po}, i64 {o2[1]}, {flag})")
        lines += ["  br i1 %big, label %blas, label %loops", "blas:", f"  call void {call}",
                  tail, "loops:"]
    lines += [f"  call void @zy.mm.loops.{dtype}({args})", tail]
    if nb:
        lines += ["next:", "  %t1 = add i64 %t, 1", "  br label %batch", "exit:", "  ret void"]
    return "\n".join(lines + ["}"])


def _matrices(ranks, nb):
    """(m, n, k) and the (row, column) strides of a (m x k), b (k x n) and out (m x n); a vector
    is one row (a) or one column (b, out) whose other stride is never used (0)."""
    if ranks == (2, 1):
        return "%a.n0", "1", "%a.n1", ("%a.s0", "%a.s1"), ("%b.s0", "0"), ("%o.s0", "0")
    if ranks == (1, 2):
        return "1", "%b.n1", "%b.n0", ("0", "%a.s0"), ("%b.s0", "%b.s1"), ("0", "%o.s0")
    return (f"%a.n{nb}", f"%b.n{nb + 1}", f"%a.n{nb + 1}",
            *((f"%{x}.s{nb}", f"%{x}.s{nb + 1}") for x in "abo"))


def _batch_loop(nb: int, e: str) -> list[str]:
    """A loop over the batch (``%t`` counts the matrices, the last batch dim fastest) giving
    %a.q, %b.q, %o.q: the first element of each operand's matrix."""
    lines = ["  %total.0 = add i64 1, 0"]
    for d in range(nb):
        lines.append(f"  %total.{d + 1} = mul i64 %total.{d}, %o.n{d}")
    lines += ["  br label %batch", "batch:", "  %t = phi i64 [0, %entry], [%t1, %next]",
              f"  %more = icmp slt i64 %t, %total.{nb}", "  br i1 %more, label %body, label %exit",
              "body:", "  %rest.0 = add i64 %t, 0"]
    offs = {x: "0" for x in "abo"}
    for j, d in enumerate(reversed(range(nb))):
        lines += [f"  %i{d} = urem i64 %rest.{j}, %o.n{d}",
                  f"  %rest.{j + 1} = udiv i64 %rest.{j}, %o.n{d}"]
        for x in "abo":
            lines += [f"  %{x}.o{d} = mul i64 %i{d}, %{x}.s{d}",
                      f"  %{x}.sum{d} = add i64 {offs[x]}, %{x}.o{d}"]
            offs[x] = f"%{x}.sum{d}"
    for x in "abo":
        lines.append(f"  %{x}.q = getelementptr {e}, ptr %{x}.p, i64 {offs[x]}")
    return lines


def _arith(dtype: str, e: str, op: str, dst: str, x: str, y: str) -> str:
    if dtype.startswith("c"):
        return f"  {dst} = call {e} @zy.cf{op}.{dtype}({e} {x}, {e} {y})"
    return f"  {dst} = f{op} {e} {x}, {y}"


def _loops(dtype: str, e: str) -> str:
    zero = "zeroinitializer" if dtype.startswith("c") else "0.0"
    return f"""define internal void @zy.mm.loops.{dtype}(i64 %m, i64 %n, i64 %k, \
ptr %a, i64 %ars, i64 %acs, ptr %b, i64 %brs, i64 %bcs, ptr %c, i64 %crs, i64 %ccs, i1 %acc) #0 {{
entry:
  br label %li
li:
  %i = phi i64 [0, %entry], [%i1, %lj.end]
  %ic = icmp slt i64 %i, %m
  br i1 %ic, label %lj, label %exit
lj:
  %j = phi i64 [0, %li], [%j1, %lk.end]
  %jc = icmp slt i64 %j, %n
  br i1 %jc, label %lj.body, label %lj.end
lj.body:
  %co1 = mul i64 %i, %crs
  %co2 = mul i64 %j, %ccs
  %co = add i64 %co1, %co2
  %cp = getelementptr {e}, ptr %c, i64 %co
  %old = load {e}, ptr %cp
  %s0 = select i1 %acc, {e} %old, {e} {zero}
  br label %lk
lk:
  %l = phi i64 [0, %lj.body], [%l1, %lk.body]
  %s = phi {e} [%s0, %lj.body], [%s1, %lk.body]
  %lc = icmp slt i64 %l, %k
  br i1 %lc, label %lk.body, label %lk.end
lk.body:
  %ao1 = mul i64 %i, %ars
  %ao2 = mul i64 %l, %acs
  %ao = add i64 %ao1, %ao2
  %ap = getelementptr {e}, ptr %a, i64 %ao
  %av = load {e}, ptr %ap
  %bo1 = mul i64 %l, %brs
  %bo2 = mul i64 %j, %bcs
  %bo = add i64 %bo1, %bo2
  %bp = getelementptr {e}, ptr %b, i64 %bo
  %bv = load {e}, ptr %bp
{_arith(dtype, e, "mul", "%p", "%av", "%bv")}
{_arith(dtype, e, "add", "%s1", "%s", "%p")}
  %l1 = add i64 %l, 1
  br label %lk
lk.end:
  store {e} %s, ptr %cp
  %j1 = add i64 %j, 1
  br label %lj
lj.end:
  %i1 = add i64 %i, 1
  br label %li
exit:
  ret void
}}"""


# How BLAS can read an r x c matrix with strides (rs, cs), ignoring the stride of a dimension of
# size <= 1: {NO_TRANS, ld} when row-major (cs == 1, rs >= c), {TRANS, ld} when column-major
# (rs == 1, cs >= r), {0, 0} when neither.
LAYOUT = f"""define internal {{i32, i64}} @zy.mm.layout(i64 %r, i64 %c, i64 %rs, i64 %cs) #2 {{
  %r1 = icmp sle i64 %r, 1
  %c1 = icmp sle i64 %c, 1
  %rmax = call i64 @llvm.smax.i64(i64 %r, i64 1)
  %cmax = call i64 @llvm.smax.i64(i64 %c, i64 1)
  %csu = icmp eq i64 %cs, 1
  %rowa = or i1 %c1, %csu
  %rsok = icmp sge i64 %rs, %cmax
  %rowb = or i1 %r1, %rsok
  %row = and i1 %rowa, %rowb
  %ldr = select i1 %r1, i64 %cmax, i64 %rs
  %rsu = icmp eq i64 %rs, 1
  %cola = or i1 %r1, %rsu
  %csok = icmp sge i64 %cs, %rmax
  %colb = or i1 %c1, %csok
  %col = and i1 %cola, %colb
  %ldc = select i1 %c1, i64 %rmax, i64 %cs
  %t1 = select i1 %col, i32 {TRANS}, i32 0
  %t = select i1 %row, i32 {NO_TRANS}, i32 %t1
  %ld1 = select i1 %col, i64 %ldc, i64 0
  %ld = select i1 %row, i64 %ldr, i64 %ld1
  %x = insertvalue {{i32, i64}} poison, i32 %t, 0
  %y = insertvalue {{i32, i64}} %x, i64 %ld, 1
  ret {{i32, i64}} %y
}}"""

COPY = """define internal void @zy.mm.copy.{t}(i64 %r, i64 %c, ptr %s, i64 %srs, i64 %scs, \
ptr %d, i64 %drs, i64 %dcs) #0 {{
entry:
  br label %li
li:
  %i = phi i64 [0, %entry], [%i1, %lj]
  %ic = icmp slt i64 %i, %r
  br i1 %ic, label %lj, label %exit
lj:
  %j = phi i64 [0, %li], [%j1, %body]
  %jc = icmp slt i64 %j, %c
  %i1 = add i64 %i, 1
  br i1 %jc, label %body, label %li
body:
  %so1 = mul i64 %i, %srs
  %so2 = mul i64 %j, %scs
  %so = add i64 %so1, %so2
  %sp = getelementptr {e}, ptr %s, i64 %so
  %v = load {e}, ptr %sp
  %do1 = mul i64 %i, %drs
  %do2 = mul i64 %j, %dcs
  %do = add i64 %do1, %do2
  %dp = getelementptr {e}, ptr %d, i64 %do
  store {e} %v, ptr %dp
  %j1 = add i64 %j, 1
  br label %lj
exit:
  ret void
}}"""

# A matrix as BLAS takes it: (flag, ld, data, temporary to free or null), or flag 0 when it
# needs a temporary that cannot be allocated (the caller runs the loops).  ``fill`` is false for
# an output (its temporary is written by BLAS and copied back by the caller).
OPERAND_FN = """define internal {o} @zy.mm.operand.{t}(i64 %r, i64 %c, ptr %p, i64 %rs, \
i64 %cs, i1 %fill) #0 {{
entry:
  %lay = call {{i32, i64}} @zy.mm.layout(i64 %r, i64 %c, i64 %rs, i64 %cs)
  %t = extractvalue {{i32, i64}} %lay, 0
  %ld = extractvalue {{i32, i64}} %lay, 1
  %ok = icmp ne i32 %t, 0
  br i1 %ok, label %direct, label %pack
direct:
  %x = insertvalue {o} poison, i32 %t, 0
  %y = insertvalue {o} %x, i64 %ld, 1
  %z = insertvalue {o} %y, ptr %p, 2
  %w = insertvalue {o} %z, ptr null, 3
  ret {o} %w
pack:
  %cmax = call i64 @llvm.smax.i64(i64 %c, i64 1)
  %n = mul i64 %r, %cmax
  %bytes = mul i64 %n, ptrtoint (ptr getelementptr ({e}, ptr null, i32 1) to i64)
  %tmp = call ptr @zy.alloc(i64 %bytes, i32 0)
  %got = icmp ne ptr %tmp, null
  %fill1 = and i1 %fill, %got
  br i1 %fill1, label %copy, label %packed
copy:
  call void @zy.mm.copy.{t}(i64 %r, i64 %c, ptr %p, i64 %rs, i64 %cs, ptr %tmp, i64 %cmax, \
i64 1)
  br label %packed
packed:
  %flag = select i1 %got, i32 111, i32 0
  %x2 = insertvalue {o} poison, i32 %flag, 0
  %y2 = insertvalue {o} %x2, i64 %cmax, 1
  %z2 = insertvalue {o} %y2, ptr %tmp, 2
  %w2 = insertvalue {o} %z2, ptr %tmp, 3
  ret {o} %w2
}}"""


def _operand(dtype: str, name: str, r: str, c: str, p: str, rs: str, cs: str,
             fill: str) -> list[str]:
    """Lines giving %{name}.t (flag), %{name}.ld, %{name}.p (data) and %{name}.tmp."""
    lines = [f"  %{name} = call {OPERAND} @zy.mm.operand.{dtype}(i64 {r}, i64 {c}, ptr {p}, "
             f"i64 {rs}, i64 {cs}, i1 {fill})"]
    for k, f in enumerate(("t", "ld", "p", "tmp")):
        lines.append(f"  %{name}.{f} = extractvalue {OPERAND} %{name}, {k}")
    return lines


def _scalars(dtype: str, e: str) -> tuple[list[str], str, str]:
    """(lines, alpha argument, beta argument): alpha 1, beta 1 with %acc and 0 without, by value
    or (complex) by pointer."""
    if not dtype.startswith("c"):
        return [f"  %beta = select i1 %acc, {e} 1.0, {e} 0.0"], f"{e} 1.0", f"{e} %beta"
    f = e[1:].split(",")[0]
    return [f"  %alpha = alloca {e}", f"  %beta = alloca {e}",
            f"  store {e} {{{f} 1.0, {f} 0.0}}, ptr %alpha",
            f"  %b1 = select i1 %acc, {f} 1.0, {f} 0.0",
            f"  %b2 = insertvalue {e} zeroinitializer, {f} %b1, 0",
            f"  store {e} %b2, ptr %beta"], "ptr %alpha", "ptr %beta"


def _unless_failed(dtype: str, names, loop_args: str) -> list[str]:
    """Run the loops (after freeing what was allocated) when a temporary could not be."""
    lines, ok = [], "true"
    for v in names:
        lines += [f"  %{v}.ok = icmp ne i32 %{v}.t, 0", f"  %{v}.and = and i1 {ok}, %{v}.ok"]
        ok = f"%{v}.and"
    return lines + [f"  br i1 {ok}, label %call, label %failed", "failed:",
                    *[f"  call void @free(ptr %{v}.tmp)" for v in names],
                    f"  call void @zy.mm.loops.{dtype}(i64 {loop_args})", "  ret void", "call:"]


def _finish(dtype: str, r: str, c: str, ccs: str) -> list[str]:
    """Copy a packed output back, free the temporaries."""
    return ["  %packed = icmp ne ptr %C.tmp, null", "  br i1 %packed, label %back, label %done",
            "back:", f"  call void @zy.mm.copy.{dtype}(i64 {r}, i64 {c}, ptr %C.tmp, i64 %C.ld, "
            f"i64 1, ptr %c, i64 %crs, i64 {ccs})", "  br label %done", "done:",
            "  call void @free(ptr %A.tmp)", "  call void @free(ptr %B.tmp)",
            "  call void @free(ptr %C.tmp)", "  ret void", "}"]


def _gemm(dtype: str, e: str) -> str:
    """c (m x n) = a (m x k) @ b (k x n) by gemm; a column-major c makes the call column-major
    (which flips what row- and column-major mean for a and b)."""
    x = BLAS_NAMES[dtype]
    scal, alpha, beta = _scalars(dtype, e)
    lines = [f"define internal void @zy.mm.gemm.{dtype}(i64 %m, i64 %n, i64 %k, ptr %a, "
             "i64 %ars, i64 %acs, ptr %b, i64 %brs, i64 %bcs, ptr %c, i64 %crs, i64 %ccs, "
             "i1 %acc) #0 {", "entry:",
             *scal,
             *_operand(dtype, "A", "%m", "%k", "%a", "%ars", "%acs", "true"),
             *_operand(dtype, "B", "%k", "%n", "%b", "%brs", "%bcs", "true"),
             *_operand(dtype, "C", "%m", "%n", "%c", "%crs", "%ccs", "%acc"),
             *_unless_failed(dtype, ("A", "B", "C"), "%m, i64 %n, i64 %k, ptr %a, i64 %ars, "
                             "i64 %acs, ptr %b, i64 %brs, i64 %bcs, ptr %c, i64 %crs, i64 %ccs, "
                             "i1 %acc"),
             f"  %colc = icmp eq i32 %C.t, {TRANS}",
             f"  %order = select i1 %colc, i32 {COL_MAJOR}, i32 {ROW_MAJOR}"]
    for v in ("A", "B"):
        lines += [f"  %{v}.f = sub i32 {NO_TRANS + TRANS}, %{v}.t",
                  f"  %{v}.op = select i1 %colc, i32 %{v}.f, i32 %{v}.t"]
    lines.append(f"  call void @zy.cblas_{x}gemm(i32 %order, i32 %A.op, i32 %B.op, i64 %m, "
                 f"i64 %n, i64 %k, {alpha}, ptr %A.p, i64 %A.ld, ptr %B.p, i64 %B.ld, {beta}, "
                 "ptr %C.p, i64 %C.ld)")
    return "\n".join(lines + _finish(dtype, "%m", "%n", "%ccs"))


def _gemv(dtype: str, e: str) -> str:
    """y (m) = a (m x k) @ x (k) by gemv, or by the loops when gemv cannot read ``a``; the
    vectors are m x 1 and k x 1 matrices with row stride ``incx`` / ``incy`` (a negative or zero
    stride is packed)."""
    x = BLAS_NAMES[dtype]
    scal, alpha, beta = _scalars(dtype, e)
    lines = [f"define internal void @zy.mm.gemv.{dtype}(i64 %m, i64 %k, ptr %a, i64 %ars, "
             "i64 %acs, ptr %b, i64 %brs, ptr %c, i64 %crs, i1 %acc) #0 {", "entry:", *scal,
             "  %lay = call {i32, i64} @zy.mm.layout(i64 %m, i64 %k, i64 %ars, i64 %acs)",
             "  %how = extractvalue {i32, i64} %lay, 0",
             "  %direct = icmp ne i32 %how, 0", "  br i1 %direct, label %blas, label %loops",
             "loops:", f"  call void @zy.mm.loops.{dtype}(i64 %m, i64 1, i64 %k, ptr %a, "
             "i64 %ars, i64 %acs, ptr %b, i64 %brs, i64 0, ptr %c, i64 %crs, i64 0, i1 %acc)",
             "  ret void", "blas:",
             *_operand(dtype, "A", "%m", "%k", "%a", "%ars", "%acs", "true"),
             *_operand(dtype, "B", "%k", "1", "%b", "%brs", "1", "true"),
             *_operand(dtype, "C", "%m", "1", "%c", "%crs", "1", "%acc"),
             *_unless_failed(dtype, ("B", "C"), "%m, i64 1, i64 %k, ptr %a, i64 %ars, i64 %acs, "
                             "ptr %b, i64 %brs, i64 0, ptr %c, i64 %crs, i64 0, i1 %acc"),
             f"  %cola = icmp eq i32 %A.t, {TRANS}",
             f"  %order = select i1 %cola, i32 {COL_MAJOR}, i32 {ROW_MAJOR}",
             f"  call void @zy.cblas_{x}gemv(i32 %order, i32 {NO_TRANS}, i64 %m, i64 %k, {alpha}, "
             f"ptr %A.p, i64 %A.ld, ptr %B.p, i64 %B.ld, {beta}, ptr %C.p, i64 %C.ld)"]
    return "\n".join(lines + _finish(dtype, "%m", "1", "1"))
