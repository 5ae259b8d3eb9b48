"""Items of list and dict *arguments*, read by a name and changed in place.

``w = p["w"]; w *= 2`` changes ``p["w"]`` (the dict holds that very array),
and a helper given ``p["w"]`` changing it does too: both were lost, a wrong
value in every transform (found reading fuzz seed 510792).  ``xs[0] = v``
into a list puts another object there: a name that read ``xs[0]`` before
keeps the old one (every transform gave it the new item).  Checked against
the function on copies, central differences, a loop over examples and
eager against jit."""
import copy

import numpy as np
import pytest

import tangent_x as tx
from _fd import numerical_grad


def scale(q):
    q *= 1.5 + 0.5 * q
    return 1.0


def dict_item_alias(p, x):
    w = p["w"]
    w *= x
    return np.sum(np.sin(p["w"])) + np.sum(w * p["b"])


def dict_item_to_helper(p, x):
    scale(p["w"])
    return np.sum(np.sin(p["w"] * x)) + np.sum(p["b"])


def dict_item_replaced(p, x):
    w = p["w"]
    p["w"] = x * 2.0                # another object: ``w`` keeps the old one
    w *= 3.0
    return np.sum(np.sin(w)) + np.sum(p["w"] * p["b"])


def list_item_replaced(ps, x):
    a = ps[0]
    ps[0] = ps[1] * x
    a *= 2.0
    return np.sum(np.cos(a)) + np.sum(ps[0])


def sgd_step(p, x):
    g = {"w": np.cos(p["w"]) * x, "b": np.sin(p["b"])}
    for k in ("w", "b"):
        v = p[k]
        v -= 0.1 * g[k]
    return np.sum(p["w"] * x) + np.sum(p["b"] ** 2)


CASES = [dict_item_alias, dict_item_to_helper, dict_item_replaced, sgd_step]
W = np.array([0.4, -0.3, 0.8])
B = np.array([0.2, 0.7, -0.5])
X = np.array([1.2, -0.6, 0.3])


def arguments(fn):
    if fn is list_item_replaced:
        return [W.copy(), B.copy()], X.copy()
    return {"w": W.copy(), "b": B.copy()}, X.copy()


@pytest.mark.parametrize("fn", CASES + [list_item_replaced], ids=lambda f: f.__name__)
def test_values_and_gradients(fn):
    p, x = arguments(fn)
    want = fn(copy.deepcopy(p), x.copy())
    np.testing.assert_allclose(tx.jvp(fn, (copy.deepcopy(p), x.copy()), (
        tx.tree_util.tree_map(np.ones_like, p), np.ones(3)))[0], want, rtol=1e-13)
    g = tx.grad(fn, argnums=(0, 1))(copy.deepcopy(p), x.copy())

    def on_copies(*a):
        return fn(*copy.deepcopy(a))
    for i in (0, 1):
        ref = numerical_grad(on_copies, (p, x), i)
        tx.tree_util.tree_map(lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-6,
                                                                      atol=1e-8), g[i], ref)
    # the caller's containers are not changed
    np.testing.assert_array_equal(arguments(fn)[0][0] if fn is list_item_replaced else W,
                                  p[0] if fn is list_item_replaced else p["w"])


@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_vmap_against_a_loop(fn):
    p, x = arguments(fn)
    xs = np.stack([x, -x, 0.5 * x])
    got = tx.vmap(fn, in_axes=(None, 0))(copy.deepcopy(p), xs)
    np.testing.assert_allclose(got, [fn(copy.deepcopy(p), v) for v in xs], rtol=1e-13)


@pytest.mark.slow
@pytest.mark.parametrize("fn", CASES + [list_item_replaced], ids=lambda f: f.__name__)
def test_jit_against_eager(fn):
    p, x = arguments(fn)
    np.testing.assert_allclose(tx.jit(fn)(copy.deepcopy(p), x.copy()),
                               fn(copy.deepcopy(p), x.copy()), rtol=1e-13)


def replaced_at_a_run_time_key(ps, x):
    a = ps[0]
    i = int(np.argmax(x)) % 2        # a key known only when the code runs
    ps[i] = a * 2.0
    a *= 3.0
    return np.sum(a) + np.sum(ps[0] * x)


def test_a_run_time_key_is_refused_located():
    with pytest.raises(tx.TransformError) as error:
        tx.grad(replaced_at_a_run_time_key, argnums=1)([W.copy(), B.copy()], X.copy())
    message = str(error.value)
    assert "test_argument_container_items.py:" in message
    assert "key known only at run time" in message


def zero_d_item_to_helper(p, x):
    b = p["b"]                       # a 0-d array: changed in place by the helper
    scale(b)
    return np.sum(np.sin(p["w"] * x)) + p["b"] * 2.0 + b


def test_a_0d_item_changed_in_place():
    # under jit a 0-d array enters compiled code as its number: the copy
    # ``b = p["b"]`` lost that it is an array, and the helper's change of it
    # was dropped (fuzz seed 510792, jit and jit(grad) wrong)
    p = {"w": W.copy(), "b": np.array(0.35)}
    want = zero_d_item_to_helper(copy.deepcopy(p), X.copy())
    np.testing.assert_allclose(tx.jit(zero_d_item_to_helper)(copy.deepcopy(p), X.copy()),
                               want, rtol=1e-13)
    np.testing.assert_allclose(tx.jvp(zero_d_item_to_helper, (copy.deepcopy(p), X.copy()), (
        {"w": np.ones(3), "b": np.array(1.0)}, np.ones(3)))[0], want, rtol=1e-13)
    g = tx.grad(zero_d_item_to_helper, argnums=1)
    np.testing.assert_allclose(tx.jit(g)(copy.deepcopy(p), X.copy()),
                               g(copy.deepcopy(p), X.copy()), rtol=1e-12)
    np.testing.assert_array_equal(p["b"], 0.35)


def test_vjp_of_a_function_changing_a_dict_argument_item():
    # vjp ran the forward pass specialised on the argument being a dict,
    # then the backward pass of the code made without knowing it (their
    # residuals differed: fuzz seed 520195, a crash)
    p, x = arguments(dict_item_alias)
    out, back = tx.vjp(dict_item_alias, copy.deepcopy(p), x.copy())
    np.testing.assert_allclose(out, dict_item_alias(copy.deepcopy(p), x.copy()), rtol=1e-13)
    got = back(1.0)
    want = tx.grad(dict_item_alias, argnums=(0, 1))(copy.deepcopy(p), x.copy())
    tx.tree_util.tree_map(lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-13), got, want)
