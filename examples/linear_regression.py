"""Fit y = 2x - 1 with NamedTuple parameters and a tree_map SGD loop."""
from typing import NamedTuple

import numpy as np

import tangent_x as tx


class Params(NamedTuple):
    w: float
    b: float


def model(params, x):
    return params.w * x + params.b


def loss(params, x, y):
    residual = model(params, x) - y
    return np.mean(residual ** 2)


def fit(steps=500, lr=0.1, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1.0, 1.0, size=100)
    y = 2.0 * x - 1.0 + 0.05 * rng.normal(size=100)
    params = Params(w=0.0, b=0.0)
    grad_loss = tx.grad(loss)
    for _ in range(steps):
        grads = grad_loss(params, x, y)
        params = tx.tree_util.tree_map(lambda p, g: p - lr * g, params, grads)
    return params


if __name__ == "__main__":
    p = fit()
    print(f"fit: y = {p.w:.3f} x + {p.b:.3f}   (true: y = 2x - 1)")
