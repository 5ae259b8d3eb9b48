"""The custom_jvp example of JAX's "custom derivative rules" tutorial:
``log1pexp`` with a stable derivative, under ``jit(vmap(grad))``."""
# imports
import tangent_x as tx
import tangent_x.numpy as jnp
# imports


@tx.custom_jvp
def log1pexp(x):
    return jnp.log(1.0 + jnp.exp(x))


@log1pexp.defjvp
def log1pexp_jvp(primals, tangents):
    x, = primals
    x_dot, = tangents
    ans = log1pexp(x)
    ans_dot = (1.0 - 1.0 / (1.0 + jnp.exp(x))) * x_dot
    return ans, ans_dot


def run():
    xs = jnp.array([-3.0, 0.0, 2.5, 10.0, 100.0])
    return {"value": tx.jit(tx.vmap(log1pexp))(xs),
            "grad": tx.jit(tx.vmap(tx.grad(log1pexp)))(xs),
            "grad_at_100": tx.jit(tx.grad(log1pexp))(100.0),
            "jvp": tx.jvp(log1pexp, (xs[2],), (2.0,))[1]}
