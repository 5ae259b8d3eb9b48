"""tangent_x.nn against straightforward formulas, and at extreme inputs.

The naive formulas are only trusted where they are accurate (moderate
inputs); at large |x| the expected values are the exact limits, and no
overflow warning may be emitted: the functions are rewritten to stay in
range, because their derivatives will be taken from the same source.
"""
import math
import warnings

import numpy as np
import pytest

from tangent_x import nn

X = np.linspace(-20.0, 20.0, 81)
EXTREMES = np.array([-1000.0, -40.0, -0.0, 0.0, 40.0, 1000.0])


@pytest.fixture
def no_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


def test_relu():
    np.testing.assert_array_equal(nn.relu(np.array([-2.0, 0.0, 3.0])), [0, 0, 3])
    assert nn.relu(np.array([1, -2], np.int8)).dtype == np.int8
    assert np.isnan(nn.relu(np.array([np.nan]))[0])   # like jnp.maximum


def test_sigmoid(no_warnings):
    np.testing.assert_allclose(nn.sigmoid(X), 1 / (1 + np.exp(-X)), rtol=1e-15)
    out = nn.sigmoid(EXTREMES)
    np.testing.assert_array_equal(out[[0, 5]], [0.0, 1.0])
    np.testing.assert_array_equal(out[[2, 3]], [0.5, 0.5])
    # Full relative precision in the negative tail, not 1 - (1 - tiny).
    assert out[1] == pytest.approx(math.exp(-40.0), rel=1e-14)
    assert nn.sigmoid(np.float32(3.0)).dtype == np.float32


def test_softplus(no_warnings):
    np.testing.assert_allclose(nn.softplus(X), np.log1p(np.exp(X)), rtol=1e-14)
    out = nn.softplus(EXTREMES)
    assert out[5] == 1000.0 and out[0] == 0.0
    assert out[4] == pytest.approx(40.0 + math.exp(-40.0), rel=1e-15)
    assert out[1] == pytest.approx(math.exp(-40.0), rel=1e-14)
    assert nn.softplus(0.0) == pytest.approx(math.log(2.0), rel=1e-15)
    assert nn.softplus(np.ones(2, np.float32)).dtype == np.float32


def test_tanh_is_numpy_tanh():
    assert nn.tanh is np.tanh


def test_softmax(no_warnings):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(3, 5))
    e = np.exp(x)
    np.testing.assert_allclose(nn.softmax(x), e / e.sum(-1, keepdims=True), rtol=1e-14)
    np.testing.assert_allclose(nn.softmax(x, axis=0), e / e.sum(0, keepdims=True),
                               rtol=1e-14)
    np.testing.assert_allclose(nn.softmax(x * 1000).sum(-1), 1.0, rtol=1e-15)
    np.testing.assert_array_equal(nn.softmax(np.array([1000.0, 1000.0])), [0.5, 0.5])
    np.testing.assert_allclose(nn.softmax(x + 500.0), nn.softmax(x), rtol=1e-12)
    assert nn.softmax(np.ones(4, np.float32)).dtype == np.float32


def test_log_softmax(no_warnings):
    rng = np.random.default_rng(1)
    x = rng.normal(size=(4, 3))
    np.testing.assert_allclose(nn.log_softmax(x), np.log(nn.softmax(x)), rtol=1e-13)
    np.testing.assert_allclose(nn.log_softmax(x, axis=0),
                               np.log(nn.softmax(x, axis=0)), rtol=1e-13)
    np.testing.assert_array_equal(nn.log_softmax(np.array([1000.0, 0.0])),
                                  [0.0, -1000.0])


def test_logsumexp_stable(no_warnings):
    assert nn.logsumexp(np.array([1000.0, 1000.0])) == 1000.0 + math.log(2.0)
    assert nn.logsumexp(np.array([-1000.0, -1000.0])) == -1000.0 + math.log(2.0)
    rng = np.random.default_rng(2)
    a = rng.normal(size=(2, 3, 4))
    np.testing.assert_allclose(nn.logsumexp(a), np.log(np.exp(a).sum()), rtol=1e-14)
    np.testing.assert_allclose(nn.logsumexp(a, axis=1), np.log(np.exp(a).sum(1)),
                               rtol=1e-14)


@pytest.mark.parametrize("axis, keepdims, shape", [
    (None, False, ()), (None, True, (1, 1, 1)), (0, False, (3, 4)),
    (-1, True, (2, 3, 1)), ((0, 2), False, (3,)), ((0, 2), True, (1, 3, 1)),
])
def test_logsumexp_shapes(axis, keepdims, shape):
    a = np.zeros((2, 3, 4))
    out = nn.logsumexp(a, axis=axis, keepdims=keepdims)
    assert np.shape(out) == shape
    out, sign = nn.logsumexp(a, axis=axis, keepdims=keepdims, return_sign=True)
    assert np.shape(out) == np.shape(sign) == shape


def test_logsumexp_weights_and_sign(no_warnings):
    a = np.array([1.0, 2.0, 3.0])
    b = np.array([2.0, -1.0, 0.5])
    total = np.sum(b * np.exp(a))
    assert nn.logsumexp(a, b=b) == pytest.approx(math.log(total), rel=1e-14)
    out, sign = nn.logsumexp(a, b=-b, return_sign=True)
    assert out == pytest.approx(math.log(total), rel=1e-14) and sign == -1.0
    assert np.isnan(nn.logsumexp(a, b=-b))
    # b == 0 removes a term entirely, even an infinite one (as in JAX).
    assert nn.logsumexp(np.array([np.inf, 1.0]), b=np.array([0.0, 1.0])) == 1.0


def test_logsumexp_infinities():
    assert nn.logsumexp(np.array([np.inf, 1.0])) == np.inf
    with np.errstate(divide="ignore"):
        assert nn.logsumexp(np.array([-np.inf, -np.inf])) == -np.inf


def test_one_hot_like_jax():
    out = nn.one_hot(np.array([0, 2, -1, 3]), 3)
    assert out.dtype == np.float32 and out.shape == (4, 3)
    np.testing.assert_array_equal(out, [[1, 0, 0], [0, 0, 1], [0, 0, 0], [0, 0, 0]])
    labels = np.array([[0, 1], [2, 3]])
    assert nn.one_hot(labels, 4).shape == (2, 2, 4)
    first = nn.one_hot(labels, 4, axis=0)
    assert first.shape == (4, 2, 2)
    np.testing.assert_array_equal(first, np.moveaxis(nn.one_hot(labels, 4), -1, 0))
    assert nn.one_hot(2, 3).shape == (3,)
    assert nn.one_hot([1], 2, dtype=np.float64).dtype == np.float64
    assert nn.one_hot([1], 2, dtype=None).dtype == np.float32


def _phi(x):
    return np.array([0.5 * math.erfc(-v / math.sqrt(2.0)) for v in x])


def test_gelu(no_warnings):
    tanh_form = 0.5 * X * (1 + np.tanh(np.sqrt(2 / np.pi) * (X + 0.044715 * X ** 3)))
    np.testing.assert_allclose(nn.gelu(X), tanh_form, rtol=1e-14, atol=1e-300)
    # erfc amplifies the rounding of its argument by ~2 x**2 in the tail.
    np.testing.assert_allclose(nn.gelu(X, approximate=False), X * _phi(X),
                               rtol=1e-12)
    np.testing.assert_allclose(nn.gelu(X), nn.gelu(X, approximate=False), atol=1e-3)
    assert nn.gelu(0.0) == 0.0 and nn.gelu(1000.0) == 1000.0
    assert nn.gelu(np.float32(1.0)).dtype == np.float32
    assert nn.gelu(np.ones(2, np.float32), approximate=False).dtype == np.float32
