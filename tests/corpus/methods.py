"""Bound methods of objects holding arrays; array methods, attributes and chains.

Method chains (``x.reshape(2, 3).sum(axis=1).mean()``) broke Tangent.
"""
import numpy as np

from . import N, P, case, each, register


class Model:
    """A small affine-tanh model whose attributes hold arrays."""

    def __init__(self, W, b, scale=0.5):
        self.W, self.b, self.scale = W, b, scale

    def predict(self, x):
        return np.tanh(x @ self.W + self.b)

    def loss(self, x):
        return np.sum(self.predict(x) ** 2) * self.scale

    def loss_wrt_weights(self, W, x):
        return np.sum(np.tanh(x @ W + self.b) ** 2)

    def loss_with_helper(self, x):
        return _penalty(self.predict(x)) + self.scale * np.sum(x * x)

    @staticmethod
    def static_loss(x, y):
        return np.sum((x - y) ** 2)

    def __call__(self, x):
        return np.sum(np.sin(x @ self.W) * self.b)


def _penalty(y):
    return np.sum(np.abs(y) ** 3)


MODEL = Model(np.array([[0.5, -1.0], [1.5, 0.2], [-0.3, 0.8]]), np.array([0.1, -0.2]))

register(MODEL.loss, *each(N, (3,), (4, 3)), name="bound_method_loss")
register(MODEL.loss_wrt_weights, (N((3, 2)), N((3,))), (N((3, 2)), N((5, 3))),
         name="bound_method_wrt_weights")
register(MODEL.loss_with_helper, *each(N, (3,), (2, 3)), name="bound_method_calls_helper")
register(Model.static_loss, (N(), N()), (N((3,)), N((3,))), argnums=(0, 1),
         name="static_method")
register(MODEL, *each(N, (3,), (2, 3)), name="callable_instance")


@case(*each(N, (2, 3), (4, 1)))
def method_sum_axis0(x):
    return np.sum(x.sum(axis=0) ** 2)


@case(*each(N, (3,), (2, 3)))
def method_sum_all(x):
    return (x * x).sum() + x.sum()


@case(*each(N, (2, 3), (4, 1)))
def attribute_T(x):
    return np.sum(x.T @ x)


@case(*each(N, (2, 3), (4, 1)))
def method_transpose(x):
    return np.sum(x.transpose() * x.T + np.sin(x).T)


@case(*each(N, (2, 3), (4, 1), (5,)))
def method_reshape_flat(x):
    y = x.reshape(-1)
    return y @ y


@case(*each(N, (2, 3), (4, 1)))
def method_reshape_from_shape(x):
    y = x.reshape(x.shape[1], x.shape[0])
    return np.sum(y * y.T.T)


@case(*each(N, (3,), (2, 3)))
def method_mean(x):
    return x.mean() * x.mean() + (x * x).mean()


@case(*each(N, (2, 3), (4, 2)))
def method_mean_axis_keepdims(x):
    centered = x - x.mean(axis=1, keepdims=True)
    return (centered ** 2).sum()


@case(*each(N, (3,), (2, 3)))
def attribute_shape(x):
    n = x.shape[0]
    return np.sum(x) / n + np.sum(x * x) * x.shape[-1]


@case(*each(N, (3,), (2, 3)))
def attribute_ndim(x):
    return np.sum(x * x) * float(x.ndim)


@case(*each(N, (3,), (2, 3)))
def attribute_size(x):
    return np.sum(np.exp(x)) / x.size


@case(*each(N, (6,), (2, 3), (3, 2)))
def method_chain_reshape_sum_mean(x):
    return x.reshape(2, 3).sum(axis=1).mean()


@case(*each(N, (6,), (2, 3)))
def method_chain_squared(x):
    return (x.reshape(3, 2) ** 2).sum(axis=0).mean() + x.T.sum()


@case(*each(N, (3,), (2, 3)))
def method_chain_on_call_result(x):
    return np.sin(x).T.reshape(-1).sum()


@case(*each(N, (2, 3), (3, 4)))
def method_chain_sum_max(x):
    return (x * 2.0).sum(axis=-1).max()


@case((N((3,)), N((3,))), (N((2, 3)), N((3,))), argnums=(0, 1))
def method_dot(x, y):
    return np.sum(x.dot(y) ** 2)


@case(*each(N, (4,), (2, 3)))
def method_max_min(x):
    return x.max() - x.min() * 2.0


@case(*each(P, (3,), (2, 3)))
def method_prod(x):
    return x.prod()


@case(*each(N, (4,), (2, 3)))
def method_var_std(x):
    return x.var() + x.std()


@case(*each(N, (3,), (2, 3)))
def method_cumsum(x):
    return np.sum(x.cumsum() ** 2)


@case(*each(N, (5,), (2, 3)))
def method_clip(x):
    return np.sum(x.clip(-0.5, 0.5) * x)


@case(*each(N, (2, 3), (1, 3)))
def method_flatten_ravel_squeeze(x):
    return x.flatten() @ x.ravel() + np.sum(x.squeeze() ** 3)


@case(*each(N, (3,), (2, 3)))
def method_copy_and_astype(x):
    y = x.copy()
    z = x.astype(np.float64)
    return np.sum(y * z * x)


@case(*each(N, (2, 3), (4, 3)))
def method_swapaxes(x):
    return np.sum(x.swapaxes(0, 1) @ x)
