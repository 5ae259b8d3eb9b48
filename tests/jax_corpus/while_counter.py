"""``lax.while_loop`` with a counter in its carry (JAX's "control flow"
docs): halve until below one, counting the halvings; and ``fori_loop`` with
an ``(i, x)``-style tuple carry, differentiated (its trip count is fixed)."""
# imports
import tangent_x as tx
import tangent_x.numpy as jnp
from tangent_x import lax
# imports


def halvings(x):
    def cond(carry):
        i, v = carry
        return v >= 1.0

    def body(carry):
        i, v = carry
        return i + 1, 0.5 * v

    return lax.while_loop(cond, body, (0, x))


def decay(x, rate):
    def body(i, carry):
        total, v = carry
        v = v * rate + jnp.sin(v) / (i + 1.0)
        return total + v, v

    return lax.fori_loop(0, 6, body, (0.0, x))[0]


def run():
    count, rest = tx.jit(halvings)(37.0)
    value, tangent = tx.jvp(tx.jit(halvings), (37.0,), (1.0,))
    grads = tx.jit(tx.grad(decay, argnums=(0, 1)))(0.7, 0.9)
    return {"count": count, "rest": rest, "jvp_rest": tangent[1],
            "decay": tx.jit(decay)(0.7, 0.9), "decay_grads": jnp.array(grads)}
