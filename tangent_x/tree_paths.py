"""Key paths into a pytree, and matching a tree against a prefix of it
(``in_axes`` against the arguments, ``tree_map`` over several trees), with
JAX's messages for a mismatch.  Reads a ``PyTreeDef``'s fields; split from
``tree_util``.
"""
from .tree_nodes import (_DEFAULTDICT, _DICT, _NAMEDTUPLE, _NONE, _ORDEREDDICT,
                         _aux_equal, _is_namedtuple_type)


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
