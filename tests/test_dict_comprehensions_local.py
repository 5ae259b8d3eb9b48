"""Dict comprehensions over a dict the function builds itself (``{k: 2 * v
for k, v in d.items()}``, ``d.keys()``, ``d.values()``, ``d``): its keys
are known when transforming -- a literal or ``dict(a=...)``, then item
updates at constant keys, also in a loop over a literal tuple of keys --
so the comprehension is written out one key per item, reading each value
from the dict.  Before, all of these were refused ("a dict comprehension
must loop over values known when transforming"), the most frequent refusal
of the program generator; a dict made by ``dict(a=...)`` and then updated
at a key crashed, and so did a comprehension's dict updated afterwards.
Checked against central finite differences, a loop over examples and the
plain function (keys and their order included)."""
import numpy as np
import pytest

import tangent_x as tx
from _fd import assert_tree_allclose, numerical_grad


def remade(x):
    d = {"a": x * 2.0, "b": np.sin(x)}
    for key in ("a", "b"):
        d[key] = d[key] * 1.5
    d = {kk: vv * 2.0 for kk, vv in d.items()}
    d["a"] = d["a"] + d["b"]
    return np.sum(d["a"] - 0.5 * d["b"])


def filtered(x):
    d = dict(p=x, q=x * x)
    d["r"] = np.cos(x)                      # a key added last
    e = {k + "2": d[k] * v for k, v in d.items() if k != "q"}
    w = {k: 3.0 * d[k] for k in d}          # the dict itself: its keys
    u = {k: v for k in ("z",) for v in d.values()}      # the last value
    weights = [1.0, 2.0, 3.0]
    s = sum(c * np.sum(v) for c, v in zip(weights, w.values()))   # in key order
    return np.sum(e["p2"] + e["r2"] * w["q"]) + s * len(e) + np.sum(u["z"] * x)


def keys_of(x):
    d = {"b": x, "a": 2.0 * x}
    d["c"] = x * x
    e = {k: v for k, v in d.items()}
    return list(e), list({k: 0 for k in d.keys()})


X = np.array([0.3, -1.2, 0.7])


@pytest.mark.parametrize("fn", [remade, filtered])
def test_gradients_equal_finite_differences(fn):
    expected = numerical_grad(fn, (X,))
    assert_tree_allclose(tx.grad(fn)(X), expected)
    assert_tree_allclose(tx.jacfwd(fn)(X), expected)
    value, tangent = tx.jvp(fn, (X,), (np.ones(3),))
    np.testing.assert_allclose(value, fn(X), rtol=1e-15)
    np.testing.assert_allclose(tangent, np.sum(expected), rtol=1e-6)


@pytest.mark.parametrize("fn", [remade, filtered])
def test_vmap_and_vmap_grad_equal_a_loop_over_examples(fn):
    xs = np.stack([X, X + 0.5, -X])
    np.testing.assert_allclose(tx.vmap(fn)(xs), [fn(x) for x in xs], rtol=1e-14)
    np.testing.assert_allclose(tx.vmap(tx.grad(fn))(xs),
                               np.stack([numerical_grad(fn, (x,)) for x in xs]),
                               rtol=1e-6, atol=1e-8)


def test_keys_in_pythons_order():
    assert keys_of(X) == (["b", "a", "c"], ["b", "a", "c"])
    assert tx.jit(keys_of)(X) == keys_of(X)


def test_jit_grad_equal_finite_differences():
    assert_tree_allclose(tx.jit(tx.grad(filtered))(X), numerical_grad(filtered, (X,)))


def one_key_read(x):
    w = {k: 3.0 * x * x for k in ("p", "q")}      # w["q"] is never read
    return np.sum(w["p"])


def zip_of_range(x):
    return sum(c * v for c, v in zip(range(3), x)) + sum(
        c * np.sum(v) for c, v in zip([1.0, 2.0], {"a": x, "b": x * x}.values()))


@pytest.mark.parametrize("fn", [one_key_read, zip_of_range])
def test_found_on_the_way(fn):
    """grad of a dict comprehension with an item nothing reads (its
    cotangent None: a crash in the item update's adjoint), and ``zip`` of a
    ``range`` or a dict view with another sequence (the length of a length
    was taken: a crash in every mode)."""
    assert_tree_allclose(tx.grad(fn)(X), numerical_grad(fn, (X,)))
    xs = np.stack([X, X + 0.5])
    np.testing.assert_allclose(tx.vmap(fn)(xs), [fn(x) for x in xs], rtol=1e-14)
