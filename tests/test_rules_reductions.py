"""Reverse rules of reductions, checked against central differences (float64).

Non-scalar results are folded by a random-weighted sum, so every entry of
the cotangent differs and a rule that mixes entries up cannot pass.
"""
import numpy as np
import pytest

import tangent_x as tx
from _fd import assert_tree_allclose, numerical_grad

RNG = np.random.RandomState(0)


def rand(*shape):
    return RNG.randn(*shape)


def check(f, *args, argnums=0):
    got = tx.grad(f, argnums=argnums)(*args)
    want = numerical_grad(f, args, argnums)
    assert_tree_allclose(got, want, rtol=1e-5, atol=1e-7)


def weights_for(value):
    return rand(*np.shape(value)) + 2.0


# --- axis, keepdims and ddof passed as data -----------------------------------

REDUCTIONS = {
    "sum": lambda x, axis, keepdims, w: np.sum(np.sum(x, axis=axis, keepdims=keepdims) * w),
    "mean": lambda x, axis, keepdims, w: np.sum(np.mean(x, axis=axis, keepdims=keepdims) * w),
    "prod": lambda x, axis, keepdims, w: np.sum(np.prod(x, axis=axis, keepdims=keepdims) * w),
    "max": lambda x, axis, keepdims, w: np.sum(np.max(x, axis=axis, keepdims=keepdims) * w),
    "min": lambda x, axis, keepdims, w: np.sum(np.min(x, axis=axis, keepdims=keepdims) * w),
    "amax": lambda x, axis, keepdims, w: np.sum(np.amax(x, axis=axis, keepdims=keepdims) * w),
    "amin": lambda x, axis, keepdims, w: np.sum(np.amin(x, axis=axis, keepdims=keepdims) * w),
    "var": lambda x, axis, keepdims, w: np.sum(np.var(x, axis=axis, keepdims=keepdims) * w),
    "std": lambda x, axis, keepdims, w: np.sum(np.std(x, axis=axis, keepdims=keepdims) * w),
}
NUMPY = {"sum": np.sum, "mean": np.mean, "prod": np.prod, "max": np.max, "min": np.min,
         "amax": np.amax, "amin": np.amin, "var": np.var, "std": np.std}

AXES = [
    ((5,), None), ((5,), 0), ((5,), -1), ((5,), (0,)),
    ((3, 4), None), ((3, 4), 0), ((3, 4), 1), ((3, 4), -1), ((3, 4), (0, 1)),
    ((2, 1, 3), None), ((2, 1, 3), 1), ((2, 1, 3), -2), ((2, 1, 3), (0, 2)),
    ((2, 1, 3), (-1, 0)), ((1, 4), 0),
]


def _defined(op, shape, axis):
    """std over axes of size 1 is sqrt(0): not differentiable (nan, as in JAX)."""
    x = np.zeros(shape)
    return not (op == "std" and np.size(x) == np.size(np.std(x, axis=axis)))


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("op,shape,axis", [(op, s, a) for op in sorted(REDUCTIONS)
                                           for s, a in AXES if _defined(op, s, a)])
def test_reduction(op, shape, axis, keepdims):
    x = rand(*shape)
    w = weights_for(NUMPY[op](x, axis=axis, keepdims=keepdims))
    check(REDUCTIONS[op], x, axis, keepdims, w)


def test_std_over_size_one_axis_is_nan_as_in_jax():
    with np.errstate(divide="ignore", invalid="ignore"):
        g = tx.grad(lambda x: np.sum(np.std(x, axis=1)))(rand(3, 1))
    assert np.all(np.isnan(g))


@pytest.mark.parametrize("ddof", [0, 1])
@pytest.mark.parametrize("shape,axis", [((6,), None), ((3, 4), 0), ((3, 4), -1),
                                        ((2, 3, 4), (0, 2))])
def test_var_std_ddof(shape, axis, ddof):
    x = rand(*shape)
    w = weights_for(np.var(x, axis=axis, ddof=ddof))
    check(lambda x, w: np.sum(np.var(x, axis=axis, ddof=ddof) * w), x, w)
    check(lambda x, w: np.sum(np.std(x, axis=axis, ddof=ddof) * w), x, w)


# --- literal arguments, as people write them --------------------------------------

LITERAL = [
    lambda x: np.sum(x),
    lambda x: np.sum(np.tanh(np.sum(x, axis=1))),
    lambda x: np.sum(np.sin(np.sum(x, axis=-1, keepdims=True)) * x),
    lambda x: np.sum(np.cos(np.sum(x, axis=(0, 1)))),
    lambda x: np.mean(x ** 2),
    lambda x: np.sum(np.mean(x, axis=0) ** 3),
    lambda x: np.sum(np.sin(np.mean(x, -1, keepdims=True))),
    lambda x: np.prod(x),
    lambda x: np.sum(np.prod(x, axis=0) ** 2),
    lambda x: np.max(x * 2.0),
    lambda x: np.sum(np.max(x, axis=1) ** 2),
    lambda x: np.sum(np.min(x, axis=0, keepdims=True) * x),
    lambda x: np.var(x),
    lambda x: np.sum(np.var(x, axis=0, ddof=1) ** 2),
    lambda x: np.std(x),
    lambda x: np.sum(np.std(x, axis=-1, keepdims=True) * x),
    lambda x: np.sum(x.sum(0) ** 2),
    lambda x: x.mean(),
    lambda x: np.sum(x.mean(axis=1, keepdims=True) * x),
    lambda x: x.max() + x.min(),
    lambda x: np.sum(np.sin(x.max(axis=0))),
    lambda x: np.sum(x.prod(axis=1)),
    lambda x: x.var(ddof=1) + x.std(),
]


@pytest.mark.parametrize("k,shape", [(k, s) for k in range(len(LITERAL))
                                     for s in [(3, 4), (2, 5), (1, 3)]
                                     if not (s == (1, 3) and k == 13)])   # ddof=1 over one row: 0/0
def test_literal_forms(k, shape):
    check(LITERAL[k], rand(*shape))


def test_sum_broadcast_operand():
    x, y = rand(3, 1), rand(4)
    check(lambda x, y: np.sum(np.sum(x * y, axis=0) ** 2), x, y, argnums=(0, 1))


# --- prod with zeros: exact, where prod / x would divide by zero -------------------

@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1)])
@pytest.mark.parametrize("zeros", [1, 2])
def test_prod_with_zeros(zeros, axis):
    x = rand(3, 4)
    x[0, :zeros] = 0.0
    w = weights_for(np.prod(x, axis=axis))
    g = tx.grad(lambda x, w: np.sum(np.prod(x, axis=axis) * w))(x, w)
    assert np.all(np.isfinite(g))
    check(lambda x, w: np.sum(np.prod(x, axis=axis) * w), x, w)


# --- max/min ties share the cotangent equally, as in JAX ---------------------------

def test_max_ties_share():
    x = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]])
    g = tx.grad(lambda x: np.sum(np.max(x, axis=1) * np.array([1.0, 3.0])))(x)
    np.testing.assert_allclose(g, [[0.0, 0.5, 0.5], [1.0, 1.0, 1.0]])
    g = tx.grad(lambda x: np.max(x))(x)
    np.testing.assert_allclose(g, [[0.0, 0.5, 0.5], [0.0, 0.0, 0.0]])


def test_min_ties_share():
    x = np.array([1.0, -1.0, -1.0, 4.0])
    g = tx.grad(lambda x: np.min(x) * 4.0)(x)
    np.testing.assert_allclose(g, [0.0, 2.0, 2.0, 0.0])


def _float32_ties():
    """float32 data full of ties, some made by float32's rounding: 1 and
    1 + 1e-8 are two numbers in float64 and one in float32."""
    x = np.array([[1.0, 1.0 + 1e-8, 0.5, -2.0],
                  [-2.0, 3.0, -2.0, -2.0 + 1e-9],
                  [0.25, 0.25, 0.25, 0.25]])
    return x.astype(np.float32)


def _tie_shares(x, axis, pick):
    """JAX's rule by hand: 1/k for each of the k extreme entries."""
    extreme = pick(x, axis=axis, keepdims=True)
    winners = (x == extreme).astype(np.float64)
    return winners / winners.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("pick", [np.max, np.min], ids=["max", "min"])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_float32_ties_share_in_float32(pick, axis):
    """Eagerly, grad and jvp of a float32 max/min stay float32 (the count
    of the ties was an int64 array, which made the cotangent float64 -- a
    jvp's tangent came out float64, and a grad rounded differently from
    jit's), and each of k ties gets 1/k, as in JAX."""
    x = _float32_ties()
    w = np.arange(1.0, 1.0 + np.size(pick(x, axis=axis))).reshape(np.shape(pick(x, axis=axis)))
    w = w.astype(np.float32)
    f = lambda x: np.sum(pick(x, axis=axis) * w)
    g = tx.grad(f)(x)
    assert g.dtype == np.float32
    want = _tie_shares(x.astype(np.float64), axis, pick) * (
        w if axis is None else np.expand_dims(w, axis))
    np.testing.assert_allclose(g, want, rtol=1e-7)
    out, tangent = tx.jvp(f, (x,), (np.ones_like(x),))
    assert np.asarray(tangent).dtype == np.float32
    np.testing.assert_allclose(tangent, np.sum(want), rtol=1e-6)


# --- cumsum ------------------------------------------------------------------------

@pytest.mark.parametrize("shape,axis", [((5,), None), ((5,), 0), ((3, 4), None),
                                        ((3, 4), 0), ((3, 4), 1), ((3, 4), -1),
                                        ((2, 1, 3), -2)])
def test_cumsum(shape, axis):
    x = rand(*shape)
    w = weights_for(np.cumsum(x, axis=axis))
    check(lambda x, w: np.sum(np.cumsum(x, axis=axis) * w), x, w)
    check(lambda x, axis, w: np.sum(np.cumsum(x, axis) * w), x, axis, w)


def test_cumsum_literal_forms():
    x = rand(3, 4)
    w = weights_for(x)
    check(lambda x, w: np.sum(np.cumsum(x, axis=1) * w), x, w)
    check(lambda x, w: np.sum(x.cumsum(0) * w), x, w)
    check(lambda x: np.sum(np.cumsum(x) ** 2), x)


def test_generated_code_reads_like_backprop():
    src = tx.source(tx.grad(lambda x: np.sum(np.sin(np.sum(x, axis=1)))))
    assert "unreduce(" in src and "axis=1" in src
    src = tx.source(tx.grad(lambda x: np.sum(x)))
    assert "keepdims" not in src and "axis" not in src


# --- forms without a rule are refused, not silently wrong ---------------------------

def test_masked_and_seeded_reductions_are_refused():
    x = rand(3, 4)
    mask = x > 0
    with pytest.raises(tx.TransformError, match="where="):
        tx.grad(lambda x: np.sum(x, where=mask))(x)
    with pytest.raises(tx.TransformError, match="initial="):
        tx.grad(lambda x: np.max(x, initial=0.0))(x)
    with pytest.raises(tx.TransformError, match="correction="):
        tx.grad(lambda x: np.var(x, correction=1))(x)
    check(lambda x: np.sum(x ** 2, initial=1.0), x)       # a constant offset is fine
