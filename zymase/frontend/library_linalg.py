"""Dense linear algebra written in the Python subset zymase compiles (like ``library.py``), for
``np.linalg.cholesky``, ``det``, ``slogdet``, ``eigh``, ``qr`` and the triangular solves they
need.  Each factorization carries its standard derivative rules (``custom_vjp`` with a forward
rule too), so neither mode differentiates the elimination loops:

* ``cholesky`` (NumPy reads only the lower triangle): dL = L Phi(L^-1 dA_s L^-T) with dA_s the
  symmetric matrix of dA's lower triangle; the cotangent S = L^-T Phi(L^T Lbar) L^-1 lands on the
  lower triangle as S + S^T (the diagonal once), the upper triangle gets nothing.
* ``det`` and ``slogdet``: d det = det tr(A^-1 dA), d log|det| = tr(A^-1 dA) (A must be
  invertible for the derivative: LinAlgError otherwise).
* ``eigh`` (lower triangle read): dw = diag(V^T dA_s V), dV = V (F o (V^T dA_s V)) with
  F_ij = 1 / (w_j - w_i) (distinct eigenvalues).
* ``qr`` (reduced, m >= n): the rule of Walter and Lehmann / JAX's ``qr_jvp_rule``.

The inputs arrive as float64 (the handlers in ``numpy/linalg.py`` convert) and are square where
the routine needs it.  The factorizations themselves: Cholesky, eigh, QR and SVD are NumPy's
LAPACK (``lapack``: a ``host.call``; NumPy's values to the last bit, signs of eigenvectors and
singular vectors included, and LAPACK's blocked speed: own compiled routines measured 4x-100x
slower at n = 200, ``benchmarks/bench_numpy_library.py``); the determinant and ``solve``/``inv``
use LU with partial pivoting compiled from ``lu`` and ``library.lu_solve`` (at NumPy's speed for
small matrices, and usable where Python cannot be called back).  The derivative rules run as
compiled code (matrix products and triangular solves).
"""

import numpy as np

from ..lang import custom_vjp, outline


def lapack(name, a):
    """NumPy's LAPACK factorization ``name`` of the float64 matrix ``a`` (compiled: a
    ``host.call`` of ``ir/host.py``'s ``lapack``, ``numpy/linalg.py`` allocates the results):
    ``"cholesky"`` L, ``"eigh"`` (w, V) of the lower triangle, ``"qr"`` reduced (Q, R),
    ``"svd"`` reduced (U, s, V^T)."""
    if name == "cholesky":
        return np.linalg.cholesky(a)
    if name == "eigh":
        return np.linalg.eigh(a)
    if name == "qr":
        return np.linalg.qr(a)
    return np.linalg.svd(a, full_matrices=False)


def solve_lower(low, b):
    """X with ``low @ X = b`` (``low`` lower triangular, ``b`` of shape (n, k))."""
    n = low.shape[0]
    m = b.shape[1]
    x = b.copy()
    for i in range(n):
        for k in range(i):
            f = low[i, k]
            for j in range(m):
                x[i, j] -= f * x[k, j]
        d = low[i, i]
        for j in range(m):
            x[i, j] /= d
    return x


def solve_upper(up, b):
    """X with ``up @ X = b`` (``up`` upper triangular, ``b`` of shape (n, k))."""
    n = up.shape[0]
    m = b.shape[1]
    x = b.copy()
    for i in range(n - 1, -1, -1):
        for k in range(i + 1, n):
            f = up[i, k]
            for j in range(m):
                x[i, j] -= f * x[k, j]
        d = up[i, i]
        for j in range(m):
            x[i, j] /= d
    return x


def _phi(x):
    """The lower triangle of ``x`` with its diagonal halved."""
    out = np.tril(x)
    for i in range(x.shape[0]):
        out[i, i] = 0.5 * x[i, i]
    return out


def _sym_lower(da):
    """The symmetric matrix whose lower triangle is ``da``'s (what routines that read only the
    lower triangle see)."""
    low = np.tril(da, -1)
    return low + low.T + np.diag(np.diag(da))


def _to_lower(s):
    """A symmetric matrix's cotangent on the lower triangle it was read from."""
    return np.tril(s + s.T) - np.diag(np.diag(s))


@custom_vjp
def cholesky(a):
    """L lower triangular with ``L @ L.T == a`` (``a``'s lower triangle): LAPACK's potrf;
    LinAlgError when ``a`` is not positive definite, as NumPy."""
    return lapack("cholesky", a)


def _cholesky_fwd(a):
    low = cholesky(a)
    return low, low


def _cholesky_bwd(low, ct):
    p = _phi(low.T @ ct)
    y = solve_upper(low.T, p)  # L^-T P
    s = solve_upper(low.T, y.T.copy()).T  # (L^-T P) L^-1
    return (_to_lower(0.5 * (s + s.T)),)


def _cholesky_jvp(primals, tangents):
    (a,), (da,) = primals, tangents
    low = cholesky(a)
    x = solve_lower(low, _sym_lower(da))  # L^-1 dA
    x = solve_lower(low, x.T.copy()).T  # L^-1 dA L^-T
    return low, low @ _phi(x)


cholesky.defvjp(_cholesky_fwd, _cholesky_bwd)
cholesky.defjvp(_cholesky_jvp)


@outline
def lu(a):
    """(LU factors in one matrix, the permutation's sign, singular): partial pivoting as LAPACK's
    getrf; ``singular`` when a pivot is exactly 0 (the factorization stops there)."""
    n = a.shape[0]
    m = a.copy()
    sign = 1.0
    for c in range(n):
        p = c
        best = abs(m[c, c])
        for r in range(c + 1, n):
            if abs(m[r, c]) > best:
                best = abs(m[r, c])
                p = r
        if best == 0.0:
            return m, 0.0, True
        if p != c:
            sign = -sign
            for j in range(n):
                t = m[c, j]
                m[c, j] = m[p, j]
                m[p, j] = t
        for r in range(c + 1, n):
            f = m[r, c] / m[c, c]
            m[r, c] = f
            for j in range(c + 1, n):
                m[r, j] -= f * m[c, j]
    return m, sign, False


def _inverse_t(a):
    """``inv(a).T``, or LinAlgError for a singular ``a`` (a derivative needs it)."""
    n = a.shape[0]
    m, sign, singular = lu(a)
    if singular:
        raise np.linalg.LinAlgError("the derivative of det/slogdet needs an invertible matrix")
    return np.linalg.solve(a.T, np.eye(n))


@custom_vjp
def det(a):
    """The determinant (0.0 for an exactly singular ``a``, as LAPACK's LU gives)."""
    m, sign, singular = lu(a)
    if singular:
        return 0.0
    d = sign
    for i in range(a.shape[0]):
        d *= m[i, i]
    return d


def _det_fwd(a):
    d = det(a)
    return d, (a, d)


def _det_bwd(res, ct):
    a, d = res
    return (ct * d * _inverse_t(a),)


def _det_jvp(primals, tangents):
    (a,), (da,) = primals, tangents
    d = det(a)
    return d, d * np.sum(_inverse_t(a) * da)


det.defvjp(_det_fwd, _det_bwd)
det.defjvp(_det_jvp)


@custom_vjp
def slogdet_sign(a):
    """The sign of the determinant (0.0 when singular); its derivative is 0."""
    m, sign, singular = lu(a)
    if singular:
        return 0.0
    s = sign
    for i in range(a.shape[0]):
        if m[i, i] < 0.0:
            s = -s
    return s


def _sign_fwd(a):
    return slogdet_sign(a), a


def _sign_bwd(a, ct):
    return (np.zeros(a.shape),)


def _sign_jvp(primals, tangents):
    return slogdet_sign(primals[0]), 0.0


slogdet_sign.defvjp(_sign_fwd, _sign_bwd)
slogdet_sign.defjvp(_sign_jvp)


@custom_vjp
def logabsdet(a):
    """log |det a| (-inf when singular), summed from the LU pivots (no overflow)."""
    m, sign, singular = lu(a)
    if singular:
        return -np.inf
    t = 0.0
    for i in range(a.shape[0]):
        t += np.log(abs(m[i, i]))
    return t


def _logabsdet_fwd(a):
    return logabsdet(a), a


def _logabsdet_bwd(a, ct):
    return (ct * _inverse_t(a),)


def _logabsdet_jvp(primals, tangents):
    (a,), (da,) = primals, tangents
    return logabsdet(a), np.sum(_inverse_t(a) * da)


logabsdet.defvjp(_logabsdet_fwd, _logabsdet_bwd)
logabsdet.defjvp(_logabsdet_jvp)


def _lapack_eigh(a):
    """(w ascending, V) of the symmetric matrix of ``a``'s lower triangle: LAPACK's syevd."""
    return lapack("eigh", a)


@custom_vjp
def eigh_values(a):
    """The eigenvalues of the symmetric matrix of ``a``'s lower triangle, ascending."""
    w, v = _lapack_eigh(a)
    return w


def _eigh_fwd(a):
    w, v = _lapack_eigh(a)
    return w, (w, v)


def _eigh_values_bwd(res, ct):
    w, v = res
    return (_to_lower(0.5 * ((v * ct) @ v.T + ((v * ct) @ v.T).T)),)


def _gaps(w):
    """F with F_ij = 1 / (w_j - w_i) off the diagonal, 0 on it."""
    n = w.shape[0]
    f = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            if i != j:
                f[i, j] = 1.0 / (w[j] - w[i])
    return f


def _eigh_values_jvp(primals, tangents):
    (a,), (da,) = primals, tangents
    w, v = _lapack_eigh(a)
    return w, np.diag(v.T @ _sym_lower(da) @ v).copy()


@custom_vjp
def eigh(a):
    """(w, V) of the symmetric matrix of ``a``'s lower triangle, one LAPACK call for both."""
    return _lapack_eigh(a)


def _eigh_pair_fwd(a):
    w, v = _lapack_eigh(a)
    return (w, v), (w, v)


def _eigh_pair_bwd(res, ct):
    w, v = res
    wb, vb = ct
    s = (v * wb) @ v.T + v @ ((_gaps(w) * (v.T @ vb)) @ v.T)
    return (_to_lower(0.5 * (s + s.T)),)


def _eigh_pair_jvp(primals, tangents):
    (a,), (da,) = primals, tangents
    w, v = _lapack_eigh(a)
    p = v.T @ _sym_lower(da) @ v
    return (w, v), (np.diag(p).copy(), v @ (_gaps(w) * p))


eigh.defvjp(_eigh_pair_fwd, _eigh_pair_bwd)
eigh.defjvp(_eigh_pair_jvp)
eigh_values.defvjp(_eigh_fwd, _eigh_values_bwd)
eigh_values.defjvp(_eigh_values_jvp)


def _lapack_qr(a):
    """(Q of shape (m, n), R of shape (n, n)) of ``a`` (m >= n): LAPACK's geqrf/orgqr
    (Householder reflections: NumPy's Q and R, signs included)."""
    return lapack("qr", a)


@custom_vjp
def qr_r(a):
    """R of the reduced QR factorization (m >= n)."""
    q, r = _lapack_qr(a)
    return r


def _qr_tangents(a, da):
    """(Q, R, dQ, dR): JAX's qr_jvp_rule (real)."""
    q, r = _lapack_qr(a)
    dx_rinv = solve_upper(r, np.eye(r.shape[0]))  # R^-1
    dx_rinv = da @ dx_rinv
    qt = q.T @ dx_rinv
    low = np.tril(qt, -1)
    do = low - low.T
    return q, r, q @ (do - qt) + dx_rinv, (qt - do) @ r


def _qr_bwd(q, r, qbar, rbar):
    """The cotangent of ``a`` from those of Q and R (Walter and Lehmann; real, m >= n)."""
    m = r @ rbar.T - qbar.T @ q
    low = np.tril(m, -1)
    b = qbar + q @ (low + low.T + np.diag(np.diag(m)))
    return solve_upper(r, b.T.copy()).T  # b R^-T: R (b R^-T)^T = b^T


def _qr_r_fwd(a):
    q, r = _lapack_qr(a)
    return r, (q, r)


def _qr_r_bwd(res, ct):
    q, r = res
    return (_qr_bwd(q, r, np.zeros(q.shape), ct),)


def _qr_r_jvp(primals, tangents):
    (a,), (da,) = primals, tangents
    q, r, dq, dr = _qr_tangents(a, da)
    return r, dr


@custom_vjp
def qr(a):
    """(Q, R) of the reduced QR factorization (m >= n), one LAPACK call for both."""
    return _lapack_qr(a)


def _qr_pair_fwd(a):
    q, r = _lapack_qr(a)
    return (q, r), (q, r)


def _qr_pair_bwd(res, ct):
    q, r = res
    qb, rb = ct
    return (_qr_bwd(q, r, qb, rb),)


def _qr_pair_jvp(primals, tangents):
    q, r, dq, dr = _qr_tangents(primals[0], tangents[0])
    return (q, r), (dq, dr)


qr.defvjp(_qr_pair_fwd, _qr_pair_bwd)
qr.defjvp(_qr_pair_jvp)
qr_r.defvjp(_qr_r_fwd, _qr_r_bwd)
qr_r.defjvp(_qr_r_jvp)


def _svd(a):
    """(U, s descending, V) of the reduced SVD of a real matrix: LAPACK's gesdd."""
    u, s, vt = lapack("svd", a)
    return u, s, vt.T.copy()


def _svd_gaps(s):
    """F with F_ij = 1 / (s_j^2 - s_i^2) off the diagonal, 0 on it."""
    k = s.shape[0]
    f = np.zeros((k, k))
    for i in range(k):
        for j in range(k):
            if i != j:
                f[i, j] = 1.0 / (s[j] * s[j] - s[i] * s[i])
    return f


def _svd_bwd_all(a, u, s, v, ub, sb, vb):
    """The cotangent of ``a`` from those of U, s and V (reduced SVD; distinct nonzero singular
    values): Townsend's formula."""
    f = _svd_gaps(s)
    ut_ub = u.T @ ub
    vt_vb = v.T @ vb
    j = f * (ut_ub - ut_ub.T)
    k = f * (vt_vb - vt_vb.T)
    inner = j * s + np.diag(sb) + (k.T * s).T  # J S + diag(sb) + S K
    out = u @ inner @ v.T
    m = a.shape[0]
    n = a.shape[1]
    if m > s.shape[0]:  # the part of ub outside U's span
        out = out + ((np.eye(m) - u @ u.T) @ ub / s) @ v.T
    if n > s.shape[0]:
        out = out + u @ ((vb / s).T @ (np.eye(n) - v @ v.T))
    return out


@custom_vjp
def svd_values(a):
    """The singular values, descending."""
    u, s, v = _svd(a)
    return s


def _svd_values_fwd(a):
    u, s, v = _svd(a)
    return s, (u, v)


def _svd_values_bwd(res, ct):
    u, v = res
    return ((u * ct) @ v.T,)


def _svd_values_jvp(primals, tangents):
    (a,), (da,) = primals, tangents
    u, s, v = _svd(a)
    return s, np.diag(u.T @ da @ v).copy()


svd_values.defvjp(_svd_values_fwd, _svd_values_bwd)
svd_values.defjvp(_svd_values_jvp)


@custom_vjp
def svd(a):
    """(U, s, V^T) of the reduced SVD, U's and V's columns matching the descending ``s``."""
    u, s, v = _svd(a)
    return u, s, v.T.copy()


def _svd_fwd(a):
    u, s, v = _svd(a)
    return (u, s, v.T.copy()), (a, u, s, v)


def _svd_bwd(res, ct):
    a, u, s, v = res
    ub, sb, vtb = ct
    return (_svd_bwd_all(a, u, s, v, ub, sb, vtb.T.copy()),)


def _svd_tangents(a, da):
    """(U, s, V, dU, ds, dV) of the reduced SVD (distinct singular values)."""
    u, s, v = _svd(a)
    f = _svd_gaps(s)
    p = u.T @ da @ v
    ds = np.diag(p).copy()
    ps = p * s  # P S
    sp = (p.T * s).T  # S P
    du = u @ (f * (ps + ps.T))
    dv = v @ (f * (sp + sp.T))
    m = a.shape[0]
    n = a.shape[1]
    if m > s.shape[0]:
        du = du + (np.eye(m) - u @ u.T) @ da @ v / s
    if n > s.shape[0]:
        dv = dv + (np.eye(n) - v @ v.T) @ da.T @ u / s
    return u, s, v, du, ds, dv


def _svd_jvp(primals, tangents):
    u, s, v, du, ds, dv = _svd_tangents(primals[0], tangents[0])
    return (u, s, v.T.copy()), (du, ds, dv.T.copy())


svd.defvjp(_svd_fwd, _svd_bwd)
svd.defjvp(_svd_jvp)


def pinv(a, rcond):
    """``np.linalg.pinv``: V diag(1/s) U^T over the singular values above rcond * max(s)."""
    u, s, vt = svd(a)
    cut = rcond * s[0] if s.shape[0] > 0 else 0.0
    inv = np.zeros(s.shape)
    for i in range(s.shape[0]):
        if s[i] > cut:
            inv[i] = 1.0 / s[i]
    return (vt.T * inv) @ u.T


def matrix_rank(a, tol):
    """The number of singular values above ``tol`` (NumPy's default when ``tol`` < 0)."""
    s = svd_values(a)
    if s.shape[0] == 0:
        return 0
    if tol < 0.0:
        tol = s[0] * max(a.shape[0], a.shape[1]) * 2.220446049250313e-16
    r = 0
    for i in range(s.shape[0]):
        if s[i] > tol:
            r += 1
    return r


def lstsq(a, b, rcond):
    """``np.linalg.lstsq(a, b)`` with ``b`` of shape (m, k): the minimum-norm least-squares
    solution over the singular values above ``rcond * max(s)`` (LAPACK's gelsd method; ``rcond``
    < 0: eps * max(m, n)), the squared residuals (only when the rank is n < m), the rank and
    the singular values."""
    m = a.shape[0]
    n = a.shape[1]
    u, s, vt = svd(a)
    if rcond < 0.0:
        rcond = 2.220446049250313e-16 * max(m, n)
    cut = rcond * s[0] if s.shape[0] > 0 else 0.0
    inv = np.zeros(s.shape)
    rank = 0
    for i in range(s.shape[0]):
        if s[i] > cut:
            inv[i] = 1.0 / s[i]
            rank += 1
    x = vt.T @ ((u.T @ b).T * inv).T
    k = b.shape[1]
    count = k if (rank == n and m > n) else 0
    res = np.zeros(count)
    if count > 0:
        r = a @ x - b
        for j in range(k):
            t = 0.0
            for i in range(m):
                t += r[i, j] * r[i, j]
            res[j] = t
    return x, res, rank, s
