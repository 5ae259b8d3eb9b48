"""The tutorial MLP in float32, initialised from ``tx.random``'s float32
normals (float32 asked for explicitly, as JAX in x64 mode needs), trained a few jitted ``value_and_grad`` steps; and the mixed
variant: float32 weights with float64 biases from ``jnp.zeros``."""
# imports
import tangent_x as tx
import tangent_x.numpy as jnp
from tangent_x import random
from tangent_x.tree_util import tree_map
# imports


def init(key, sizes, bias_dtype):
    keys = random.split(key, len(sizes) - 1)
    return [{"W": random.normal(k, (n, m), dtype=jnp.float32) / jnp.sqrt(jnp.float32(m)),
             "b": jnp.zeros(n, dtype=bias_dtype)}
            for k, m, n in zip(keys, sizes[:-1], sizes[1:])]


def predict(params, x):
    for layer in params[:-1]:
        x = jnp.maximum(layer["W"] @ x + layer["b"], 0.0)
    return params[-1]["W"] @ x + params[-1]["b"]


def loss(params, xs, ys):
    preds = tx.vmap(predict, in_axes=(None, 0))(params, xs)
    return jnp.mean((preds - ys) ** 2)


def sgd(params, xs, ys):
    value, grads = tx.value_and_grad(loss)(params, xs, ys)
    return value, tree_map(lambda p, g: p - 0.05 * g, params, grads)


def train(bias_dtype):
    params = init(random.PRNGKey(7), [3, 8, 2], bias_dtype)
    xs = random.uniform(random.PRNGKey(8), (16, 3), dtype=jnp.float32,
                        minval=-1.0, maxval=1.0)
    ys = jnp.stack([xs[:, 0] * xs[:, 1], jnp.sin(xs[:, 2])], axis=1)
    step = tx.jit(sgd)
    values = []
    for _ in range(5):
        value, params = step(params, xs, ys)
        values.append(value)
    return jnp.stack(values), params


def run():
    losses, params = train(jnp.float32)
    mixed_losses, mixed = train(jnp.float64)
    return {"losses": losses, "W1": params[1]["W"], "b0": params[0]["b"],
            "mixed_losses": mixed_losses, "mixed_b1": mixed[1]["b"]}
