"""Subscript and augmented assignment on arrays the function owns, JAX-style
``x.at[i].set(v)`` updates, and stop_gradient.

Gradients through indexed accumulation (``acc[0] += x[0] * x[1]``) broke
Tangent.  The test also checks that the caller's arrays are never mutated.
"""
import numpy as np

import tangent_x as tx
from tangent_x import lax

from . import C, N, P, case, each


@case(*each(N, (3,), (4,)))
def subscript_assign_into_zeros(x):
    y = np.zeros(3)
    y[0] = x[1] * 2.0
    y[1] = x[0] * x[2]
    y[2] = np.sin(x[0])
    return y @ y


@case(*each(N, (3,), (2, 3)))
def subscript_assign_into_zeros_like(x):
    y = np.zeros_like(x)
    y[0] = x[1] * 2.0
    y[1] = x[0] * x[1]
    return np.sum(y * y + y)


@case(*each(N, (3,), (2, 3)))
def subscript_overwrite_copy(x):
    y = x.copy()
    y[0] = 0.0
    return np.sum(y * y * x)


@case(*each(N, (3,), (2, 3)))
def subscript_overwrite_twice(x):
    y = x * 1.0
    y[1] = x[0] * 3.0
    y[1] = y[1] * y[0]
    return np.sum(y ** 2)


@case(*each(N, (4,), (3, 2)))
def slice_assign(x):
    y = x.copy()
    y[1:] = y[1:] * 2.0 + y[:-1]
    return np.sum(y * y)


@case(*each(N, (2, 3), (4, 2)))
def column_assign(x):
    y = np.zeros_like(x)
    y[:, 0] = x[:, 1] * x[:, 0]
    y[:, 1] = np.exp(x[:, 0])
    return np.sum(y * x)


@case(*each(N, (3,), (2, 3)))
def slice_assign_broadcast_scalar(x):
    y = np.ones_like(x)
    y[:] = x[0] * 2.0
    return np.sum(y * x)


@case(*each(N, (3,), (5,)))
def rows_into_matrix(x):
    m = np.zeros((2, x.shape[0]))
    m[0] = x
    m[1] = x * x
    return np.sum(m @ m.T)


@case(*each(N, (3,), (2, 3)))
def np_array_copy_then_assign(x):
    y = np.array(x)
    y[0] *= 3.0
    return np.sum(y * y)


@case(*each(N, (3,), (5,)))
def indexed_accumulation(x):
    acc = np.zeros(2)
    acc[0] += x[0] * x[1]
    acc[1] += x[0]
    return acc @ acc


@case(*each(N, (3,), (3, 2)))
def indexed_accumulation_zeros_like(x):
    acc = np.zeros_like(x)
    acc[0] += x[0] * x[1]
    acc[1] += x[0]
    acc[0] += x[2] * acc[1]
    return np.sum(acc * acc)


@case(*each(N, (3,), (4,)))
def indexed_accumulation_same_slot(x):
    acc = np.zeros(3)
    acc[0] += x[0]
    acc[0] += x[1] * x[0]
    acc[0] *= x[2]
    acc[2] -= acc[0] * 2.0
    return np.sum(acc * acc) + acc[0]


@case(*each(N, (4,), (3, 2)))
def indexed_slice_accumulation(x):
    acc = np.zeros_like(x)
    acc[1:] += x[:-1] * x[1:]
    acc[:2] -= x[:2]
    return np.sum(acc ** 2)


@case((N((3,)), N(())), (N((3, 2)), N((2,))), argnums=(0, 1))
def indexed_accumulation_of_argument_value(x, v):
    y = np.zeros_like(x)
    y[1] += v * x[0]
    y[2] /= 2.0
    return np.sum(y * x)


@case(*each(N, (3,), (2, 3)))
def augmented_array_add_sub_mul(x):
    acc = np.zeros_like(x)
    acc += x * x
    acc -= np.sin(x)
    acc *= x
    return np.sum(acc)


@case(*each(P, (3,), (2, 3)))
def augmented_array_div_pow(x):
    acc = np.ones_like(x)
    acc /= x
    acc **= 2.0
    acc += 1.0
    return np.sum(acc)


@case(*each(N, (), (3,)))
def augmented_scalar(x):
    s = 0.0
    s += np.sum(x * x)
    s -= np.sum(x)
    s *= 2.0
    s += np.sum(np.cos(x))
    return s


@case(*each(N, (3,), (2, 3)))
def augmented_on_owned_copy_of_argument(x):
    x = x * 1.0
    x += np.sin(x)
    x *= x
    return np.sum(x)


@case(*each(N, (3,), (2, 3)))
def augmented_on_rebound_python_name(x):
    y = x
    y = y + 1.0
    y += x
    return np.sum(y * y)


def _at_set_ref(x):
    y = x.copy()
    y[0] = x[1] * 2.0
    return np.sum(y * y)


@case(*each(N, (3,), (2, 3)), reference=_at_set_ref)
def at_set(x):
    y = x.at[0].set(x[1] * 2.0)
    return np.sum(y * y)


def _at_add_ref(x):
    y = x.copy()
    y[1:] = y[1:] + x[:-1] * x[:-1]
    return np.sum(y * y)


@case(*each(N, (3,), (3, 2)), reference=_at_add_ref)
def at_add_slice(x):
    y = x.at[1:].add(x[:-1] * x[:-1])
    return np.sum(y * y)


def _at_add_repeated_ref(x):
    y = np.zeros_like(x)
    np.add.at(y, np.array([0, 0, 1]), x[:3] * 2.0)
    return np.sum(y * y * x)


@case(*each(N, (3,), (4, 2)), reference=_at_add_repeated_ref)
def at_add_repeated_indices(x):
    y = np.zeros_like(x).at[np.array([0, 0, 1])].add(x[:3] * 2.0)
    return np.sum(y * y * x)


def _at_multiply_ref(x):
    y = x.copy()
    y[-1] = y[-1] * np.sin(x[0])
    return np.sum(y ** 3)


@case(*each(N, (3,), (2, 3)), reference=_at_multiply_ref)
def at_multiply(x):
    y = x.at[-1].multiply(np.sin(x[0]))
    return np.sum(y ** 3)


def _at_chain_ref(x):
    y = np.zeros(3)
    y[0] = x[0]
    y[1] = y[1] + x[1] * x[0]
    return y @ y


@case(*each(N, (3,), (4,)), reference=_at_chain_ref)
def at_set_then_add(x):
    y = np.zeros(3)
    y = y.at[0].set(x[0])
    y = y.at[1].add(x[1] * x[0])
    return y @ y


@case(*each(N, (), (3,)), expected=lambda x: x)
def stop_gradient_tx(x):
    return np.sum(tx.stop_gradient(x) * x)


@case(*each(N, (), (3,)), expected=lambda x: 2.0 * np.cos(x))
def stop_gradient_lax(x):
    return np.sum(tx.lax.stop_gradient(np.sin(x)) * 0.0 + np.sin(x) * 2.0
                  + lax.stop_gradient(x * x))


@case((N(), N()), (N((3,)), N((3,))), argnums=(0, 1),
      expected=lambda x, y: (np.exp(x) * y, np.zeros_like(y)))
def stop_gradient_whole_argument(x, y):
    return np.sum(np.exp(x) * tx.stop_gradient(y))


@case((N((3,)), C(1)), (N((2, 3)), C(0)))
def subscript_assign_with_integer_argument(x, i):
    y = x * 2.0
    y[i] = y[i] * y[i]
    return np.sum(y)
