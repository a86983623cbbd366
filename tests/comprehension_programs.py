"""Comprehensions, generator expressions, loop ``else`` clauses and nested iteration helpers as
users write them; test_comprehensions.py runs each in CPython, compiled, on the IR interpreter
and (the float ones) through forward and reverse mode."""

import math

import numpy as np


def sum_of_squares(a):
    return sum(x * x for x in a)


def neighbour_products(a):
    return sum([a[i] * a[i + 1] for i in range(len(a) - 1)])


def filtered_sines(a):
    return np.array([math.sin(x) for x in a if x > 0.5]).sum()


def dot_by_zip(a, b):
    return sum(x * y for x, y in zip(a, b))


def extremes(a):
    return max(abs(x) for x in a) + min(x for x in a)


def any_all(a):
    return any(x > 2.5 for x in a) + 2 * all(x > -1.0 for x in a)


def any_stops_early(a):
    # Python stops at a[0] > 0 and never indexes past the end
    return any(a[i] > 0.0 for i in range(len(a) + 5))


def all_stops_early(a):
    return all(a[i] < 0.0 for i in range(len(a) + 5))


def loop_over_comprehension(a):
    s = 0.0
    for v in [x * 2.0 for x in a]:
        s += v * v
    return s


def pairs(a):
    return sum(a[i] * a[j] for i in range(len(a)) for j in range(i + 1, len(a)))


def reads_outer_name(a):
    x = 1.5
    return sum(x * y for y in a) + x


def does_not_leak(a):
    i = 100
    t = sum(a[i] * a[i] for i in range(2))
    return t + i


def nested_sums(a):
    return sum(sum(a[i] * a[j] for j in range(3)) for i in range(3))


def inner_shadows_outer(a):
    # the inner `x` is its own variable; the outer one is read in the inner's iterable only
    return sum(sum(x for x in a[: int(x) + 1]) for x in [1.0, 2.0])


def comprehension_in_branch(a):
    return sum([x * x for x in a]) if a[0] > 0 else 0.0


def assign_in_branch(a):
    s = max([x * x for x in a]) if a[0] > 0 else -1.0
    return s * 2.0


def count_above(a):
    return len([x for x in a if x > 1.0]) * 1.0


def mean_of_list(a):
    xs = [a[i] for i in range(len(a))]
    return sum(xs) / len(xs)


def python_order(a):
    # Python adds left to right: 1e16 + 1.0 rounds away, then -1e16 leaves 0.0
    return sum(v for v in [a[0] * 1e16, a[0], -a[0] * 1e16]) + sum([a[1], a[2]])


def enumerate_zip(a, b):
    return sum(i * x * y for i, (x, y) in enumerate(zip(a, b)))


def zip_with_ranges(a):
    s = 0.0
    for x, k, j in zip(a, range(10), reversed(range(len(a)))):
        s += x * k + j * x * x
    return s


def enumerate_reversed(a):
    s = 0.0
    for k, i in enumerate(reversed(range(1, len(a), 2)), start=1):
        s += k * a[i]
    return s


def comprehension_then_helper(a):
    return sum(x for x in a) + bump_first(a)


def bump_first(a):
    a[0] += 1.0
    return 2.0


def for_else_not_found(a):
    for i in range(len(a)):
        if a[i] > 10.0:
            break
    else:
        i = -1
    return i * 1.0


def while_else(a):
    k = 0
    while k < len(a):
        if a[k] > 1.5:
            break
        k += 1
    else:
        return -1.0
    return a[k] * 3.0


def nested_for_else(a):
    out = 0.0
    for i in range(3):
        for j in range(3):
            if a[j] > 2.5:
                break
        else:
            out += a[i]
            continue
        out += 100.0 * a[i]
    return out


def break_in_inner_else(a):
    # the `break` in the inner loop's else ends the outer loop
    s = 0.0
    for i in range(len(a)):
        for j in range(i):
            s += a[j]
        else:
            if s > 1.0:
                break
    else:
        s = -s
    return s * a[0]


# refused, with the reason at the comprehension
def after_writing_call(a):
    return bump_first(a) + sum(x for x in a)


def in_while_test(a):
    s = 0.0
    while sum(x for x in a) > s:
        s += 10.0
    return s


def in_boolean_tail(a):
    return a[0] > 0 and sum(x for x in a) > 1.0


def generator_kept(a):
    g = (x for x in a)
    return sum(g)


def rows(a):
    return np.array([[a[i] * a[j] for j in range(3)] for i in range(3)]).sum()


def set_comprehension(a):
    return len({x for x in a})
