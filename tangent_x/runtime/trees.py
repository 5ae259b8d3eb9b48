"""``tree_util`` inside transformed functions: the three helpers that the
canonical stage rewrites ``tree_map``, ``tree_leaves``, ``tree_flatten``,
``tree_unflatten`` and ``tree_structure`` into (``canonical.trees``).

- ``tree_leaves_like(like, tree, is_leaf)``: the leaves of ``tree`` cut at
  the structure of ``like`` (a pytree or a ``PyTreeDef``), in tree_util's
  order.  ``tree`` may be a cotangent: ``None`` where ``like`` has a
  subtree with leaves is a symbolic zero, one ``None`` per leaf.
- ``tree_rebuild(like, leaves, is_leaf)``: a tree of ``like``'s structure
  holding ``leaves`` (``None`` leaves: None, a symbolic zero).
- ``tree_def(tree, is_leaf)``: the ``PyTreeDef`` (no derivative).

Each is linear in the leaves, so the adjoint of one is the other
(``rules.trees``)."""
from .. import tree_util


def structure_of(like, is_leaf=None):
    """``like``'s PyTreeDef (``like`` may already be one)."""
    if isinstance(like, tree_util.PyTreeDef):
        return like
    return tree_util.tree_structure(like, is_leaf)


def leaves_up_to(treedef, tree, zero=None):
    """The items of ``tree`` at the leaves of ``treedef``, where ``tree`` is
    ``None`` under a node with leaves: ``zero`` for each (a symbolic zero
    cotangent).  A structure that differs otherwise raises ValueError."""
    if tree is None and not treedef.is_leaf() and treedef.num_leaves:
        return [zero] * treedef.num_leaves
    if treedef.is_leaf():
        return [tree]
    if tree is not None and treedef.node_data()[0] is not type(None) and \
            _same_node(treedef, tree):
        kind = tree_util._node_kind(tree)
        children, _ = kind.flatten(tree)
        out = []
        for child_def, child in zip(treedef.children(), children):
            out += leaves_up_to(child_def, child, zero)
        return out
    return treedef.flatten_up_to(tree)     # its error names the mismatch


def _same_node(treedef, tree):
    node = tree_util._node_kind(tree)
    if node is None:
        return False
    own = tree_util.tree_structure(tree, lambda x: x is not tree)   # one level
    return own.node_data() == treedef.node_data() and \
        len(own.children()) == len(treedef.children())


def tree_leaves_like(like, tree, is_leaf=None):
    """The leaves of ``tree`` cut at ``like``'s structure (see the module doc)."""
    return leaves_up_to(structure_of(like, is_leaf), tree)


def tree_rebuild(like, leaves, is_leaf=None):
    """A tree of ``like``'s structure holding ``leaves``; None stays None."""
    if leaves is None:
        return None
    return structure_of(like, is_leaf).unflatten(leaves)


def tree_def(tree, is_leaf=None):
    """``tree_util.tree_structure``, as generated code spells it."""
    return tree_util.tree_structure(tree, is_leaf)
