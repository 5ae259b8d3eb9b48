"""Reverse rules of operators and elementwise NumPy math, checked against
central differences (float64), on several shapes and broadcast pairs, plus
the edge cases: powers at x <= 0, clip with missing bounds, ties."""
import numpy as np
import pytest

import tangent_x as tx
from _fd import assert_tree_allclose, numerical_grad

RNG = np.random.RandomState(3)


def rand(*shape):
    return RNG.randn(*shape)


def check(f, *args, argnums=0, rtol=1e-5, atol=1e-7):
    got = tx.grad(f, argnums=argnums)(*args)
    want = numerical_grad(f, args, argnums)
    assert_tree_allclose(got, want, rtol=rtol, atol=atol)


def check_elementwise(op, *arrays):
    """grad of sum(op(*arrays) * w) w.r.t. every array (``op`` is inlined)."""
    w = rand(*np.shape(op(*arrays))) + 2.0
    if len(arrays) == 1:
        f = lambda a, w: np.sum(op(a) * w)              # noqa: E731
        check(f, *arrays, w)
    elif len(arrays) == 2:
        f = lambda a, b, w: np.sum(op(a, b) * w)        # noqa: E731
        check(f, *arrays, w, argnums=(0, 1))
    else:
        f = lambda a, b, c, w: np.sum(op(a, b, c) * w)  # noqa: E731
        check(f, *arrays, w, argnums=(0, 1, 2))


def positive(*shape):
    return RNG.uniform(0.5, 2.0, size=shape)


def unit(*shape):
    return RNG.uniform(-0.9, 0.9, size=shape)


def away_from_zero(*shape):
    return np.sign(rand(*shape) + 1e-3) * RNG.uniform(0.3, 2.0, size=shape)


UNARY = [
    ("abs", lambda a: np.abs(a), away_from_zero),
    ("absolute", lambda a: np.absolute(a), away_from_zero),
    ("builtin-abs", lambda a: abs(a), away_from_zero),
    ("sqrt", lambda a: np.sqrt(a), positive),
    ("cbrt", lambda a: np.cbrt(a), away_from_zero),
    ("square", lambda a: np.square(a), rand),
    ("reciprocal", lambda a: np.reciprocal(a), away_from_zero),
    ("exp", lambda a: np.exp(a), rand),
    ("exp2", lambda a: np.exp2(a), rand),
    ("expm1", lambda a: np.expm1(a), rand),
    ("log", lambda a: np.log(a), positive),
    ("log2", lambda a: np.log2(a), positive),
    ("log10", lambda a: np.log10(a), positive),
    ("log1p", lambda a: np.log1p(a), positive),
    ("sin", lambda a: np.sin(a), rand),
    ("cos", lambda a: np.cos(a), rand),
    ("tan", lambda a: np.tan(a), unit),
    ("arcsin", lambda a: np.arcsin(a), unit),
    ("arccos", lambda a: np.arccos(a), unit),
    ("arctan", lambda a: np.arctan(a), rand),
    ("sinh", lambda a: np.sinh(a), rand),
    ("cosh", lambda a: np.cosh(a), rand),
    ("tanh", lambda a: np.tanh(a), rand),
    ("arcsinh", lambda a: np.arcsinh(a), rand),
    ("arccosh", lambda a: np.arccosh(a + 1.5), positive),
    ("arctanh", lambda a: np.arctanh(a), unit),
    ("neg", lambda a: -a, rand),
    ("pos", lambda a: +a, rand),
    ("pow2", lambda a: a ** 2, rand),
    ("pow3", lambda a: a ** 3, rand),
    ("pow-half", lambda a: a ** 0.5, positive),
    ("pow-neg", lambda a: a ** -2, away_from_zero),
    ("pow0", lambda a: a ** 0 + a, rand),
    ("rpow", lambda a: 2.0 ** a, rand),
    ("np.power", lambda a: np.power(a, 3), rand),
    ("real", lambda a: np.real(a), rand),
    ("copy", lambda a: np.copy(a), rand),
    ("asarray", lambda a: np.asarray(a), rand),
    ("clip", lambda a: np.clip(a, -0.5, 0.5), rand),
    ("clip-None-low", lambda a: np.clip(a, None, 0.5), rand),
    ("clip-None-high", lambda a: np.clip(a, -0.5, None), rand),
    ("clip-method", lambda a: a.clip(-0.5, 0.5), rand),
    ("clip-kw", lambda a: np.clip(a, a_min=-0.3, a_max=0.7), rand),
    ("clip-min-max", lambda a: np.clip(a, min=-0.3, max=0.7), rand),
    ("clip-min-only", lambda a: np.clip(a, min=-0.3), rand),
]


@pytest.mark.parametrize("shape", [(), (5,), (3, 4), (2, 1, 3)])
@pytest.mark.parametrize("name,op,make", UNARY, ids=[u[0] for u in UNARY])
def test_unary(name, op, make, shape):
    check_elementwise(op, np.asarray(make(*shape)))


def test_unary_python_float():
    check(lambda x: np.sin(x) * np.exp(x) + x ** 3, 0.7)
    check(lambda x: np.tanh(x) ** 2, -1.3)


BINARY = [
    ("add", lambda a, b: a + b, rand, rand),
    ("sub", lambda a, b: a - b, rand, rand),
    ("mul", lambda a, b: a * b, rand, rand),
    ("truediv", lambda a, b: a / b, rand, away_from_zero),
    ("np.divide", lambda a, b: np.divide(a, b), rand, away_from_zero),
    ("mod", lambda a, b: a % b, positive, lambda *s: positive(*s) + 2.0),
    ("pow", lambda a, b: a ** b, positive, rand),
    ("np.power", lambda a, b: np.power(a, b), positive, rand),
    ("maximum", lambda a, b: np.maximum(a, b), rand, rand),
    ("minimum", lambda a, b: np.minimum(a, b), rand, rand),
    ("fmax", lambda a, b: np.fmax(a, b), rand, rand),
    ("fmin", lambda a, b: np.fmin(a, b), rand, rand),
    ("arctan2", lambda a, b: np.arctan2(a, b), rand, away_from_zero),
    ("hypot", lambda a, b: np.hypot(a, b), away_from_zero, away_from_zero),
    ("logaddexp", lambda a, b: np.logaddexp(a, b), rand, rand),
    ("where", lambda a, b: np.where(a > 0, a, b), away_from_zero, rand),
    ("clip-bounds", lambda a, b: np.clip(a, b, b + 1.0), rand, rand),
    ("np.add", lambda a, b: np.add(a, b), rand, rand),
    ("np.multiply", lambda a, b: np.multiply(a, b), rand, rand),
]

PAIRS = [((3, 4), (3, 4)), ((3, 4), (4,)), ((3, 1), (1, 4)), ((2, 1, 3), (3,)),
         ((), (3,)), ((4,), ())]


@pytest.mark.parametrize("shapes", PAIRS, ids=[str(p) for p in PAIRS])
@pytest.mark.parametrize("name,op,make_a,make_b", BINARY, ids=[b[0] for b in BINARY])
def test_binary(name, op, make_a, make_b, shapes):
    a, b = np.asarray(make_a(*shapes[0])), np.asarray(make_b(*shapes[1]))
    if name == "mod":
        a = a + 0.3 * (np.abs(a % b - b / 2) < 0.05)    # away from the jumps
    check_elementwise(op, a, b)


def test_scalar_constants():
    check(lambda x: np.sum(x * 2.0 + 1.0 - x / 3.0), rand(3))


# --- pow edge cases -------------------------------------------------------------

def test_pow_literal_reads_like_the_textbook():
    src = tx.source(tx.grad(lambda x: np.sum(x ** 2)))
    assert "np.where" not in src and "x_bar = " in src


def test_pow_negative_base_integer_exponent():
    x = np.array([-2.0, -0.5, 0.7, 1.5])
    check(lambda x: np.sum(x ** 3), x)
    check(lambda x: np.sum(np.power(x, 2)), x)
    check(lambda x, y: np.sum(x ** y), x, np.array([2.0, 3.0, 2.0, 1.0]))
    g = tx.grad(lambda x, y: np.sum(x ** y), argnums=(0, 1))(x, np.array([2.0, 3.0, 2.0, 1.0]))
    assert np.all(np.isfinite(g[0])) and np.all(np.isfinite(g[1]))


def test_pow_at_zero():
    x = np.array([0.0, 1.0, -1.0])
    np.testing.assert_allclose(tx.grad(lambda x: np.sum(x ** 2))(x), [0.0, 2.0, -2.0])
    np.testing.assert_allclose(tx.grad(lambda x: np.sum(x ** 1))(x), [1.0, 1.0, 1.0])
    np.testing.assert_allclose(tx.grad(lambda x: np.sum(x ** 0))(x), [0.0, 0.0, 0.0])
    y = np.array([0.0, 0.0, 2.0])
    with np.errstate(divide="ignore", invalid="ignore"):
        g = tx.grad(lambda x, y: np.sum(x ** y))(x, y)
    np.testing.assert_allclose(g, [0.0, 0.0, -2.0])


def test_pow_python_floats():
    check(lambda x: x ** 2.5, 1.3)
    check(lambda x, y: x ** y, 1.3, 0.7, argnums=(0, 1))


# --- clip, maximum, minimum: bounds, ties -----------------------------------------

def test_clip_bound_cotangents():
    x = np.array([-2.0, -0.2, 0.3, 2.0])
    lo, hi = np.array([-1.0, -1.0, -1.0, -1.0]), np.array([1.0, 1.0, 1.0, 1.0])
    g = tx.grad(lambda x, lo, hi: np.sum(np.clip(x, lo, hi) * np.arange(1.0, 5.0)),
                argnums=(0, 1, 2))(x, lo, hi)
    np.testing.assert_allclose(g[0], [0, 2, 3, 0])
    np.testing.assert_allclose(g[1], [1, 0, 0, 0])
    np.testing.assert_allclose(g[2], [0, 0, 0, 4])
    g = tx.grad(lambda x, lo: np.sum(np.clip(x, min=lo) * 2.0), argnums=(0, 1))(x, lo)
    np.testing.assert_allclose(g[0], [0, 2, 2, 2])
    np.testing.assert_allclose(g[1], [2, 0, 0, 0])


def test_clip_scalar_bounds_broadcast():
    check(lambda x, lo: np.sum(np.clip(x, lo, 0.5) ** 2), rand(3, 4), -0.25, argnums=(0, 1))


def test_maximum_minimum_ties_split():
    x = np.array([1.0, 2.0, 3.0])
    y = np.array([1.0, 1.0, 4.0])
    gx, gy = tx.grad(lambda x, y: np.sum(np.maximum(x, y)), argnums=(0, 1))(x, y)
    np.testing.assert_allclose(gx, [0.5, 1.0, 0.0])
    np.testing.assert_allclose(gy, [0.5, 0.0, 1.0])
    gx, gy = tx.grad(lambda x, y: np.sum(np.minimum(x, y)), argnums=(0, 1))(x, y)
    np.testing.assert_allclose(gx, [0.5, 0.0, 1.0])
    np.testing.assert_allclose(gy, [0.5, 1.0, 0.0])


def test_maximum_with_scalar_relu():
    x = away_from_zero(3, 4)
    check(lambda x: np.sum(np.maximum(x, 0.0) ** 2), x)
    check(lambda x: np.sum(np.maximum(0.0, x) * x), x)


def test_where_broadcast_condition():
    x, y = rand(3, 1), rand(4)
    c = rand(3, 4) > 0
    check(lambda x, y: np.sum(np.where(c, x, y) ** 2), x, y, argnums=(0, 1))
    check(lambda x: np.sum(np.where(c, x, 0.0)), x)


def test_matmul_operator():
    check(lambda a, b: np.sum(np.tanh(a @ b)), rand(2, 3), rand(3, 4), argnums=(0, 1))
