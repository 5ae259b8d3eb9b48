"""A two-layer MLP trained by SGD, the update a ``tree_map`` over the params.

From JAX's "training a simple neural network" tutorial: params are a list of
``(W, b)`` tuples, the step is ``tree_map(lambda p, g: p - lr * g, ...)``.
"""
# imports
import tangent_x as tx
import tangent_x.numpy as jnp
from tangent_x import random
from tangent_x.tree_util import tree_map
# imports

LR = 0.1


def init_layer(key, m, n, scale=0.5):
    w_key, b_key = random.split(key)
    return (scale * random.normal(w_key, (n, m), dtype=jnp.float64),
            scale * random.normal(b_key, (n,), dtype=jnp.float64))


def init_params(sizes, key):
    keys = random.split(key, len(sizes))
    return [init_layer(k, m, n) for m, n, k in zip(sizes[:-1], sizes[1:], keys)]


def predict(params, x):
    h = x
    for w, b in params[:-1]:
        h = jnp.tanh(h @ w.T + b)
    w, b = params[-1]
    return h @ w.T + b


def loss(params, x, y):
    return jnp.mean((predict(params, x) - y) ** 2)


def update(params, x, y):
    grads = tx.grad(loss)(params, x, y)
    return tree_map(lambda p, g: p - LR * g, params, grads)


def data():
    x = jnp.linspace(-1.0, 1.0, 24).reshape(8, 3)
    y = jnp.stack([jnp.sin(3.0 * x[:, 0]) * x[:, 1], jnp.cos(x[:, 2])], axis=1)
    return x, y


def run():
    params = init_params([3, 5, 2], random.PRNGKey(0))
    x, y = data()
    step = tx.jit(update)
    first = loss(params, x, y)
    for _ in range(50):
        params = step(params, x, y)
    return {"first_loss": first, "final_loss": loss(params, x, y),
            "W0": params[0][0], "b1": params[1][1]}
