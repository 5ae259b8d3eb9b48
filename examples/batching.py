"""vmap: write the function for one example, run it on a batch.

    python examples/batching.py
    tangent-x vmap examples/batching.py:layer --example-args "np.ones((128, 3))"
    tangent-x vmap examples/batching.py:tanh --transform grad   # per-example gradients

The vectorised source of ``layer`` is one batched matmul and two elementwise
ops; of ``grad(tanh)`` it is ``1 - tanh(x)**2`` on the whole batch.
"""
import numpy as np

import tangent_x as tx

rng = np.random.default_rng(0)
W = rng.normal(size=(4, 3))
b = np.zeros(4)


def layer(x):
    """One example: x has shape (3,)."""
    return np.tanh(W @ x + b)


def tanh(x):
    return np.tanh(x)


def steps_to_exceed(x, limit):
    """A while loop whose trip count differs per example: vmap runs it while any
    example is still going and freezes the ones that finished."""
    n = 0.0
    while x < limit:
        x = x * 2.0
        n = n + 1.0
    return n


def main():
    xs = rng.normal(size=(128, 3))
    batched_layer = tx.vmap(layer)
    print("layer over a batch:", batched_layer(xs).shape)
    grads = tx.vmap(tx.grad(tanh))(np.linspace(-1.0, 1.0, 5))
    print("per-example gradients of tanh:", np.round(grads, 6))
    print("steps per example:", tx.vmap(steps_to_exceed, in_axes=(0, None))(
        np.array([1.0, 3.0, 40.0, 200.0]), 100.0))
    print(tx.source(batched_layer))     # the code specialised at the call above


if __name__ == "__main__":
    main()
