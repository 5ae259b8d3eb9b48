"""Rules for the pytree helpers ``tree_map`` and friends become inside
transformed functions (``runtime.trees``): taking a tree's leaves and
rebuilding a tree from leaves are each other's transpose, both linear; the
structure (``like``, a ``PyTreeDef``) carries no derivative.  Under vmap
the leaves keep their flags: a tree's flag cut at the structure, in
tree_util's order (dict keys sorted)."""
from ..runtime import tree_leaves_like, tree_rebuild  # noqa: F401
from .. import tree_util
from .registry import adjoint, batching, tangent
from .batching_util import respell, static_value


@adjoint("tree_leaves_like")
def _(g, ans, like, tree, is_leaf=None):
    tree_bar = tree_rebuild(like, g, is_leaf)


@adjoint("tree_rebuild")
def _(g, ans, like, leaves, is_leaf=None):
    leaves_bar = tree_leaves_like(like, g, is_leaf)


@tangent("tree_leaves_like")
def _(ans, like, tree, is_leaf=None):
    ans_dot = tree_leaves_like(like, tree_dot, is_leaf)


@tangent("tree_rebuild")
def _(ans, like, leaves, is_leaf=None):
    ans_dot = tree_rebuild(like, leaves_dot, is_leaf)


# --- batching ------------------------------------------------------------------

class _Unknown(Exception):
    """The probe did not see the structure (or a registered class holds it)."""


def _skeleton(shape):
    """A tree of the structure the probe saw (``shape``), leaves ``0``:
    namedtuples as tuples (their children come in the same order)."""
    if shape is None:
        raise _Unknown()
    if isinstance(shape.value, tree_util.PyTreeDef):
        return shape.value.unflatten([0] * shape.value.num_leaves)
    if shape.kind == "array":
        return 0
    if shape.kind == "dict":
        return {k: _skeleton(s) for k, s in shape.items.items()}
    if shape.kind in ("list", "tuple"):
        items = [_skeleton(s) for s in shape.items]
        return items if shape.kind == "list" else tuple(items)
    if shape.kind == "other" and shape.value is None:
        return None
    raise _Unknown()


def _is_leaf_given(b, eqn):
    atom = eqn.args[2] if len(eqn.args) > 2 else eqn.kwargs.get("is_leaf")
    return atom is not None and static_value(b, atom) is not None


def _cut(skeleton, flag):
    """The flags of ``skeleton``'s leaves within ``flag`` (a bool covers
    everything under it)."""
    if not isinstance(flag, (dict, list)):
        return [bool(flag)] * len(tree_util.tree_leaves(skeleton)) \
            if skeleton is not None else []
    if isinstance(skeleton, dict) and isinstance(flag, dict):
        return [f for k in sorted(skeleton) for f in _cut(skeleton[k], flag[k])]
    if isinstance(skeleton, (list, tuple)) and isinstance(flag, list) and \
            len(skeleton) == len(flag):
        return [f for s, f in zip(skeleton, flag) for f in _cut(s, f)]
    if skeleton is None:
        return []
    if tree_util.treedef_is_leaf(tree_util.tree_structure(skeleton)):
        return [flag]          # a leaf of the structure holding a subtree
    raise _Unknown()


def _flag_of(skeleton):
    """A tree's flag from one with bool (or nested) flags at its leaves."""
    if isinstance(skeleton, dict):
        return {k: _flag_of(v) for k, v in skeleton.items()}
    if isinstance(skeleton, (list, tuple)):
        return [_flag_of(v) for v in skeleton]
    return False if skeleton is None else skeleton


@batching("tree_leaves_like")
def batch_tree_leaves(eqn, b):
    flag = b.flag(eqn.args[1])
    if not isinstance(flag, (dict, list)):
        b.mark(eqn.out, bool(flag))       # every leaf shares the one flag
        return respell(eqn)
    if _is_leaf_given(b, eqn):
        return None
    try:
        b.mark(eqn.out, _cut(_skeleton(b.shape(eqn.args[0])), flag))
    except (_Unknown, KeyError, TypeError):
        return None
    return respell(eqn)


@batching("tree_rebuild")
def batch_tree_rebuild(eqn, b):
    flag = b.flag(eqn.args[1])
    if not isinstance(flag, (dict, list)):
        b.mark(eqn.out, bool(flag))
        return respell(eqn)
    if _is_leaf_given(b, eqn) or not isinstance(flag, list):
        return None
    try:
        skeleton = _skeleton(b.shape(eqn.args[0]))
        treedef = tree_util.tree_structure(skeleton)
        if treedef.num_leaves != len(flag):
            return None
        b.mark(eqn.out, _flag_of(_rebuild_flags(treedef, flag)))
    except _Unknown:
        return None
    return respell(eqn)


def _rebuild_flags(treedef, flags):
    """``treedef`` unflattened with (possibly nested) flags as leaves: a
    nested flag is a list or dict, which unflatten would not mistake for a
    leaf only if boxed."""
    boxed = treedef.unflatten([_Box(f) for f in flags])

    def unbox(x):
        if isinstance(x, _Box):
            return x.flag
        if isinstance(x, dict):
            return {k: unbox(v) for k, v in x.items()}
        if isinstance(x, (list, tuple)):
            return [unbox(v) for v in x]
        return x
    return unbox(boxed)


class _Box:
    __slots__ = ("flag",)

    def __init__(self, flag):
        self.flag = flag


@batching("tree_def")
def batch_tree_def(eqn, b):
    """Every example has the same structure: the PyTreeDef is shared."""
    b.mark(eqn.out, False)
    return respell(eqn)
