"""Fit the coefficients of ``vmath.tanh64`` (tangent_x/numba_stage/vmath.py)
and print them, with the worst absolute error of each fit.

    python tools/fit_vmath_tanh.py

Why a script: the constants in vmath.py are the output of these two fits,
and whoever changes the split point or a degree should be able to redo
them.  Both are least-squares fits on Chebyshev nodes (close to minimax),
solved in float64 and refined against residuals computed in NumPy's
``longdouble`` (x87 80-bit on x86-64, whose extra 11 bits the targets
need):

- below the split ``|x| < 0.8``: ``tanh(a)/a - 1 ~ g P(g) / Q(g)``,
  ``g = a*a``, ``P`` of degree 2 and ``Q`` of degree 3 with ``Q(0) = 1``,
  by the linearised (Sanathanan-Koerner) iteration ``P - h Q`` weighted by
  the previous ``1/Q``, in the variable ``g / 0.8**2`` for conditioning;
- ``(exp(r) - 1 - r) / r**2`` on ``|r| <= ln2/2``, degree 9 (so ``exp(r)``
  to degree 11).
"""
import math

import numpy as np

LD = np.longdouble
SPLIT = 0.8


def _nodes(n):
    return np.cos(np.pi * (np.arange(n) + 0.5) / n)


def _lstsq_refined(a, b, steps=4):
    """Least squares solved in float64, the residual recomputed in longdouble."""
    sol = np.linalg.lstsq(a.astype(np.float64), b.astype(np.float64), rcond=None)[0].astype(LD)
    for _ in range(steps):
        res = b - a @ sol
        sol = sol + np.linalg.lstsq(a.astype(np.float64), res.astype(np.float64),
                                    rcond=None)[0].astype(LD)
    return sol


def fit_tanh_rational(split=SPLIT, m=2, n=3, iterations=12, points=8000):
    """(P, Q, error): tanh(a)/a - 1 ~ g P(g)/Q(g) for a < split, P and Q
    in powers of g, rounded to float64; error with those float64 values."""
    s = _nodes(points) * 0.5 + 0.5                       # g / split**2 in [0, 1]
    sl = s.astype(LD)
    g = sl * LD(split) ** 2
    a = np.sqrt(g)
    f = np.tanh(a) / a - 1
    series = a < 1e-3                                    # no cancellation there
    f[series] = (-g / 3 + 2 * g ** 2 / 15 - 17 * g ** 3 / 315 + 62 * g ** 4 / 2835)[series]
    h = f / g
    weight = np.ones_like(h)
    best = None
    for _ in range(iterations):
        cols = [sl ** k for k in range(m + 1)] + [-h * sl ** k for k in range(1, n + 1)]
        scale = g / weight                               # the error that matters is g * (error in h)
        sol = _lstsq_refined(np.stack(cols, axis=1) * scale[:, None], h * scale)
        p, q = sol[:m + 1], np.concatenate([[LD(1)], sol[m + 1:]])
        weight = np.abs(np.polyval(q[::-1], sl))
        p64 = [float(p[k] / LD(split) ** (2 * k)) for k in range(m + 1)]
        q64 = [float(q[k] / LD(split) ** (2 * k)) for k in range(n + 1)]
        approx = g * np.polyval(np.array(p64, LD)[::-1], g) / np.polyval(np.array(q64, LD)[::-1], g)
        err = float(np.max(np.abs(approx - f)))
        if best is None or err < best[2]:
            best = (p64, q64, err)
    return best


def fit_exp_poly(degree=9, points=4000):
    """(coefficients, error): (exp(r) - 1 - r) / r**2 on |r| <= ln2/2."""
    r = _nodes(points) * (math.log(2) / 2 * 1.0001)
    rl = r.astype(LD)
    f = sum(rl ** k / LD(math.factorial(k + 2)) for k in range(30))
    v = np.vander(r, degree + 1, increasing=True).astype(LD)
    c = _lstsq_refined(v, f, steps=1)
    c64 = [float(x) for x in c]
    return c64, float(np.max(np.abs(v @ np.array(c64, LD) - f)))


if __name__ == "__main__":
    p, q, err = fit_tanh_rational()
    print(f"_TANH_SPLIT = {SPLIT!r}")
    print(f"_TANH_P = {tuple(p)!r}")
    print(f"_TANH_Q = {tuple(q)!r}")
    print(f"# tanh(a)/a - 1 fit: max abs error {err:.2e}")
    c, err = fit_exp_poly()
    print(f"_EXP_F = {tuple(c)!r}")
    print(f"# (exp(r) - 1 - r)/r^2 fit: max abs error {err:.2e}")
