"""The contents of the containers a numba stage was built from.

The specialiser folds what it reads from a global or closure ``dict`` or
``list`` into the compiled code (``cfg['scale']`` becomes ``2.0``, ``if
cfg['relu']`` keeps one branch).  Eager code reads the container at run
time, so a change made in place between calls (``cfg['scale'] = 5.0``) is
seen there, and ``canonical.deps_current`` (which compares objects, not
contents) does not see it.  ``Contents`` keeps a copy of what those
containers held when the code was compiled; ``held()`` tells whether they
still hold it, and a jitted function whose contents changed compiles
again (see ``Jitted.__call__``), so jit and eager agree.

Numbers and strings are compared by value; anything else (an array, a
function, an object) by identity: arrays are never folded into the code
(``Specializer.outside_array`` passes them to every call), so a write into
one needs no new code.
"""
import numbers

__all__ = ["Contents"]

_CONTAINERS = (list, tuple, dict, set, frozenset)
_BY_VALUE = (numbers.Number, str, bytes, type(None))


def _mutable(value, depth=0):
    """Whether ``value`` is or holds a container that can change in place."""
    if isinstance(value, (list, dict, set)):
        return True
    if isinstance(value, (tuple, frozenset)) and depth < 100:
        return any(_mutable(v, depth + 1) for v in value)
    return False


def _copy(value):
    """A copy of ``value``'s contents, as ``_same`` compares them."""
    if isinstance(value, dict):
        return type(value), [(k, _copy(v)) for k, v in value.items()]
    if isinstance(value, (list, tuple)):
        return type(value), [_copy(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return type(value), frozenset(value)
    return value


def _same(value, copy):
    """Whether ``value`` still holds what ``copy`` (from ``_copy``) recorded."""
    if isinstance(value, _CONTAINERS):
        if type(copy) is not tuple or len(copy) != 2 or type(value) is not copy[0]:
            return False
        kind, items = copy
        if isinstance(value, (set, frozenset)):
            return value == items
        if len(value) != len(items):
            return False
        if isinstance(value, dict):
            return all(k == k0 and _same(v, c)
                       for (k, v), (k0, c) in zip(value.items(), items))
        return all(_same(v, c) for v, c in zip(value, items))
    if value is copy:
        return True
    if isinstance(value, _BY_VALUE):
        if type(value) is not type(copy):
            return False
        try:
            return bool(value == copy) or (value != value and copy != copy)   # NaN
        except Exception:
            return False
    return False


class Contents:
    """What the mutable containers among ``values`` hold now."""

    def __init__(self, values):
        self.items = [(v, _copy(v)) for v in values if _mutable(v)]

    def __bool__(self):
        return bool(self.items)

    def held(self):
        """Whether every container still holds what it held when recorded."""
        for value, copy in self.items:
            if not _same(value, copy):
                return False
        return True
