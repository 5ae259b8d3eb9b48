"""Boolean masks writing in place, on float32: ``x[MASK] = -100.0`` (NumPy's
way), ``x.at[MASK].set(-100.0)`` (JAX's) and ``jnp.where(mask, -100.0, x)``
(JAX's way for a mask that is an argument: under ``jax.jit`` a traced
boolean index is refused), then a softmax cross-entropy, differentiated.
JAX arrays refuse the first form, so its results are compared with the
second's (``JAX_SKIP``)."""
# imports
import tangent_x as tx
import tangent_x.numpy as jnp
# imports

JAX_SKIP = ("inplace", "inplace_grad")
MASK = jnp.array([False, True, False, False, True])


def masked_at(x):
    return x.at[MASK].set(-100.0)


def masked_inplace(x):
    x = 2.0 * x / 2.0
    x[MASK] = -100.0
    return x


def masked_where(x, mask):
    return jnp.where(mask, -100.0, x)


def xent(z, label):
    top = jnp.max(z)
    return -(z[label] - top - jnp.log(jnp.sum(jnp.exp(z - top))))


def run(skip=()):
    x = jnp.array([0.5, -1.0, 2.0, 0.25, 1.5], dtype=jnp.float32)
    results = {"at": tx.jit(masked_at)(x),
               "at_grad": tx.jit(tx.grad(lambda v: xent(masked_at(v), 3)))(x),
               "where_grad": tx.jit(tx.grad(lambda v, m: xent(masked_where(v, m), 3)))(x, MASK)}
    if "inplace" not in skip:
        results["inplace"] = tx.jit(masked_inplace)(x)
        results["inplace_grad"] = tx.jit(tx.grad(lambda v: xent(masked_inplace(v), 3)))(x)
    return results
