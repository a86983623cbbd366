"""The LLVM emitter of ``host.call`` (``ir/ops/host.py``): each operand's value goes into a
stack slot (an array as its struct), the slots' addresses into one table, and
``@zy.host_call(descriptor, table)`` runs the Python function (the CPU backend binds that symbol:
``backends/cpu/hostcall.py``).  The descriptor is a constant string naming the function, its
keywords and the operands' types; a nonzero return stops the program with the exception the
function raised."""

from __future__ import annotations

import json

from ...ir.ops import HostCall
from .table import emitter
from .types import ltype

HOST_ERROR = "HostError"  # the error kind of a failed host function (its exception is raised)


def descriptor(op) -> str:
    return json.dumps({"fn": op.attrs["fn"], "kw": op.attrs.get("kw", "{}"),
                       "types": [str(v.type) for v in op.operands]})


@emitter(HostCall)
def _host_call(em, op):
    em.mod.declare("declare i32 @zy.host_call(ptr, ptr)")
    text = descriptor(op).encode() + b"\0"
    g = em.mod.fresh_global("host")
    chars = "".join(chr(c) if 32 <= c < 127 and c not in (34, 92) else f"\\{c:02X}" for c in text)
    em.mod.globals.append(f"{g} = private unnamed_addr constant [{len(text)} x i8] c\"{chars}\"")
    n = len(op.operands)
    table = em.fresh("hosttab")
    em.entry_allocas.append(f"  {table} = alloca [{max(n, 1)} x ptr], align 8")
    for k, v in enumerate(op.operands):
        ty = ltype(v.type)
        slot = em.fresh("hostarg")
        em.entry_allocas.append(f"  {slot} = alloca {ty}, align 8")
        em.emit(f"store {ty} {em.val(v)}, ptr {slot}")
        at = em.assign(f"getelementptr [{max(n, 1)} x ptr], ptr {table}, i64 0, i64 {k}")
        em.emit(f"store ptr {slot}, ptr {at}")
    status = em.assign(f"call i32 @zy.host_call(ptr {g}, ptr {table})")
    ok = em.assign(f"icmp eq i32 {status}, 0")
    em.raise_if_not(ok, HOST_ERROR, f"{op.attrs['fn']} failed", op.loc)
    return []
