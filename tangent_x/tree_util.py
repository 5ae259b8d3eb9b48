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
import collections
import functools
import operator

import numpy as np

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
# Node kinds
# ---------------------------------------------------------------------------
#
# Each kind of container knows how to split a value into (children, aux) and
# how to rebuild it.  ``aux`` is the static part that must match for two trees
# to have the same structure (dict keys, a namedtuple's class, a registered
# class's metadata).  Keeping the built-in containers in the same shape as
# user-registered ones means flatten / unflatten / flatten_up_to have a single
# code path.

class _NodeKind:
    """How to take apart and rebuild one kind of container."""

    __slots__ = ("name", "flatten", "unflatten")

    def __init__(self, name, flatten, unflatten):
        self.name = name            # used for printing and error messages
        self.flatten = flatten      # value -> (children sequence, aux)
        self.unflatten = unflatten  # (nodetype, aux, children tuple) -> value


def _sorted_keys(d):
    """Dict keys in the canonical (sorted) order; JAX refuses unsortable keys."""
    try:
        return sorted(d)
    except TypeError as e:
        raise ValueError(
            "pytree dict keys must be sortable (tangent_x visits dict children "
            f"in sorted key order), but sorting {list(d)!r} failed: {e}") from None


def _flatten_dict(d):
    keys = _sorted_keys(d)
    return [d[k] for k in keys], tuple(keys)


def _flatten_defaultdict(d):
    keys = _sorted_keys(d)
    return [d[k] for k in keys], (d.default_factory, tuple(keys))


_NONE = _NodeKind("None", lambda x: ((), None), lambda t, aux, ch: None)
_TUPLE = _NodeKind("tuple", lambda x: (x, None), lambda t, aux, ch: tuple(ch))
_LIST = _NodeKind("list", lambda x: (x, None), lambda t, aux, ch: list(ch))
_DICT = _NodeKind("dict", _flatten_dict,
                  lambda t, aux, ch: dict(zip(aux, ch)))
_NAMEDTUPLE = _NodeKind("namedtuple", lambda x: (tuple(x), None),
                        lambda t, aux, ch: t(*ch))
_ORDEREDDICT = _NodeKind(
    "OrderedDict", lambda x: (list(x.values()), tuple(x.keys())),
    lambda t, aux, ch: collections.OrderedDict(zip(aux, ch)))
_DEFAULTDICT = _NodeKind(
    "defaultdict", _flatten_defaultdict,
    lambda t, aux, ch: collections.defaultdict(aux[0], zip(aux[1], ch)))

_BUILTIN_KINDS = {
    type(None): _NONE,
    tuple: _TUPLE,
    list: _LIST,
    dict: _DICT,
    collections.OrderedDict: _ORDEREDDICT,
    collections.defaultdict: _DEFAULTDICT,
}

# User-registered node types: exact type -> _NodeKind (as in JAX, subclasses
# of a registered class are leaves unless registered themselves).
_registry = {}


def register_pytree_node(nodetype, flatten_func, unflatten_func,
                         flatten_with_keys_func=None):
    """Make instances of ``nodetype`` containers rather than leaves.

    ``flatten_func(x)`` returns ``(children, aux_data)``; ``children`` are
    flattened further, ``aux_data`` is static metadata that is compared (and,
    when hashable, hashed) as part of the tree structure.
    ``unflatten_func(aux_data, children)`` rebuilds the value; it receives
    the children as a tuple.  ``flatten_with_keys_func`` is accepted for
    compatibility with JAX's signature and ignored.

    Registering a type twice (or a built-in container) is a ``ValueError``,
    as in JAX, because it would silently change existing tree structures.
    """
    del flatten_with_keys_func
    if nodetype in _registry or nodetype in _BUILTIN_KINDS:
        raise ValueError(
            f"Duplicate custom PyTreeDef type registration for {nodetype}.")
    _registry[nodetype] = _NodeKind(
        "custom", flatten_func,
        lambda t, aux, ch: unflatten_func(aux, ch))


def register_pytree_node_class(cls):
    """Class decorator: register ``cls`` using its own pytree methods.

    ``cls`` must define ``tree_flatten(self) -> (children, aux_data)`` and a
    classmethod ``tree_unflatten(cls, aux_data, children)``.  Returns ``cls``
    so it can be used as ``@register_pytree_node_class``.
    """
    register_pytree_node(cls, operator.methodcaller("tree_flatten"),
                         cls.tree_unflatten)
    return cls


def _is_namedtuple_type(t):
    return issubclass(t, tuple) and hasattr(t, "_fields")


def _node_kind(x):
    """The _NodeKind for ``x``, or None when ``x`` is a leaf."""
    t = type(x)
    kind = _registry.get(t)
    if kind is None:
        kind = _BUILTIN_KINDS.get(t)
    if kind is None and _is_namedtuple_type(t):
        kind = _NAMEDTUPLE
    return kind


# ---------------------------------------------------------------------------
# PyTreeDef
# ---------------------------------------------------------------------------

def _aux_equal(a, b):
    """Compare node metadata; metadata must have plain ``==`` semantics."""
    if a is b:
        return True
    try:
        return bool(a == b)
    except Exception:
        raise ValueError(
            "Exception raised while checking equality of metadata fields of "
            "pytree. Make sure that metadata fields are hashable and have "
            "simple equality semantics. (Note: arrays cannot be passed as "
            "metadata fields!)") from None


def _aux_hash(aux):
    """Hash of node metadata; unhashable metadata only weakens the hash."""
    try:
        return hash(aux)
    except TypeError:
        return 0


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
# Prefix matching
# ---------------------------------------------------------------------------

class _PrefixMismatch(Exception):
    """Internal: ``treedef`` is not a prefix of a tree, at ``path``."""

    def __init__(self, path, detail):
        super().__init__(detail)
        self.path = path
        self.detail = detail


def _keystr(path):
    """Render a key path like JAX does: ``[0]['W'].field``."""
    return "".join(path)


def _dict_keys(td):
    """The keys of a dict node (dict, OrderedDict, defaultdict), else None."""
    kind = td._kind
    if kind is _DICT or kind is _ORDEREDDICT:
        return list(td._aux)
    if kind is _DEFAULTDICT:
        return list(td._aux[1])
    return None


def _child_keys(td):
    """Key-path fragments naming each child of node ``td``."""
    keys = _dict_keys(td)
    if keys is not None:
        return [f"[{k!r}]" for k in keys]
    kind = td._kind
    if kind is _NAMEDTUPLE:
        return [f".{name}" for name in td._type._fields]
    return [f"[{i}]" for i in range(len(td._children))]


def _leaf_paths(treedef):
    """Key-path strings (``"[0]['W']"``) of each leaf, in flattening order.

    Private helper for error messages elsewhere in the library (e.g.
    ``test_util`` names the output leaf whose derivative is wrong, ``lax``
    the leaf whose type changed).
    """
    paths = []

    def walk(td, prefix):
        if td._kind is None:
            paths.append(prefix)
            return
        for key, child in zip(_child_keys(td), td._children):
            walk(child, prefix + key)

    walk(treedef, "")
    return paths


def _short(x, limit=80):
    s = repr(x)
    return s if len(s) <= limit else s[:limit - 3] + "..."


def _flatten_up_to(td, tree, path, out):
    kind = td._kind
    if kind is None:
        out.append(tree)
        return
    t = type(tree)
    if kind is _NONE:
        if tree is not None:
            raise _PrefixMismatch(
                path, f"Expected None, got {_short(tree)}. (None is an empty "
                "pytree node, not a leaf; to treat None as a leaf pass "
                "is_leaf=lambda x: x is None when building the prefix.)")
        return
    if kind is _NAMEDTUPLE:
        if not _is_namedtuple_type(t):
            raise _PrefixMismatch(path,
                                  f"Expected named tuple, got {_short(tree)}.")
        if t is not td._type:
            raise _PrefixMismatch(
                path, f"Named tuple type mismatch: expected type: "
                f"{td._type}, tuple: {_short(tree)}.")
    elif t is not td._type:
        raise _PrefixMismatch(
            path, f"Expected {_type_label(td)}, got {_short(tree)}.")
    children, aux = kind.flatten(tree)
    children = tuple(children)
    if kind is _DICT or kind is _DEFAULTDICT:
        keys = aux if kind is _DICT else aux[1]
        want = td._aux if kind is _DICT else td._aux[1]
        if keys != want:
            raise _PrefixMismatch(
                path, f"Dict key mismatch; expected keys: {list(want)}; "
                f"present keys: {list(keys)}.")
    if len(children) != len(td._children):
        raise _PrefixMismatch(
            path, f"{_type_label(td).capitalize()} arity mismatch: expected "
            f"{len(td._children)} children, got {len(children)}; value: "
            f"{_short(tree)}.")
    if not _aux_equal(aux, td._aux):
        raise _PrefixMismatch(
            path, f"Mismatch custom node data: {td._aux!r} != {aux!r}; "
            f"value: {_short(tree)}.")
    for key, child_td, child in zip(_child_keys(td), td._children, children):
        _flatten_up_to(child_td, child, path + (key,), out)


def _type_label(td):
    """'list', 'dict', ... for built-ins; the class name for other nodes."""
    if td._kind.name in ("custom", "namedtuple"):
        return td._type.__name__
    return td._kind.name


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
