"""``x.at[idx].min/max/multiply(v)`` with repeated indices, eagerly (the
compiled variants are in ``test_at_updates.py``, CI's slow step): values
against ``np.<ufunc>.at`` on a copy, grad and jvp against central
differences, vmap and grad of vmap against loops over examples."""
import numpy as np
import pytest

import tangent_x as tx
from _fd import assert_tree_allclose, numerical_grad
from test_at_updates import (IDX, LOSS, OPS, UPDATE, _loop, _untied, loss_reference,
                             reference)


@pytest.mark.parametrize("op", OPS)
def test_values_grad_jvp(op):
    rng = np.random.default_rng(11)
    x, v = _untied(rng, (3,), (5,))
    with tx.disable_jit():
        np.testing.assert_allclose(tx.jit(UPDATE[op])(x, IDX, v), reference(op, x, IDX, v))
        got = tx.grad(LOSS[op], argnums=(0, 1))(x, v)
        assert_tree_allclose(got, numerical_grad(loss_reference(op), (x, v), argnum=(0, 1)),
                             rtol=1e-5, atol=1e-6)
        t = (rng.normal(size=3), rng.normal(size=5))
        _, out_dot = tx.jvp(LOSS[op], (x, v), t)
    assert out_dot == pytest.approx(np.sum(got[0] * t[0]) + np.sum(got[1] * t[1]), rel=1e-9)


vmapped_min, vmapped_max, vmapped_multiply = (tx.vmap(UPDATE[op]) for op in OPS)
VMAPPED = {"min": vmapped_min, "max": vmapped_max, "multiply": vmapped_multiply}
I = np.random.default_rng(12).integers(0, 3, size=(4, 5))


def total_min(X, V):
    return np.sum(np.sin(vmapped_min(X, I, V)))


def total_max(X, V):
    return np.sum(np.sin(vmapped_max(X, I, V)))


def total_multiply(X, V):
    return np.sum(np.sin(vmapped_multiply(X, I, V)))


TOTAL = {"min": total_min, "max": total_max, "multiply": total_multiply}


@pytest.mark.parametrize("op", OPS)
def test_vmap_and_grad_of_vmap(op):
    rng = np.random.default_rng(12)
    X, V = rng.normal(size=(4, 3)), rng.normal(size=(4, 5))
    np.testing.assert_allclose(VMAPPED[op](X, I, V), _loop(op, X, I, V))

    def total_ref(X, V):
        return np.sum(np.sin(_loop(op, X, I, V)))
    X, V = _untied(rng, (4, 3), (4, 5))
    assert_tree_allclose(tx.grad(TOTAL[op], argnums=(0, 1))(X, V),
                         numerical_grad(total_ref, (X, V), argnum=(0, 1)), rtol=1e-5, atol=1e-6)
