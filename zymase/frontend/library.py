"""Library routines written in the Python subset zymase compiles, lowered like a user's helper
(``lw.call_user``) where a NumPy function needs an algorithm rather than one loop nest.  Being
plain Python, they run unchanged under CPython too (the tests compare the two), and reverse
mode treats them as any helper: ``argsort`` returns integers, so a sort's derivative is that of
the gather ``a[argsort(a)]``.
"""

import numpy as np

from ..lang import custom_vjp


def _before(x, y):
    """NumPy's sort order: NaN after every number."""
    return x < y or (y != y and x == x)  # noqa: PLR0124 (x != x: NaN)


def argsort_stable(a):
    """Indices sorting the 1-D ``a``, equal elements in index order (NumPy's kind="stable"):
    bottom-up merge sort, runs of 16 sorted by insertion first."""
    n = a.shape[0]
    idx = np.empty(n, np.int64)
    for i in range(n):
        idx[i] = i
    run = 16
    for lo in range(0, n, run):
        hi = min(lo + run, n)
        for i in range(lo + 1, hi):
            k = idx[i]
            j = i - 1
            while j >= lo and _before(a[k], a[idx[j]]):
                idx[j + 1] = idx[j]
                j -= 1
            idx[j + 1] = k
    tmp = np.empty(n, np.int64)
    width = run
    while width < n:
        for lo in range(0, n, 2 * width):
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            i = lo
            j = mid
            for k in range(lo, hi):
                if j < hi and (i >= mid or _before(a[idx[j]], a[idx[i]])):
                    tmp[k] = idx[j]
                    j += 1
                else:
                    tmp[k] = idx[i]
                    i += 1
        idx, tmp = tmp, idx
        width *= 2
    return idx


def median(a):
    """``np.median`` of a 1-D array: the middle element, or the mean of the two middle ones;
    NaN when ``a`` holds a NaN or is empty (NumPy also warns there).  Results are float64, or
    float32 for float32 input, as NumPy's."""
    s = np.sort(a)
    n = s.shape[0]
    zero = s[0:0].sum() * 0.0  # 0.0 of the result's type
    if n == 0 or s[n - 1] != s[n - 1]:  # noqa: PLR0124 (NaN sorts last)
        return zero + np.nan
    if n % 2 == 1:
        return s[n // 2] + zero
    return (s[n // 2 - 1] * 1.0 + s[n // 2]) / 2.0 + zero  # (ints and bools added as floats)


def lu_solve(a, b):
    """X with ``a @ X = b`` (``b`` of shape (n, k)): Gaussian elimination with partial pivoting,
    LAPACK's ``gesv`` method; LinAlgError("Singular matrix") on an exactly zero pivot, as
    NumPy raises."""
    n = a.shape[0]
    m = a.copy()  # (float64 or complex128: the handler converts)
    x = b.copy()
    k = x.shape[1]
    for c in range(n):
        p = c
        best = abs(m[c, c])
        for r in range(c + 1, n):
            if abs(m[r, c]) > best:
                best = abs(m[r, c])
                p = r
        if best == 0.0:
            raise np.linalg.LinAlgError("Singular matrix")
        if p != c:
            for j in range(n):
                t = m[c, j]
                m[c, j] = m[p, j]
                m[p, j] = t
            for j in range(k):
                t = x[c, j]
                x[c, j] = x[p, j]
                x[p, j] = t
        for r in range(c + 1, n):  # (no skipping f == 0: its derivative may not be 0)
            f = m[r, c] / m[c, c]
            for j in range(c + 1, n):
                m[r, j] -= f * m[c, j]
            for j in range(k):
                x[r, j] -= f * x[c, j]
    for c in range(n - 1, -1, -1):
        for j in range(k):
            s = x[c, j]
            for r in range(c + 1, n):
                s -= m[c, r] * x[r, j]
            x[c, j] = s / m[c, c]
    return x


def _square(a):
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise np.linalg.LinAlgError("Last 2 dimensions of the array must be square")
    return a.shape[0]


@custom_vjp
def solve(a, b):
    """``np.linalg.solve(a, b)``: ``b`` of shape (n,) or (n, k).  Reverse mode uses the adjoint
    rule (``_solve_bwd``: one solve with the transpose), not the elimination's tape; forward
    mode differentiates the elimination."""
    n = _square(a)
    if b.shape[0] != n:
        raise ValueError("solve: b must have as many rows as a")
    if b.ndim == 1:  # (known when compiling: one branch is compiled)
        x = lu_solve(a, b.reshape(n, 1))[:, 0].copy()
    else:
        x = lu_solve(a, b)
    return x


def _solve_fwd(a, b):
    x = solve(a, b)
    return x, (a, x)


def _solve_bwd(res, ct):
    """x = a^-1 b:  b's cotangent is lam = a^-H ct, a's is -lam x^H (the conjugates only
    matter for complex matrices)."""
    a, x = res
    lam = solve(np.conj(a).T, ct)
    if x.ndim == 1:
        return -np.outer(lam, np.conj(x)), lam
    return -(lam @ np.conj(x).T), lam


def _solve_jvp(primals, tangents):
    """dx = a^-1 (db - da x)."""
    (a, b), (da, db) = primals, tangents
    x = solve(a, b)
    return x, solve(a, db - da @ x)


solve.defvjp(_solve_fwd, _solve_bwd)
solve.defjvp(_solve_jvp)


@custom_vjp
def inv(a):
    """``np.linalg.inv(a)``: the solve of ``a @ X = I``; derivatives by the standard rule
    d(a^-1) = -a^-1 da a^-1."""
    n = _square(a)
    return lu_solve(a, np.eye(n) + a[0:0, 0:0].sum() * 0.0)  # (the identity in a's dtype)


def _inv_fwd(a):
    y = inv(a)
    return y, y


def _inv_bwd(y, ct):
    yh = np.conj(y).T
    return (-(yh @ ct @ yh),)


def _inv_jvp(primals, tangents):
    (a,), (da,) = primals, tangents
    y = inv(a)
    return y, -(y @ da @ y)


inv.defvjp(_inv_fwd, _inv_bwd)
inv.defjvp(_inv_jvp)


def interp(x, xp, fp, left, right):
    """``np.interp`` of the 1-D ``x`` (``left``/``right`` already chosen): NumPy's C routine,
    its exact-node and non-finite-slope cases included."""
    n = xp.shape[0]
    out = np.empty(x.shape[0])
    for i in range(x.shape[0]):
        v = x[i]
        if v != v:  # noqa: PLR0124 (NaN)
            out[i] = v
        elif v < xp[0]:
            out[i] = left
        elif v > xp[n - 1]:
            out[i] = right
        elif v == xp[n - 1]:
            out[i] = fp[n - 1]
        else:
            lo = 0
            hi = n - 1  # xp[lo] <= v < xp[hi]
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if xp[mid] <= v:
                    lo = mid
                else:
                    hi = mid
            if xp[lo] == v:
                out[i] = fp[lo]
            else:
                slope = (fp[lo + 1] - fp[lo]) / (xp[lo + 1] - xp[lo])
                r = slope * (v - xp[lo]) + fp[lo]
                if r != r:  # noqa: PLR0124
                    r = slope * (v - xp[lo + 1]) + fp[lo + 1]
                    if r != r and fp[lo] == fp[lo + 1]:  # noqa: PLR0124
                        r = fp[lo]
                out[i] = r
    return out


def searchsorted(a, v, right):
    """``np.searchsorted`` of the 1-D sorted ``a`` for each of the 1-D ``v``: binary search in
    NumPy's order (NaN after every number)."""
    n = a.shape[0]
    out = np.empty(v.shape[0], np.int64)
    for i in range(v.shape[0]):
        x = v[i]
        lo = 0
        hi = n
        while lo < hi:
            mid = (lo + hi) // 2
            if right:
                go = not _before(x, a[mid])
            else:
                go = _before(a[mid], x)
            if go:
                lo = mid + 1
            else:
                hi = mid
        out[i] = lo
    return out


def cov(m, ddof):
    """``np.cov`` of the rows of the 2-D ``m`` (variables by observations)."""
    x = m - m.mean(axis=1, keepdims=True)
    return (x @ x.T) / (m.shape[1] - ddof)


def corrcoef(m):
    """``np.corrcoef`` of the rows of ``m``: the covariance over the outer product of its
    standard deviations, clipped to [-1, 1] as NumPy does."""
    c = cov(m, 1)
    d = np.sqrt(np.diag(c))
    return np.clip(c / np.outer(d, d), -1.0, 1.0)


def trapezoid(y, x, dx, with_x):
    """``np.trapezoid`` of the 1-D ``y``: the trapezoid rule with spacing ``dx``, or at the
    sample points ``x``."""
    s = 0.0
    for i in range(y.shape[0] - 1):
        d = x[i + 1] - x[i] if with_x else dx
        s += d * (y[i + 1] + y[i]) / 2.0
    return s


def unique(a):
    """``np.unique`` of the 1-D ``a``: its sorted distinct values, every NaN as one (NumPy's
    ``equal_nan=True``)."""
    s = np.sort(a)
    n = s.shape[0]
    keep = 0
    for i in range(n):
        if i == 0 or not (s[i] == s[i - 1] or (s[i] != s[i] and s[i - 1] != s[i - 1])):  # noqa: PLR0124
            keep += 1
    out = np.empty(keep, s.dtype)
    k = 0
    for i in range(n):
        if i == 0 or not (s[i] == s[i - 1] or (s[i] != s[i] and s[i - 1] != s[i - 1])):  # noqa: PLR0124
            out[k] = s[i]
            k += 1
    return out


def flatnonzero(a):
    """Indices of the non-zero elements of the 1-D ``a``, in order."""
    n = 0
    for i in range(a.shape[0]):
        if a[i] != 0:
            n += 1
    out = np.empty(n, np.int64)
    k = 0
    for i in range(a.shape[0]):
        if a[i] != 0:
            out[k] = i
            k += 1
    return out


def histogram_edges(a, edges, w, weighted):
    """``np.histogram(a, bins=edges)`` counts (or sums of ``w``): ``edges[k] <= v <
    edges[k + 1]``, the last bin closed; values outside (and NaN) are not counted.  The edges
    must increase (ValueError, as NumPy)."""
    nb = edges.shape[0] - 1
    if nb < 1:
        raise ValueError("`bins` must have at least one bin edge pair")
    for k in range(nb):
        if edges[k + 1] < edges[k]:
            raise ValueError("`bins` must increase monotonically, when an array")
    hist = np.zeros(nb)
    for i in range(a.shape[0]):
        v = a[i] * 1.0
        if v >= edges[0] and v <= edges[nb]:
            lo = 0
            hi = nb
            while hi - lo > 1:  # edges[lo] <= v < edges[hi] (or v the last edge)
                mid = (lo + hi) // 2
                if v >= edges[mid]:
                    lo = mid
                else:
                    hi = mid
            if weighted:
                hist[lo] += w[i]
            else:
                hist[lo] += 1.0
    return hist


def quantile_positions(n, q, midpoint):
    """NumPy's interpolation for ``np.quantile(method="linear")`` (``"midpoint"``) of ``n``
    sorted values at each of the 1-D ``q`` (in [0, 1], of the interpolation's float type):
    the indices ``lo``, ``hi`` around the virtual index ``(n - 1) * q``, the weight ``gamma``
    of ``hi``, ``1 - gamma`` and whether NumPy's lerp takes its upper form (``gamma >= 0.5``).
    Past the last index both are the last and ``gamma`` is measured from -1, as NumPy's."""
    k = q.shape[0]
    lo = np.empty(k, np.int64)
    hi = np.empty(k, np.int64)
    gamma = np.empty(k, q.dtype)
    rest = np.empty(k, q.dtype)
    up = np.empty(k, np.bool_)
    for j in range(k):
        v = (n - 1) * q[j]
        if midpoint:
            v = 0.5 * (np.floor(v) + np.ceil(v))
        p = np.floor(v)
        if v >= n - 1:
            p = -1.0
            lo[j] = n - 1
            hi[j] = n - 1
        else:
            lo[j] = int(p)
            hi[j] = int(p) + 1
        g = v - p
        if midpoint:
            g = 0.0 if v == np.floor(v) else 0.5
        gamma[j] = g
        rest[j] = 1 - g
        up[j] = g >= 0.5
    return lo, hi, gamma, rest, up


def quantile_lerp(x, lo, hi, gamma, rest, up):
    """The quantiles of each row of the 2-D ``x`` (sorted here): NumPy's lerp between the
    sorted values at ``lo`` and ``hi`` (``quantile_positions``), ``gamma``/``rest`` of the
    result's type; NaN for a row holding a NaN.  Result (len(q), rows)."""
    m = x.shape[0]
    n = x.shape[1]
    k = lo.shape[0]
    out = np.empty((k, m), gamma.dtype)
    for i in range(m):
        s = np.sort(x[i])
        last = s[n - 1]
        for j in range(k):
            if last != last:  # noqa: PLR0124 (NaN sorts last)
                out[j, i] = last
            else:
                a = s[lo[j]]
                b = s[hi[j]]
                d = b - a
                if up[j]:
                    out[j, i] = b - d * rest[j]
                else:
                    out[j, i] = a + d * gamma[j]
    return out


def quantile_indices(n, q, mode):
    """The index among ``n`` sorted values of each of the 1-D ``q`` (in [0, 1]) for
    ``np.quantile(method=...)``: "lower" (``mode`` 0), "higher" (1), "nearest" (2, ties to
    even as ``np.around``)."""
    k = q.shape[0]
    idx = np.empty(k, np.int64)
    for j in range(k):
        v = (n - 1) * q[j]
        if mode == 0:
            idx[j] = int(np.floor(v))
        elif mode == 1:
            idx[j] = int(np.ceil(v))
        else:
            idx[j] = int(np.round(v))
    return idx


def quantile_pick(x, idx):
    """The sorted value at ``idx`` of each row of the 2-D ``x`` (NaN for a row holding a NaN):
    result (len(idx), rows) of ``x``'s type."""
    m = x.shape[0]
    n = x.shape[1]
    k = idx.shape[0]
    out = np.empty((k, m), x.dtype)
    for i in range(m):
        s = np.sort(x[i])
        last = s[n - 1]
        for j in range(k):
            if last != last:  # noqa: PLR0124
                out[j, i] = last
            else:
                out[j, i] = s[idx[j]]
    return out


def argsort_rows(x):
    """``argsort_stable`` of each row of the 2-D ``x`` (the lines of an N-D sort, moved last):
    a (rows, n) array of int64 indices."""
    m = x.shape[0]
    n = x.shape[1]
    out = np.empty((m, n), np.int64)
    for i in range(m):
        idx = argsort_stable(x[i])
        for k in range(n):
            out[i, k] = idx[k]
    return out


def insert_positions(idx, n, numnew):
    """Where ``np.insert`` puts the ``numnew`` new slices and the ``n`` old ones along the axis:
    ``idx`` (1-D int64, each in [-n, n]) the indices given; one index takes all ``numnew``
    slices in a row, several take one each, placed in a stable order (NumPy's
    ``indices[order] += arange(numnew)``).  Returns (new positions, old positions)."""
    m = idx.shape[0]
    pos = np.empty(numnew, np.int64)
    if m == 1:
        i = idx[0]
        if i < 0:
            i += n
        for k in range(numnew):
            pos[k] = i + k
    else:
        norm = np.empty(m, np.int64)
        for k in range(m):
            i = idx[k]
            if i < 0:
                i += n
            norm[k] = i
        order = argsort_stable(norm)
        for k in range(m):
            pos[order[k]] = norm[order[k]] + k
    taken = np.zeros(n + numnew, np.bool_)
    for k in range(numnew):
        taken[pos[k]] = True
    old = np.empty(n, np.int64)
    j = 0
    for q in range(n + numnew):
        if not taken[q]:
            old[j] = q
            j += 1
    return pos, old


def kept_indices(drop, n):
    """The indices in ``range(n)`` that ``np.delete`` keeps: all but those of ``drop`` (1-D
    int64, each in [-n, n), negative from the end; repeats count once)."""
    gone = np.zeros(n, np.bool_)
    for k in range(drop.shape[0]):
        i = drop[k]
        if i < 0:
            i += n
        gone[i] = True
    count = 0
    for i in range(n):
        if not gone[i]:
            count += 1
    out = np.empty(count, np.int64)
    j = 0
    for i in range(n):
        if not gone[i]:
            out[j] = i
            j += 1
    return out


def isin_sorted(x, t, invert):
    """``np.isin`` of the 1-D ``x`` in the 1-D ``t``: a binary search of each value among the
    sorted ``t`` (NumPy's order, NaN last: NaN equals nothing); ``invert`` negates."""
    s = np.sort(t)
    m = s.shape[0]
    out = np.empty(x.shape[0], np.bool_)
    for i in range(x.shape[0]):
        v = x[i]
        lo = 0
        hi = m
        while lo < hi:
            mid = (lo + hi) // 2
            if _before(s[mid], v):
                lo = mid + 1
            else:
                hi = mid
        found = lo < m and s[lo] == v
        out[i] = found != invert
    return out
