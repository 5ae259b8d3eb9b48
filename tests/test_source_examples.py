"""tx.source(f, example_args=...) (#19 item 10): the code for arguments
like these, as jax.make_jaxpr takes them; without them, a vmapped function
never called prints its generic form (every example a number)."""
import numpy as np
import pytest

import tangent_x as tx


def f(x):
    return np.sum(np.tanh(x) ** 2)


def test_vmap_of_grad_prints_before_any_call():
    v = tx.vmap(tx.grad(f))
    text = tx.source(v)
    assert "def vmap_grad_f(x):" in text
    # the generic form is the code for numbers: it runs on a batch of them
    np.testing.assert_allclose(v(np.array([0.1, 0.5])), [tx.grad(f)(0.1), tx.grad(f)(0.5)])


def test_example_args_specialise_the_printed_code():
    v = tx.vmap(tx.grad(f))
    xs = np.linspace(-1.0, 1.0, 12).reshape(4, 3)
    text = tx.source(v, example_args=(xs,))
    assert "axis=1" in text         # the per-example sum of a vector, batched
    assert text == tx.source(v, example_args=xs)
    np.testing.assert_allclose(v(xs), np.stack([tx.grad(f)(x) for x in xs]), rtol=1e-12)


def test_grad_of_a_vmapped_function_with_example_args():
    g = tx.grad(lambda x: np.sum(tx.vmap(f)(x)))
    xs = np.linspace(-1.0, 1.0, 6).reshape(2, 3)
    assert "def grad_" in tx.source(g, example_args=(xs,))


def test_numba_stage_for_example_args():
    text = tx.source(tx.jit(tx.grad(f)), stage="numba", example_args=(np.ones(3),))
    assert "def " in text and "np.tanh" in text


def test_structures_without_a_generic_form_ask_for_example_args():
    v = tx.vmap(lambda d: np.sum(d["a"]), in_axes=({"a": 0},))
    with pytest.raises(Exception, match="example_args"):
        tx.source(v)
