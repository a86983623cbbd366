"""Iterative solvers as scientists write them (issue 18): filters, Krylov and Newton solvers,
adaptive and implicit integrators, optimizers run inside the function, fixed-point iterations.

Every program is a scalar-valued function of float arrays and scalars, written in plain
NumPy style: arrays renewed in ``while`` loops and in ``for`` loops with ``break``, arrays
chosen by branches, matrix products on arrays the loop later replaces or writes, carried
arrays also written in place, buffer swaps, a recursive helper returning arrays, a
``custom_vjp`` function returning arrays inside a loop, ``np.linalg.solve`` in a time loop
and a list grown in a loop.

``PROGRAMS = {name: (fn, args, argnums)}`` at the bottom gives small inputs for each and the
arguments to differentiate (all float arrays or floats).  The inputs keep every data-dependent
decision (iteration counts, accepted steps, branches) away from its threshold, so central
differences of a few 1e-6 see the same path.
"""

import math

import numpy as np

import zymase

# ---------------------------------------------------------------------------------------------
# Kalman filter
# ---------------------------------------------------------------------------------------------

def kalman_filter(ys, q, r):
    """Kalman filter, constant-velocity model in 2-D (state 4), scalar observation per step.

    Pattern: covariance renewed by matrix products on the carried P (``P = F @ P @ F.T + Q``),
    then replaced again by ``P = P - np.outer(K, H @ P)``; state ``x`` renewed each step.
    Returns the negative log-likelihood of the observations.
    """
    dt = 0.1
    F = np.eye(4)
    F[0, 2] = dt
    F[1, 3] = dt
    Q = q * np.eye(4)
    H = np.array([1.0, 0.5, 0.0, 0.0])
    x = np.zeros(4)
    P = np.eye(4)
    nll = 0.0
    for t in range(ys.shape[0]):
        # predict
        x = F @ x
        P = F @ P @ F.T + Q
        # update with the scalar observation ys[t]
        S = H @ P @ H + r
        K = P @ H / S
        innov = ys[t] - H @ x
        x = x + K * innov
        P = P - np.outer(K, H @ P)
        nll += 0.5 * (math.log(2.0 * math.pi * S) + innov * innov / S)
    return nll


# ---------------------------------------------------------------------------------------------
# Conjugate gradients
# ---------------------------------------------------------------------------------------------

def poisson_matrix(n, sigma):
    """Dense 1-D Poisson matrix tridiag(-1, 2 + sigma, -1)."""
    A = np.zeros((n, n))
    for i in range(n):
        A[i, i] = 2.0 + sigma
        if i > 0:
            A[i, i - 1] = -1.0
        if i < n - 1:
            A[i, i + 1] = -1.0
    return A


def cg_poisson(b, sigma):
    """Conjugate gradients on (Poisson + sigma I) x = b with a tolerance-based ``while`` loop.

    Pattern: x, r, p renewed inside a ``while`` loop with a data-dependent exit
    (``p = r + beta * p``); a matrix-vector product on the renewed ``p``.
    Returns a quadratic functional of the solution.
    """
    n = b.shape[0]
    A = poisson_matrix(n, sigma)
    x = np.zeros(n)
    r = b.copy()
    p = r.copy()
    rs = r @ r
    tol = 1e-10 * (b @ b)
    k = 0
    while rs > tol and k < 10 * n:
        Ap = A @ p
        alpha = rs / (p @ Ap)
        x = x + alpha * p
        r = r - alpha * Ap
        rs_new = r @ r
        beta = rs_new / rs
        p = r + beta * p
        rs = rs_new
        k += 1
    return x @ x + 0.5 * (x @ b)


# ---------------------------------------------------------------------------------------------
# Newton's method
# ---------------------------------------------------------------------------------------------

def newton_system(p):
    """Newton's method for a 3x3 nonlinear system F(x; p) = 0 with ``np.linalg.solve`` and a
    convergence ``break``.

    Pattern: ``x = x - dx`` renewed in a ``for`` loop with ``break``.  Returns a smooth
    function of the root.
    """
    x = np.array([1.0, 1.0, 1.0])
    for _ in range(50):
        Fx = np.array([
            x[0] ** 2 + x[1] ** 2 + x[2] ** 2 - p[0],
            x[0] * x[1] - p[1],
            np.exp(0.1 * x[2]) + x[0] - p[2],
        ])
        J = np.array([
            [2.0 * x[0], 2.0 * x[1], 2.0 * x[2]],
            [x[1], x[0], 0.0],
            [1.0, 0.0, 0.1 * np.exp(0.1 * x[2])],
        ])
        dx = np.linalg.solve(J, Fx)
        x = x - dx
        if np.linalg.norm(dx) < 1e-12:
            break
    return x[0] + 2.0 * x[1] + 3.0 * x[2]


# ---------------------------------------------------------------------------------------------
# Levenberg-Marquardt
# ---------------------------------------------------------------------------------------------

def _lm_residual(theta, t, y):
    return theta[0] * np.exp(-theta[1] * t) + theta[2] - y


def levenberg_marquardt(y, t):
    """Levenberg-Marquardt fit of y ~ a exp(-b t) + c with accepted and rejected steps.

    Pattern: ``theta = theta_new`` only when the step is accepted (an array chosen by a
    branch inside a loop); damping ``lam`` raised or lowered by the branch; normal equations
    solved with ``np.linalg.solve``.  Returns the fitted curve's value at t = 0.5.
    """
    theta = np.array([1.0, 1.0, 0.0])
    lam = 1e-2
    r = _lm_residual(theta, t, y)
    cost = 0.5 * (r @ r)
    for _ in range(30):
        e = np.exp(-theta[1] * t)
        J = np.empty((t.shape[0], 3))
        J[:, 0] = e
        J[:, 1] = -theta[0] * t * e
        J[:, 2] = 1.0
        JtJ = J.T @ J
        g = J.T @ r
        A = JtJ + lam * np.diag(np.diag(JtJ))
        delta = np.linalg.solve(A, -g)
        theta_new = theta + delta
        r_new = _lm_residual(theta_new, t, y)
        cost_new = 0.5 * (r_new @ r_new)
        if cost_new < cost:
            theta = theta_new
            r = r_new
            cost = cost_new
            lam = lam * 0.3
        else:
            lam = lam * 10.0
    return theta[0] * math.exp(-theta[1] * 0.5) + theta[2]


# ---------------------------------------------------------------------------------------------
# Adaptive Runge-Kutta (Dormand-Prince 5(4))
# ---------------------------------------------------------------------------------------------

def _lotka_volterra(y, a):
    return np.array([a[0] * y[0] - a[1] * y[0] * y[1],
                     -a[2] * y[1] + a[3] * y[0] * y[1]])


def rk45_adaptive(y0, a):
    """Adaptive Dormand-Prince RK45 on Lotka-Volterra with error control and step rejection.

    Pattern: ``y = y5`` renewed inside a ``while t < t_end`` loop only when the step is
    accepted; step size adapted from the embedded error estimate.  The step-size controller
    rounds the factor to a grid so the accepted/rejected pattern is piecewise constant.
    Returns a functional of the final state.
    """
    t = 0.0
    t_end = 2.0
    h = 0.1
    y = y0.copy()
    rtol = 1e-5
    nsteps = 0
    while t < t_end and nsteps < 1000:
        if t + h > t_end:
            h = t_end - t
        k1 = _lotka_volterra(y, a)
        k2 = _lotka_volterra(y + h * (1.0 / 5.0) * k1, a)
        k3 = _lotka_volterra(y + h * (3.0 / 40.0 * k1 + 9.0 / 40.0 * k2), a)
        k4 = _lotka_volterra(y + h * (44.0 / 45.0 * k1 - 56.0 / 15.0 * k2 + 32.0 / 9.0 * k3), a)
        k5 = _lotka_volterra(y + h * (19372.0 / 6561.0 * k1 - 25360.0 / 2187.0 * k2
                                      + 64448.0 / 6561.0 * k3 - 212.0 / 729.0 * k4), a)
        k6 = _lotka_volterra(y + h * (9017.0 / 3168.0 * k1 - 355.0 / 33.0 * k2
                                      + 46732.0 / 5247.0 * k3 + 49.0 / 176.0 * k4
                                      - 5103.0 / 18656.0 * k5), a)
        y5 = y + h * (35.0 / 384.0 * k1 + 500.0 / 1113.0 * k3 + 125.0 / 192.0 * k4
                      - 2187.0 / 6784.0 * k5 + 11.0 / 84.0 * k6)
        k7 = _lotka_volterra(y5, a)
        y4 = y + h * (5179.0 / 57600.0 * k1 + 7571.0 / 16695.0 * k3 + 393.0 / 640.0 * k4
                      - 92097.0 / 339200.0 * k5 + 187.0 / 2100.0 * k6 + 1.0 / 40.0 * k7)
        scale = rtol * (1.0 + np.maximum(np.abs(y), np.abs(y5)))
        err = np.sqrt(np.mean(((y5 - y4) / scale) ** 2))
        if err <= 1.0:
            t = t + h
            y = y5
            nsteps += 1
        # step-size controller, quantised so that the path does not move with the inputs
        fac = 0.9 * err ** -0.2 if err > 0.0 else 5.0
        fac = min(5.0, max(0.2, fac))
        h = h * math.floor(fac * 4.0) / 4.0 if fac >= 0.25 else h * 0.2
    return y[0] * y[0] + 0.5 * y[1]


# ---------------------------------------------------------------------------------------------
# Implicit Euler with an inner Newton loop
# ---------------------------------------------------------------------------------------------

def implicit_euler_newton(u0, k):
    """Implicit Euler for a stiff reaction-diffusion chain u' = D u - k u^3, inner Newton
    loop (``while`` with a tolerance) solving each step with ``np.linalg.solve``.

    Pattern: ``u = v`` after the inner loop renews ``v``; ``np.linalg.solve`` inside a
    time loop.  Returns the final energy.
    """
    n = u0.shape[0]
    dt = 0.05
    D = np.zeros((n, n))
    for i in range(n):
        D[i, i] = -2.0
        if i > 0:
            D[i, i - 1] = 1.0
        if i < n - 1:
            D[i, i + 1] = 1.0
    eye = np.eye(n)
    u = u0.copy()
    for _ in range(10):
        v = u.copy()
        res = 1.0
        it = 0
        while res > 1e-12 and it < 20:
            G = v - u - dt * (D @ v - k * v ** 3)
            JG = eye - dt * (D - np.diag(3.0 * k * v ** 2))
            dv = np.linalg.solve(JG, G)
            v = v - dv
            res = np.max(np.abs(dv))
            it += 1
        u = v
    return 0.5 * (u @ u)


# ---------------------------------------------------------------------------------------------
# Optimizer inside the function
# ---------------------------------------------------------------------------------------------

def adam_least_squares(w0, X, y):
    """Adam run for a fixed number of steps on a least-squares loss inside the function.

    Pattern: parameters and moment estimates ``w, m, v`` renewed each step of a ``for`` loop
    (no break): the reverse-mode case the README says works.  Returns the validation loss.
    """
    lr = 0.05
    b1 = 0.9
    b2 = 0.999
    eps = 1e-8
    w = w0.copy()
    m = np.zeros_like(w)
    v = np.zeros_like(w)
    n = X.shape[0]
    for t in range(1, 26):
        resid = X @ w - y
        g = X.T @ resid / n
        m = b1 * m + (1.0 - b1) * g
        v = b2 * v + (1.0 - b2) * g * g
        mhat = m / (1.0 - b1 ** t)
        vhat = v / (1.0 - b2 ** t)
        w = w - lr * mhat / (np.sqrt(vhat) + eps)
    resid = X @ w - y
    return 0.5 * (resid @ resid) / n


# ---------------------------------------------------------------------------------------------
# Fixed point
# ---------------------------------------------------------------------------------------------

def fixed_point(c, a):
    """Fixed-point iteration ``x = g(x)`` with g(x) = c + a tanh(M x), until converged.

    Pattern: ``x = x_new`` in a ``while True`` loop with a ``break`` on convergence.
    Returns a weighted sum of the fixed point.
    """
    n = c.shape[0]
    M = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            M[i, j] = 1.0 / (1.0 + i + j)
    x = np.zeros(n)
    it = 0
    while True:
        x_new = c + a * np.tanh(M @ x)
        it += 1
        if np.max(np.abs(x_new - x)) < 1e-13 or it >= 200:
            x = x_new
            break
        x = x_new
    return np.sum(x * np.arange(1.0, n + 1.0))


# ---------------------------------------------------------------------------------------------
# Buffer swaps
# ---------------------------------------------------------------------------------------------

def heat_buffer_swap(u0, alpha):
    """Explicit heat equation with two buffers swapped every step (``u, un = un, u``).

    Pattern: the new buffer written through slices, then the names swapped.  Returns the
    final energy weighted by position.
    """
    u = u0.copy()
    un = np.zeros_like(u)
    n = u.shape[0]
    for _ in range(20):
        un[0] = 0.0
        un[n - 1] = 0.0
        un[1:-1] = u[1:-1] + alpha * (u[:-2] - 2.0 * u[1:-1] + u[2:])
        u, un = un, u
    w = np.linspace(0.0, 1.0, n)
    return np.sum(w * u * u)


def jacobi_parity(b, omega):
    """Weighted Jacobi for tridiag(-1, 4, -1) x = b with two preallocated buffers; the result
    is read from whichever buffer the iteration count leaves current, the buffers swapped once
    more without being written when the count is odd.

    Pattern: buffer swap in the main loop (written) plus a loop that only swaps the two
    buffers (never writes them).
    """
    n = b.shape[0]
    x = np.zeros(n)
    xn = np.zeros(n)
    for _ in range(15):
        for i in range(n):
            s = b[i]
            if i > 0:
                s += x[i - 1]
            if i < n - 1:
                s += x[i + 1]
            xn[i] = (1.0 - omega) * x[i] + omega * s / 4.0
        x, xn = xn, x
    # undo the last swaps so that ``xn`` names the current iterate again (swaps only)
    for _ in range(3):
        x, xn = xn, x
    return np.sum(xn * xn) + 0.1 * np.sum(x)


# ---------------------------------------------------------------------------------------------
# Recursive helper returning a new array
# ---------------------------------------------------------------------------------------------

def _de_casteljau(ctrl, t):
    if ctrl.shape[0] == 1:
        return ctrl[0].copy()
    return _de_casteljau((1.0 - t) * ctrl[:-1] + t * ctrl[1:], t)


def bezier_length(ctrl):
    """Length of a Bezier curve sampled at 16 points, each point by recursive de Casteljau.

    Pattern: a recursive helper returning a new array, called in a loop.
    """
    prev = _de_casteljau(ctrl, 0.0)
    length = 0.0
    for k in range(1, 16):
        pt = _de_casteljau(ctrl, k / 15.0)
        d = pt - prev
        length += math.sqrt(d @ d)
        prev = pt
    return length


# ---------------------------------------------------------------------------------------------
# Carried array also written in place
# ---------------------------------------------------------------------------------------------

def projected_gradient_nnls(A, b):
    """Non-negative least squares by projected gradient descent: ``x = x - step * g`` then the
    negative entries clamped in place (``x[i] = 0.0``).

    Pattern: a carried array renewed each iteration and also written in place.
    Returns the final residual norm squared.
    """
    n = A.shape[1]
    x = np.full(n, 0.5)
    step = 0.05
    for _ in range(40):
        g = A.T @ (A @ x - b)
        x = x - step * g
        for i in range(n):
            if x[i] < 0.0:
                x[i] = 0.0
    r = A @ x - b
    return r @ r


# ---------------------------------------------------------------------------------------------
# Array chosen by a branch
# ---------------------------------------------------------------------------------------------

def scaled_or_copied(x, c):
    """``y = 2 * x if c > 0 else x.copy()`` then a loop smoothing ``y`` in place.

    Pattern: an array chosen by a branch (conditional expression), written afterwards.
    """
    y = 2.0 * x if c > 0.0 else x.copy()
    for i in range(1, y.shape[0]):
        y[i] = 0.5 * (y[i] + y[i - 1])
    return np.sum(y * y) * c


def upwind_advection(u0, vel):
    """First-order upwind advection with a view of one of two buffers chosen by the sign of
    the velocity, then written.

    Pattern: ``dst = un[1:] if vel > 0 else un[:-1]`` (a view chosen by a branch), written.
    """
    u = u0.copy()
    un = u0.copy()
    n = u.shape[0]
    cfl = abs(vel) * 0.4
    for _ in range(10):
        if vel > 0.0:
            dst = un[1:]
            src = u[1:]
            up = u[:-1]
        else:
            dst = un[:-1]
            src = u[:-1]
            up = u[1:]
        dst[:] = src - cfl * (src - up)
        u[:] = un
    return np.sum(u * np.linspace(1.0, 2.0, n))


# ---------------------------------------------------------------------------------------------
# custom_vjp returning arrays inside a loop
# ---------------------------------------------------------------------------------------------

@zymase.custom_vjp
def softclip(z):
    """Smooth clip to (-2, 2): 2 tanh(z / 2)."""
    return 2.0 * np.tanh(0.5 * z)


def _softclip_fwd(z):
    out = 2.0 * np.tanh(0.5 * z)
    return out, out


def _softclip_bwd(out, ct):
    return (ct * (1.0 - 0.25 * out * out),)


softclip.defvjp(_softclip_fwd, _softclip_bwd)


def rnn_custom_vjp(W, xs):
    """A recurrent network whose activation is a ``custom_vjp`` function of arrays, called in
    the time loop: ``h = softclip(W @ h + xs[t])``.

    Pattern: a custom_vjp function returning an array inside a loop; a matrix product on
    the renewed ``h``.
    """
    h = np.zeros(W.shape[0])
    total = 0.0
    for t in range(xs.shape[0]):
        h = softclip(W @ h + xs[t])
        total += np.sum(h * h)
    return total


# ---------------------------------------------------------------------------------------------
# np.linalg.solve inside a time loop
# ---------------------------------------------------------------------------------------------

def crank_nicolson(u0, kappa):
    """Crank-Nicolson for the heat equation, each step ``u = np.linalg.solve(A, B @ u)``.

    Pattern: ``np.linalg.solve`` inside a time loop, with ``A`` and ``B`` depending on the
    differentiated diffusivity.  Returns the final mean of u^2.
    """
    n = u0.shape[0]
    L = np.zeros((n, n))
    for i in range(n):
        L[i, i] = -2.0
        if i > 0:
            L[i, i - 1] = 1.0
        if i < n - 1:
            L[i, i + 1] = 1.0
    r = 0.5 * kappa
    A = np.eye(n) - r * L
    B = np.eye(n) + r * L
    u = u0.copy()
    for _ in range(12):
        u = np.linalg.solve(A, B @ u)
    return np.mean(u * u)


# ---------------------------------------------------------------------------------------------
# Growing list (memory_limit with lists)
# ---------------------------------------------------------------------------------------------

def pendulum_energies(theta0, damping):
    """Semi-implicit Euler for a chain of damped pendulums; the total energy recorded in a
    list every step; returns the mean recorded energy.

    Pattern: a list grown with ``append`` in a time loop carrying arrays (for
    ``memory_limit`` checkpointing of loops with lists and arrays).
    """
    th = theta0.copy()
    om = np.zeros_like(th)
    dt = 0.02
    energies = []
    for _ in range(60):
        om = om - dt * (np.sin(th) + damping * om)
        th = th + dt * om
        energies.append(0.5 * np.sum(om * om) + np.sum(1.0 - np.cos(th)))
    return sum(energies) / len(energies)


# ---------------------------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------------------------

def _rng():
    return np.random.default_rng(18)


def _inputs():
    rng = _rng()
    out = {}
    ys = np.cumsum(rng.normal(0.0, 0.3, 12))
    out["kalman_filter"] = (kalman_filter, (ys, 0.05, 0.2), (0, 1, 2))
    b = np.sin(np.linspace(0.3, 3.0, 10))
    out["cg_poisson"] = (cg_poisson, (b, 0.1), (0, 1))
    out["newton_system"] = (newton_system, (np.array([3.0, 0.8, 2.2]),), 0)
    t = np.linspace(0.0, 2.0, 12)
    y = 2.0 * np.exp(-1.3 * t) + 0.4 + 0.01 * np.sin(7.0 * t)
    out["levenberg_marquardt"] = (levenberg_marquardt, (y, t), 0)
    out["rk45_adaptive"] = (rk45_adaptive, (np.array([1.0, 0.5]),
                                            np.array([1.1, 0.4, 0.4, 0.1])), (0, 1))
    u0 = np.array([0.5, 1.0, 0.8, 0.3, 0.1])
    out["implicit_euler_newton"] = (implicit_euler_newton, (u0, 2.0), (0, 1))
    X = rng.normal(size=(8, 3))
    yy = X @ np.array([0.5, -1.0, 2.0]) + 0.1 * rng.normal(size=8)
    out["adam_least_squares"] = (adam_least_squares, (np.zeros(3), X, yy), (0, 1, 2))
    out["fixed_point"] = (fixed_point, (np.array([0.3, -0.2, 0.5, 0.1]), 0.4), (0, 1))
    u0h = np.sin(np.linspace(0.0, np.pi, 9)) + 0.1 * np.arange(9)
    out["heat_buffer_swap"] = (heat_buffer_swap, (u0h, 0.2), (0, 1))
    out["jacobi_parity"] = (jacobi_parity, (np.linspace(1.0, 2.0, 6), 0.8), (0, 1))
    ctrl = np.array([[0.0, 0.0], [1.0, 2.0], [3.0, 3.0], [4.0, 0.5]])
    out["bezier_length"] = (bezier_length, (ctrl,), 0)
    An = rng.normal(size=(6, 4))
    bn = rng.normal(size=6)
    out["projected_gradient_nnls"] = (projected_gradient_nnls, (An, bn), (0, 1))
    out["scaled_or_copied"] = (scaled_or_copied, (np.array([1.0, -0.5, 2.0, 0.3]), 0.7),
                               (0, 1))
    out["upwind_advection"] = (upwind_advection, (np.exp(-np.linspace(-2, 2, 8) ** 2), 0.6),
                               (0, 1))
    W = 0.4 * rng.normal(size=(3, 3))
    xs = rng.normal(size=(6, 3))
    out["rnn_custom_vjp"] = (rnn_custom_vjp, (W, xs), (0, 1))
    out["crank_nicolson"] = (crank_nicolson, (np.sin(np.linspace(0, np.pi, 7)), 0.3), (0, 1))
    out["pendulum_energies"] = (pendulum_energies, (np.array([0.3, 0.8, -0.5]), 0.1), (0, 1))
    return out


PROGRAMS = _inputs()
