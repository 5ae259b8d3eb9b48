"""Functions with custom rules shared by the custom_jvp / custom_vjp tests
(tests/test_custom.py eagerly, tests/test_custom_jit.py under jit), and the
functions calling them that both use."""
from functools import partial

import numpy as np

import tangent_x as tx


@tx.custom_jvp
def log1pexp(x):
    return np.log(1.0 + np.exp(x))


@log1pexp.defjvp
def log1pexp_jvp(primals, tangents):
    x, = primals
    t, = tangents
    return log1pexp(x), t * (1.0 - 1.0 / (1.0 + np.exp(x)))


@tx.custom_vjp
def clip_gradient(x, lo, hi):
    return x


def clip_fwd(x, lo, hi):
    return x, (lo, hi)


def clip_bwd(res, g):
    lo, hi = res
    return (np.clip(g, lo, hi), 0.0, 0.0)


clip_gradient.defvjp(clip_fwd, clip_bwd)


@partial(tx.custom_jvp, nondiff_argnums=(1,))
def power(x, n):
    return x ** n


@power.defjvp
def power_jvp(n, primals, tangents):
    x, = primals
    t, = tangents
    return power(x, n), n * x ** (n - 1) * t


def log1pexp_in_a_loop(x):
    s = 0.0
    for i in range(3):
        s = s + log1pexp(x * i) * np.sin(x)
    return s


def softplus_weighted(x):
    """Its Hessian by hand, with s the softplus and s' the sigmoid:
    d2/dx2 [s(x) x] = s''(x) x + 2 s'(x)."""
    return np.sum(log1pexp(x) * x)
