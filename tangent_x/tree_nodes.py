"""Pytree node kinds: which values are containers, and how each is taken
apart and rebuilt (JAX's rules; see :mod:`tangent_x.tree_util`).

Split from ``tree_util`` so that the registry, the structure
(:class:`~tangent_x.tree_util.PyTreeDef`) and key paths each have a module;
``tree_util`` re-exports the public names.
"""
import collections
import operator

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
