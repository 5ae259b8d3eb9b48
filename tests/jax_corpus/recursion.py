"""Recursion whose depth Python numbers decide, which JAX traces through:
``power(x, n)`` with a Python int ``n``, and a binary tree of calls
``tree(x, depth)`` (2 ** depth leaves), and Horner's rule over a tuple of
coefficients, its depth the tuple's ``len``."""
# imports
import tangent_x as tx
import tangent_x.numpy as jnp
# imports

COEFFS = (0.5, -1.0, 0.25, 2.0)


def power(x, n):
    return 1.0 if n == 0 else x * power(x, n - 1)


def tree(x, depth):
    if depth == 0:
        return x
    return tree(jnp.sin(x), depth - 1) * tree(jnp.cos(x), depth - 1)


def horner(coeffs, x, i=0):
    if i == len(coeffs) - 1:
        return coeffs[i]
    return coeffs[i] + x * horner(coeffs, x, i + 1)


def f(x):
    return jnp.sum(power(jnp.sin(x), 3) + tree(x, 3))


def run():
    x = jnp.array([0.3, -1.2, 2.0])
    grad_f = tx.jit(tx.grad(f))
    per_example = tx.jit(tx.vmap(tx.grad(lambda t: power(t, 4) * tree(t, 2))))
    horner_grad = tx.jit(tx.vmap(tx.grad(lambda t: horner(COEFFS, t))))
    return {"f": tx.jit(f)(x), "grad": grad_f(x), "vmap_grad": per_example(x),
            "horner_grad": horner_grad(x)}
