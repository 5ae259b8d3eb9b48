"""An Elman RNN written with ``lax.scan`` (JAX's "control flow" docs),
its loss differentiated with respect to every parameter under jit."""
# imports
import tangent_x as tx
import tangent_x.numpy as jnp
from tangent_x import lax, random
# imports


def rnn_loss(params, xs, target):
    def cell(h, x):
        h = jnp.tanh(params["Wh"] @ h + params["Wx"] @ x + params["b"])
        return h, jnp.sum(h)

    h0 = jnp.zeros(params["b"].shape[0])
    h, outs = lax.scan(cell, h0, xs)
    return jnp.sum((h - target) ** 2) + 0.1 * jnp.sum(outs ** 2)


def run():
    k1, k2, k3 = random.split(random.PRNGKey(3), 3)
    params = {"Wh": 0.4 * random.normal(k1, (4, 4), dtype=jnp.float64),
              "Wx": 0.4 * random.normal(k2, (4, 2), dtype=jnp.float64),
              "b": jnp.full(4, 0.05)}
    xs = random.normal(k3, (7, 2), dtype=jnp.float64)
    target = jnp.linspace(-0.5, 0.5, 4)
    value, grads = tx.jit(tx.value_and_grad(rnn_loss))(params, xs, target)
    return {"loss": value, "dWh": grads["Wh"], "dWx": grads["Wx"], "db": grads["b"]}
