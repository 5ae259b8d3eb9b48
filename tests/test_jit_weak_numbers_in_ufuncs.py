"""A Python number an ``if`` joined, read by a NumPy ufunc in compiled code,
and a batched ``and`` whose right side no lane needed (fuzz seed 570052).

Compiled, a Python number an ``if`` assigns on both paths is a
``WeakNumber`` (it promotes as NumPy's weak scalars do).  Numba's ufuncs
knew numbers and arrays only, so ``np.sin(b)`` of one was refused; they
take it now as NumPy does: alone, a float64; beside an array, that array's
dtype where NumPy gives it that.  Under ``jit(vmap)``, ``w < c and k < 2``
computes ``k < 2`` only where some lane needs it, and the batched select of
the two sides crashed on the side left None.
"""
import numba
import numpy as np
import pytest

import tangent_x as tx
from tangent_x import runtime
import tangent_x.numba_stage.numba_runtime  # noqa: F401  (the helpers' Numba forms)


def carried_sine(x):
    if np.sum(x) > 0.0:
        b = 0.5
    else:
        b = -0.25
    k = 0
    while np.max(x) * b < 0.9 and k < 3:
        b = 0.7 * b + 0.3 * np.sin(b)
        k += 1
    return np.sum(x * np.cos(b)) + np.exp(b)


def joined_then_binary(x):
    if np.sum(x) > 0.0:
        b = 0.5
    else:
        b = 2
    return np.maximum(x, b) + np.arctan2(b, x) + np.hypot(b, 0.25)


def number_only(x):
    if np.sum(x) > 0.0:
        b = 1.5
    else:
        b = -0.5
    return x * np.float32(1.0) + np.tanh(b)


ARGS = [np.array([0.3, -0.8, 1.1]), np.array([-0.3, -0.8, 0.1]),
        np.array([0.3, -0.8, 1.1], dtype=np.float32), np.array([-2.0, 0.5], dtype=np.float32)]


@pytest.mark.parametrize("fn", [carried_sine, joined_then_binary, number_only])
@pytest.mark.parametrize("x", ARGS, ids=["f64", "f64_neg", "f32", "f32_neg"])
def test_a_joined_python_number_in_a_ufunc(fn, x):
    want = fn(x.copy())
    got = tx.jit(fn)(x.copy())
    assert np.asarray(got).dtype == np.asarray(want).dtype
    np.testing.assert_allclose(got, want, rtol=1e-6 if x.dtype == np.float32 else 1e-13)


@pytest.mark.parametrize("fn", [carried_sine, joined_then_binary])
def test_its_gradient_and_lanes(fn):
    x = np.array([0.3, -0.8, 1.1])

    def loss(v):
        return np.sum(fn(v))
    np.testing.assert_allclose(tx.jit(tx.grad(loss))(x), tx.grad(loss)(x), rtol=1e-12)
    xs = np.stack([x, -x, 0.5 * x])
    np.testing.assert_allclose(tx.jit(tx.vmap(fn))(xs), np.array([fn(v.copy()) for v in xs]),
                               rtol=1e-12)


@numba.njit
def _select_with_a_side_maybe_unset(pred, computed):
    side = pred if computed else None
    return runtime.select_lanes(pred, side, ~pred)


def test_select_lanes_of_a_side_that_was_not_computed():
    """The batched ``a and b``: ``b`` is computed only where some lane of
    ``a`` is true; where none is, the side is None and no lane takes it."""
    some = np.array([True, False, True])
    np.testing.assert_array_equal(_select_with_a_side_maybe_unset(some, True),
                                  np.array([True, True, True]))
    none = np.array([False, False, False])
    np.testing.assert_array_equal(_select_with_a_side_maybe_unset(none, False), ~none)
    with pytest.raises(ValueError, match="not computed"):
        _select_with_a_side_maybe_unset(some, False)
