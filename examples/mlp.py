"""A two-layer MLP whose parameters are a list of dicts.

``tx.grad(loss)`` returns gradients with the same structure as ``params``;
``has_aux=True`` also hands back the predictions.  Print the backprop that
tangent_x writes with ``tangent-x grad examples/mlp.py:loss``.
"""
import numpy as np

import tangent_x as tx


def init_params(sizes, seed=0):
    rng = np.random.default_rng(seed)
    return [{"W": rng.normal(size=(n_out, n_in)) / np.sqrt(n_in), "b": np.zeros(n_out)}
            for n_in, n_out in zip(sizes[:-1], sizes[1:])]


def predict(params, x):
    """x: (batch, n_in) -> (batch, n_out); tanh hidden layer."""
    hidden = np.tanh(x @ params[0]["W"].T + params[0]["b"])
    return hidden @ params[1]["W"].T + params[1]["b"]


def loss(params, x, y):
    """Mean squared error."""
    err = predict(params, x) - y
    return np.mean(err ** 2)


def loss_and_predictions(params, x, y):
    """For has_aux: (loss, predictions)."""
    pred = predict(params, x)
    return np.mean((pred - y) ** 2), pred


def main():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(128, 4))
    y = np.sin(x @ np.array([[1.0], [-2.0], [0.5], [0.3]]))
    params = init_params([4, 16, 1])
    grad_fn = tx.grad(loss_and_predictions, has_aux=True)
    for step in range(201):
        grads, pred = grad_fn(params, x, y)
        params = tx.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads)
        if step % 50 == 0:
            print(f"step {step:3d}  loss {loss(params, x, y):.5f}")
    print("gradient structure:", tx.tree_util.tree_structure(grads))


if __name__ == "__main__":
    main()
