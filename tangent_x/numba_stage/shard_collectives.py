"""The stand-in ``lax`` of a compiled pmap shard, over any collectives backend.

Under ``jit(pmap(f))`` the shard's module is loaded with its ``lax``
replaced by ``namespace(backend, axis_name)`` (``loading.load``'s
``rebind``, through ``Rebinding``): its ``psum``, ``pmean``, ``pmax``,
``pmin``, ``all_gather`` (``axis=0``) and ``axis_index`` over pmap's axis
compile to the backend's primitives, with no callback into Python; so do
``psum_scatter`` (``scatter_dimension=0``: the sum, then this device's
entry or block) and ``ppermute`` (a gather, then the source's part; the
pairs must be constants).  Every other case (another axis, an operand type
the backend does not take, ``axis_index_groups``, ``all_gather`` or
``psum_scatter`` on another dimension, integer ``pmean``, a ``perm`` Numba
does not see as constant) keeps the ``objmode`` callback of
``overloads.collectives`` (every other name is ``lax``'s own).

A backend (``thread_shard.BACKEND``: threads meeting in shared memory;
``mpi_shard.BACKEND``: one MPI rank per device; a CUDA one would be a
third) is a ``Backend`` giving:

* ``code(numba_type)``: a number naming the operand's element type, or
  None where the backend does not take it (the callback then);
* ``reduce(send, code, op, check)``, compiled: ``(out, size, ok)``, the
  reduction of the C-contiguous ``send`` over the devices in device order
  (``op``: 0 sum, 1 max, 2 min; ``((x0 + x1) + x2) + ...`` as the threads
  and a loop give it), the device count, and False (``out`` then
  meaningless) when the operands' shapes or dtypes differ, known alike on
  every device.  ``check`` False: the operand is a scalar, alike on every
  device by its type (a backend may skip its shape check);
* ``gather(send, code, check)``, compiled: ``(parts, ok)``, every
  device's ``send`` stacked in device order;
* ``index()``, compiled: this device's index;
* ``error`` and ``message(op, axis)``: the exception every device raises
  when ``ok`` is False, and its text.

This module builds, once per backend and axis, the collectives' typing
(which calls take the backend, which the callback) and their compiled
bodies from those primitives: ``pmean`` divides the sum by the device
count in the operand's dtype, a scalar travels as a 1-element array,
``all_gather(..., tiled=True)`` reshapes the stack.
"""
import hashlib
import types as pytypes
from typing import Callable, NamedTuple

import numpy as np
from numba import types
from numba.extending import overload

from .. import lax
from .overloads import collectives as callback

MAX_DIMS = 8            # operands of more dimensions keep the callback
OPS = {"psum": 0, "pmean": 0, "pmax": 1, "pmin": 2}


class Backend(NamedTuple):
    """What one kind of device gives the compiled collectives (see the
    module docstring); ``tag`` names it in the shard's module file."""
    tag: str
    description: str
    code: Callable
    reduce: Callable
    gather: Callable
    index: Callable
    error: type
    message: Callable


def literal_axis(axis_name):
    """The axis name a call passes, if Numba sees it as a literal string."""
    return axis_name.literal_value if isinstance(axis_name, types.StringLiteral) else None


def no_groups(axis_index_groups):
    return isinstance(axis_index_groups, (types.NoneType, types.Omitted, type(None)))


def operand_dims_ok(x):
    """Whether an operand's rank suits the compiled collectives (a scalar,
    or an array of 1 to ``MAX_DIMS`` dimensions)."""
    return not isinstance(x, types.Array) or 0 < x.ndim <= MAX_DIMS


def _reduction(backend, op, mapped):
    original = getattr(lax, op)
    fallback = callback._reduction(op)
    which = OPS[op]
    mean = op == "pmean"
    reduce, error = backend.reduce, backend.error
    message = backend.message(op, mapped)

    def collective(x, axis_name, axis_index_groups=None):
        return original(x, axis_name, axis_index_groups=axis_index_groups)
    collective.__name__ = collective.__qualname__ = op

    def typer(x, axis_name, axis_index_groups=None):
        x = types.unliteral(x)
        dtype = getattr(x, "dtype", x)
        code = backend.code(x) if operand_dims_ok(x) else None
        if literal_axis(axis_name) != mapped or code is None or not no_groups(axis_index_groups) \
                or (mean and not isinstance(dtype, types.Float)):
            return fallback(x, axis_name, axis_index_groups)
        cast = np.float32 if dtype == types.float32 else np.float64
        if isinstance(x, types.Array):
            def impl(x, axis_name, axis_index_groups=None):
                out, size, ok = reduce(np.ascontiguousarray(x), code, which, True)
                if not ok:
                    raise error(message)
                if mean:
                    out /= cast(size)       # out is the collective's own array
                return out
            return impl

        def impl_scalar(x, axis_name, axis_index_groups=None):
            out, size, ok = reduce(np.full(1, x), code, which, False)
            if not ok:
                raise error(message)
            if mean:
                return out[0] / cast(size)
            return out[0]
        return impl_scalar
    overload(collective, prefer_literal=True)(typer)
    return collective


def _all_gather(backend, mapped):
    original = lax.all_gather
    gather, error = backend.gather, backend.error
    message = backend.message("all_gather", mapped)

    def all_gather(x, axis_name, axis_index_groups=None, axis=0, tiled=False):
        return original(x, axis_name, axis_index_groups=axis_index_groups, axis=axis, tiled=tiled)

    def typer(x, axis_name, axis_index_groups=None, axis=0, tiled=False):
        x = types.unliteral(x)
        code = backend.code(x) if operand_dims_ok(x) else None
        where = callback._literal(axis, 0, "axis")
        is_tiled = callback._literal(tiled, False, "tiled")
        scalar = not isinstance(x, types.Array)
        if literal_axis(axis_name) != mapped or code is None or where != 0 or \
                (is_tiled and scalar) or not no_groups(axis_index_groups):
            return callback._all_gather(x, axis_name, axis_index_groups, axis, tiled)
        if scalar:
            def impl_scalar(x, axis_name, axis_index_groups=None, axis=0, tiled=False):
                parts, ok = gather(np.full(1, x), code, False)
                if not ok:
                    raise error(message)
                return parts.reshape(parts.shape[0])
            return impl_scalar

        def impl(x, axis_name, axis_index_groups=None, axis=0, tiled=False):
            send = np.ascontiguousarray(x)
            parts, ok = gather(send, code, True)
            if not ok:
                raise error(message)
            if is_tiled:
                return parts.reshape((parts.shape[0] * send.shape[0],) + send.shape[1:])
            return parts
        return impl
    overload(all_gather, prefer_literal=True)(typer)
    return all_gather


def _axis_index(backend, mapped):
    original = lax.axis_index
    index = backend.index

    def axis_index(axis_name):
        return original(axis_name)

    def typer(axis_name):
        if literal_axis(axis_name) != mapped:
            return callback._axis_index(axis_name)

        def impl(axis_name):
            return index()
        return impl
    overload(axis_index, prefer_literal=True)(typer)
    return axis_index


def _psum_scatter(backend, mapped):
    original = lax.psum_scatter
    reduce, index, error = backend.reduce, backend.index, backend.error
    message = backend.message("psum_scatter", mapped)

    def psum_scatter(x, axis_name, scatter_dimension=0, axis_index_groups=None, tiled=False):
        return original(x, axis_name, scatter_dimension=scatter_dimension,
                        axis_index_groups=axis_index_groups, tiled=tiled)

    def typer(x, axis_name, scatter_dimension=0, axis_index_groups=None, tiled=False):
        x = types.unliteral(x)
        code = backend.code(x) if isinstance(x, types.Array) and operand_dims_ok(x) else None
        dim = callback._literal(scatter_dimension, 0, "scatter_dimension")
        is_tiled = callback._literal(tiled, False, "tiled")
        if literal_axis(axis_name) != mapped or code is None or not no_groups(axis_index_groups) \
                or dim % max(getattr(x, "ndim", 1), 1) != 0:
            return callback._psum_scatter(x, axis_name, scatter_dimension, axis_index_groups, tiled)
        if is_tiled:
            def impl_tiled(x, axis_name, scatter_dimension=0, axis_index_groups=None, tiled=False):
                total, size, ok = reduce(np.ascontiguousarray(x), code, 0, True)
                if not ok:
                    raise error(message)
                if total.shape[0] % size:
                    raise ValueError("psum_scatter(..., tiled=True): dimension 0 does not split "
                                     "into the axis size's equal blocks")
                block = total.shape[0] // size
                k = index()
                return total[k * block:(k + 1) * block].copy()
            return impl_tiled

        def impl(x, axis_name, scatter_dimension=0, axis_index_groups=None, tiled=False):
            total, size, ok = reduce(np.ascontiguousarray(x), code, 0, True)
            if not ok:
                raise error(message)
            if total.shape[0] != size:
                raise ValueError("psum_scatter: the scattered dimension 0 must have the axis "
                                 "size as its length (or pass tiled=True)")
            return _entry(total, index())
        return impl
    overload(psum_scatter, prefer_literal=True)(typer)
    return psum_scatter


def _entry(total, k):
    pass


@overload(_entry)
def _entry_compiled(total, k):
    """``total[k]``: a copy of the sub-array, or the scalar of a 1-d ``total``."""
    if total.ndim == 1:
        return lambda total, k: total[k]
    return lambda total, k: total[k].copy()


def _pair_list(perm):
    """How ``perm`` reaches compiled code: "runtime" for a list or tuple of
    integer pairs read at run time, a tuple of Python pairs when Numba sees
    them as literals, else None (keep the callback)."""
    pair = types.UniTuple(types.int64, 2)
    if isinstance(perm, (types.List, types.UniTuple)) and \
            isinstance(perm.dtype, types.UniTuple) and perm.dtype.count == 2 and \
            isinstance(perm.dtype.dtype, types.Integer) and types.unliteral(perm.dtype) == pair:
        return "runtime"
    if not isinstance(perm, types.BaseTuple) or len(perm) == 0:
        return None
    pairs = []
    for item in perm:
        if not isinstance(item, types.BaseTuple) or len(item) != 2 or \
                not all(isinstance(v, types.IntegerLiteral) for v in item):
            return None
        pairs.append(tuple(int(v.literal_value) for v in item))
    return tuple(pairs)


def _ppermute(backend, mapped, inverse):
    original = lax.collectives.ppermute_inverse if inverse else lax.ppermute
    gather, index, error = backend.gather, backend.index, backend.error
    what = "ppermute_inverse" if inverse else "ppermute"
    message = backend.message(what, mapped)

    def ppermute(x, axis_name, perm):
        return original(x, axis_name, perm)
    ppermute.__name__ = ppermute.__qualname__ = what

    def typer(x, axis_name, perm):
        x = types.unliteral(x)
        code = backend.code(x) if operand_dims_ok(x) else None
        pairs = _pair_list(perm)
        if literal_axis(axis_name) != mapped or code is None or pairs is None:
            return callback._permute(inverse)(x, axis_name, perm)
        constant = pairs if pairs != "runtime" else None

        if not isinstance(x, types.Array):
            def impl_scalar(x, axis_name, perm):
                parts, ok = gather(np.full(1, x), code, False)
                return _received(parts, perm if constant is None else constant, index(),
                                 inverse)[0]
            return impl_scalar

        def impl(x, axis_name, perm):
            parts, ok = gather(np.ascontiguousarray(x), code, True)
            if not ok:
                raise error(message)
            return _received(parts, perm if constant is None else constant, index(), inverse)
        return impl
    overload(ppermute, prefer_literal=True)(typer)
    return ppermute


def _received(parts, perm, me, inverse):
    pass


@overload(_received)
def _received_compiled(parts, perm, me, inverse):
    """What device ``me`` receives along ``perm`` (its (source, destination)
    pairs; ``inverse``: each the other way): the source's part, zeros
    where ``me`` is no destination.  A repeated source or destination, or
    a device beyond the axis, raises (alike on every device)."""
    def impl(parts, perm, me, inverse):
        size = parts.shape[0]
        sources = np.zeros(size, np.bool_)
        targets = np.zeros(size, np.bool_)
        src = -1
        for pair in perm:
            s, d = (pair[1], pair[0]) if inverse else (pair[0], pair[1])
            if not (0 <= s < size and 0 <= d < size):
                raise ValueError("ppermute: a device index in perm is outside the axis")
            if sources[s] or targets[d]:
                raise ValueError("ppermute perm has a repeated source or destination")
            sources[s] = True
            targets[d] = True
            if d == me:
                src = s
        if src < 0:
            return np.zeros_like(parts[0])
        return parts[src].copy()
    return impl

_NAMESPACES = {}


def namespace(backend, axis):
    """A stand-in for ``tangent_x.lax`` in a shard mapped over ``axis``: its
    collectives over ``axis`` compile to ``backend``'s primitives; every
    other name is ``lax``'s own."""
    key = (backend.tag, axis)
    ns = _NAMESPACES.get(key)
    if ns is None:
        ns = pytypes.ModuleType(f"tangent_x.lax ({backend.description} over {axis!r})")
        for op in OPS:
            setattr(ns, op, _reduction(backend, op, axis))
        ns.all_gather = _all_gather(backend, axis)
        ns.axis_index = _axis_index(backend, axis)
        ns.psum_scatter = _psum_scatter(backend, axis)
        ns.ppermute = _ppermute(backend, axis, False)
        ns.ppermute_inverse = _ppermute(backend, axis, True)
        ns.__getattr__ = lambda name: getattr(lax, name)
        _NAMESPACES[key] = ns
    return ns


class Rebinding:
    """``loading.load``'s ``rebind`` for a shard mapped over ``axis`` (a
    string) with ``backend``'s collectives."""

    def __init__(self, backend, axis):
        self.tag = backend.tag + "_" + hashlib.sha256(repr(axis).encode()).hexdigest()[:10]
        self.names = {"lax": namespace(backend, axis)}
