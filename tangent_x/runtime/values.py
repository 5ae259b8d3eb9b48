"""The values derivative code passes around besides arrays: a placeholder
for a variable the path taken never assigned (``Unbound``), zeros shaped
like a pytree, and leafwise sums of cotangents where ``None`` is a symbolic
zero; plus the identities and questions about a value that generated code
asks at run time (``stop_gradient``, ``inplace_result``, ``is_array``...).
"""
import numbers

import numpy as np

from .. import tree_util


class Unbound:
    """The value of a variable that the path taken never assigned.

    Python would raise UnboundLocalError where the variable is used; any use
    of this placeholder raises that error, naming the variable."""

    __array_priority__ = 1e6

    def __init__(self, name):
        object.__setattr__(self, "_name", name)

    def _fail(self, *args, **kwargs):
        raise UnboundLocalError(f"local variable '{self._name}' is used but was not "
                                "assigned on the path the code took")

    __array_ufunc__ = __array_function__ = _fail
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _fail
    __truediv__ = __rtruediv__ = __pow__ = __rpow__ = __matmul__ = __rmatmul__ = _fail
    __neg__ = __getitem__ = __bool__ = __float__ = __array__ = __len__ = __iter__ = _fail
    __lt__ = __le__ = __gt__ = __ge__ = _fail

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        self._fail()

    def __repr__(self):
        return f"<unbound {self._name}>"


def unbound(name):
    """Placeholder for a variable not assigned on the path taken."""
    return Unbound(name)


def zeros_like(x):
    """Zeros with the structure of ``x`` (a pytree of arrays and numbers)."""
    if x is None or tree_util._node_kind(x) is not None:
        return tree_util.tree_map(_leaf_zeros, x)
    return _leaf_zeros(x)


def _leaf_zeros(x):
    if isinstance(x, (np.ndarray, np.generic)):
        if not np.issubdtype(x.dtype, np.inexact):
            # an integer's cotangent is a float zero, which float cotangents
            # are added into (fuzz seed 481989)
            return np.zeros_like(x, dtype=np.float64)
        return np.zeros_like(x)
    if isinstance(x, numbers.Number):
        return 0.0 * x
    if isinstance(x, str):
        return None     # a dict key (``for key in d``): no cotangent, a symbolic zero
    return 0.0          # e.g. an Unbound placeholder: its cotangent is never read


def tree_add(a, b):
    """Leafwise ``a + b`` for cotangents of containers; ``None`` is zero."""
    if a is None:
        return b
    if b is None:
        return a
    if isinstance(a, dict):
        return {k: tree_add(a.get(k), b.get(k)) for k in a}
    if isinstance(a, (list, tuple)):
        items = [tree_add(u, v) for u, v in zip(a, b)]
        if hasattr(a, "_fields"):
            return type(a)(*items)
        return type(a)(items)
    return a + b


def stop_gradient(x):
    """Identity on values; derivative zero."""
    return x


def shaped(shape):
    """A stand-in for a value only the shape of which is read (``x`` in
    ``unbroadcast(g, x)`` in a backward loop, where the loop taped
    ``np.shape(x)`` instead of recomputing ``x``): zeros of that shape as a
    read-only broadcast view, no memory per element; ``0.0`` for ``()``,
    so that a scalar stays a scalar."""
    if len(shape) == 0:
        return 0.0
    return np.broadcast_to(0.0, shape)


def inplace_result(new, old):
    """What ``old op= v`` leaves in ``old`` given ``new = old op v``: NumPy
    writes an array's result into that array, in its dtype (a float32 array
    += a float64 array stays float32), and a 0-d array stays an array (its
    ``old op v`` is a NumPy scalar, which a later ``op=`` would rebind, in
    the dtype NumPy gives a scalar: fuzz seed 410792); a number is rebound
    to ``new``."""
    if isinstance(old, np.ndarray) and not getattr(old, "weak_numbers", False):
        # (vmap's ``WeakLanes`` hold a Python number per lane: rebound)
        new = np.asarray(new)
        if new.dtype != old.dtype:
            return new.astype(old.dtype, casting="same_kind")
    return new


def is_array(x):
    """Whether ``x op= v`` changes ``x`` in place (an ``ndarray``, 0-d ones
    included) rather than rebinding it (a Python or NumPy number): which
    one decides whether the other names holding ``x`` see the change."""
    return isinstance(x, np.ndarray)


def with_real(base, real):
    """``base`` after a write into its view ``np.real(base)`` (``base.real``)
    made that view ``real``: for a real array ``np.real`` is the array
    itself, so ``real`` is the result; for a complex one, ``real`` becomes
    its real part and the imaginary part stays."""
    if np.iscomplexobj(base):
        return (real + 1j * np.imag(base)).astype(np.result_type(base), copy=False)
    return real


def is_view_of(view, base):
    """Whether ``view`` (``base.reshape(...)``, ``np.ravel(base)``) shares
    ``base``'s memory: NumPy copies instead where the layout does not allow
    a view, and then a write into one is not seen through the other."""
    return isinstance(view, np.ndarray) and isinstance(base, np.ndarray) and \
        np.may_share_memory(view, base)
