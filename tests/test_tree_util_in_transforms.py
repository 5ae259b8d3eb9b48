"""tree_util inside transformed functions (#19 item 2): ``tree_map`` (with
lambdas, several trees, ``is_leaf``), ``tree_leaves``, ``tree_flatten`` /
``tree_unflatten``, ``tree_structure`` and ``tree_reduce``, on dicts,
lists of tuples, namedtuples, registered classes and ``None`` nodes, under
grad, jvp, vmap, jit(grad) and jit(vmap).  Gradients against finite
differences, vmap against a loop, jit against eager.  The headline: the SGD
step ``tree_map(lambda p, g: p - lr * g, params, grads)``."""
import collections

import numpy as np
import pytest

import tangent_x as tx
from tangent_x import tree_util
from tangent_x.tree_util import (tree_flatten, tree_leaves, tree_map, tree_reduce,
                                 tree_structure, tree_unflatten)

from _fd import assert_tree_allclose, numerical_grad

Pair = collections.namedtuple("Pair", "w b")


@tree_util.register_pytree_node_class
class Layer:
    """A registered class: children (w, b), no metadata."""

    def __init__(self, w, b):
        self.w, self.b = w, b

    def tree_flatten(self):
        return (self.w, self.b), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)


def _dict_params():
    return {"w": np.array([[0.3, -0.2, 0.5], [0.1, 0.4, -0.6]]), "b": np.array([0.1, -0.3])}


def _list_params():
    return [(np.array([[0.3, -0.2], [0.1, 0.4]]), np.array([0.1, -0.2])),
            (np.array([[0.5, -0.1], [0.2, 0.3]]), np.array([0.05, 0.2]))]


X = np.array([0.7, -1.2, 0.4])
X2 = np.array([0.7, -1.2])


# --- functions of params --------------------------------------------------------

def mlp_dict(params, x):
    scaled = tree_map(lambda p: p * 2.0, params)
    h = np.tanh(scaled["w"] @ x + scaled["b"])
    return np.sum(h * h)


def mlp_list(params, x):
    doubled = tree_map(lambda p: np.sin(p) + p, params)
    for w, b in doubled:
        x = np.tanh(w @ x + b)
    return np.sum(x * x)


def sum_of_leaves(params, x):
    total = 0.0
    for leaf in tree_leaves(params):
        total = total + np.sum(leaf * leaf) * np.sum(x)
    return total


def flatten_and_back(params, x):
    leaves, treedef = tree_flatten(params)
    leaves = [np.cos(leaf) for leaf in leaves]
    rebuilt = tree_unflatten(treedef, leaves)
    return np.sum(rebuilt["w"] @ x) * np.sum(rebuilt["b"] ** 2)


def reduce_leaves(params, x):
    return tree_reduce(lambda acc, p: acc + np.sum(p * p), params, 0.0) * np.sum(x)


def reduce_no_initial(params, x):
    sums = tree_map(lambda p: np.sum(np.sin(p)), params)
    return tree_reduce(lambda a, b: a * b, sums) + np.sum(x)


def two_trees(params, x):
    other = tree_map(lambda p: p * p, params)
    mixed = tree_map(lambda p, q: p * np.exp(q), params, other)
    return np.sum(np.tanh(mixed["w"] @ x) * mixed["b"])


def with_none_node(params, x):
    tree = {"a": params["w"], "skip": None, "c": (params["b"], None)}
    out = tree_map(lambda p: p * 3.0, tree)
    assert out["skip"] is None
    return np.sum(out["a"] @ x) + np.sum(out["c"][0] ** 2)


def pairs_as_leaves(params, x):
    """is_leaf stops at the (w, b) tuples: f gets a whole layer."""
    outs = tree_map(lambda layer: np.sum(np.tanh(layer[0] @ x + layer[1])), params,
                    is_leaf=lambda node: isinstance(node, tuple))
    return outs[0] * outs[1]


def namedtuple_params(params, x):
    pair = Pair(params["w"], params["b"])
    shifted = tree_map(lambda p: p - 0.5 * p * p, pair)
    return np.sum(np.tanh(shifted.w @ x + shifted.b))


def registered_class(layer, x):
    halved = tree_map(lambda p: p * 0.5 + 1.0, layer)
    leaves = tree_leaves(halved)
    return np.sum(leaves[0] @ x) * np.sum(leaves[1] * leaves[1])


def structure_is_static(params, x):
    treedef = tree_structure(params)
    leaves = tree_leaves(params)
    again = tree_unflatten(treedef, [leaf * 2.0 for leaf in leaves])
    return np.sum(again["w"] @ x) + np.sum(again["b"])


def treedef_method(params, x):
    leaves, treedef = tx.tree.flatten(params)
    again = treedef.unflatten([np.sin(leaf) for leaf in leaves])
    return np.sum(again["w"] @ x) * np.sum(again["b"])


DICT_CASES = [treedef_method, mlp_dict, sum_of_leaves, flatten_and_back, reduce_leaves,
              reduce_no_initial,
              two_trees, with_none_node, namedtuple_params, structure_is_static]
LIST_CASES = [mlp_list, sum_of_leaves, pairs_as_leaves, reduce_leaves, reduce_no_initial]


def _layer_params():
    return Layer(**_dict_params())


def _cases():
    return [pytest.param(f, _dict_params, X, id=f"dict-{f.__name__}") for f in DICT_CASES] + \
        [pytest.param(f, _list_params, X2, id=f"list-{f.__name__}") for f in LIST_CASES] + \
        [pytest.param(f, _layer_params, X, id=f"class-{f.__name__}")
         for f in (registered_class, sum_of_leaves, reduce_no_initial)]


def _numerical(fn, params, x):
    """Central differences leaf by leaf, through tree_util (registered
    classes too)."""
    leaves, treedef = tree_flatten(params)
    grads = []
    for k, leaf in enumerate(leaves):
        g = np.zeros(np.shape(leaf))
        for i in np.ndindex(np.shape(leaf)):
            values = []
            for step in (1e-6, -1e-6):
                moved = [np.array(v, dtype=float) for v in leaves]
                moved[k][i] += step
                values.append(fn(tree_unflatten(treedef, moved), x))
            g[i] = (values[0] - values[1]) / 2e-6
        grads.append(g)
    return tree_unflatten(treedef, grads)


def _close(actual, expected, rtol, atol=0.0):
    assert tree_structure(actual) == tree_structure(expected)
    for a, e in zip(tree_leaves(actual), tree_leaves(expected)):
        np.testing.assert_allclose(a, e, rtol=rtol, atol=atol)


@pytest.mark.parametrize("fn, make, x", _cases())
def test_grad_matches_differences(fn, make, x):
    params = make()
    _close(tx.grad(fn)(params, x), _numerical(fn, params, x), rtol=1e-6, atol=1e-8)
    _close(tx.grad(fn, argnums=1)(params, x), _numerical(lambda a, p: fn(p, a), x, params),
           rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("fn, make, x", _cases())
def test_jvp_matches_differences(fn, make, x):
    params = make()
    tangent = tree_map(lambda p: np.cos(np.arange(np.size(p)) + 1.0).reshape(np.shape(p)),
                       params)
    value, t = tx.jvp(fn, (params, x), (tangent, np.zeros_like(x)))
    want = _numerical(fn, params, x)
    np.testing.assert_allclose(value, fn(params, x), rtol=1e-12)
    np.testing.assert_allclose(
        t, sum(np.sum(a * b) for a, b in zip(tree_leaves(want), tree_leaves(tangent))),
        rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("fn, make, x", [c for c in _cases() if "class-" not in c.id])
def test_vmap_of_grad_matches_a_loop(fn, make, x):
    params = make()
    xs = np.stack([x, x * 0.5, x - 0.3])
    g = tx.grad(fn)
    per_example = tx.vmap(g, in_axes=(None, 0))(params, xs)
    loop = [g(params, e) for e in xs]
    _close(per_example, tree_map(lambda *ls: np.stack(ls), *loop), rtol=1e-10)
    assert_tree_allclose(tx.vmap(fn, in_axes=(None, 0))(params, xs),
                         np.array([fn(params, e) for e in xs]), rtol=1e-12)


def scaled_by_data(params, x):
    """Each leaf times a per-example number: lined up with a matrix, then a
    vector."""
    scale = np.sum(x * x)
    scaled = tree_map(lambda p: np.sin(p) * scale, params)
    return np.sum(np.tanh(scaled["w"] @ x + scaled["b"]))


@pytest.mark.parametrize("fn", [scaled_by_data, mlp_dict, two_trees, with_none_node,
                                treedef_method])
@pytest.mark.parametrize("batched", ["all", "w", "none"])
def test_vmap_over_params_of_mixed_ranks_matches_a_loop(fn, batched):
    """The leaves a tree_map loops over have different ranks (a matrix, a
    vector), batched or not: per-example values must not take one leaf's
    rank for another's."""
    params = _dict_params()
    stacked = {"w": np.stack([params["w"], params["w"] * 0.5, params["w"] - 0.2]),
               "b": np.stack([params["b"], params["b"] + 1.0, params["b"] * 3.0])}
    axes = {"w": 0 if batched != "none" else None, "b": 0 if batched == "all" else None}
    stacked = {k: v if axes[k] == 0 else params[k] for k, v in stacked.items()}
    xs = np.stack([X, X * 0.5, X - 0.3])
    g = tx.grad(fn)
    examples = [{k: v[i] if axes[k] == 0 else v for k, v in stacked.items()}
                for i in range(3)]
    got = tx.vmap(g, in_axes=(axes, 0))(stacked, xs)
    _close(got, tree_map(lambda *ls: np.stack(ls), *[g(e, x) for e, x in zip(examples, xs)]),
           rtol=1e-10)
    values = tx.vmap(fn, in_axes=(axes, 0))(stacked, xs)
    np.testing.assert_allclose(values, [fn(e, x) for e, x in zip(examples, xs)], rtol=1e-12)


JIT_CASES = [treedef_method, mlp_dict, two_trees, flatten_and_back, with_none_node,
             namedtuple_params,
             structure_is_static]


@pytest.mark.parametrize("fn", JIT_CASES)
def test_jit_of_grad_matches_eager(fn):
    params = _dict_params()
    assert_tree_allclose(tx.jit(fn)(params, X), fn(params, X), rtol=1e-12)
    assert_tree_allclose(tx.jit(tx.grad(fn))(params, X), tx.grad(fn)(params, X), rtol=1e-12)


@pytest.mark.parametrize("fn", [mlp_list, pairs_as_leaves, reduce_no_initial])
def test_jit_of_grad_matches_eager_on_a_list_of_tuples(fn):
    params = _list_params()
    assert_tree_allclose(tx.jit(tx.grad(fn))(params, X2), tx.grad(fn)(params, X2),
                         rtol=1e-12)


@pytest.mark.parametrize("fn", ["two_trees", "scaled_by_data"])
def test_jit_of_vmap_of_grad_matches_eager(fn):
    params = _dict_params()
    xs = np.stack([X, X * 0.5, X - 0.3])
    f = tx.vmap(tx.grad(globals()[fn]), in_axes=(None, 0))
    assert_tree_allclose(tx.jit(f)(params, xs), f(params, xs), rtol=1e-12)


# --- the SGD step -------------------------------------------------------------------

def loss(params, x, y):
    pred = np.tanh(params["w"] @ x + params["b"])
    return np.sum((pred - y) ** 2)


def sgd_step(params, x, y, lr):
    grads = tx.grad(loss)(params, x, y)
    return tree_map(lambda p, g: p - lr * g, params, grads)


def sgd_loss_after_step(params, x, y):
    new = sgd_step(params, x, y, 0.1)
    return loss(new, x, y)


def test_sgd_step_eager_and_jit_match_a_hand_written_step():
    params, y = _dict_params(), np.array([0.2, -0.4])
    grads = tx.grad(loss)(params, X, y)
    want = {k: params[k] - 0.1 * grads[k] for k in params}
    assert_tree_allclose(sgd_step(params, X, y, 0.1), want, rtol=1e-12)
    step = tx.jit(sgd_step)
    for _ in range(3):
        new = step(params, X, y, 0.1)
        want = sgd_step(params, X, y, 0.1)
        assert_tree_allclose(new, want, rtol=1e-12)
        params = new
    assert loss(params, X, y) < loss(_dict_params(), X, y)


def train(params, x, y, steps):
    for _ in range(steps):
        params = sgd_step(params, x, y, 0.1)
    return params


def test_a_training_loop_under_jit_matches_eager():
    params, y = _dict_params(), np.array([0.2, -0.4])
    assert_tree_allclose(tx.jit(train)(params, X, y, 5), train(params, X, y, 5), rtol=1e-12)


def test_grad_through_an_sgd_step_matches_differences():
    params, y = _dict_params(), np.array([0.2, -0.4])
    want = numerical_grad(sgd_loss_after_step, (params, X, y), 0)
    assert_tree_allclose(tx.grad(sgd_loss_after_step)(params, X, y), want, rtol=1e-5,
                         atol=1e-8)
    assert_tree_allclose(tx.jit(tx.grad(sgd_loss_after_step))(params, X, y),
                         tx.grad(sgd_loss_after_step)(params, X, y), rtol=1e-10)


# --- located errors -------------------------------------------------------------------

def map_with_a_value(params, x):
    f = x * 2.0
    return np.sum(tree_map(f, params)["b"])


def is_leaf_reads_a_local(params, x):
    limit = np.sum(x)
    out = tree_map(lambda p: p * 2.0, params, is_leaf=lambda n: np.size(n) > limit)
    return np.sum(out["b"])


def uses_tree_all(params, x):
    if tree_util.tree_all(tree_map(lambda p: np.all(p > -1.0), params)):
        return np.sum(params["b"] * x[:2])
    return np.sum(params["b"])


@pytest.mark.parametrize("fn, words", [(map_with_a_value, "must be a function"),
                                       (is_leaf_reads_a_local, "is_leaf reads 'limit'"),
                                       (uses_tree_all, "tree_all() is not supported")])
def test_what_cannot_be_done_is_a_located_error(fn, words):
    with pytest.raises(tx.TransformError) as info:
        tx.grad(fn)(_dict_params(), X)
    assert words in str(info.value)
    assert "test_tree_util_in_transforms.py" in str(info.value)


def test_mismatched_structures_raise_as_tree_map_does():
    def bad(params, x):
        return np.sum(tree_map(lambda p, q: p * q, params, {"w": x})["w"])
    with pytest.raises(ValueError, match="key"):
        tx.grad(bad)(_dict_params(), X)
