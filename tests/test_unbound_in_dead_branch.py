"""A variable read where no path assigns it, inside a branch (here: an
``if`` decided when transforming left it unassigned): Python raises
``UnboundLocalError`` only if that line runs.  tangent_x refused the whole
function at the read (program generator, CI seed 227, in every mode); the
read is now a check that raises Python's error when reached, so the branch
that never runs costs nothing.  Against finite differences, a loop over
examples, and Python's own error where the line runs."""
import numpy as np
import pytest

import tangent_x as tx
from _fd import assert_tree_allclose, numerical_grad


def never_reached(x):
    if np.sum(x) > -100.0:
        y = x * 2.0
    else:
        if 0.3 > 0.5:
            v = x * 3.0
        y = v * x          # v is never assigned: Python raises if this runs
    return np.sum(y * x)


def reached_for_negative_sums(x):
    if np.sum(x) > 0.0:
        y = x * 2.0
    else:
        if 0.3 > 0.5:
            v = x * 3.0
        y = v * x
    return np.sum(y * x)


X = np.array([0.3, -0.2, 1.0])


def test_a_branch_that_never_runs():
    expected = numerical_grad(never_reached, (X,))
    assert_tree_allclose(tx.grad(never_reached)(X), expected)
    assert_tree_allclose(tx.jacfwd(never_reached)(X), expected)
    xs = np.stack([X, -X])
    np.testing.assert_allclose(tx.vmap(never_reached)(xs), [never_reached(x) for x in xs],
                               rtol=1e-15)
    np.testing.assert_allclose(tx.vmap(tx.grad(never_reached))(xs),
                               np.stack([numerical_grad(never_reached, (x,)) for x in xs]),
                               rtol=1e-6, atol=1e-8)


def test_pythons_error_where_the_read_runs():
    with pytest.raises(UnboundLocalError):
        reached_for_negative_sums(-X)
    for run in (lambda: tx.grad(reached_for_negative_sums)(-X),
                lambda: tx.vmap(reached_for_negative_sums)(np.stack([X, -X]))):
        with pytest.raises(UnboundLocalError, match="local variable 'v'"):
            run()
    assert_tree_allclose(tx.grad(reached_for_negative_sums)(X),
                         numerical_grad(reached_for_negative_sums, (X,)))
