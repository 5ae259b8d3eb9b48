"""Under jit: loop cotangents seeded by an int (``s * i`` with an int
counter ``i``).  Each agrees with eager execution and with central finite
differences computed here."""
import numpy as np
import pytest

import tangent_x as tx
from fuzzing.oracles import compare, fd_grad

X = np.array([0.5, 0.7, 0.2])


def counted_while(x):
    i = 0
    s = 0.0
    while s < 3.0:
        s = s * 1.5 + np.sum(x * x)
        i += 1
    return s * i


def counted_for(x):
    n = 0
    acc = 0.0
    for k in range(3):
        acc = acc * 0.5 + np.sum(x) * k
        n = n + 2
    return n * acc


def sum_times_first(x):
    return np.sum(x) * x[0]


def _check_grad(f, x):
    eager = tx.grad(f)(x)
    jitted = tx.jit(tx.grad(f))(x)
    compare(jitted, eager, 1e-12, 1.0, "jit(grad) against eager")
    compare(jitted, fd_grad(f, [x], 1e-6)[0], 1e-6, 1.0, "jit(grad) against finite differences")
    assert np.asarray(jitted).dtype == np.float64


@pytest.mark.parametrize("f", [counted_while, counted_for])
def test_int_seeded_cotangent_in_loop(f):
    _check_grad(f, X)


def test_int_seed_keeps_float_cotangent_in_source():
    # the seed 1.0 * i stays: folded to i, the cotangent would be an int
    assert "s_bar = 1.0 * i" in tx.source(tx.grad(counted_while))
    # a float name's seed still folds away
    assert "1.0 *" not in tx.source(tx.grad(sum_times_first))

