"""``while`` loops: counters, data-dependent trip counts, tolerance-based
stopping (Newton for square and cube roots, scalar and array, gradient
descent to a tolerance), ``and`` in the loop condition, ``while True`` left
by ``break`` or by ``return``, ``continue``, ``while ... else``.

A tolerance-stopped loop is piecewise smooth in its inputs: where the trip
count changes, the value jumps by about the tolerance.  The tolerances here
are small enough (quadratic convergence, or a contraction run to 1e-13) that
the jump is invisible to central differences with step 1e-6."""
import numpy as np

from . import C, N, P, Pos, V, case


@case((V(2.0, scalar=True),), (P(),), (V(9.0, scalar=True),), (V(0.3, scalar=True),))
def newton_sqrt(a):
    y = a
    while abs(y * y - a) > 1e-12:
        y = 0.5 * (y + a / y)
    return y


@case((P((3,)),), (V(0.5, 4.0, 10.0),))
def newton_sqrt_array(a):
    y = np.ones_like(a)
    while np.max(np.abs(y * y - a)) > 1e-12:
        y = 0.5 * (y + a / y)
    return np.sum(y * np.arange(1.0, a.shape[0] + 1.0))


@case((P(),), (V(7.0, scalar=True),))
def newton_cube_root(a):
    y = 1.0
    while abs(y ** 3 - a) > 1e-12:
        y = y - (y ** 3 - a) / (3.0 * y * y)
    return y * np.sin(y)


@case((N(),), (N((3,)),))
def while_counter(x):
    i = 0
    while i < 5:
        x = np.sin(x) + x * 0.5
        i += 1
    return np.sum(x)


@case((V(0.3, scalar=True),), (V(2.0, scalar=True),), (V(12.0, scalar=True),))
def while_data_dependent_trip_count(x):
    while x < 10.0:
        x = x * 1.7 + 0.3
    return x * x


@case((V(2.0, -1.0, 0.5),), (V(0.1, 0.05, -0.1),), (N((4,)),))
def while_on_array_norm(x):
    while np.sum(x * x) > 0.1:
        x = x * 0.6 + 0.01 * np.sin(x)
    return np.sum(x * np.arange(1.0, x.shape[0] + 1.0))


@case((V(0.5, scalar=True),), (V(4.9, scalar=True),))
def while_two_conditions(x):
    n = 0
    while x < 5.0 and n < 20:
        x = x + np.sin(x) * 0.1 + 0.2
        n += 1
    return x * n


@case((Pos(),), (V(5.0, scalar=True),))
def while_true_break(x):
    k = 0
    while True:
        x = x * 1.3 + 0.1
        k += 1
        if x > 4.0:
            break
    return x * np.sqrt(k)


@case((V(0.5, scalar=True),), (Pos(),), (V(5.0, scalar=True),))
def while_true_return(x):
    y = x
    while True:
        y = y * y + 0.5
        if y > 3.0:
            return y * x
        y = np.sin(y) + y


@case((N(),), (N((2,)),))
def while_continue(x):
    i = 0
    s = 0.0
    while i < 8:
        i += 1
        if i % 3 == 0:
            continue
        s = s + np.sin(x * i)
    return np.sum(s * x)


@case((V(8.0, scalar=True),), (V(0.05, scalar=True),), (V(-3.0, scalar=True),))
def halve_until_small_with_counter(x):
    k = 0
    while abs(x) > 0.1:
        x = x / 2.0
        k += 1
    return x * (k + 1) + x * x


@case((N(), N()), (V(3.0, scalar=True), V(-1.0, scalar=True)), argnums=(0, 1))
def gradient_descent_to_tolerance(x0, a):
    y = x0
    g = 2.0 * (y - a)
    while abs(g) > 1e-13:
        y = y - 0.25 * g
        g = 2.0 * (y - a)
    return y * y + x0


@case((V(0.5, scalar=True),), (V(5.0, scalar=True),))
def while_else(x):
    n = 0
    while n < 4:
        x = x * 1.5
        if x > 3.0:
            break
        n += 1
    else:
        x = x + 100.0 * np.sin(x)
    return x


@case((N((3,)), C(3)), (N((2,)), C(0)))
def while_counting_down_int_argument(x, n):
    y = x
    while n > 0:
        y = np.tanh(y) * 2.0 + x
        n -= 1
    return np.sum(y)
