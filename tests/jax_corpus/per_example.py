"""Per-example gradients, as in JAX's "automatic vectorization" and
"per-example gradients" docs: ``vmap(grad(loss), in_axes=(None, 0, 0))`` of a
small MLP whose params are a dict, and ``functools.partial`` binding the
params (``vmap(partial(predict, params))``)."""
from functools import partial

# imports
import tangent_x as tx
import tangent_x.numpy as jnp
from tangent_x import random
# imports


def init(key):
    k1, k2, k3 = random.split(key, 3)
    return {"W1": random.normal(k1, (6, 4), dtype=jnp.float64) / 2.0,
            "b1": 0.1 * random.normal(k2, (6,), dtype=jnp.float64),
            "W2": random.normal(k3, (3, 6), dtype=jnp.float64) / 2.0,
            "b2": jnp.zeros(3)}


def predict(params, x):
    h = jnp.tanh(params["W1"] @ x + params["b1"])
    logits = params["W2"] @ h + params["b2"]
    return logits - jnp.log(jnp.sum(jnp.exp(logits)))


def loss(params, x, y):
    return -jnp.sum(predict(params, x) * y)


def run():
    params = init(random.PRNGKey(1))
    xs = random.normal(random.PRNGKey(2), (5, 4), dtype=jnp.float64)
    ys = jnp.eye(3)[jnp.array([0, 2, 1, 1, 0])]
    per_example_grads = tx.jit(tx.vmap(tx.grad(loss), in_axes=(None, 0, 0)))
    batched_predict = tx.jit(tx.vmap(partial(predict, params)))
    input_grads = tx.jit(tx.vmap(tx.grad(partial(loss, params))))
    g = per_example_grads(params, xs, ys)
    return {"dW1": g["W1"], "db2": g["b2"], "log_probs": batched_predict(xs),
            "dx": input_grads(xs, ys)}
