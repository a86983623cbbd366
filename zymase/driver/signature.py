"""Argument signatures and result descriptions: how user values map to the flat lists a compiled
entry takes and returns, and back.

* ``arg_key(x)``: a cheap hashable key of an argument's compile-time type (one specialization
  per tuple of keys).
* ``templates(fn, args)``: the frontend's description (FVal template) of each argument;
  ``flat_leaves(tpl)``: its ``(path, leaf)`` pairs in the order of the entry's IR arguments.
* ``describe_result(tpl)``: a picklable description of the returned value;
  ``rebuild_result(desc, values)``: the Python value from the flat results.
* ``arrays_disjoint(args)``: whether the compiler may assume that no two arrays overlap.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..errors import ZymaseOverflowError, caller_loc
from ..frontend.args import arg_name, param_template, static_key
from ..frontend.typing import Array, PyObj, Scalar, Struct, Tup, type_key

_SCALAR_KEYS = {float: "f", int: "i", bool: "b", complex: "c"}
INT64_MIN, INT64_MAX = -(2 ** 63), 2 ** 63 - 1


def arg_key(x, where: str = "argument"):
    """A cheap hashable key of an argument's compile-time type.  A Python int that does not fit
    the compiled code's 64-bit integers is refused (it would wrap)."""
    t = type(x)
    k = _SCALAR_KEYS.get(t)
    if k is not None:
        if t is int and not INT64_MIN <= x <= INT64_MAX:
            raise ZymaseOverflowError(f"{where} is {x}, which does not fit in a 64-bit integer "
                                      "(compiled code computes with 64-bit ints)", caller_loc())
        return k
    if t is np.ndarray:
        return (x.dtype, x.ndim, x.flags.c_contiguous)
    # containers of these: the key of each item (their templates follow from them) without
    # building the whole template on every call
    if t is tuple:
        return ("tuple", tuple(arg_key(v, f"{where}[{i}]") for i, v in enumerate(x)))
    if t is dict and all(type(k) is str for k in x):
        return ("dict", tuple((k, arg_key(v, f"{where}[{k!r}]")) for k, v in x.items()))
    return static_key(x) or type_key(param_template(x, where))


def same_everywhere(key) -> bool:
    """Whether a signature key means the same in another process (so it may name a file in
    the disk cache): constants held for functions, classes or enum members are not (their
    text does not say which object they were)."""
    if type(key) is tuple:
        if len(key) == 3 and key[0] == "static":
            return type(key[2]) in (str, bytes, type(None))
        return all(same_everywhere(k) for k in key)
    return True


def signature_key(fn, args) -> tuple:
    return tuple(arg_key(a, arg_name(fn, k)) for k, a in enumerate(args))


def only_scalars(args) -> bool:
    return all(type(a) in _SCALAR_KEYS for a in args)


def templates(fn, args) -> list:
    """The frontend's template of each argument (the types the code is compiled for)."""
    return [param_template(a, arg_name(fn, k)) for k, a in enumerate(args)]


def flat_leaves(tpl, prefix=()):
    """(path, leaf FVal) pairs of a template, in the order of its IR values."""
    if isinstance(tpl, (Scalar, Array)):
        return [(prefix, tpl)]
    if isinstance(tpl, Tup):
        return [x for k, item in enumerate(tpl.items) for x in flat_leaves(item, prefix + (k,))]
    if isinstance(tpl, Struct):
        return [x for k, item in tpl.fields.items() for x in flat_leaves(item, prefix + (k,))]
    return []


def is_inexact(leaf) -> bool:
    """Whether a template leaf is a float or complex scalar or array (what can be active)."""
    t = leaf.value.type
    return (t.dtype if hasattr(t, "dtype") else t).is_inexact


def describe_result(tpl):
    """A picklable description of a returned FVal template."""
    if tpl is None or isinstance(tpl, PyObj):
        return ("p", None if tpl is None else tpl.obj)
    if isinstance(tpl, Scalar):
        return ("s", tpl.type, tpl.weak)
    if isinstance(tpl, Array):
        return ("a", tpl.type)
    if isinstance(tpl, Tup):
        return ("t", [describe_result(x) for x in tpl.items])
    if isinstance(tpl, Struct):
        return ("r", tpl.pytype, {k: describe_result(x) for k, x in tpl.fields.items()})
    raise TypeError(tpl)


def rebuild_result(desc, values: list):
    """Python results shaped like the described return value (values are consumed)."""
    kind = desc[0]
    if kind == "p":
        return desc[1]
    if kind == "s":
        v = values.pop(0)
        return v if desc[2] else desc[1].np_dtype.type(v)
    if kind == "a":
        return values.pop(0)
    if kind == "t":
        return tuple(rebuild_result(x, values) for x in desc[1])
    return desc[1](**{k: rebuild_result(x, values) for k, x in desc[2].items()})


def plain_result(desc) -> bool:
    """Whether the fast C entry's results (None, the one result, or a tuple of several) are
    what ``rebuild_result(desc, ...)`` makes: None, a Python float/int/bool, an array, or a
    flat tuple of two or more arrays and Python floats/ints/bools.  (Another returned constant,
    such as a string, is not a result of the compiled code: the fast entry would return None.)"""
    if desc[0] == "t":
        return len(desc[1]) >= 2 and all(_plain_leaf(x) for x in desc[1])
    return (desc[0] == "p" and desc[1] is None) or _plain_leaf(desc)


def _plain_leaf(desc) -> bool:
    return desc[0] == "a" or (desc[0] == "s" and desc[2])


def array_leaves(x, out: list | None = None) -> list:
    """Every NumPy array an argument hands the compiled code: ``x`` itself, or the arrays inside
    the tuples, lists, dicts, dataclasses and namedtuples it is made of (the code receives each
    as an argument of its own)."""
    out = [] if out is None else out
    if isinstance(x, np.ndarray):
        out.append(x)
    elif isinstance(x, (tuple, list)):
        for item in x:
            array_leaves(item, out)
    elif isinstance(x, dict):
        for item in x.values():
            array_leaves(item, out)
    elif dataclasses.is_dataclass(x) and not isinstance(x, type):
        for f in dataclasses.fields(x):
            array_leaves(getattr(x, f.name), out)
    return out


def arrays_disjoint(args) -> bool:
    """True when no two arrays the code receives share memory (so the compiler may assume
    noalias), counting the arrays inside tuples, lists, dicts and dataclasses: ``f((a, a))``
    hands the code two views of one buffer."""
    arrs = array_leaves(args)
    for i in range(len(arrs)):
        for j in range(i + 1, len(arrs)):
            if np.may_share_memory(arrs[i], arrs[j]):
                return False
    return True
