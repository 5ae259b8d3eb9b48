"""``tree_map`` and friends under jit (see ``registry``): the runtime's
``tree_leaves_like``, ``tree_rebuild`` and ``tree_def`` (``runtime.trees``)
evaluated now on abstract values, whose containers the specialiser knows:
the leaves of a tree are a list of its abstract leaves, so the loop over
them is written out leaf by leaf, and no container reaches Numba."""
from ... import runtime, tree_util
from ...runtime import trees
from .registry import handles
from .values import Const, Zero, as_av, is_container, rebuild, children


def _skeleton(av, zeros=False):
    """The Python tree ``av`` stands for: its containers as they are, None
    as None (an empty node), abstract leaves as leaves; ``zeros``: a
    symbolic zero cotangent as None too."""
    if isinstance(av, Const) and isinstance(av.value, (list, tuple, dict)):
        av = as_av(av.value)
    if is_container(av):
        return rebuild(av, [_skeleton(c, zeros) for c in children(av)])
    if isinstance(av, Const) and av.value is None:
        return None
    if zeros and isinstance(av, Zero):
        return None
    return av


def _abstract(x):
    """A tree of abstract leaves (None nodes and None leaves as Const(None))."""
    if x is None:
        return Const(None)
    if is_container(x):
        return rebuild(x, [_abstract(c) for c in children(x)])
    return x


def _structure(s, like, is_leaf):
    if isinstance(like, Const) and isinstance(like.value, tree_util.PyTreeDef):
        return like.value
    fn = is_leaf.value if isinstance(is_leaf, Const) else s.fail(
        "is_leaf must be a function known when compiling")
    try:
        return trees.structure_of(_skeleton(like), fn)
    except Exception as exc:    # noqa: BLE001 - the user's is_leaf, on the structure
        s.fail(f"the structure of a pytree could not be read under jit: {exc}")


def _options(args, kwargs, first):
    is_leaf = args[first] if len(args) > first else kwargs.get("is_leaf", Const(None))
    return is_leaf


@handles(runtime.tree_leaves_like)
def _tree_leaves_like(s, args, kwargs):
    like, tree = args[0], args[1]
    treedef = _structure(s, like, _options(args, kwargs, 2))
    try:
        leaves = trees.leaves_up_to(treedef, _skeleton(tree, zeros=True))
    except ValueError as exc:
        s.fail(f"pytree structures differ: {exc}")
    return [_abstract(x) for x in leaves]


@handles(runtime.tree_rebuild)
def _tree_rebuild(s, args, kwargs):
    like, leaves = args[0], args[1]
    if isinstance(leaves, Zero) or isinstance(leaves, Const) and leaves.value is None:
        return Const(None)
    if isinstance(leaves, Const) and isinstance(leaves.value, list):
        leaves = as_av(leaves.value)
    if not isinstance(leaves, list):
        return NotImplemented
    treedef = _structure(s, like, _options(args, kwargs, 2))
    if treedef.num_leaves != len(leaves):
        s.fail(f"a pytree of {treedef.num_leaves} leaves rebuilt from {len(leaves)}")
    tree = _abstract(treedef.unflatten([_skeleton(x) if is_container(x) else x
                                        for x in leaves]))
    return _in_order_of(_skeleton(like), tree) if not isinstance(like, Const) else tree


def _in_order_of(like, tree):
    """``tree`` with its dicts' keys in the order of ``like``'s (tree_util
    sorts them; the specialiser matches a dict's items by position)."""
    if isinstance(like, dict) and isinstance(tree, dict) and set(like) == set(tree):
        return type(tree)((k, _in_order_of(like[k], tree[k])) for k in like)
    if isinstance(like, (list, tuple)) and isinstance(tree, (list, tuple)) and \
            len(like) == len(tree):
        return rebuild(tree, [_in_order_of(a, b) for a, b in zip(like, tree)])
    return tree


@handles(runtime.tree_def)
def _tree_def(s, args, kwargs):
    return Const(_structure(s, args[0], _options(args, kwargs, 1)))
