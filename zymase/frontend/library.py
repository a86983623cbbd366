"""Library routines written in the Python subset zymase compiles, lowered like a user's helper
(``lw.call_user``) where a NumPy function needs an algorithm rather than one loop nest.  Being
plain Python, they run unchanged under CPython too (the tests compare the two), and reverse
mode treats them as any helper: ``argsort`` returns integers, so a sort's derivative is that of
the gather ``a[argsort(a)]``.
"""

import numpy as np


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
    return (s[n // 2 - 1] + s[n // 2]) / 2.0 + zero
