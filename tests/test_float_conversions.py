"""``mask * 1.0`` is how NumPy code turns booleans (and ints) into floats;
the python stage's folding of ``* 1.0`` must never drop it.  (It did for
names it could not tell were booleans: a draw of tx.random.bernoulli, a
comparison, a sum of them: grad's primal became an int, and ``-(b * 1.0)``
became ``-b``, which NumPy refuses for booleans.)"""
import numpy as np
import pytest

import tangent_x as tx
import tangent_x.random as jr

KEY = jr.PRNGKey(3)


def counted(x):
    above = x > 0.0
    return np.sum(above * 1.0) + np.sum(x * x)


def negated(x):
    b = np.sum(x) > 0.0
    return -(b * 1.0) + np.sum(np.sin(x))


def drawn(x):
    keep = jr.bernoulli(KEY, 0.5, x.shape)
    return np.sum(keep * 1.0) + np.sum(x)


def summed_flags(x):
    n = np.sum(np.isfinite(x))
    return n * 1.0 + np.sum(x)


@pytest.mark.parametrize("fn", [counted, negated, drawn, summed_flags])
def test_value_and_grad_keep_the_float(fn):
    x = np.array([0.5, -1.0, 2.0])
    value, g = tx.value_and_grad(fn)(x)
    expected = fn(x)
    assert np.result_type(value) == np.float64
    assert value == expected
    eps = 1e-6
    fd = np.array([(fn(x + eps * e) - fn(x - eps * e)) / (2 * eps) for e in np.eye(3)])
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)
