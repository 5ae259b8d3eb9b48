"""Abstract types of pytree leaves (shape, dtype, weakness) and the errors
that say where two values' types or structures differ.

Type policy (what counts as "the same type")
-------------------------------------------
Two leaves match when their shapes are equal and their dtypes are equal.
Python ``int``/``float``/``complex`` scalars are *weak*, as in JAX: a weak
leaf matches any leaf of the same category (integer, floating, complex), so
``cond(p, lambda: 1.0, lambda: np.float32(2))`` is accepted, while ``1`` vs
``1.0`` is not (JAX rejects that too).  A Python ``bool`` is strong ``bool``
(as in JAX).  For loop carries a weak *initial* value may also be promoted,
as JAX promotes it before tracing: ``fori_loop(0, 3, lambda i, x: x + 0.5,
0)`` is accepted (int -> float), but a strong ``int32`` carry that comes
back as ``float32`` is a ``TypeError``.  NumPy arrays and NumPy scalars are
always strong, so ``float32`` vs ``float64`` is a mismatch, like JAX with
64-bit mode on.  Values are returned as NumPy computed them: no weak-type
promotion is applied to results (a Python ``float`` carry stays a ``float``).
"""
import numpy as np

from ..tree_paths import _child_keys, _dict_keys, _leaf_paths


_WEAK_DTYPES = {int: np.dtype(np.int_), float: np.dtype(np.float64),
                complex: np.dtype(np.complex128)}
BOOL = np.dtype(bool)
# Category order used for promoting a weak loop carry: int -> float -> complex.
_CATEGORY = {"i": 0, "u": 0, "f": 1, "c": 2}


class _Aval:
    """Shape, dtype and weakness of one leaf: all that typing needs."""

    __slots__ = ("shape", "dtype", "weak")

    def __init__(self, shape, dtype, weak):
        self.shape, self.dtype, self.weak = shape, dtype, weak

    def __str__(self):
        text = f"{self.dtype}[{','.join(map(str, self.shape))}]"
        if self.weak:
            text += f" (a Python {_python_name(self.dtype)})"
        return text


def _python_name(dtype):
    return {"i": "int", "u": "int", "f": "float", "c": "complex"}[dtype.kind]


def aval(leaf):
    t = type(leaf)
    if t is bool:
        return _Aval((), BOOL, False)
    weak = _WEAK_DTYPES.get(t)
    if weak is not None:
        return _Aval((), weak, True)
    if isinstance(leaf, (np.ndarray, np.generic)):
        return _Aval(leaf.shape, leaf.dtype, False)
    arr = np.asarray(leaf)
    return _Aval(arr.shape, arr.dtype, False)


def fast_signature(leaves):
    """Cheap exact type signature: equal signatures imply equal avals.

    Loops compare each iteration's signature with the previous one and only
    do the full (slower) compatibility check when it changes.
    """
    return tuple((type(l), getattr(l, "shape", None), getattr(l, "dtype", None))
                 for l in leaves)


def type_mismatch(a, b):
    """Why avals ``a`` and ``b`` differ ("shapes"/"dtypes"), or None."""
    if a.shape != b.shape:
        return "shapes"
    if a.dtype == b.dtype:
        return None
    if (a.weak or b.weak) and a.dtype.kind in _CATEGORY and (
            _CATEGORY[a.dtype.kind] == _CATEGORY.get(b.dtype.kind)):
        return None
    return "dtypes"


def carry_mismatch(inp, out):
    """Like type_mismatch, but a weak input carry may be promoted upward."""
    why = type_mismatch(inp, out)
    if why == "dtypes" and inp.weak and out.dtype.kind in _CATEGORY and (
            _CATEGORY[out.dtype.kind] >= _CATEGORY[inp.dtype.kind]):
        return None
    return why


def _describe_node(td):
    if td.is_leaf():
        return "a leaf"
    nodetype, _ = td.node_data()
    n = len(td.children())
    if nodetype is type(None):
        return "None"
    if issubclass(nodetype, tuple) and hasattr(nodetype, "_fields"):
        return f"a NamedTuple {nodetype.__name__}"
    if nodetype in (tuple, list):
        return f"a {nodetype.__name__} of length {n}"
    keys = _dict_keys(td)
    if keys is not None:
        return f"a {nodetype.__name__} with keys {keys}"
    return f"a {nodetype.__name__}"


def _structure_difference(a, b, path=""):
    """First place where treedefs ``a`` and ``b`` differ.

    Returns ``(path, why, subtree of a, subtree of b)``, or None if equal.
    """
    if a == b:
        return None
    if a.is_leaf() or b.is_leaf():
        return path, "one is a leaf and the other is not", a, b
    if a.node_data()[0] is not b.node_data()[0]:
        return path, "their Python types differ", a, b
    ca, cb = a.children(), b.children()
    if len(ca) != len(cb):
        return path, "the lengths do not match", a, b
    ka, kb = _child_keys(a), _child_keys(b)
    if ka != kb:
        return path, "the keys do not match", a, b
    for key, x, y in zip(ka, ca, cb):
        found = _structure_difference(x, y, path + key)
        if found is not None:
            return found
    return path, "their node metadata differs", a, b


def structure_error(intro, name_a, def_a, name_b, def_b, fix):
    path, why, sub_a, sub_b = _structure_difference(def_a, def_b)
    where = f" at {path}" if path else ""
    return TypeError(
        f"{intro}, but {name_a}{where} is {_describe_node(sub_a)} while "
        f"{name_b}{where} is {_describe_node(sub_b)}, so {why}.\n"
        f"  {name_a}: {def_a}\n  {name_b}: {def_b}\n{fix}")


def first_mismatch(treedef, avals_a, avals_b, mismatch):
    """The first pair of leaves (of structure ``treedef``) whose avals
    differ by ``mismatch`` (``type_mismatch`` or ``carry_mismatch``), as
    ``(path, a, b, why)``; None when all agree."""
    for i, (a, b) in enumerate(zip(avals_a, avals_b)):
        why = mismatch(a, b)
        if why is not None:
            return leaf_path(treedef, i), a, b, why
    return None


def leaf_path(treedef, i):
    paths = _leaf_paths(treedef)
    return paths[i] if len(paths) == treedef.num_leaves else f"<leaf {i}>"
