"""Small helpers shared by the transforms: the primal value of a call and the description of a
function's result for given argument types (both through ``jit``'s compile cache)."""

from __future__ import annotations

from .api import JitFunction

_JITS: dict = {}


def _jit(fn, options):
    key = (fn, options)
    j = _JITS.get(key)
    if j is None:
        j = _JITS[key] = JitFunction(fn, options)
    return j


def call_for_value(fn, args, options):
    return _jit(fn, options).run(args)


def result_description(fn, args, options):
    return _jit(fn, options).specialization(*args).result
