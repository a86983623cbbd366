"""Derivatives of every corpus problem (../shared/bench/problems) with respect to its ACTIVE
arguments: reverse and forward mode agree with each other and with central differences of the
CPython primal along random directions; JAX and PyTorch (their versions in
../shared/bench/peers) agree where they are installed."""

import importlib
import os
import sys

import numpy as np
import pytest
from conftest import SHARED_BENCH, corpus

import zymase

PROBLEMS = ("relu3", "taylor", "norm", "gmm", "ba", "lstm", "heat1d", "nbody", "rk4", "fft")
SIZE = {"ba": "adbench_test"}  # ADBench's unit-test input: small enough for finite differences


def _inputs(mod, name):
    return mod.make_inputs(SIZE.get(name, "small"))


def _direction(args, active, rng):
    return [rng.standard_normal(np.shape(args[k])) if isinstance(args[k], np.ndarray)
            else float(rng.standard_normal()) for k in active]


def _shift(args, active, dirs, s):
    out = list(args)
    for k, d in zip(active, dirs):
        out[k] = args[k] + s * d
    return out


@pytest.mark.parametrize("name", PROBLEMS)
def test_gradient_matches_finite_differences_and_forward_mode(name):
    mod = corpus().load(name)
    args = _inputs(mod, name)
    active = tuple(mod.ACTIVE)
    value, grads = zymase.value_and_grad(mod.primal, active)(*args)
    np.testing.assert_allclose(value, mod.primal(*args), rtol=1e-12)
    rng = np.random.default_rng(7)
    dirs = _direction(args, active, rng)
    along = sum(float(np.sum(g * d)) for g, d in zip(grads, dirs))
    h = 1e-5
    fd = (4 * (mod.primal(*_shift(args, active, dirs, h)) -
               mod.primal(*_shift(args, active, dirs, -h))) / (2 * h)
          - (mod.primal(*_shift(args, active, dirs, 2 * h)) -
             mod.primal(*_shift(args, active, dirs, -2 * h))) / (4 * h)) / 3
    np.testing.assert_allclose(along, fd, rtol=1e-6, atol=1e-9)
    tangents = [None] * len(args)
    for k, d in zip(active, dirs):
        tangents[k] = d
    _, t = zymase.jvp(mod.primal, args, tangents)
    np.testing.assert_allclose(t, along, rtol=1e-10, atol=1e-12)


def _peer(modname):
    peers = os.path.join(SHARED_BENCH, "peers")
    if peers not in sys.path:
        sys.path.insert(0, peers)
    return importlib.import_module(modname)


@pytest.mark.slow
@pytest.mark.parametrize("name", PROBLEMS)
def test_gradient_agrees_with_jax(name):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    peers = _peer("jax_peers")
    mod = corpus().load(name)
    args = _inputs(mod, name)
    ours = zymase.grad(mod.primal, tuple(mod.ACTIVE))(*args)
    theirs = jax.grad(getattr(peers, name), argnums=tuple(mod.ACTIVE))(*args)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, np.asarray(b), rtol=1e-8, atol=1e-10)


@pytest.mark.slow
@pytest.mark.parametrize("name", PROBLEMS)
def test_gradient_agrees_with_pytorch(name):
    torch = pytest.importorskip("torch")
    peers = _peer("torch_peers")
    if not hasattr(peers, name):
        pytest.skip(f"no PyTorch version of {name}")
    mod = corpus().load(name)
    args = _inputs(mod, name)
    ours = zymase.grad(mod.primal, tuple(mod.ACTIVE))(*args)
    targs = [torch.tensor(a, requires_grad=k in mod.ACTIVE) if isinstance(a, (np.ndarray, float))
             else a for k, a in enumerate(args)]
    out = getattr(peers, name)(*targs)
    theirs = torch.autograd.grad(out, [targs[k] for k in mod.ACTIVE])
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b.detach().numpy(), rtol=1e-8, atol=1e-10)
