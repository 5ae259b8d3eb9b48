"""The issue #7 workloads written for the peer libraries tools/bench.py
compares against: JAX, autograd and tangent-ad (Google's Tangent).

Each peer gets the idiomatic form of the same computation: JAX loops are
``lax.fori_loop`` / ``lax.scan`` (a Python loop under ``jax.jit`` would be
unrolled), autograd and tangent-ad differentiate the plain NumPy code.
``make(peer, workload)`` returns ``(gradient function, args)`` or raises
``Unsupported`` with the reason the table prints.  Nothing is imported
until asked, so a missing peer costs nothing.
"""
import importlib.util


class Unsupported(Exception):
    """The peer cannot run this workload (the message says why)."""


def installed(peer):
    module = {"JAX": "jax", "autograd": "autograd", "tangent-ad": "tangent"}[peer]
    return importlib.util.find_spec(module) is not None


# ---------------------------------------------------------------- JAX

def _jax():
    import jax
    jax.config.update("jax_enable_x64", True)
    return jax


def jax_grad(workload, steps):
    """``jax.jit(jax.grad(...))`` (``vmap`` for the per-example gradient)."""
    jax = _jax()
    jnp, lax = jax.numpy, jax.lax

    if workload == "scalar_loop":
        def scalar_loop(x):
            return lax.fori_loop(0, steps, lambda i, x: jnp.sin(x) * 0.99 + 0.01, x)
        return jax.jit(jax.grad(scalar_loop))
    if workload == "mlp_grad":
        def loss(params, x, y):
            hidden = jnp.tanh(x @ params[0]["W"].T + params[0]["b"])
            pred = hidden @ params[1]["W"].T + params[1]["b"]
            return jnp.mean((pred - y) ** 2)
        return jax.jit(jax.grad(loss))
    if workload == "per_example_grad":
        return jax.jit(jax.vmap(jax.grad(jnp.tanh)))
    if workload == "per_example_mlp":
        def example_loss(params, x, y):
            hidden = jnp.tanh(params["W1"] @ x + params["b1"])
            return jnp.sum((params["W2"] @ hidden + params["b2"] - y) ** 2)
        return jax.jit(jax.vmap(jax.grad(example_loss), in_axes=(None, 0, 0)))
    if workload == "while_newton":
        def newton_sqrt(a):
            return lax.while_loop(lambda y: jnp.abs(y * y - a) > 1e-12,
                                  lambda y: 0.5 * (y + a / y), a)
        try:
            jax.grad(newton_sqrt)(2.0)
        except Exception as exc:   # JAX: reverse-mode of while_loop is not supported
            raise Unsupported(f"cannot: {type(exc).__name__} (no reverse mode "
                              "through lax.while_loop)") from None
        return jax.jit(jax.grad(newton_sqrt))
    if workload == "rnn":
        def rnn(W, U, xs):
            def step(h, x):
                return jnp.tanh(W @ h + U @ x), None
            h, _ = lax.scan(step, jnp.zeros(W.shape[0]), xs)
            return jnp.sum(h)
        return jax.jit(jax.grad(rnn, argnums=(0, 1)))
    raise KeyError(workload)


# ---------------------------------------------------------------- autograd

def autograd_grad(workload, steps):
    """``autograd.grad`` of the plain code written with ``autograd.numpy``."""
    import autograd
    import autograd.numpy as anp

    if workload == "scalar_loop":
        def scalar_loop(x):
            for _ in range(steps):
                x = anp.sin(x) * 0.99 + 0.01
            return x
        return autograd.grad(scalar_loop)
    if workload == "mlp_grad":
        def loss(params, x, y):
            hidden = anp.tanh(x @ params[0]["W"].T + params[0]["b"])
            pred = hidden @ params[1]["W"].T + params[1]["b"]
            return anp.mean((pred - y) ** 2)
        return autograd.grad(loss)
    if workload == "per_example_grad":
        return autograd.elementwise_grad(anp.tanh)
    if workload == "while_newton":
        def newton_sqrt(a):
            y = a
            while abs(y * y - a) > 1e-12:
                y = 0.5 * (y + a / y)
            return y
        return autograd.grad(newton_sqrt)
    if workload == "rnn":
        def rnn(W, U, xs):
            h = anp.zeros(W.shape[0])
            for x in xs:
                h = anp.tanh(W @ h + U @ x)
            return anp.sum(h)
        return autograd.grad(rnn, (0, 1))
    raise KeyError(workload)


# ---------------------------------------------------------------- tangent-ad

def tangent_scalar_loop(x):
    for _ in range(1000):
        x = np.sin(x) * 0.99 + 0.01
    return x


def tangent_newton_sqrt(a):
    y = a
    while np.abs(y * y - a) > 1e-12:
        y = 0.5 * (y + a / y)
    return y


def tangent_rnn(W, U, xs):
    h = 0.0 * W[0]
    for t in range(xs.shape[0]):
        h = np.tanh(np.dot(W, h) + np.dot(U, xs[t]))
    return np.sum(h)


def tangent_mlp_loss(W1, b1, W2, b2, x, y):
    hidden = np.tanh(np.dot(x, np.transpose(W1)) + b1)
    pred = np.dot(hidden, np.transpose(W2)) + b2
    return np.mean((pred - y) ** 2)


def tangent_tanh(x):
    return np.tanh(x)


def tangent_grad(workload, steps):
    """``tangent.grad`` of the plain NumPy code (matrix products as np.dot,
    the MLP's parameters as four arrays: Tangent takes no dicts; no
    ``.shape`` in the RNN: Tangent rejects attribute reads)."""
    import tangent
    try:
        if workload == "scalar_loop":
            if steps != 1000:
                raise Unsupported("steps are fixed in the source")
            return tangent.grad(tangent_scalar_loop)
        if workload == "mlp_grad":
            g = tangent.grad(tangent_mlp_loss, wrt=(0, 1, 2, 3))

            def grad(params, x, y):
                dW1, db1, dW2, db2 = g(params[0]["W"], params[0]["b"],
                                       params[1]["W"], params[1]["b"], x, y)
                return [{"W": dW1, "b": db1}, {"W": dW2, "b": db2}]
            return grad
        if workload == "per_example_grad":
            return tangent.grad(tangent_tanh)
        if workload == "while_newton":
            return tangent.grad(tangent_newton_sqrt)
        if workload == "rnn":
            return tangent.grad(tangent_rnn, wrt=(0, 1))
    except Unsupported:
        raise
    except Exception as exc:
        raise Unsupported(f"cannot: {type(exc).__name__}: {str(exc).splitlines()[0][:60]}") \
            from None
    raise KeyError(workload)


import numpy as np  # noqa: E402  (tangent-ad resolves `np` in this module's globals)


def make(peer, workload, steps=1000):
    """The peer's gradient function for ``workload``; Unsupported if it has none."""
    if workload == "per_example_mlp" and peer != "JAX":
        raise Unsupported("no vmap")
    return {"JAX": jax_grad, "autograd": autograd_grad,
            "tangent-ad": tangent_grad}[peer](workload, steps)
