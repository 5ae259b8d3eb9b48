"""Numba's array-expression fusion names a fused kernel's parameters after
the variables, an SSA version's ``.`` made ``_``: a generated variable
``x_1`` in its version ``x_1.1`` became ``x_1_1``, which another variable
already was, and Numba stopped (``AssertionError: ... not unique``, fuzz
seed 571068, a located refusal of correct code).  The numba stage is then
compiled again with its variables renamed (``compile_errors.renamed_text``).
"""
import numpy as np
import pytest

import tangent_x as tx

LIN = np.linspace(-1.0, 1.0, 3)


def never_taken_dot(x):
    if (x < 0.23) and (x > 1.18):
        return np.dot(np.sqrt(1.0 + (x * (LIN * 1.4)) * (x * (LIN * 1.4))), x * (LIN * 1.02))
    return 0.41 - (x * (-0.63) ** 2)


def taken_dot(x):
    if x < 10.0:
        return np.dot(np.sqrt(1.0 + (x * (LIN * 1.4)) * (x * (LIN * 1.4))), x * (LIN * 1.02))
    return 0.41 - (x * (-0.63) ** 2)


@pytest.mark.parametrize("fn", [never_taken_dot, taken_dot])
@pytest.mark.parametrize("x", [0.5, 2.0, -0.3])
def test_gradient_whose_fused_names_collided(fn, x):
    eps = 1e-6
    fd = (fn(x + eps) - fn(x - eps)) / (2 * eps)
    np.testing.assert_allclose(tx.grad(fn)(x), fd, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(tx.jit(tx.grad(fn))(x), tx.grad(fn)(x), rtol=1e-12, atol=1e-15)


def test_the_renaming_leaves_lines_in_place():
    from tangent_x.numba_stage.compile_errors import renamed_text

    class Compiled:
        name = "m"
        text = ("def f(x, y_1):\n    # f.py:3: y = x\n    x_1 = x * y_1\n"
                "    x_1_1 = x_1 + 1.0\n    return np.sum(x_1_1)\n")
    text = renamed_text(AssertionError("'x_1_1' not unique"), Compiled())
    assert text.splitlines()[0] == "def f(x, y_1_v):"
    assert text.splitlines()[2] == "    x_1_v = x * y_1_v"
    assert text.splitlines()[3] == "    x_1_1_v = x_1_v + 1.0"
    assert "np.sum(x_1_1_v)" in text and len(text.splitlines()) == 5
    assert renamed_text(AssertionError("something else"), Compiled()) is None
