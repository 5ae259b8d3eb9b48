"""Tests for tangent_x.tree_util / tangent_x.tree.

Expected ``PyTreeDef`` strings were taken from real JAX output (jax 0.10),
since printing must match JAX exactly.
"""
import collections
import pickle
from typing import NamedTuple

import numpy as np
import pytest

from tangent_x import tree
from tangent_x import tree_util as tu


class Pair(NamedTuple):
    x: object
    y: object


Coord = collections.namedtuple("Coord", "a b")


@tu.register_pytree_node_class
class Point:
    """A registered class with no metadata."""

    def __init__(self, x, y):
        self.x, self.y = x, y

    def tree_flatten(self):
        return (self.x, self.y), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)

    def __eq__(self, other):
        return (type(other) is Point and self.x == other.x
                and self.y == other.y)


class Box:
    """A class registered by function, with metadata (its name)."""

    def __init__(self, value, name):
        self.value, self.name = value, name


tu.register_pytree_node(Box, lambda b: ((b.value,), b.name),
                        lambda name, children: Box(children[0], name))


# ---------------------------------------------------------------------------
# flattening order and leaves
# ---------------------------------------------------------------------------

def test_dict_children_in_sorted_key_order():
    assert tu.tree_leaves({"b": 1, "a": 2, "c": {"z": 3, "y": 4}}) == [2, 1, 4, 3]


def test_nested_containers_depth_first():
    t = [1, (2, [3, 4]), {"k": 5}, Pair(6, 7)]
    assert tu.tree_leaves(t) == [1, 2, 3, 4, 5, 6, 7]


def test_none_is_an_empty_node():
    leaves, treedef = tu.tree_flatten([1, None, 2])
    assert leaves == [1, 2]
    assert treedef.num_leaves == 2
    assert tu.tree_leaves(None) == []
    assert tu.tree_unflatten(treedef, [3, 4]) == [3, None, 4]


def test_arrays_scalars_strings_are_leaves():
    a = np.zeros((2, 2))
    leaves = tu.tree_leaves([a, 1.5, "s", np.float32(2)])
    assert leaves[0] is a and leaves[1:] == [1.5, "s", np.float32(2)]


def test_unregistered_subclasses_are_leaves():
    class MyTuple(tuple):
        pass

    class MyDict(dict):
        pass

    t, d = MyTuple((1, 2)), MyDict(a=1)
    assert tu.tree_leaves(t) == [t]
    assert tu.tree_leaves(d) == [d]


def test_ordereddict_keeps_insertion_order_defaultdict_sorts():
    od = collections.OrderedDict([("b", 1), ("a", 2)])
    assert tu.tree_leaves(od) == [1, 2]
    dd = collections.defaultdict(list, {"b": 1, "a": 2})
    assert tu.tree_leaves(dd) == [2, 1]


def test_unsortable_dict_keys_raise():
    with pytest.raises(ValueError, match="sort"):
        tu.tree_leaves({1: "x", "a": 2})


# ---------------------------------------------------------------------------
# printing (strings from JAX)
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("value, text", [
    ([{"W": 1, "b": 2}, {"W": 1, "b": 2}],
     "PyTreeDef([{'W': *, 'b': *}, {'W': *, 'b': *}])"),
    ((1, 2), "PyTreeDef((*, *))"),
    ((1,), "PyTreeDef((*,))"),
    ((), "PyTreeDef(())"),
    ([], "PyTreeDef([])"),
    ({}, "PyTreeDef({})"),
    (None, "PyTreeDef(None)"),
    (1, "PyTreeDef(*)"),
    ([None], "PyTreeDef([None])"),
    ({"a": None}, "PyTreeDef({'a': None})"),
    (((1,),), "PyTreeDef(((*,),))"),
    ({2: 1, 1: 2}, "PyTreeDef({1: *, 2: *})"),
    ({"x": np.ones(3), "y": (1, None)}, "PyTreeDef({'x': *, 'y': (*, None)})"),
    (Pair(1, 2), "PyTreeDef(CustomNode(namedtuple[Pair], [*, *]))"),
    (Coord(1, [2, 3]), "PyTreeDef(CustomNode(namedtuple[Coord], [*, [*, *]]))"),
    ({"a": Coord(1, None)},
     "PyTreeDef({'a': CustomNode(namedtuple[Coord], [*, None])})"),
    (Point(1, 2), "PyTreeDef(CustomNode(Point[None], [*, *]))"),
    (Point(None, [1]), "PyTreeDef(CustomNode(Point[None], [None, [*]]))"),
    (Box(3, "hi"), "PyTreeDef(CustomNode(Box[hi], [*]))"),
    (Box(3, (1, 2)), "PyTreeDef(CustomNode(Box[(1, 2)], [*]))"),
    (Box(3, {"k": 1}), "PyTreeDef(CustomNode(Box[{'k': 1}], [*]))"),
    (collections.OrderedDict([("b", 1), ("a", 2)]),
     "PyTreeDef(CustomNode(OrderedDict[('b', 'a')], [*, *]))"),
    (collections.defaultdict(list, {"b": 1, "a": 2}),
     "PyTreeDef(CustomNode(defaultdict[(<class 'list'>, ('a', 'b'))], [*, *]))"),
])
def test_treedef_printing_matches_jax(value, text):
    treedef = tu.tree_structure(value)
    assert repr(treedef) == text
    assert str(treedef) == text


def test_num_leaves_and_num_nodes():
    # Counts from JAX: leaves and None nodes are nodes too.
    cases = [([{"W": 1, "b": 2}, {"W": 1, "b": 2}], 4, 7), (None, 0, 1),
             (1, 1, 1), ([None], 0, 2), (Coord(1, [2, 3]), 3, 5),
             ({"x": 1, "y": (1, None)}, 2, 5)]
    for value, leaves, nodes in cases:
        treedef = tu.tree_structure(value)
        assert (treedef.num_leaves, treedef.num_nodes) == (leaves, nodes)


# ---------------------------------------------------------------------------
# round trips
# ---------------------------------------------------------------------------

ROUND_TRIP_CASES = [
    [1, (2, 3), {"b": 4, "a": [5, None]}],
    Pair(1, Coord(2, 3)),
    collections.OrderedDict([("z", 1), ("y", (2, 3))]),
    {"p": Point(1, [2, 3])},
    None,
    7,
    (),
]


@pytest.mark.parametrize("value", ROUND_TRIP_CASES)
def test_flatten_unflatten_round_trip(value):
    leaves, treedef = tu.tree_flatten(value)
    rebuilt = tu.tree_unflatten(treedef, leaves)
    assert rebuilt == value
    assert type(rebuilt) is type(value)
    assert tu.tree_structure(rebuilt) == treedef


def test_unflatten_rebuilds_container_types():
    dd = collections.defaultdict(list, {"b": 1, "a": 2})
    rebuilt = tu.tree_unflatten(tu.tree_structure(dd), [10, 20])
    assert type(rebuilt) is collections.defaultdict
    assert rebuilt.default_factory is list
    assert rebuilt == {"a": 10, "b": 20}

    box = tu.tree_unflatten(tu.tree_structure(Box(1, "name")), [5])
    assert isinstance(box, Box) and box.value == 5 and box.name == "name"


def test_unflatten_accepts_any_iterable():
    treedef = tu.tree_structure([1, 2])
    assert treedef.unflatten(iter([7, 8])) == [7, 8]


def test_unflatten_wrong_leaf_count():
    treedef = tu.tree_structure([1, 2])
    with pytest.raises(ValueError, match="Too few leaves"):
        treedef.unflatten([1])
    with pytest.raises(ValueError, match="Too many leaves"):
        treedef.unflatten([1, 2, 3])


def test_custom_unflatten_receives_a_tuple():
    seen = []

    class Bag:
        def __init__(self, items):
            self.items = items

    tu.register_pytree_node(Bag, lambda b: (b.items, None),
                            lambda aux, ch: seen.append(ch) or Bag(list(ch)))
    tu.tree_map(lambda x: x + 1, Bag([1, 2]))
    assert seen == [(2, 3)]


def test_duplicate_registration_rejected():
    with pytest.raises(ValueError, match="Duplicate"):
        tu.register_pytree_node(Box, lambda b: ((), None), lambda a, c: None)
    with pytest.raises(ValueError, match="Duplicate"):
        tu.register_pytree_node(list, lambda b: ((), None), lambda a, c: None)


# ---------------------------------------------------------------------------
# tree_map
# ---------------------------------------------------------------------------

def test_tree_map_single_tree_keeps_structure():
    out = tu.tree_map(lambda x: x * 10, {"a": [1, 2], "b": (3, None)})
    assert out == {"a": [10, 20], "b": (30, None)}


def test_tree_map_multiple_trees():
    out = tu.tree_map(lambda x, y, z: x + y * z, [1, {"k": 2}], [3, {"k": 4}],
                      [5, {"k": 6}])
    assert out == [16, {"k": 26}]


def test_tree_map_rest_may_be_deeper_at_leaves():
    # The first tree is a prefix: a leaf there matches a whole subtree.
    out = tu.tree_map(lambda a, b: (a, b), [1, 2], [(1, 2), {"x": 3}])
    assert out == [(1, (1, 2)), (2, {"x": 3})]
    # ...including None in the other tree.
    assert tu.tree_map(lambda a, b: b, [1, 2], [1, None]) == [1, None]


@pytest.mark.parametrize("first, other, fragment", [
    ([1, 2], [1, 2, 3], "arity"),
    ([1, 2], (1, 2), "Expected list"),
    ({"a": 1}, {"b": 1}, "Dict key mismatch"),
    ([1, None], [1, 2], "Expected None"),
    ((1, (2, 3)), (1, 2), "tree[1]"),
    (Box(1, "x"), Box(1, "y"), "custom node data"),
    (Pair(1, 2), Coord(1, 2), "Named tuple type mismatch"),
])
def test_tree_map_structure_mismatch_is_a_clear_value_error(first, other,
                                                            fragment):
    with pytest.raises(ValueError) as info:
        tu.tree_map(lambda a, b: a, first, other)
    message = str(info.value)
    assert fragment in message
    assert "tree argument 2" in message
    assert str(tu.tree_structure(first)) in message


def test_tree_map_mismatch_names_the_argument_and_key_path():
    with pytest.raises(ValueError, match=r"tree argument 3.*\['w'\]\[1\]"):
        tu.tree_map(lambda *a: a[0], {"w": [1, (2, 3)]}, {"w": [1, (2, 3)]},
                    {"w": [1, [2, 3]]})


def test_tree_map_is_leaf():
    t = [1, None, 2]
    out = tu.tree_map(lambda x: 0 if x is None else x, t,
                      is_leaf=lambda x: x is None)
    assert out == [1, 0, 2]
    out = tu.tree_map(lambda x: len(x) if isinstance(x, tuple) else x,
                      [1, (2, 3)], is_leaf=lambda x: isinstance(x, tuple))
    assert out == [1, 2]


def test_is_leaf_applies_to_the_root_and_stops_descent():
    assert tu.tree_leaves([1, [2, 3]], is_leaf=lambda x: True) == [[1, [2, 3]]]
    assert str(tu.tree_structure([1, None], is_leaf=lambda x: x is None)) == (
        "PyTreeDef([*, *])")
    is_pair = lambda x: isinstance(x, list) and len(x) == 2  # noqa: E731
    assert tu.tree_leaves([1, [2, 3], 4], is_leaf=is_pair) == [1, [2, 3], 4]


# ---------------------------------------------------------------------------
# PyTreeDef equality, hashing, children, flatten_up_to
# ---------------------------------------------------------------------------

def test_treedef_equality_ignores_leaves():
    assert tu.tree_structure([1, 2]) == tu.tree_structure([np.ones(3), "x"])
    assert tu.tree_structure({"b": 1, "a": 2}) == tu.tree_structure(
        {"a": 3, "b": 4})


@pytest.mark.parametrize("a, b", [
    ([1, 2], (1, 2)),
    ([1, 2], [1, 2, 3]),
    ([], ()),
    (None, ()),
    ({"a": 1}, {"b": 1}),
    ({}, collections.defaultdict(list)),
    (collections.OrderedDict(b=1, a=2), collections.OrderedDict(a=1, b=2)),
    (collections.OrderedDict(a=1, b=2), {"a": 1, "b": 2}),
    (Coord(1, 2), collections.namedtuple("Coord", "a b")(1, 2)),
    (Box(1, "a"), Box(1, "b")),
    ([1, None], [1, 2]),
])
def test_treedef_inequality(a, b):
    assert tu.tree_structure(a) != tu.tree_structure(b)
    assert not tu.tree_structure(a) == tu.tree_structure(b)


def test_treedef_not_equal_to_other_types():
    assert tu.tree_structure([1, 2]) != 5
    assert tu.tree_structure(1) != "*"


def test_treedef_usable_as_cache_key():
    cache = {tu.tree_structure({"a": [1, 2]}): "hit"}
    assert cache[tu.tree_structure({"a": [np.ones(2), 0.5]})] == "hit"
    assert tu.tree_structure({"a": (1, 2)}) not in cache
    assert hash(tu.tree_structure([1, 2])) == hash(tu.tree_structure([3, 4]))
    # Unhashable metadata still gives a usable hash.
    a, b = tu.tree_structure(Box(1, {"k": 1})), tu.tree_structure(Box(2, {"k": 1}))
    assert a == b and hash(a) == hash(b)


def test_treedef_with_array_metadata_refuses_to_compare():
    a = tu.tree_structure(Box(1, np.arange(3)))
    b = tu.tree_structure(Box(1, np.arange(3)))
    with pytest.raises(ValueError, match="metadata"):
        a == b  # noqa: B015


def test_treedef_pickles():
    treedef = tu.tree_structure({"a": [1, None], "p": Pair(1, (2,))})
    assert pickle.loads(pickle.dumps(treedef)) == treedef


def test_children():
    treedef = tu.tree_structure([1, (2, 3)])
    assert [str(c) for c in treedef.children()] == ["PyTreeDef(*)",
                                                     "PyTreeDef((*, *))"]
    assert tu.tree_structure(None).children() == []
    assert tu.tree_structure(1).children() == []
    assert tu.treedef_children(tu.tree_structure({"a": 1})) == [
        tu.tree_structure(0)]
    assert tu.treedef_is_leaf(tu.tree_structure(1))
    assert not tu.treedef_is_leaf(tu.tree_structure(None))


def test_node_data():
    assert tu.tree_structure(1).node_data() is None
    assert tu.tree_structure({"b": 1, "a": 2}).node_data() == (dict, ["a", "b"])
    assert tu.tree_structure(Coord(1, 2)).node_data() == (Coord, None)
    assert tu.tree_structure(Box(1, "n")).node_data() == (Box, "n")


def test_treedef_tuple_and_compose():
    inner = tu.tree_structure((0, 0))
    outer = tu.tree_structure([0, 0, 0])
    assert outer.compose(inner) == tu.tree_structure([(1, 2)] * 3)
    assert tu.treedef_tuple([inner, tu.tree_structure(None)]) == (
        tu.tree_structure(((1, 2), None)))


def test_flatten_up_to_prefix():
    treedef = tu.tree_structure([0, 0])
    assert treedef.flatten_up_to([1, [2, 3]]) == [1, [2, 3]]
    assert tu.tree_structure(0).flatten_up_to([1, 2]) == [[1, 2]]
    # in_axes-style: a None in the spec made a leaf matches a whole argument.
    spec = tu.tree_structure((0, None, {"w": 1}), is_leaf=lambda x: x is None)
    args = (np.ones(2), {"a": 1.0}, {"w": (3, 4)})
    got = spec.flatten_up_to(args)
    assert got[0] is args[0] and got[1] is args[1] and got[2] == (3, 4)


def test_flatten_up_to_none_matches_only_none():
    treedef = tu.tree_structure([1, None])
    assert treedef.flatten_up_to([5, None]) == [5]
    with pytest.raises(ValueError, match="Expected None"):
        treedef.flatten_up_to([1, 2])


@pytest.mark.parametrize("prefix, value, fragment", [
    ([1, 2], (1, 2), "Expected list"),
    ([1, 2], [1], "arity"),
    ({"a": 1}, {"a": 1, "b": 2}, "Dict key mismatch"),
    (Coord(1, 2), (1, 2), "Expected named tuple"),
    (Box(1, "x"), [1], "Expected Box"),
    ([[1], 2], [[1, 2], 3], r"\[0\]"),
])
def test_flatten_up_to_errors(prefix, value, fragment):
    with pytest.raises(ValueError, match=fragment):
        tu.tree_structure(prefix).flatten_up_to(value)


# ---------------------------------------------------------------------------
# reductions, transpose, all_leaves
# ---------------------------------------------------------------------------

def test_tree_reduce_and_tree_all():
    assert tu.tree_reduce(lambda a, b: a + b, [1, (2, 3)]) == 6
    assert tu.tree_reduce(lambda a, b: a + b, [], 10) == 10
    with pytest.raises(TypeError):
        tu.tree_reduce(lambda a, b: a + b, [])
    assert tu.tree_all([1, True, {"a": 2}])
    assert not tu.tree_all([1, (True, 0)])
    assert tu.tree_all(None)  # no leaves


def test_tree_transpose():
    outer = tu.tree_structure([0, 0])
    inner = tu.tree_structure((0, 0, 0))
    value = [(1, 2, 3), (4, 5, 6)]
    expected = ([1, 4], [2, 5], [3, 6])
    assert tu.tree_transpose(outer, inner, value) == expected
    assert tu.tree_transpose(outer, None, value) == expected
    with pytest.raises(TypeError, match="Mismatch"):
        tu.tree_transpose(outer, tu.tree_structure((0, 0)), value)


def test_all_leaves():
    assert tu.all_leaves([1, np.ones(2), "s"])
    assert not tu.all_leaves([1, [2]])
    assert not tu.all_leaves([None])
    assert tu.all_leaves([None], is_leaf=lambda x: x is None)


# ---------------------------------------------------------------------------
# library helpers
# ---------------------------------------------------------------------------

def test_tree_zeros_like():
    x32 = np.ones((2, 3), np.float32)
    out = tu.tree_zeros_like({"a": x32, "b": (0.3, None), "c": np.float64(2)})
    assert out["a"].dtype == np.float32 and out["a"].shape == (2, 3)
    assert not out["a"].any()
    assert out["b"] == (0.0, None) and type(out["b"][0]) is float
    assert type(out["c"]) is np.float64 and out["c"] == 0


def test_tree_add_treats_none_as_zero():
    a = {"w": np.array([1.0, 2.0]), "b": None, "c": [1.0, None]}
    b = {"w": np.array([10.0, 20.0]), "b": (3.0, 4.0), "c": [None, 2.0]}
    out = tu.tree_add(a, b)
    np.testing.assert_array_equal(out["w"], [11.0, 22.0])
    assert out["b"] == (3.0, 4.0)
    assert out["c"] == [1.0, 2.0]
    assert tu.tree_add(None, None) is None
    assert tu.tree_add(None, [1.0]) == [1.0]
    assert tu.tree_add(Pair(1.0, 2.0), Pair(3.0, None)) == Pair(4.0, 2.0)


def test_tree_add_structure_mismatch():
    with pytest.raises(ValueError, match="tree_add"):
        tu.tree_add([1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match="tree_add"):
        tu.tree_add([1.0], (1.0,))
    with pytest.raises(ValueError, match="tree_add"):
        tu.tree_add({"a": 1.0}, 2.0)


# ---------------------------------------------------------------------------
# tangent_x.tree aliases
# ---------------------------------------------------------------------------

def test_tree_module_aliases():
    assert tree.map is tu.tree_map
    assert tree.leaves is tu.tree_leaves
    assert tree.flatten is tu.tree_flatten
    assert tree.unflatten is tu.tree_unflatten
    assert tree.structure is tu.tree_structure
    assert tree.reduce is tu.tree_reduce
    assert tree.all is tu.tree_all
    leaves, treedef = tree.flatten({"a": 1, "b": [2]})
    assert tree.unflatten(treedef, tree.map(lambda x: -x, leaves)) == {
        "a": -1, "b": [-2]}
