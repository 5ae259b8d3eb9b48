"""Containers in derivative code: functional item updates of lists and
dicts, items of cotangents that may be symbolic zeros (``None``), the items
a ``for`` loop iterates over, and ``lax.scan``'s steps and the per-step
lists its loops push onto (tapes)."""
import numpy as np

from .. import tree_util
from .indexing import unindex
from .values import zeros_like


def with_item(items, key, value):
    """A copy of the list or dict ``items`` with ``value`` at ``key``: how
    generated code spells ``items[key] = value`` on a container (the
    caller's container is never mutated).  Of a tuple: the tuple holding
    ``value`` there (an item changed in place through a view of it, ``a, b
    = params; a -= v``, is written back so)."""
    if isinstance(items, tuple):
        changed = list(items)
        changed[key] = value
        return type(items)(*changed) if hasattr(items, "_fields") else tuple(changed)
    out = type(items)(items)
    out[key] = value
    return out


def item_cotangent(g, key, like):
    """The cotangent of ``g`` in ``cotangent_item(g, key, like)``: ``g`` is a
    container (or a symbolic zero) and only its item ``key`` was read."""
    if g is None:
        return None
    return unindex(g, key, like)


def attr_cotangent(ct, attr, like):
    """The cotangent of the field ``attr`` of a record's cotangent ``ct``."""
    item = None if ct is None else getattr(ct, attr)
    return zeros_like(like) if item is None else item


def dense(items, like):
    """A list of cotangents with symbolic zeros (None) made real, for rules
    that hand the whole list to NumPy (np.stack of the slices' cotangents)."""
    return [zeros_like(x) if g is None else g for g, x in zip(items, like)]


def cotangent_item(g, key, like):
    """``g[key]``, or zeros like ``like`` where ``g`` holds a symbolic zero."""
    item = None if g is None else g[key]
    return zeros_like(like) if item is None else item


def iteration_item(items, k):
    """Item ``k`` of what ``for`` iterates over (a dict yields its keys)."""
    if isinstance(items, dict):
        return list(items)[k]
    return items[k]


def scan_length(xs, length=None):
    """Number of scan steps: ``length``, else the leading size of ``xs``."""
    if length is not None:
        return int(length)
    return len(tree_util.tree_leaves(xs)[0])


def scan_slice(xs, k):
    """Step ``k`` of a scan's inputs: ``x[k]`` for every leaf of ``xs``."""
    if xs is None:
        return None
    return tree_util.tree_map(lambda a: a[k], xs)


def scan_unslice(xs, k, g):
    """Cotangent of ``scan_slice``: zeros like ``xs`` with ``g`` at step ``k``.
    A leaf of ``g`` that is None (a symbolic zero: the step's item of a
    tuple only partly read) stays None, and so does one standing for a
    whole item (a list of tuples whose other items were not read)."""
    if g is None:
        return None
    g = _structured_like(g, xs)
    return tree_util.tree_map(lambda b, a: None if b is None else unindex(a, k, b), g, xs,
                              is_leaf=lambda v: v is None)


def _structured_like(g, like):
    """``g`` in the structure of a step of ``like``: the cotangent of a
    step that went through ``np.array`` (a list of pairs made one array)
    arrives as that array, whose rows are the items' cotangents."""
    if isinstance(g, np.ndarray) and isinstance(like, (list, tuple)) and \
            len(g) == len(like):
        items = [_structured_like(g[i], item) for i, item in enumerate(like)]
        return type(like)(*items) if hasattr(like, "_fields") else type(like)(items)
    return g


def appended(items, item):
    """``items + [item]`` without touching ``items`` (a scan's outputs so far)."""
    return list(items) + [item]


def stack_steps(items, reverse=False):
    """Stack per-step outputs along a new leading axis (leafwise)."""
    if reverse:
        items = items[::-1]
    if not items or all(i is None for i in items):
        return None
    return tree_util.tree_map(lambda *leaves: np.stack(leaves), *items)


def unstack_steps(g, items, reverse=False):
    """Cotangent of ``stack_steps``: the per-step slices of ``g``."""
    parts = [tree_util.tree_map(lambda a: a[k], g) for k in range(len(items))]
    return parts[::-1] if reverse else parts
