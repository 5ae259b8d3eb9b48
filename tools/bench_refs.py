"""Hand-written reference gradients for tools/bench.py: the bar tangent_x is
measured against.

Each is the gradient a careful person would write by hand for one of the
issue #7 workloads (the functions in examples/), in the same language the
compiled tangent_x code ends up in: Numba for the loops, vectorised NumPy
for the MLP and for elementwise work.  They store what the backward pass
needs in preallocated arrays (no lists, no recomputation) and fuse the
chain rule into the backward loop.  Compiled lazily with ``numba.njit`` so
that importing this module costs nothing and the first call is the compile.
"""
import numba
import numpy as np

SCALAR_LOOP_STEPS = 1000


def _scalar_loop_grad(x):
    """d/dx of 1000 steps of x = sin(x) * 0.99 + 0.01: the forward pass
    stores each step's input, the backward pass multiplies the local
    derivatives 0.99 * cos(x_t) in reverse."""
    xs = np.empty(SCALAR_LOOP_STEPS)
    for t in range(SCALAR_LOOP_STEPS):
        xs[t] = x
        x = np.sin(x) * 0.99 + 0.01
    g = 1.0
    for t in range(SCALAR_LOOP_STEPS - 1, -1, -1):
        g *= 0.99 * np.cos(xs[t])
    return g


def _newton_sqrt_grad(a):
    """d/da of Newton's sqrt iteration y <- (y + a / y) / 2 from y = a until
    |y^2 - a| <= 1e-12.  The iterates are kept in an array that doubles
    when full; the backward pass applies dy'/dy = (1 - a / y^2) / 2 and
    dy'/da = 1 / (2 y) in reverse, and the start y = a adds the rest."""
    ys = np.empty(16)
    n = 0
    y = a
    while abs(y * y - a) > 1e-12:
        if n == ys.shape[0]:
            grown = np.empty(2 * n)
            for k in range(n):
                grown[k] = ys[k]
            ys = grown
        ys[n] = y
        n += 1
        y = 0.5 * (y + a / y)
    y_bar = 1.0
    a_bar = 0.0
    for k in range(n - 1, -1, -1):
        yk = ys[k]
        a_bar += y_bar * 0.5 / yk
        y_bar *= 0.5 * (1.0 - a / (yk * yk))
    return a_bar + y_bar


def _rnn_grad(W, U, xs):
    """d/dW and d/dU of sum(h_T) for h_{t+1} = tanh(W h_t + U x_t), h_0 = 0:
    the forward pass stores every state, the backward pass carries
    h_bar <- W^T delta_t and stores each step's delta_t = h_bar * (1 - h^2);
    the sums over steps of the outer products delta_t h_t^T and
    delta_t x_t^T are then two matrix products (faster than 2 x 50 rank-one
    updates in the loop: the bar is set by what a careful person writes)."""
    n, hidden = xs.shape[0], W.shape[0]
    hs = np.empty((n + 1, hidden))
    for i in range(hidden):
        hs[0, i] = 0.0
    for t in range(n):
        z = np.dot(W, hs[t]) + np.dot(U, xs[t])
        for i in range(hidden):
            hs[t + 1, i] = np.tanh(z[i])
    deltas = np.empty((n, hidden))
    h_bar = np.ones(hidden)
    for t in range(n - 1, -1, -1):
        for i in range(hidden):
            h = hs[t + 1, i]
            deltas[t, i] = h_bar[i] * (1.0 - h * h)
        h_bar = np.dot(W.T, deltas[t])
    return np.dot(deltas.T, hs[:n]), np.dot(deltas.T, xs)


def _tanh_grad_loop(x):
    """Elementwise d/dx tanh(x) = 1 - tanh(x)^2, one loop over the input."""
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        t = np.tanh(x[i])
        out[i] = 1.0 - t * t
    return out


_COMPILED = {}


def compiled(name):
    """The Numba-compiled reference ``name`` (compiled at its first call)."""
    if name not in _COMPILED:
        _COMPILED[name] = numba.njit(cache=False)(globals()[f"_{name}"])
    return _COMPILED[name]


def tanh_grad_numpy(x):
    """Elementwise d/dx tanh(x) in vectorised NumPy."""
    return 1.0 - np.tanh(x) ** 2


def mlp_grad_numpy(params, x, y):
    """Backprop for examples/mlp.py's loss, written out by hand in NumPy."""
    W1, b1, W2, b2 = params[0]["W"], params[0]["b"], params[1]["W"], params[1]["b"]
    hidden = np.tanh(x @ W1.T + b1)
    err = hidden @ W2.T + b2 - y
    d_out = (2.0 / err.size) * err
    d_hidden = (d_out @ W2) * (1.0 - hidden * hidden)
    return [{"W": d_hidden.T @ x, "b": d_hidden.sum(axis=0)},
            {"W": d_out.T @ hidden, "b": d_out.sum(axis=0)}]


# --- issue #19: per-example gradients of a small MLP (32-64-4, batch 256) ----

def per_example_mlp_loss(params, x, y):
    """The loss of one example (x: (32,), y: (4,)) of a 32-64-4 tanh MLP
    whose parameters are a dict, as JAX's per-example-gradient tutorials
    write it; tools/bench.py measures ``vmap(grad(...), in_axes=(None, 0, 0))``."""
    hidden = np.tanh(params["W1"] @ x + params["b1"])
    out = params["W2"] @ hidden + params["b2"]
    return np.sum((out - y) ** 2)


def per_example_mlp_inputs(batch=256, sizes=(32, 64, 4), seed=0):
    rng = np.random.default_rng(seed)
    n_in, n_hidden, n_out = sizes
    params = {"W1": rng.normal(size=(n_hidden, n_in)) / np.sqrt(n_in),
              "b1": 0.1 * rng.normal(size=n_hidden),
              "W2": rng.normal(size=(n_out, n_hidden)) / np.sqrt(n_hidden),
              "b2": 0.1 * rng.normal(size=n_out)}
    return params, rng.normal(size=(batch, n_in)), rng.normal(size=(batch, n_out))


def per_example_mlp_losses_numpy(params, xs, ys):
    """Every example's loss at once: the batched primal."""
    hidden = np.tanh(xs @ params["W1"].T + params["b1"])
    out = hidden @ params["W2"].T + params["b2"]
    return np.sum((out - ys) ** 2, axis=1)


def per_example_mlp_grads_numpy(params, xs, ys):
    """Every example's gradient at once, backprop written by hand in
    batched NumPy: one matmul per layer and direction, the weight
    gradients as per-example outer products."""
    hidden = np.tanh(xs @ params["W1"].T + params["b1"])
    d_out = 2.0 * (hidden @ params["W2"].T + params["b2"] - ys)
    d_pre = (d_out @ params["W2"]) * (1.0 - hidden * hidden)
    return {"W1": d_pre[:, :, None] * xs[:, None, :], "b1": d_pre,
            "W2": d_out[:, :, None] * hidden[:, None, :], "b2": d_out}
