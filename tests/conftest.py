"""Shared test fixtures: the benchmark corpus in ../shared (tests that need it skip without it),
and the IR verifier switched on for every pass."""

import os
import sys

import pytest

os.environ.setdefault("ZYMASE_VERIFY", "1")

SHARED_BENCH = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "..", "shared",
                                             "bench"))


def corpus():
    """The ``problems`` package of ../shared/bench, or skip the test when it is absent."""
    if not os.path.isdir(os.path.join(SHARED_BENCH, "problems")):
        pytest.skip("../shared/bench/problems is not present (the benchmark corpus lives beside "
                    "the repository)")
    if SHARED_BENCH not in sys.path:
        sys.path.insert(0, SHARED_BENCH)
    import problems
    return problems
