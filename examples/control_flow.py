"""Python control flow inside differentiated functions: loops stay loops.

Reverse mode runs through ``if``, ``for``, ``while``, ``break`` and early
``return`` -- including ``while`` loops whose trip count depends on the
data, which JAX cannot differentiate in reverse mode.  Print any of them:
``tangent-x grad examples/control_flow.py:newton_sqrt``.
"""
import numpy as np

import tangent_x as tx


def newton_sqrt(a):
    """sqrt(a) by Newton's method, stopping at a tolerance."""
    y = a
    while abs(y * y - a) > 1e-12:
        y = 0.5 * (y + a / y)
    return y


def recurrence(x):
    """1000 steps of a scalar recurrence."""
    for _ in range(1000):
        x = np.sin(x) * 0.99 + 0.01
    return x


def rnn(W, U, xs):
    """A tanh RNN over the rows of xs; the loss is the final state's sum."""
    h = np.zeros(W.shape[0])
    for x in xs:
        h = np.tanh(W @ h + U @ x)
    return np.sum(h)


def piecewise(x):
    """if/elif/else on a value."""
    if x < -1.0:
        y = -x
    elif x < 1.0:
        y = x * x
    else:
        y = 2.0 * x - 1.0
    return y


def first_above(x, threshold):
    """Early return from a loop: 3 * the first element above threshold."""
    for v in x:
        if v > threshold:
            return v * 3.0
    return np.sum(x)


def logsumexp_loop(x):
    """The loop Tangent's gradient came out all zeros for."""
    m = x[0]
    for v in x:
        m = max(m, v)
    s = 0.0
    for v in x:
        s += np.exp(v - m)
    return m + np.log(s)


def squares_of_positives(x):
    """Augmented subscript assignment under an if inside a loop."""
    acc = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        if x[i] > 0:
            acc[i] += x[i] ** 2
    return np.sum(acc)


if __name__ == "__main__":
    print("d/da sqrt(a) at 2 via Newton:", tx.grad(newton_sqrt)(2.0),
          " exact:", 1 / (2 * np.sqrt(2)))
    print("d/dx of 1000-step recurrence at 0.5:", tx.grad(recurrence)(0.5))
    rng = np.random.default_rng(0)
    W, U, xs = 0.5 * rng.normal(size=(4, 4)), rng.normal(size=(4, 3)), rng.normal(size=(6, 3))
    dW, dU = tx.grad(rnn, argnums=(0, 1))(W, U, xs)
    print("RNN gradient shapes:", dW.shape, dU.shape)
    x = np.array([0.5, -1.0, 2.0, 0.1])
    print("logsumexp loop gradient (softmax):", tx.grad(logsumexp_loop)(x))
    print(tx.source(tx.grad(newton_sqrt)))
