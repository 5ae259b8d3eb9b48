"""Normalising by a sum over devices, as in JAX's ``pmap`` docs:
``x / lax.psum(x, 'i')`` under ``pmap`` (two devices) and under
``vmap(..., axis_name='i')``, and the gradient of a pmapped loss."""
# imports
import tangent_x as tx
import tangent_x.numpy as jnp
from tangent_x import lax
# imports


def normalize(x):
    return x / lax.psum(x, "i")


def centred_square(x):
    return jnp.sum((x - lax.pmean(x, "i")) ** 2)


def run():
    xs = jnp.arange(1.0, 7.0).reshape(2, 3)
    return {"pmap": tx.pmap(normalize, axis_name="i")(xs),
            "vmap": tx.vmap(normalize, axis_name="i")(jnp.arange(1.0, 5.0)),
            "pmap_grad": tx.pmap(tx.grad(centred_square), axis_name="i")(xs ** 2),
            "jit_vmap": tx.jit(tx.vmap(tx.grad(centred_square), axis_name="i"))(xs.T)}
