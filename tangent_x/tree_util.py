"""Pytrees: nested containers of arrays, with JAX's ``jax.tree_util`` semantics.

Every transform in tangent_x takes and returns pytrees (``grad`` of a dict of
parameters returns a dict of gradients, ``vmap`` matches ``in_axes`` against
the argument tree, ``jit`` caches on the tree structure), so this module is
the single place that decides what is a container and what is a leaf.

The rules are JAX's, so that code written for ``jax.tree_util`` ports by
changing the import:

* ``None`` is a node with no children (a tree with no leaves);
* ``tuple``, ``list`` and ``dict`` are nodes; dict children are visited in
  sorted key order, so ``{'b': 1, 'a': 2}`` has leaves ``[2, 1]``;
* namedtuples (tuple subclasses with ``_fields``), ``collections.OrderedDict``
  (insertion order) and ``collections.defaultdict`` (sorted order) are nodes;
* classes registered with :func:`register_pytree_node` or
  :func:`register_pytree_node_class` are nodes;
* everything else (arrays, scalars, strings, unregistered subclasses of
  ``dict``/``tuple``) is a leaf.

A :class:`PyTreeDef` records the structure without the leaves.  It is
immutable, hashable and prints exactly like JAX's, e.g.
``PyTreeDef([{'W': *, 'b': *}, {'W': *, 'b': *}])``.

Besides the JAX names, two helpers used throughout the library live here:
:func:`tree_zeros_like` and :func:`tree_add` (where ``None`` means "zero",
which is how reverse mode represents a gradient that was never produced).
"""
import functools

import numpy as np

from .tree_nodes import (_BUILTIN_KINDS, _DICT, _LIST, _NAMEDTUPLE, _NONE, _TUPLE, _aux_equal,
                         _aux_hash, _is_namedtuple_type, _node_kind, _registry,
                         register_pytree_node, register_pytree_node_class)
from .tree_paths import _PrefixMismatch, _flatten_up_to, _keystr

__all__ = [
    "PyTreeDef",
    "all_leaves",
    "register_pytree_node",
    "register_pytree_node_class",
    "tree_add",
    "tree_all",
    "tree_flatten",
    "tree_leaves",
    "tree_map",
    "tree_reduce",
    "tree_structure",
    "tree_transpose",
    "tree_unflatten",
    "tree_zeros_like",
    "treedef_children",
    "treedef_is_leaf",
    "treedef_tuple",
]


# ---------------------------------------------------------------------------
# PyTreeDef
# ---------------------------------------------------------------------------

class PyTreeDef:
    """The structure of a pytree: its containers and metadata, without leaves.

    Two trees have equal ``PyTreeDef`` when they differ only in their leaves,
    which is what makes a ``PyTreeDef`` usable as (part of) a cache key for
    ``jit`` and for matching arguments against ``in_axes``.

    Internally a ``PyTreeDef`` is one node: its kind (``None`` for a leaf),
    the container type, the metadata and a tuple of child ``PyTreeDef``.
    Instances are immutable; build them with :func:`tree_structure` or
    :func:`tree_flatten` rather than directly.
    """

    __slots__ = ("_kind", "_type", "_aux", "_children",
                 "_num_leaves", "_num_nodes", "_hash")

    def __init__(self, kind, nodetype, aux, children):
        self._kind = kind
        self._type = nodetype
        self._aux = aux
        self._children = tuple(children)
        if kind is None:
            self._num_leaves, self._num_nodes = 1, 1
        else:
            self._num_leaves = sum(c._num_leaves for c in self._children)
            self._num_nodes = 1 + sum(c._num_nodes for c in self._children)
        self._hash = None

    @property
    def num_leaves(self):
        """Number of leaves (``None`` nodes have none)."""
        return self._num_leaves

    @property
    def num_nodes(self):
        """Number of nodes, counting containers, ``None`` and leaves."""
        return self._num_nodes

    # -- structure queries ------------------------------------------------

    def children(self):
        """The ``PyTreeDef`` of each direct child, in flattening order."""
        return list(self._children)

    def is_leaf(self):
        """True for the structure of a single leaf, ``PyTreeDef(*)``."""
        return self._kind is None

    def node_data(self):
        """``(node type, metadata)`` of the root node, or None for a leaf.

        Dict metadata is the sorted key list, as in JAX.
        """
        if self._kind is None:
            return None
        aux = list(self._aux) if self._kind is _DICT else self._aux
        return (self._type, aux)

    # -- rebuilding ---------------------------------------------------------

    def unflatten(self, leaves):
        """Build a tree of this structure from ``leaves`` (any iterable)."""
        it = iter(leaves)
        count = [0]

        def build(td):
            if td._kind is None:
                try:
                    leaf = next(it)
                except StopIteration:
                    raise ValueError(
                        "Too few leaves for PyTreeDef; expected "
                        f"{self.num_leaves}, got {count[0]}") from None
                count[0] += 1
                return leaf
            children = tuple(build(c) for c in td._children)
            return td._kind.unflatten(td._type, td._aux, children)

        tree = build(self)
        for _ in it:
            raise ValueError("Too many leaves for PyTreeDef; expected "
                             f"{self.num_leaves}.")
        return tree

    def flatten_up_to(self, tree):
        """Flatten ``tree`` only as deep as this structure goes.

        ``self`` must be a prefix of ``tree``'s structure: wherever ``self``
        has a leaf, the whole corresponding subtree of ``tree`` becomes one
        entry of the result.  This is how a per-argument spec such as
        ``in_axes=(0, None)`` is matched against arbitrary argument trees.
        Raises ``ValueError`` naming the key path where they disagree.
        """
        out = []
        try:
            _flatten_up_to(self, tree, (), out)
        except _PrefixMismatch as e:
            where = f" (at key path {_keystr(e.path)})" if e.path else ""
            raise ValueError(e.detail + where) from None
        return out

    def compose(self, inner):
        """The structure obtained by putting ``inner`` at every leaf of self."""
        if self._kind is None:
            return inner
        return PyTreeDef(self._kind, self._type, self._aux,
                         [c.compose(inner) for c in self._children])

    # -- equality, hashing, printing ---------------------------------------

    def __eq__(self, other):
        if not isinstance(other, PyTreeDef):
            return NotImplemented
        if self is other:
            return True
        if (self._kind is not other._kind or self._type is not other._type
                or self.num_nodes != other.num_nodes
                or len(self._children) != len(other._children)
                or not _aux_equal(self._aux, other._aux)):
            return False
        return all(a == b for a, b in zip(self._children, other._children))

    def __hash__(self):
        if self._hash is None:
            self._hash = hash((self._type, _aux_hash(self._aux),
                               self._children))
        return self._hash

    def __repr__(self):
        return f"PyTreeDef({self._format()})"

    def _format(self):
        kind = self._kind
        if kind is None:
            return "*"
        parts = [c._format() for c in self._children]
        if kind is _NONE:
            return "None"
        if kind is _TUPLE:
            return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"
        if kind is _LIST:
            return "[" + ", ".join(parts) + "]"
        if kind is _DICT:
            return "{" + ", ".join(f"{k!r}: {p}"
                                   for k, p in zip(self._aux, parts)) + "}"
        if kind is _NAMEDTUPLE:
            label = f"namedtuple[{self._type.__name__}]"
        else:
            label = f"{self._type.__name__}[{self._aux}]"
        return f"CustomNode({label}, [{', '.join(parts)}])"

    def __reduce__(self):
        # Node kinds hold lambdas; pickle the kind by looking it up again.
        return (_rebuild_treedef,
                (self._type, self._kind is None, self._aux, self._children))


def _rebuild_treedef(nodetype, is_leaf, aux, children):
    if is_leaf:
        return _LEAF
    kind = _registry.get(nodetype) or _BUILTIN_KINDS.get(nodetype)
    if kind is None and _is_namedtuple_type(nodetype):
        kind = _NAMEDTUPLE
    return PyTreeDef(kind, nodetype, aux, children)


_LEAF = PyTreeDef(None, None, None, ())


# ---------------------------------------------------------------------------
# Flattening
# ---------------------------------------------------------------------------

def _flatten(tree, is_leaf, leaves):
    """Append the leaves of ``tree`` to ``leaves``; return its PyTreeDef."""
    if is_leaf is not None and is_leaf(tree):
        leaves.append(tree)
        return _LEAF
    kind = _node_kind(tree)
    if kind is None:
        leaves.append(tree)
        return _LEAF
    children, aux = kind.flatten(tree)
    child_defs = [_flatten(c, is_leaf, leaves) for c in children]
    return PyTreeDef(kind, type(tree), aux, child_defs)


def tree_flatten(tree, is_leaf=None):
    """Split ``tree`` into ``(leaves, treedef)``.

    ``is_leaf(x)``, if given, is called on every subtree (the root included)
    before looking at its type; returning True stops the descent there, which
    is how e.g. ``None`` can be made a leaf: ``is_leaf=lambda x: x is None``.
    """
    leaves = []
    treedef = _flatten(tree, is_leaf, leaves)
    return leaves, treedef


def tree_leaves(tree, is_leaf=None):
    """The leaves of ``tree`` in flattening order (``None`` contributes none)."""
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree, is_leaf=None):
    """The :class:`PyTreeDef` of ``tree``."""
    return tree_flatten(tree, is_leaf)[1]


def tree_unflatten(treedef, leaves):
    """Inverse of :func:`tree_flatten`: rebuild a tree from its leaves."""
    return treedef.unflatten(leaves)


def treedef_children(treedef):
    """Same as ``treedef.children()`` (JAX's function form)."""
    return treedef.children()


def treedef_is_leaf(treedef):
    """True when ``treedef`` is the structure of a single leaf."""
    return treedef.is_leaf()


def treedef_tuple(treedefs):
    """The structure of a tuple whose elements have the given structures."""
    return PyTreeDef(_TUPLE, tuple, None, list(treedefs))


def all_leaves(iterable, is_leaf=None):
    """True when no element of ``iterable`` is a pytree node.

    Useful to check that a list really is a list of leaves (``None`` counts
    as a node, so ``all_leaves([None])`` is False, as in JAX).
    """
    for x in iterable:
        if is_leaf is not None and is_leaf(x):
            continue
        if _node_kind(x) is not None:
            return False
    return True


# ---------------------------------------------------------------------------
# Mapping and reducing
# ---------------------------------------------------------------------------

def tree_map(f, tree, *rest, is_leaf=None):
    """Apply ``f`` leafwise, returning a tree with the structure of ``tree``.

    With several trees, ``f(x, *ys)`` is called with corresponding leaves.
    Every tree in ``rest`` must have ``tree``'s structure as a prefix: where
    ``tree`` has a leaf, the others may have a whole subtree, which is
    passed to ``f`` as is (JAX's rule).  A mismatch raises ``ValueError``
    naming the offending argument and key path.
    """
    leaves, treedef = tree_flatten(tree, is_leaf)
    columns = [leaves]
    for i, other in enumerate(rest, start=2):
        try:
            column = []
            _flatten_up_to(treedef, other, (), column)
        except _PrefixMismatch as e:
            where = (f"at key path tree{_keystr(e.path)}" if e.path
                     else "at the root")
            raise ValueError(
                "tree_map: pytree structure mismatch between the first tree "
                f"and tree argument {i}, {where}: {e.detail}\n"
                f"  first tree structure: {treedef}\n"
                f"  tree {i} structure:    {_safe_structure(other)}") from None
        columns.append(column)
    return treedef.unflatten(f(*xs) for xs in zip(*columns))


def _safe_structure(tree):
    """``tree_structure`` for error messages, which must not fail themselves."""
    try:
        return tree_structure(tree)
    except Exception:
        return f"<unflattenable {type(tree).__name__}>"


_NO_INITIAL = object()


def tree_reduce(function, tree, initializer=_NO_INITIAL, is_leaf=None):
    """``functools.reduce(function, leaves[, initializer])`` over the leaves."""
    leaves = tree_leaves(tree, is_leaf)
    if initializer is _NO_INITIAL:
        return functools.reduce(function, leaves)
    return functools.reduce(function, leaves, initializer)


def tree_all(tree, *, is_leaf=None):
    """True when every leaf is truthy (an empty tree gives True)."""
    return all(tree_leaves(tree, is_leaf))


def tree_transpose(outer_treedef, inner_treedef, pytree_to_transpose):
    """Turn an outer tree of inner trees into an inner tree of outer trees.

    E.g. a list of ``(a, b)`` pairs becomes a pair of lists.  If
    ``inner_treedef`` is None it is taken from the first inner tree.
    """
    leaves, treedef = tree_flatten(pytree_to_transpose)
    if inner_treedef is None:
        first = outer_treedef.flatten_up_to(pytree_to_transpose)[0]
        inner_treedef = tree_structure(first)
    expected = outer_treedef.compose(inner_treedef)
    if treedef != expected:
        raise TypeError(f"Mismatch\n{treedef}\n != \n{expected}")
    n_inner = inner_treedef.num_leaves
    rows = [leaves[i:i + n_inner] for i in range(0, len(leaves), n_inner)]
    columns = zip(*rows) if rows else [[] for _ in range(n_inner)]
    outers = [outer_treedef.unflatten(col) for col in columns]
    return inner_treedef.unflatten(outers)


# ---------------------------------------------------------------------------
# Library helpers
# ---------------------------------------------------------------------------

def _zero_like(x):
    # Keep scalars as scalars of the same type (a Python float gradient is
    # 0.0, not a 0-d array) so zero gradients look like the primal.
    if isinstance(x, (bool, int, float, complex, np.generic)):
        return type(x)(0)
    return np.zeros_like(x)


def tree_zeros_like(tree):
    """A tree of zeros with the structure, shapes and dtypes of ``tree``.

    Arrays become ``np.zeros_like``; Python and NumPy scalars become a zero
    of their own type (``0.3 -> 0.0``).  This is the zero cotangent/tangent
    that transforms use when a value does not depend on the inputs.
    """
    return tree_map(_zero_like, tree)


def tree_add(a, b):
    """Leafwise ``a + b``, where a ``None`` subtree on either side means zero.

    Reverse mode accumulates gradient contributions into trees where parts
    that received no contribution are ``None``; this adds two such trees
    without materialising zeros.  Apart from ``None``, both trees must have
    the same structure (``ValueError`` otherwise).
    """
    if a is None:
        return b
    if b is None:
        return a
    kind = _node_kind(a)
    if kind is None and _node_kind(b) is None:
        return a + b
    if kind is None or type(a) is not type(b) or _node_kind(b) is not kind:
        raise ValueError(
            f"tree_add: cannot add a {type(a).__name__} to a "
            f"{type(b).__name__} (structures {tree_structure(a)} and "
            f"{tree_structure(b)} differ)")
    children_a, aux_a = kind.flatten(a)
    children_b, aux_b = kind.flatten(b)
    children_a, children_b = tuple(children_a), tuple(children_b)
    if len(children_a) != len(children_b) or not _aux_equal(aux_a, aux_b):
        raise ValueError(
            f"tree_add: structures {tree_structure(a)} and "
            f"{tree_structure(b)} differ")
    children = tuple(tree_add(x, y) for x, y in zip(children_a, children_b))
    return kind.unflatten(type(a), aux_a, children)
