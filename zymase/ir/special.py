"""Special functions with no libm counterpart, shared by the interpreter and (as a reference)
by the LLVM runtime's implementation: digamma and trigamma (derivatives of lgamma).

Both use the recurrence up to x >= 10, then the asymptotic series; negative arguments use the
reflection formulas; poles (0, -1, -2, ...) give NaN.
"""

from __future__ import annotations

import math

# B_2k / 2k (digamma, in 1/x^2k) and B_2k (trigamma, in 1/x^(2k+1)), Bernoulli numbers B_2k
DIGAMMA_SERIES = (1.0 / 12, -1.0 / 120, 1.0 / 252, -1.0 / 240, 1.0 / 132, -691.0 / 32760,
                  1.0 / 12)
TRIGAMMA_SERIES = (1.0 / 6, -1.0 / 30, 1.0 / 42, -1.0 / 30, 5.0 / 66, -691.0 / 2730, 7.0 / 6)
SHIFT = 10.0  # recurrence up to here, then the series


def digamma(x: float) -> float:
    if math.isnan(x) or (x <= 0 and x == math.floor(x)):
        return math.nan
    if x < 0:  # psi(1 - x) - psi(x) = pi cot(pi x)
        return digamma(1.0 - x) - math.pi / math.tan(math.pi * x)
    acc = 0.0
    while x < SHIFT:
        acc -= 1.0 / x
        x += 1.0
    inv2 = 1.0 / (x * x)
    series, p = 0.0, inv2
    for c in DIGAMMA_SERIES:
        series += c * p
        p *= inv2
    return acc + math.log(x) - 0.5 / x - series


def trigamma(x: float) -> float:
    if math.isnan(x) or (x <= 0 and x == math.floor(x)):
        return math.nan
    if x < 0:  # psi1(1 - x) + psi1(x) = pi^2 / sin^2(pi x)
        return -trigamma(1.0 - x) + (math.pi / math.sin(math.pi * x)) ** 2
    acc = 0.0
    while x < SHIFT:
        acc += 1.0 / (x * x)
        x += 1.0
    inv = 1.0 / x
    inv2 = inv * inv
    series, p = 0.0, inv * inv2
    for c in TRIGAMMA_SERIES:
        series += c * p
        p *= inv2
    return acc + inv + 0.5 * inv2 + series
