"""Programs whose vectorised code (vmap) the fuzzer found grad could not
differentiate (tests/test_grad_vmap_found.py): vmap's per-example fallback
``map_lanes(lambda ...)`` and its ``finish_lanes`` step.  Cut down from fuzz
seeds (grad_vmap mode)."""
import numpy as np

import tangent_x as tx
from tangent_x import lax


def scan_outputs(x, z):
    """Seed 17: the per-step outputs of a scan over a batched sequence are
    stacked per example (``map_lanes(lambda ys_k: stack_steps(ys_k, False), ...)``)."""
    carry, ys = lax.scan(lambda a, xi: (0.6 * a + 0.4 * np.tanh(a), np.sum(a) * xi), x, z)
    return np.sum(np.exp(np.tanh(ys))) + np.sum(carry)


def loop_over_rows(x):
    """Seeds 3, 6, 22: a for loop over the rows of a batched array
    (``map_lanes(lambda x_k: iteration_item(x_k, k), ...)``)."""
    s = np.zeros(2)
    for row in np.arctan(x):
        s = s + np.sin(row) * row
    return np.sum(s)


def scan_over_slices(x, y):
    """Seed 2: a scan whose sequence is a batched array."""
    _, ys = lax.scan(lambda a, xi: (a * 0.5 + xi, np.cos(a) * xi), y, x)
    return np.sum(ys)


def early_return_in_while(x, y):
    """Seed 55: a return inside a while loop whose condition differs per
    example; the (tuple) result is chosen lane by lane (``select_lanes``
    with a side not assigned yet), then an update under ``map_lanes``."""
    w = np.tanh(np.sum(y * -0.62))
    acc = np.ones(2)
    while w < 0.9:
        if x >= -0.1:
            return np.sum(y * (np.array([0.5, -0.25]) * 0.29 - y))
        acc = 0.7 * acc + 0.3 * (y * -1.21)
        w = w + 0.3 + 0.1 * np.sin(x ** 3)
    return np.sum(w * acc * y)


# what grad differentiates: the sum of the vectorised program (tests/fuzzing's
# grad_vmap harness)
def total_scan_outputs(x, z):
    return np.sum(tx.vmap(scan_outputs, in_axes=(0, 0))(x, z))


def total_scan_outputs_shared_carry(x, z):
    return np.sum(tx.vmap(scan_outputs, in_axes=(None, 0))(x, z))


def total_loop_over_rows(x):
    return np.sum(tx.vmap(loop_over_rows, in_axes=(0,))(x))


def total_scan_over_slices(x, y):
    return np.sum(tx.vmap(scan_over_slices, in_axes=(0, 0))(x, y))


def total_early_return_in_while(x, y):
    return np.sum(tx.vmap(early_return_in_while, in_axes=(0, 0))(x, y))


def shared_tuple_returned(x, y):
    """Seed 1246: an ``if`` on a shared condition returns a tuple of values
    shared by every example (``broadcast_lanes`` of a tuple); its
    cotangent must be summed over the lanes leaf by leaf."""
    if y > 0.0:
        return y, y * np.linspace(-1.0, 1.0, 3)
    return y, x[-1]


def loss_shared_tuple_returned(x, y):
    first, second = shared_tuple_returned(x, y)
    return first * 2.0 + np.sum(second)


def total_shared_tuple_returned(x, y):
    return np.sum(tx.vmap(loss_shared_tuple_returned, in_axes=(1, None))(x, y))
