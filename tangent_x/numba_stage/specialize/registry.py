"""What the specialiser evaluates itself instead of emitting a call.

``HANDLERS``: runtime helpers that build or read cotangent *containers*
(``unindex(params, 'W', g)``, ``tree_add``, ``cotangent_item`` ...).  Given
a container or a symbolic zero they are evaluated now, on abstract values,
exactly as ``tangent_x.runtime`` evaluates them on real ones; given plain
run-time leaves they return ``NotImplemented`` and the call is emitted
(Numba then compiles the helper's overload, ``numba_runtime``).

``REWRITES``: NumPy calls whose keyword arguments Numba's NumPy lacks
(``np.sum(x, axis=(0, 2), keepdims=True)``): spelled as calls to
``numba_runtime`` helpers that take the (static) options positionally.

The entries live in ``container_calls``, ``numpy_calls`` and
``scan_calls``; this module holds the registries and what the entries
share to read their arguments.
"""
from .. import numba_runtime
from .signals import NeedUnroll
from .values import Const, Zero, as_av


HANDLERS = {}     # function -> handler(s, args, kwargs): a value, or NotImplemented
REWRITES = {}     # NumPy function -> rewrite(s, args, kwargs): likewise


def handles(*fns):
    def deco(handler):
        for fn in fns:
            HANDLERS[fn] = handler
        return handler
    return deco


def rewrites(*fns):
    def deco(handler):
        for fn in fns:
            REWRITES[fn] = handler
        return handler
    return deco


def opened(av):
    """A known container (``Const([...])``) opened into abstract values."""
    if isinstance(av, Const) and isinstance(av.value, (list, tuple, dict)):
        return as_av(av.value)
    return av


def static_index(s, index):
    """A key or position known now (else the loop producing it is unrolled)."""
    if not isinstance(index, Const):
        raise NeedUnroll("a container", s.where())
    return index.value


def is_zero(av):
    """Whether ``av`` is a zero cotangent: symbolic, or None."""
    return isinstance(av, Zero) or (isinstance(av, Const) and av.value is None)


def runtime_helper(s, name):
    """The ``numba_runtime`` helper ``name``, as a global of the compiled code."""
    return s.global_name(getattr(numba_runtime, name), name)
