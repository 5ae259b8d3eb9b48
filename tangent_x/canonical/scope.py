"""The values and scopes the canonicaliser works with, below every mixin:
what a name can mean when transforming (an atom of the IR, or a
``Static`` Python object), a nested function bound to a name, and one
function activation's ``Scope`` of user names."""
import numpy as np

from .names import assigned_names

# Recursion is unrolled when transforming, at most this many calls deep.
MAX_RECURSION = 100


class Static:
    """A value fixed when the code is transformed: module, function, class."""

    def __init__(self, obj):
        self.obj = obj


class LocalFunction:
    """A nested ``def`` or a lambda bound to a name inside the function."""

    def __init__(self, node, scope):
        self.node = node
        self.scope = scope


class Scope:
    """The user names of one function activation (the transformed function,
    an inlined call or a comprehension), chained to the scope it is nested in."""

    def __init__(self, parsed, node, parent=None):
        self.parsed = parsed
        self.node = node
        self.parent = parent
        self.locals = {}
        self.assigned = assigned_names(node)
        self.finished = False     # an inlined call that has returned
        self.caller = None        # an inlined call: the scope calling it, and the
        self.caller_live = None   # names read there after (or beside) the call
        self.inlined = None       # an inlined function: its key (recursion is counted)


class CarryMore(Exception):
    """Names a loop's body changed that its carry left out (``loop_body``):
    the loop is converted again carrying them too."""

    def __init__(self, names):
        super().__init__(names)
        self.names = names


class NotStatic(Exception):
    """An expression whose Python value is not known when transforming."""


def is_plain_constant(obj):
    return type(obj) in (int, float, bool, str, complex, type(None))


def numpy_spelling(obj):
    """'np.float32' for objects that live in numpy's namespace, else None."""
    name = getattr(obj, "__name__", None)
    if name and getattr(np, name, None) is obj:
        return f"np.{name}"
    return None
