"""Reverse mode on a corpus of small functions, checked against finite differences.

The corpus lives in ``tests/corpus/`` (one module per theme; see
``tests/corpus/__init__.py`` for how cases and their inputs are declared).
Two parametrized tests run over every case and every input variant, eagerly
and compiled (``tx.jit`` of the transform; ids ending in ``-jit``: the
first case of each theme by default; every other case's gradient as a
``slow`` test, which CI runs, and its primal -- the same compiled
``value_and_grad`` -- under ``TANGENT_X_JIT_CORPUS=all``, which
``tools/jit_corpus.py`` sets: compiling both in CI did not fit its 30
minutes; see ``corpus.jit_params``):

* ``test_grad_matches_finite_differences``: ``tx.grad`` equals central
  differences in float64, with the pytree structure of the argument(s), and
  the caller's arguments are left unmodified;
* ``test_primal_matches_original``: the value returned by
  ``tx.value_and_grad`` (and the aux, with ``has_aux``) equals what the
  original function returns.

The tests after those check properties the finite differences cannot see:
gradient structure and types, aux passed through, inputs never mutated,
the shape of the generated source, lambdas told apart by code position and
closure, regeneration when a global or attribute is rebound, and gradients
that are ordinary writable arrays.

A failing case is a bug in tangent_x (or a missing rule): fix the library,
never weaken or skip the case.
"""
import ast
import copy
import os
import re
import sys
from typing import NamedTuple

import numpy as np
import pytest

import tangent_x as tx
from tangent_x import tree_util

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # _fd, corpus

from _fd import assert_tree_allclose, numerical_grad
from corpus import all_cases, check_grad, check_primal, jit_params

CASES = all_cases()


def test_corpus_is_large_enough():
    assert len(CASES) >= 120
    assert all(len(c.variants) >= 2 for c in CASES)


@pytest.mark.parametrize("case, jit", jit_params(CASES))
def test_grad_matches_finite_differences(case, jit):
    check_grad(case, jit)


@pytest.mark.parametrize("case, jit", jit_params(CASES, rest="env"))
def test_primal_matches_original(case, jit):
    check_primal(case, jit)


# ---------------------------------------------------------------------------
# Structure of pytree gradients
# ---------------------------------------------------------------------------

class Layer(NamedTuple):
    w: np.ndarray
    b: np.ndarray


def _net_loss(params, x):
    first, second = params["layers"]
    h = np.tanh(x @ first.w + first.b)
    out = h @ second.w + second.b
    return np.sum(out ** 2) + params["decay"] * np.sum(first.w ** 2)


def _mlp_loss(params, x):
    h = np.tanh(x @ params[0]["W"] + params[0]["b"])
    return np.sum((h @ params[1]["W"] + params[1]["b"]) ** 2)


def test_pytree_gradient_has_argument_structure():
    rng = np.random.default_rng(0)
    params = {"layers": (Layer(rng.standard_normal((3, 4)), rng.standard_normal(4)),
                         Layer(rng.standard_normal((4, 2)), rng.standard_normal(2))),
              "decay": 0.1}
    x = rng.standard_normal((5, 3))
    g = tx.grad(_net_loss)(params, x)
    assert tree_util.tree_structure(g) == tree_util.tree_structure(params)
    assert type(g) is dict and set(g) == {"layers", "decay"}
    assert type(g["layers"]) is tuple and len(g["layers"]) == 2
    assert all(type(layer) is Layer for layer in g["layers"])
    assert g["layers"][0].w.shape == (3, 4) and g["layers"][1].b.shape == (2,)
    assert np.shape(g["decay"]) == ()
    assert_tree_allclose(g, numerical_grad(_net_loss, (params, x), 0))


def test_list_of_dicts_gradient_structure_and_argnums_tuple():
    rng = np.random.default_rng(1)
    params = [{"W": rng.standard_normal((3, 4)), "b": rng.standard_normal(4)},
              {"W": rng.standard_normal((4, 1)), "b": rng.standard_normal(1)}]
    x = rng.standard_normal((2, 3))
    g_params, g_x = tx.grad(_mlp_loss, argnums=(0, 1))(params, x)
    assert type(g_params) is list and len(g_params) == 2
    assert all(type(d) is dict and set(d) == {"W", "b"} for d in g_params)
    assert tree_util.tree_structure(g_params) == tree_util.tree_structure(params)
    assert g_x.shape == x.shape
    g_only_params = tx.grad(_mlp_loss)(params, x)
    assert tree_util.tree_structure(g_only_params) == tree_util.tree_structure(params)


# ---------------------------------------------------------------------------
# has_aux passes aux through unchanged
# ---------------------------------------------------------------------------

def _loss_with_aux(x):
    pred = np.sin(x) * 2.0
    return np.sum(pred ** 2), {"pred": pred, "count": 3, "pair": (x, 1.5)}


def test_has_aux_returns_aux_unchanged():
    x = np.random.default_rng(2).standard_normal(4)
    _, expected_aux = _loss_with_aux(x)
    g, aux = tx.grad(_loss_with_aux, has_aux=True)(x)
    (value, aux2), g2 = tx.value_and_grad(_loss_with_aux, has_aux=True)(x)
    for got in (aux, aux2):
        assert tree_util.tree_structure(got) == tree_util.tree_structure(expected_aux)
        assert set(got) == {"pred", "count", "pair"}
        np.testing.assert_array_equal(got["pred"], expected_aux["pred"])
        assert got["count"] == 3
        np.testing.assert_array_equal(got["pair"][0], x)
        assert got["pair"][1] == 1.5
    np.testing.assert_allclose(g, g2)
    np.testing.assert_allclose(value, _loss_with_aux(x)[0])


# ---------------------------------------------------------------------------
# The caller's arrays are never mutated
# ---------------------------------------------------------------------------

def _owns_and_mutates(x, params):
    y = x.copy()
    y[0] = y[0] * 3.0
    y += params["w"]
    acc = np.zeros_like(x)
    acc[1] += x[0] * y[1]
    acc *= params["w"]
    z = x * 1.0
    z[-1] -= 2.0
    return np.sum(y * acc + z * z)


def test_caller_arrays_not_mutated_by_any_transform():
    rng = np.random.default_rng(3)
    x = rng.standard_normal(3)
    params = {"w": rng.standard_normal(3)}
    x0, params0 = x.copy(), copy.deepcopy(params)
    expected_value = _owns_and_mutates(x.copy(), copy.deepcopy(params))
    g = tx.grad(_owns_and_mutates, argnums=(0, 1))(x, params)
    value, _ = tx.value_and_grad(_owns_and_mutates)(x, params)
    out, vjp_fun = tx.vjp(_owns_and_mutates, x, params)
    cotangents = vjp_fun(1.0)
    for arr, arr0 in ((x, x0), (params["w"], params0["w"])):
        np.testing.assert_array_equal(arr, arr0)
    np.testing.assert_allclose(value, expected_value)
    np.testing.assert_allclose(out, expected_value)
    expected = numerical_grad(_owns_and_mutates, (x, params), (0, 1))
    assert_tree_allclose(g, expected)
    assert_tree_allclose(tuple(cotangents), expected)


# ---------------------------------------------------------------------------
# Generated source
# ---------------------------------------------------------------------------

def _tanh(x):
    return np.tanh(x)


def _poly(x):
    return 3.0 * x * x + 2.0 * x + 1.0


def _code(src):
    """Generated source without comments (they quote the user's lines)."""
    return "\n".join(line.split("#")[0] for line in src.splitlines())


def _check_readable(src):
    assert isinstance(src, str) and "def " in src
    ast.parse(src)
    code = _code(src)
    assert not re.search(r"\*\s*1\.0\b(?!\d)", code), f"multiplication by 1.0:\n{src}"
    assert not re.search(r"(?<![\w.])1\.0\s*\*", code), f"multiplication by 1.0:\n{src}"
    assert not re.search(r"(?<![\w.])0(\.0)?\s*\+", code), f"adds zero:\n{src}"
    assert not re.search(r"\+\s*0(\.0)?(?![\w.])", code), f"adds zero:\n{src}"
    return code


def test_source_of_tanh_derivative_is_readable():
    code = _check_readable(tx.source(tx.grad(_tanh)))
    # the derivative reuses the primal output: 1 - y*y for some name y
    assert re.search(r"1\.0 - (\w+) \* \1\b", code), code
    assert "np.tanh(" in code
    np.testing.assert_allclose(tx.grad(_tanh)(0.3), 1.0 - np.tanh(0.3) ** 2)


def test_source_of_polynomial_derivative_is_readable():
    code = _check_readable(tx.source(tx.grad(_poly)))
    assert code.count("def ") == 1


def test_two_lambdas_on_one_line_get_their_own_source():
    from corpus.helpers import dbl, tpl
    src_dbl = _code(tx.source(tx.grad(dbl)))
    src_tpl = _code(tx.source(tx.grad(tpl)))
    assert "2.0" in src_dbl and "3.0" not in src_dbl, src_dbl
    assert "3.0" in src_tpl and "2.0" not in src_tpl, src_tpl
    assert tx.grad(dbl)(0.7) == pytest.approx(2.0)
    assert tx.grad(tpl)(0.7) == pytest.approx(3.0)


# ---------------------------------------------------------------------------
# Globals and attributes read by the function are not frozen at first call
# ---------------------------------------------------------------------------

_FACTOR = 2.0


def _uses_global_factor(x):
    return np.sum(_FACTOR * x * x)


def test_rebinding_a_global_changes_the_gradient():
    global _FACTOR
    x = np.array([0.5, -1.0])
    try:
        np.testing.assert_allclose(tx.grad(_uses_global_factor)(x), 4.0 * x)
        _FACTOR = 5.0
        np.testing.assert_allclose(tx.grad(_uses_global_factor)(x), 10.0 * x)
    finally:
        _FACTOR = 2.0


class _Scaler:
    def __init__(self, w):
        self.w = w

    def loss(self, x):
        return np.sum(self.w * x * x)


def test_rebinding_an_attribute_changes_the_gradient_of_a_bound_method():
    model = _Scaler(np.array([1.0, 2.0]))
    x = np.array([0.5, -1.0])
    grad_loss = tx.grad(model.loss)
    np.testing.assert_allclose(grad_loss(x), 2.0 * model.w * x)
    model.w = np.array([3.0, -4.0])
    np.testing.assert_allclose(grad_loss(x), 2.0 * np.array([3.0, -4.0]) * x)
    np.testing.assert_allclose(tx.grad(model.loss)(x), 2.0 * np.array([3.0, -4.0]) * x)


# ---------------------------------------------------------------------------
# Gradients are ordinary arrays: writable, sharing memory with nothing
# ---------------------------------------------------------------------------

def _sum_of_sum(x, y):
    return np.sum(x + y)


def _plain_sum(x, y):
    return np.sum(x) + np.mean(y)


def _dot(x, y):
    return x @ y


def _pytree_sum(p, y):
    return np.sum(p["a"] * 2.0) + np.sum(p["b"] + y)


@pytest.mark.parametrize("fn", [_sum_of_sum, _plain_sum, _dot, _pytree_sum],
                         ids=lambda f: f.__name__)
def test_gradients_are_writable_and_share_no_memory(fn):
    """A NumPy user may update a gradient in place (``g *= lr``, clipping
    ``g[g > 1] = 1``); that must neither fail nor change anything else."""
    x, y = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    args = ({"a": x, "b": x.copy()}, y) if fn is _pytree_sum else (x, y)
    grads = tree_util.tree_leaves(tx.grad(fn, argnums=(0, 1))(*args))
    inputs = tree_util.tree_leaves(args)
    for i, g in enumerate(grads):
        assert isinstance(g, np.ndarray) and g.flags.writeable, f"leaf {i} is read-only"
        assert not any(np.shares_memory(g, a) for a in inputs), f"leaf {i} aliases an input"
        assert not any(np.shares_memory(g, h) for j, h in enumerate(grads) if j != i), \
            f"leaf {i} shares memory with another gradient leaf"


def test_two_lambdas_passed_directly_on_one_line():
    g2, g3 = tx.grad(lambda x: x * 2.0), tx.grad(lambda x: x * np.sin(x) * 3.0)
    assert g2(0.7) == pytest.approx(2.0)
    assert g3(0.7) == pytest.approx(3.0 * (np.sin(0.7) + 0.7 * np.cos(0.7)))


def _make_lambda(c):
    return lambda x: x * c * x


def test_same_lambda_code_with_different_closures():
    grads = [tx.grad(_make_lambda(c)) for c in (2.0, 3.0)]
    assert [g(0.5) for g in grads] == [pytest.approx(2.0), pytest.approx(3.0)]
