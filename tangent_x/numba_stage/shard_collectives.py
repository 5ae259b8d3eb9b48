"""The stand-in ``lax`` of a compiled pmap shard, over any collectives backend.

Under ``jit(pmap(f))`` the shard's module is loaded with its ``lax``
replaced by ``namespace(backend, axis_name)`` (``loading.load``'s
``rebind``, through ``Rebinding``): its ``psum``, ``pmean``, ``pmax``,
``pmin``, ``all_gather`` (``axis=0``) and ``axis_index`` over pmap's axis
compile to the backend's primitives, with no callback into Python.  Every
other case (another axis, an operand type the backend does not take,
``axis_index_groups``, ``all_gather`` on another axis, integer ``pmean``)
keeps the ``objmode`` callback of ``overloads.collectives``; so do
``psum_scatter`` and ``ppermute`` (every other name is ``lax``'s own).

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

import numpy as np
from numba import types
from numba.extending import overload

from .. import lax
from .overloads import collectives as callback

MAX_DIMS = 8            # operands of more dimensions keep the callback
OPS = {"psum": 0, "pmean": 0, "pmax": 1, "pmin": 2}


class Backend:
    """What one kind of device gives the compiled collectives (see the
    module docstring); ``tag`` names it in the shard's module file."""

    def __init__(self, tag, description, code, reduce, gather, index, error, message):
        self.tag = tag
        self.description = description
        self.code = code
        self.reduce = reduce
        self.gather = gather
        self.index = index
        self.error = error
        self.message = message


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
        ns.__getattr__ = lambda name: getattr(lax, name)
        _NAMESPACES[key] = ns
    return ns


class Rebinding:
    """``loading.load``'s ``rebind`` for a shard mapped over ``axis`` (a
    string) with ``backend``'s collectives."""

    def __init__(self, backend, axis):
        self.tag = backend.tag + "_" + hashlib.sha256(repr(axis).encode()).hexdigest()[:10]
        self.names = {"lax": namespace(backend, axis)}
