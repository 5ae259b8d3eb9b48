"""Programs the fuzzer (tests/fuzzing, mode "jac") found jacfwd/jacrev
wrong or crashing on, shrunk (see tests/test_jac_found.py)."""
import numpy as np

from tangent_x import lax


def reversed_after_dead_branch(x, y, z):
    """seed 14: the backward pass adds into a shared ``zeros_like`` with
    ``add_at`` under an ``if``; vmapped per example, every lane added into
    one buffer (every row of jacrev equal)."""
    if 0.5 < 0.5:
        return 0.5
    return x[::-1]


def loop_accumulator_meets_batched(x, y):
    """seed 13: an accumulator shared by every lane in the loop's backward
    pass, then summed with a batched contribution, was updated with ``+=``
    (ValueError: non-broadcastable output operand with shape ())."""
    x = np.log(1.0 + x * x)
    acc7 = y
    acc8 = (x * (np.linspace(-1.0, 1.0, 3) * 0.5))[-1]
    for i9 in range(2):
        acc7 = 0.7 * acc7 + 0.3 * x
        acc8 = 0.7 * acc8 + 0.3 * i9
    return acc8


def scan_outputs_and_unrelated_leaf(x, y, z, p):
    """seed 148: the scan's cotangent (None, batched ys) met
    ``finish_lanes``, which dropped the None and paired the batched leaf
    with the None's flag (every row of jacrev equal)."""
    pb = p['b']
    l16, ys19 = lax.scan(lambda a17, xi18: (0.6 * a17 + 0.4 * a17, np.sum(a17) * xi18), x, y)
    y = ys19
    return (pb, y)


def scan_carry_read_only_by_dead_branch(x):
    """seeds 971, 1312, 1741: the cotangent of the scan's (carry, ys) pair
    is the sum of a batched ys part and a shared zero carry part
    (``tree_add``); its flag was rounded up to "all batched", and the
    per-example code read the shared carry's zeros at lane k (IndexError)."""
    l1, ys = lax.scan(lambda a, xi: (0.6 * a + 0.4 * a, np.sum(a) * xi),
                      np.array([0.5, -0.25]), x)
    if 0.5:
        return ys
    return l1 > 0.5


def zip_item_unused(x, y):
    """seed 1583: ``zip(x, x)``'s item pair; the cotangent of ``j`` is
    batched, that of ``i`` (feeding only ``acc``) a shared zero: the same
    ``tree_add`` of a mixed pair as above."""
    acc = 0.5
    for i, j in zip(x, x):
        y = 0.7 * y + 0.3 * j * np.array([0.5, 0.25])
        acc = 0.7 * acc + 0.3 * i
    return y
