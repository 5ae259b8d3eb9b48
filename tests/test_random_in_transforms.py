"""tangent_x.random inside transformed functions: draws are constants."""
import numpy as np
import pytest

import tangent_x as tx
from tangent_x import random as jr


def monte_carlo(mu, key):
    z = jr.normal(key, (2000,), dtype=np.float64)
    return np.mean((mu + z) ** 2)


def test_random_draws_are_constants_for_grad():
    key = jr.PRNGKey(3)
    z = np.asarray(jr.normal(key, (2000,), dtype=np.float64))
    assert tx.grad(monte_carlo)(0.5, key) == pytest.approx(2 * (0.5 + z.mean()), rel=1e-12)


def test_split_keys_inside_a_loop():
    def f(w, key):
        s = 0.0
        for _ in range(3):
            key, sub = jr.split(key)
            s = s + np.sum(w * jr.uniform(sub, (4,), dtype=np.float64))
        return s

    key = jr.PRNGKey(0)
    expected = np.zeros(4)
    k = key
    for _ in range(3):
        k, sub = jr.split(k)
        expected += np.asarray(jr.uniform(sub, (4,), dtype=np.float64))
    np.testing.assert_allclose(tx.grad(f)(np.ones(4), key), expected, rtol=1e-12)
