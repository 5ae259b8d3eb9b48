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


# JAX differentiates through uniform's minval/maxval and the arrays
# permutation and choice gather from; tangent_x has no rules for those yet
# and must say so rather than return zero.
def scaled_uniform(m):
    return np.sum(jr.uniform(jr.PRNGKey(0), (3,), np.float64, minval=m, maxval=m + 2.0))


def shuffled(x):
    return np.sum(jr.permutation(jr.PRNGKey(0), x) * np.arange(3.0))


def chosen(x):
    return np.sum(jr.choice(jr.PRNGKey(0), x, (2,)))


@pytest.mark.parametrize("fn, arg, x", [(scaled_uniform, "minval", 0.5),
                                        (shuffled, "x", np.ones(3)),
                                        (chosen, "a", np.ones(3))])
def test_differentiating_through_sampler_arguments_is_refused(fn, arg, x):
    for transform in (tx.grad(fn), lambda v: tx.jvp(fn, (v,), (v,))):
        with pytest.raises(TypeError, match=rf"test_random_in_transforms.py:\d+: cannot "
                                            rf"differentiate random\.\w+ with respect to "
                                            rf"its argument '{arg}'"):
            transform(x)


def test_the_suggested_rewrites_differentiate():
    key = jr.PRNGKey(0)
    u = np.asarray(jr.uniform(key, (3,), np.float64))

    def scaled(m):          # uniform on [m, 3m), as the error message suggests
        minval, maxval = m, 3 * m
        return np.sum(minval + (maxval - minval) * jr.uniform(key, (3,), np.float64))

    assert tx.grad(scaled)(0.5) == pytest.approx(3 + 2 * u.sum(), rel=1e-12)

    def shuffled_by_index(x):
        return np.sum(x[jr.permutation(key, 3)] * np.arange(3.0))

    perm = np.asarray(jr.permutation(key, 3))
    want = np.zeros(3)
    want[perm] = np.arange(3.0)
    np.testing.assert_array_equal(tx.grad(shuffled_by_index)(np.ones(3)), want)


def test_gradients_through_probabilities_are_zero_as_in_jax():
    key = jr.PRNGKey(1)

    def f(p):
        return np.sum(jr.bernoulli(key, p, (3,)) * 1.0) + np.sum(jr.choice(key, 3, (4,), p=p))

    np.testing.assert_array_equal(tx.grad(f)(np.array([0.2, 0.3, 0.5])), np.zeros(3))


def _draws_for_jit(key):
    a, b = tx.random.split(key)
    return tx.random.normal(a, (3,)), tx.random.uniform(b, (2, 2)), tx.random.fold_in(a, 7)


def test_draws_under_jit_are_bit_identical():
    key = tx.random.PRNGKey(42)
    compiled = tx.jit(_draws_for_jit)(key)
    eager = _draws_for_jit(key)
    for c, e in zip(compiled, eager):
        assert np.asarray(c).dtype == np.asarray(e).dtype
        np.testing.assert_array_equal(c, e)
