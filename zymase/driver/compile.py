"""Compiling one specialization: the stage list of its request run on a ``Compilation``
(``pipeline.py``), wrapped for the transforms (``compiled.py``), through the disk cache when
``cache=True`` (``jit`` and every derivative transform)."""

from __future__ import annotations

from ..backends.registry import get_backend
from ..frontend.args import arg_name
from ..frontend.captures import describe_all, restore_all
from ..frontend.typing import flatten
from ..ir.ops import TapePushRef
from ..options import Options
from . import disk_cache
from .compiled import Derivative, Specialization, fast_results
from .pipeline import Compilation, Dump, env_dump, run_stages
from .request import PRIMAL, Request
from .signature import describe_result, plain_result, same_everywhere, templates


def compile_specialization(fn, args, options: Options, noalias: bool, key=None,
                           dump: Dump | None = None) -> Specialization:
    """Compile ``fn`` for the types of ``args`` (through the disk cache when enabled)."""
    tpls = templates(fn, args)
    dump = dump or env_dump()
    backend = get_backend(options.backend)
    ident = None
    if options.cache and key is not None and dump is None and \
            backend.capabilities.disk_cache and same_everywhere(key):
        ident = disk_cache.entry_key(fn, (key, noalias), options, backend)
        found = {}
        payload = disk_cache.load(ident, backend, lambda p: _restored(fn, p, found))
        if payload is not None:
            artifact = backend.load(payload["artifact"])
            return _specialization(artifact, payload["entry"], tpls, payload["result"], None,
                                   found["captures"])
    c = run_stages(Compilation(fn, tpls, options, PRIMAL, backend, noalias, dump=dump))
    spec = _specialization(c.artifact, c.entries[0], tpls, describe_result(c.result), c.module,
                           c.captures)
    if ident is not None:
        # what the code read from outside is checked on load (never stale code); code that
        # read something that cannot be found or checked in another process is not kept
        captures = describe_all(c.captures, fn)
        saved = c.artifact.save()
        if captures is not None and saved is not None:
            disk_cache.store(ident, backend, {"artifact": saved, "entry": c.entries[0],
                                    "result": spec.result, "captures": captures}, c.functions)
    return spec


def _restored(fn, payload, found) -> bool:
    """Whether an entry's captures hold in this process (kept in ``found``)."""
    found["captures"] = restore_all(fn, payload["captures"])
    return found["captures"] is not None


def _specialization(artifact, name, tpls, result, module, captures):
    entry = artifact.entry(name)
    fast = entry.fast if plain_result(result) else None
    return Specialization(entry, tpls, result, module, artifact.listings.get("llvm", ""), fast,
                          captures)


def compile_derivative(fn, args, req: Request, options: Options, count_tape: bool = False,
                       dump: Dump | None = None, key=None) -> Derivative:
    """Compile the derivative ``req`` of ``fn`` for the types of ``args`` (through the disk
    cache when ``options.cache``; ``key``: the argument signature)."""
    backend = get_backend(options.backend)
    tpls = templates(fn, args)
    dump = dump or env_dump()
    ident = None
    if options.cache and key is not None and dump is None and not count_tape and \
            backend.capabilities.disk_cache and same_everywhere(key):
        ident = disk_cache.entry_key(fn, (key, req), options, backend)
        found = {}
        payload = disk_cache.load(ident, backend, lambda p: _restored(fn, p, found))
        if payload is not None:
            d = _derivative(backend, backend.load(payload["artifact"]), tpls, payload["d"],
                            found["captures"])
            d.names = [arg_name(fn, k) for k in range(len(args))]
            return d
    c = run_stages(Compilation(fn, tpls, options, req, backend, count_tape=count_tape,
                               dump=dump))
    n_res = len(flatten(c.result)) if c.result is not None else 0
    if req.mode == "rev" and not req.primal:
        n_res = 0
    facts = {"entries": list(c.entries), "result": describe_result(c.result),
             "flat_active": list(c.flat_active), "leaf_of": sorted(c.leaf_of.items()),
             "n_flat_args": c.n_flat_args, "n_flat_results": n_res,
             "written": list(c.written), "keeps_refs": keeps_references(c.module)}
    d = _derivative(backend, c.artifact, tpls, facts, c.captures, c.module)
    d.names = [arg_name(fn, k) for k in range(len(args))]
    if ident is not None:
        captures = describe_all(c.captures, fn)
        saved = c.artifact.save()
        if captures is not None and saved is not None:
            disk_cache.store(ident, backend, {"artifact": saved, "d": facts,
                                              "captures": captures}, c.functions)
    return d


def keeps_references(module) -> bool:
    """Whether a derivative's tape holds arrays by reference (``tape.push_ref``: versions of an
    array renewed in a loop that a matrix product reads)."""
    return any(isinstance(op, TapePushRef) for op in module.walk())


def _derivative(backend, artifact, tpls, facts, captures, module=None) -> Derivative:
    names = facts["entries"]
    entry = artifact.entry(names[0])
    adjoint = artifact.entry(names[1]) if len(names) > 1 else None
    d = Derivative(entry, tpls, facts["result"], list(facts["flat_active"]),
                   {int(k): (v[0], tuple(v[1])) for k, v in facts["leaf_of"]}, module,
                   names[0], facts["n_flat_args"], facts["n_flat_results"], None, adjoint,
                   tuple(facts["written"]), artifact, facts["keeps_refs"], captures)
    if entry.fast is not None:
        d.fast = _fast_caller(backend, d)
    return d


def _fast_caller(backend, d: Derivative):
    """A dispatcher whose builtin runs this derivative's fast C entry."""
    entry = d.entry

    def raise_error(err_id, a, b):
        raise entry.error(err_id, a, b).with_traceback(None)

    def box(address, *objs):
        return fast_results(entry.decode_at(address, objs))

    disp = backend.dispatcher(lambda *args: fast_results(d.call(list(args))))
    disp.install("only", entry.fast, raise_error, d.captures, box)
    return disp
