"""Programs that read a local variable some path did not assign: CPython raises
UnboundLocalError there, and zymase must too (test_unbound.py runs both).  The same programs
also run on inputs where every read is bound, and must then agree with CPython.  (Some read
names the linter rightly flags: that is the point.)"""


def loop_variable_after_loop(n):
    for i in range(n):  # noqa: B007
        pass
    return i


def bound_in_body(a):
    for i in range(a.shape[0]):
        y = 2.0 * a[i]
    return y


def bound_in_one_branch(x):
    if x > 0:
        y = x + 1.0
    return y


def bound_in_else(x):
    if x > 0:
        pass
    else:
        y = -x
    return y * 2.0


def while_body(n):
    while n > 0:
        k = n
        n -= 1
    return k


def last_positive(a):
    for i in range(a.shape[0]):
        if a[i] > 0:
            last = a[i]
    return last


def break_before_bind(a, stop):
    for i in range(a.shape[0]):
        if i == stop:
            break
        y = a[i]
    return y


def inner_loop_zero_trips(a, m):
    s = 0.0
    for i in range(a.shape[0]):
        for j in range(m):
            t = a[i] * j
        s += t
    return s


def return_or_bind(x):
    if x > 0:
        return 1.0
    else:
        y = 2.0 * x
    return y


def array_bound_in_branch(a, flag):
    if flag:
        b = a * 2.0
    return b.sum()


def tuple_bound_in_branch(x):
    if x > 0:
        p, q = x, 2.0 * x
    return p + q


def augmented_unbound(x):
    if x > 0:
        s = 1.0
    s += x
    return s


def rebound_after_branch(x):
    if x > 0:
        y = x
    y = 3.0  # bound on every path from here on
    return y


def read_bound_in_earlier_iteration(a):
    s = 0.0
    for i in range(a.shape[0]):
        if i > 0:
            s += a[i] * last  # noqa: F821
        last = a[i]  # noqa: F841
    return s


def loss_with_branch_binding(x, a):
    # differentiable; unbound when no element is above x
    for i in range(a.shape[0]):
        if a[i] > x:
            m = a[i] * x
    return m * m


def first_index_where(a, x):
    for i in range(a.shape[0]):
        if a[i] > x:
            found = i
            break
    return found


def always_bound(a):
    s = 0.0
    for i in range(a.shape[0]):
        t = a[i] * 2.0
        if t > 1.0:
            u = t
        else:
            u = -t
        s += u + a[-1 - i]
    return s
