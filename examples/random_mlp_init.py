"""Explicit random keys: initialise an MLP and run two Monte Carlo estimates.

    python examples/random_mlp_init.py

Randomness in tangent_x (as in JAX) is a function of a key, not of hidden
global state: one root key is split into one key per layer, so every layer's
weights are reproducible on their own, and adding a layer does not change
the others.  The numbers printed are the same ones ``jax.random`` gives for
the same keys.
"""
import numpy as np

from tangent_x import random


def init_mlp(key, sizes):
    """Params of an MLP with layer widths ``sizes`` as a list of {'W', 'b'}.

    W has shape (n_out, n_in) and is drawn from N(0, 1/n_in) (LeCun init);
    b starts at zero.  One subkey per layer, split from ``key``.
    """
    layer_keys = random.split(key, len(sizes) - 1)
    return [{"W": random.normal(k, (n_out, n_in)) / np.sqrt(n_in),
             "b": np.zeros(n_out, np.float32)}
            for k, n_in, n_out in zip(layer_keys, sizes[:-1], sizes[1:])]


def predict(params, x):
    hidden = np.tanh(x @ params[0]["W"].T + params[0]["b"])
    return hidden @ params[1]["W"].T + params[1]["b"]


def estimate_pi(key, n):
    """4 * fraction of uniform points of the unit square inside the unit circle."""
    kx, ky = random.split(key)
    x = random.uniform(kx, (n,))
    y = random.uniform(ky, (n,))
    inside = (x * x + y * y) < 1.0
    p = inside.mean()
    return 4 * p, 4 * np.sqrt(p * (1 - p) / n)


def estimate_second_moment(key, n):
    """E[X^2] for X ~ N(0, 1) (exactly 1), with its standard error."""
    x = random.normal(key, (n,)).astype(np.float64)
    return np.mean(x ** 2), np.std(x ** 2) / np.sqrt(n)


def main():
    root = random.PRNGKey(0)
    init_key, mc_key, data_key = random.split(root, 3)

    params = init_mlp(init_key, [4, 16, 1])
    for i, layer in enumerate(params):
        print(f"layer {i}: W {layer['W'].shape} std {layer['W'].std():.3f} "
              f"(target {1 / np.sqrt(layer['W'].shape[1]):.3f}), b {layer['b'].shape}")
    print("first row of W0:", np.round(params[0]["W"][0], 4))

    # Same key, same numbers: re-initialising reproduces the params exactly.
    again = init_mlp(init_key, [4, 16, 1])
    assert all(np.array_equal(a["W"], b["W"]) for a, b in zip(params, again))

    x = random.normal(data_key, (5, 4))
    print("predictions on 5 random inputs:", np.round(predict(params, x).ravel(), 4))

    pi_hat, pi_err = estimate_pi(random.fold_in(mc_key, 0), 10**6)
    print(f"pi      ~ {pi_hat:.5f} +- {pi_err:.5f}   (true {np.pi:.5f})")
    m2, m2_err = estimate_second_moment(random.fold_in(mc_key, 1), 10**6)
    print(f"E[X^2]  ~ {m2:.5f} +- {m2_err:.5f}   (true 1)")

    # A fresh key per Monte Carlo batch via fold_in: batches are independent.
    batches = [estimate_pi(random.fold_in(mc_key, 100 + i), 10**5)[0] for i in range(10)]
    print(f"10 batches of 1e5: mean {np.mean(batches):.5f}, spread {np.std(batches):.5f}")


if __name__ == "__main__":
    main()
