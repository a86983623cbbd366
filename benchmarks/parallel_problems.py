"""prange versions of corpus problems, for bench_parallel.py: the loops a user would mark
(every body writes its own element, or sums into a reduction).  ``prange`` here is
``zymase.prange``; the benchmark gives Numba the same functions with ``numba.prange``."""

import math

import numpy as np

from zymase import prange

SOFTENING2 = 0.01


def accelerations(pos, mass, acc):
    n = pos.shape[0]
    for i in prange(n):
        ax = 0.0
        ay = 0.0
        az = 0.0
        for j in range(n):
            if i != j:
                dx = pos[j, 0] - pos[i, 0]
                dy = pos[j, 1] - pos[i, 1]
                dz = pos[j, 2] - pos[i, 2]
                r2 = dx * dx + dy * dy + dz * dz + SOFTENING2
                s = mass[j] / (r2 * math.sqrt(r2))
                ax += s * dx
                ay += s * dy
                az += s * dz
        acc[i, 0] = ax
        acc[i, 1] = ay
        acc[i, 2] = az


def potential(pos, mass):
    n = pos.shape[0]
    pe = 0.0
    for i in prange(n):
        for j in range(n):
            if i != j:
                dx = pos[j, 0] - pos[i, 0]
                dy = pos[j, 1] - pos[i, 1]
                dz = pos[j, 2] - pos[i, 2]
                pe -= 0.5 * mass[i] * mass[j] / math.sqrt(dx * dx + dy * dy + dz * dz
                                                          + SOFTENING2)
    return pe


def nbody(pos0, vel0, mass, dt, steps):
    pos = pos0.copy()
    vel = vel0.copy()
    acc = np.empty_like(pos)
    accelerations(pos, mass, acc)
    for _ in range(steps):
        for i in prange(pos.shape[0]):
            for k in range(3):
                vel[i, k] += 0.5 * dt * acc[i, k]
                pos[i, k] += dt * vel[i, k]
        accelerations(pos, mass, acc)
        for i in prange(pos.shape[0]):
            for k in range(3):
                vel[i, k] += 0.5 * dt * acc[i, k]
    ke = 0.0
    for i in prange(pos.shape[0]):
        ke += 0.5 * mass[i] * (vel[i, 0] ** 2 + vel[i, 1] ** 2 + vel[i, 2] ** 2)
    return ke + potential(pos, mass)


def stencil(u0, c, steps):
    """A 2-D heat equation, explicit steps between two buffers."""
    n, m = u0.shape
    u = u0.copy()
    v = u0.copy()
    for _ in range(steps):
        for i in prange(1, n - 1):
            for j in range(1, m - 1):
                v[i, j] = u[i, j] + c * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1]
                                         + u[i, j + 1] - 4.0 * u[i, j])
        for i in prange(1, n - 1):
            for j in range(1, m - 1):
                u[i, j] = v[i, j]
    s = 0.0
    for i in prange(n):
        for j in range(m):
            s += u[i, j] * u[i, j]
    return s


def gmm_data_term(alphas, means, qs, ls, x):
    """The data term of a Gaussian mixture with diagonal-plus-lower factors: a logsumexp over
    components per point, summed over points (ADBench's gmm, dense lower factor)."""
    n, d = x.shape
    k = means.shape[0]
    total = 0.0
    for i in prange(n):
        best = -math.inf
        vals = np.empty(k)
        for c in range(k):
            sq = 0.0
            sq_sum = 0.0
            for r in range(d):
                acc = math.exp(qs[c, r]) * (x[i, r] - means[c, r])
                for s in range(r):
                    acc += ls[c, r, s] * (x[i, s] - means[c, s])
                sq += acc * acc
                sq_sum += qs[c, r]
            vals[c] = alphas[c] + sq_sum - 0.5 * sq
            best = max(best, vals[c])
        t = 0.0
        for c in range(k):
            t += math.exp(vals[c] - best)
        total += math.log(t) + best
    return total


def rotate(rot, pt, out):
    """Rodrigues rotation of ``pt`` by angle-axis ``rot`` (ADBench's ba)."""
    sqtheta = rot[0] * rot[0] + rot[1] * rot[1] + rot[2] * rot[2]
    if sqtheta != 0.0:
        theta = math.sqrt(sqtheta)
        costheta = math.cos(theta)
        sintheta = math.sin(theta)
        inv = 1.0 / theta
        w0 = rot[0] * inv
        w1 = rot[1] * inv
        w2 = rot[2] * inv
        c0 = w1 * pt[2] - w2 * pt[1]
        c1 = w2 * pt[0] - w0 * pt[2]
        c2 = w0 * pt[1] - w1 * pt[0]
        tmp = (w0 * pt[0] + w1 * pt[1] + w2 * pt[2]) * (1.0 - costheta)
        out[0] = pt[0] * costheta + c0 * sintheta + w0 * tmp
        out[1] = pt[1] * costheta + c1 * sintheta + w1 * tmp
        out[2] = pt[2] * costheta + c2 * sintheta + w2 * tmp
    else:
        out[0] = pt[0] + rot[1] * pt[2] - rot[2] * pt[1]
        out[1] = pt[1] + rot[2] * pt[0] - rot[0] * pt[2]
        out[2] = pt[2] + rot[0] * pt[1] - rot[1] * pt[0]


def ba_objective(cams, X, w, obs, feats):
    """ADBench's bundle-adjustment objective with the observations in a prange loop (each
    iteration has its own scratch arrays; cameras and points are gathered by index)."""
    p = w.shape[0]
    loss = 0.0
    for i in prange(p):
        cam = cams[obs[i, 0]]
        pt = X[obs[i, 1]]
        xo = np.empty(3)
        xcam = np.empty(3)
        for k in range(3):
            xo[k] = pt[k] - cam[3 + k]
        rotate(cam[0:3], xo, xcam)
        p0 = xcam[0] / xcam[2]
        p1 = xcam[1] / xcam[2]
        rsq = p0 * p0 + p1 * p1
        dist = 1.0 + cam[9] * rsq + cam[10] * rsq * rsq
        e0 = w[i] * (p0 * dist * cam[6] + cam[7] - feats[i, 0])
        e1 = w[i] * (p1 * dist * cam[6] + cam[8] - feats[i, 1])
        we = 1.0 - w[i] * w[i]
        loss += e0 * e0 + e1 * e1 + we * we
    return loss


def example_loss(w1, w2, x, y):
    """One example's loss in a small two-layer network (per-example gradients: vmap(grad))."""
    h = np.tanh(x @ w1)
    return (np.sum(h * w2) - y) ** 2


def inputs(name, size):
    rng = np.random.default_rng(0)
    if name == "nbody":
        n = {"small": 256, "large": 1024}[size]
        return (rng.standard_normal((n, 3)), 0.3 * rng.standard_normal((n, 3)),
                (0.5 + rng.random(n)) / n, 0.01, 4)
    if name == "stencil":
        n = {"small": 256, "large": 1024}[size]
        return (rng.random((n, n)), 0.2, 20)
    if name == "gmm":
        d, k, n = {"small": (10, 10, 1000), "large": (20, 50, 5000)}[size]
        return (rng.standard_normal(k), rng.random((k, d)), 0.1 * rng.standard_normal((k, d)),
                0.1 * rng.standard_normal((k, d, d)), rng.standard_normal((n, d)))
    if name == "ba":
        n, m, p = {"small": (49, 7776, 31843), "large": (257, 65132, 225911)}[size]
        cams = np.empty((n, 11))
        cams[:, 0:3] = 0.1 * rng.standard_normal((n, 3))
        cams[:, 3:6] = 0.5 * rng.standard_normal((n, 3))
        cams[:, 6] = 400.0 + 200.0 * rng.random(n)
        cams[:, 7:9] = 10.0 * rng.standard_normal((n, 2))
        cams[:, 9] = 1e-2 * rng.standard_normal(n)
        cams[:, 10] = 1e-3 * rng.standard_normal(n)
        X = rng.standard_normal((m, 3))
        X[:, 2] = 10.0 + 2.0 * rng.random(m)
        obs = np.stack([rng.integers(0, n, p), rng.integers(0, m, p)], axis=1)
        return cams, X, 1.0 + 0.1 * rng.standard_normal(p), obs, 50.0 * rng.standard_normal((p, 2))
    if name == "per_example":
        b, d, h = {"small": (1024, 16, 32), "large": (8192, 64, 128)}[size]
        return (rng.standard_normal((d, h)) / np.sqrt(d), rng.standard_normal(h) / np.sqrt(h),
                rng.standard_normal((b, d)), rng.standard_normal(b))
    raise KeyError(name)


PROBLEMS = {"nbody": (nbody, (0, 1, 2)), "stencil": (stencil, (0,)),
            "gmm": (gmm_data_term, (0, 1, 2, 3)), "ba": (ba_objective, (0, 1, 2))}
