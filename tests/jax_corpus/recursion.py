"""Recursion whose depth Python numbers decide, which JAX traces through:
``power(x, n)`` with a Python int ``n``, and a binary tree of calls
``tree(x, depth)`` (2 ** depth leaves), and Horner's rule over a tuple of
coefficients, its depth the tuple's ``len``; and, as arguments of the
transformed function itself, a Python int ``n`` (``grad(power_sum)(x, 3)``,
under jit a static argument as JAX needs) and a tuple of layers that
``apply`` recurses over."""
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


def power_sum(x, n):
    # differentiated with n a Python int argument: grad(power_sum)(x, 3)
    return jnp.sum(power(x, n))


def apply(layers, x):
    return x if not layers else apply(layers[1:], jnp.tanh(layers[0] @ x))


def network_loss(layers, x):
    # recursion over the tuple argument itself, its depth the tuple's length
    return jnp.sum(apply(layers, x) ** 2)


def run():
    x = jnp.array([0.3, -1.2, 2.0])
    grad_f = tx.jit(tx.grad(f))
    per_example = tx.jit(tx.vmap(tx.grad(lambda t: power(t, 4) * tree(t, 2))))
    horner_grad = tx.jit(tx.vmap(tx.grad(lambda t: horner(COEFFS, t))))
    layers = (jnp.array([[0.5, -0.2, 0.1], [0.1, 0.3, -0.4]]), jnp.array([[0.7, -0.6]]))
    layer_grads = tx.jit(tx.grad(network_loss, argnums=(0, 1)))(layers, x)
    return {"f": tx.jit(f)(x), "grad": grad_f(x), "vmap_grad": per_example(x),
            "horner_grad": horner_grad(x),
            "grad_power_n": tx.jit(tx.grad(power_sum), static_argnums=1)(x, 3),
            "grad_power_n_eager": tx.grad(power_sum)(x, 4),
            "layer_grad_0": layer_grads[0][0], "layer_grad_1": layer_grads[0][1],
            "layer_grad_x": layer_grads[1]}
