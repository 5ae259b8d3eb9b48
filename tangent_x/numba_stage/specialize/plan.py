"""The ``Plan``: how the Python wrapper passes arguments to the compiled
function and rebuilds its result."""
from .values import Const, Dyn, Zero, av_leaves, children, is_container, rebuild


class Plan:
    """How the Python wrapper talks to the compiled function.

    ``out``: the result's structure, its compiled leaves replaced by their
    position in the returned tuple (``Dyn('#3')``); ``hidden``: constants
    passed as extra arguments (arrays read from globals or static values),
    so no array is frozen into Numba's on-disk cache.  ``bare``: the
    compiled function returns its only leaf itself, not a 1-tuple."""

    def __init__(self, out, hidden, params, bound=None):
        self.out = out
        self.hidden = hidden
        self.params = params
        self.bound = bound or {}
        leaves = av_leaves(out)
        self.has_zeros = any(isinstance(leaf, Zero) or (isinstance(leaf, Const) and
                                                        leaf.value is None)
                             for leaf in leaves)
        self.bare = sum(isinstance(leaf, Dyn) for leaf in leaves) == 1

    def unflatten(self, values):
        return _unflatten(self.out, values)


def _unflatten(av, values):
    """The result structure ``av`` with the compiled function's ``values``.
    A plain recursive function, not a closure: a closure that calls itself
    is a reference cycle, which kept every call's result arrays alive until
    Python's cycle collector ran (the heap grew by the results on every
    call, and each call page-faulted on fresh memory: ~150 us a call for
    the MLP gradient's 400 KB of results)."""
    if is_container(av):
        return rebuild(av, [_unflatten(c, values) for c in children(av)])
    if isinstance(av, Dyn):
        return values[int(av.name[1:])]
    if isinstance(av, Const):
        return av.value
    if isinstance(av, Zero):
        return None
    raise AssertionError(av)
