"""Reductions, shape operations, products and linear algebra as NumPy functions."""
import numpy as np
import numpy.linalg as la

from . import F, N, P, case, each


def _well_conditioned(n):
    def make(rng):
        return rng.standard_normal((n, n)) * 0.3 + np.eye(n) * 2.0
    make.__name__ = f"well_conditioned{n}"
    return make


@case(*each(N, (2, 3), (4, 1)))
def sum_axis(x):
    return np.sum(np.sum(x, axis=1) ** 2) + np.sum(np.sum(x, axis=0, keepdims=True) * x)


@case(*each(N, (2, 3), (3, 4)))
def mean_axis(x):
    return np.sum(np.mean(x * x, axis=0) * np.mean(x, axis=-1, keepdims=True))


@case(*each(N, (2, 3, 2), (3, 2, 1)))
def sum_axis_tuple(x):
    return np.sum(np.sum(x, axis=(0, 2)) ** 2)


@case(*each(P, (3,), (2, 3)))
def prod(x):
    return np.prod(x) + np.sum(np.prod(x, axis=-1))


@case(*each(N, (4,), (2, 3)))
def max_min(x):
    return np.max(x) * np.min(x) + np.sum(np.max(x, axis=0))


@case(*each(N, (4,), (2, 3)))
def var_std(x):
    return np.var(x) + np.std(x) + np.sum(np.var(x, axis=0))


@case(*each(N, (2, 3), (4, 2)))
def reshape_transpose(x):
    y = np.reshape(np.transpose(x), (-1,))
    return np.sum(y * np.arange(y.shape[0]))


@case(*each(N, (2, 3, 4), (1, 2, 3)))
def swapaxes_moveaxis(x):
    return np.sum(np.swapaxes(x, 0, 2) ** 2) + np.sum(np.moveaxis(x, 0, -1)[0] * 3.0)


@case(*each(N, (3,), (2, 1)))
def expand_dims_squeeze(x):
    y = np.expand_dims(x, 0)
    return np.sum(np.squeeze(y * y) * x)


@case((N((2, 3)), N((1, 3))), (N((3,)), N((2,))), argnums=(0, 1))
def concatenate(x, y):
    z = np.concatenate([x, y * 2.0], axis=0)
    return np.sum(z * z * z)


@case((N((3,)), N((3,))), (N((2, 2)), N((2, 2))), argnums=(0, 1))
def stack(x, y):
    s = np.stack([x, y, x * y])
    return np.sum(np.sin(s) * s)


@case((N((3,)), N((3,))), (N((2, 2)), N((2, 2))), argnums=(0, 1))
def hstack_vstack(x, y):
    return np.sum(np.hstack([x, y]) ** 2) + np.sum(np.vstack([x, y * y]) * 2.0)


@case(*each(N, (3,), (1, 3)))
def broadcast_to(x):
    return np.sum(np.broadcast_to(x, (2, 3)) * np.arange(6.0).reshape(2, 3))


@case(*each(N, (3,), (2, 2)))
def tile_repeat(x):
    return np.sum(np.tile(x, 2) ** 2) + np.sum(np.repeat(x, 3) ** 3)


@case(*each(N, (3,), (2, 3)))
def flip(x):
    return np.sum(np.flip(x) * x * np.arange(x.size).reshape(x.shape))


@case((N((3,)), N((3,))), (N((2, 3)), N((3,))), argnums=(0, 1))
def dot(x, y):
    return np.sum(np.dot(x, y) ** 2)


@case((N((3,)), N((2,))), (N((1,)), N((4,))), argnums=(0, 1))
def outer(x, y):
    return np.sum(np.sin(np.outer(x, y)))


@case((N((3,)), N((3,))), (N((2, 3)), N((4, 3))), argnums=(0, 1))
def inner(x, y):
    return np.sum(np.inner(x, y) ** 2)


@case((N((2, 3)), N((3, 2))), (N((2, 2, 3)), N((3, 4))), argnums=(0, 1))
def tensordot(x, y):
    return np.sum(np.tensordot(x, y, axes=1) ** 2)


@case(*each(N, (3, 3), (2, 4)))
def trace(x):
    return np.trace(x @ x.T) + np.trace(x)


@case((N((2, 3)), N((3, 4))), (N((1, 2)), N((2, 2))), argnums=(0, 1))
def einsum(a, b):
    return np.einsum("ij,jk->", a, b) + np.sum(np.einsum("ij,jk->ik", a, b) ** 2)


@case(*each(N, (3,), (2, 3)))
def cumsum(x):
    return np.sum(np.cumsum(x) ** 2) + np.sum(np.cumsum(x, axis=0) * x)


@case((F(_well_conditioned(3)), N((3,))), (F(_well_conditioned(2)), N((2,))),
      argnums=(0, 1))
def linalg_solve(A, b):
    x = np.linalg.solve(A, b)
    return x @ x


@case(*[(F(_well_conditioned(n)),) for n in (2, 3)])
def linalg_inv(A):
    return np.sum(np.linalg.inv(A) ** 2)


@case(*[(F(_well_conditioned(n)),) for n in (2, 3)])
def linalg_det(A):
    return np.linalg.det(A) + la.det(A * 2.0)
