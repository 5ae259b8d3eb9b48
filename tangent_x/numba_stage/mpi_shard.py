"""pmap's collectives as direct MPI calls in a compiled shard (one device per rank).

Under ``jit(pmap(f))`` after ``tangent_x.distributed.initialize()``, when
each process holds one local device (``mpiexec -n N``, the common case),
a shard's ``lax.psum``, ``pmean``, ``pmax``, ``pmin``, ``all_gather``
(``axis=0``) and ``axis_index`` over pmap's axis compile to calls of the MPI
library (``mpi_calls``' bindings by symbol name), with no ``objmode``
callback into Python.  This module is the MPI ``BACKEND`` of
``shard_collectives`` (which builds the shard's stand-in ``lax`` and
decides which calls take the backend): it gives the reduction, the gather
and the device index.  Operands of a dtype other than float64/float32/int64
keep the callback of ``overloads.collectives``, which reaches the same
``MPIGroup``.

The numbers, as the threads backend gives them (device ``k`` is rank ``k``):

* ``psum``/``pmean`` with 1 or 2 processes: one ``MPI_Allreduce``; with 2,
  each element is ``x0 + x1`` (IEEE addition commutes), bitwise the
  threads' sum.  With more processes, MPI's reduction order is its own, so
  the values are gathered (``MPI_Allgather``) and added in device order,
  ``((x0 + x1) + x2) + ...``: bitwise the threads' sum again, for the cost of
  gathering ``N`` copies.  ``pmean`` divides by ``N`` in ``x``'s dtype.
* ``pmax``/``pmin``: gathered, then ``np.maximum``/``np.minimum`` in device
  order (NaN propagates, as in NumPy; MPI's MAX would not).
* ``all_gather``: ``MPI_Allgather`` (rank order is device order).

Checks: pmap checks its arguments' shapes and dtypes across the processes
before the shards start (``MPIGroup.check_arguments``, naming the
argument), so every rank compiles the same types.  An array operand's
shape can still depend on values: before the data, one small
``MPI_Allreduce`` (MAX over its dimensions and their negations, a fixed 20
int64) compares the operand's shape on every rank, and every rank raises
the same ``MismatchError`` (a ValueError naming the collective and the
axis) when they differ.  A scalar operand needs no check (its type is the
same on every rank).

Every call is the non-blocking form (``MPI_Iallreduce``, ``MPI_Iallgather``)
waited for by ``mpi_calls``' ``_wait`` (polled, then between short sleeps:
see ``distributed.wait``), so a rank waiting for a late one leaves its core.

The process's communicator, size and rank are read at run time from a
small array the compiled code addresses by symbol name
(``tangent_x_pmap_mpi_state``, registered with llvmlite), so Numba's disk
cache serves later processes; ``activate(comm)`` fills it before a call.
"""
import numba
import numpy as np
from numba import types
from numba.extending import overload

from ..parallel.mpi import MismatchError
from . import mpi_calls, shard_collectives
from .mpi_calls import DATATYPES, SUM, gather_into, reduce_into

# communicator handle, process count, this process's rank
_STATE = np.zeros(4, np.int64)
_state = mpi_calls.global_array("tangent_x_pmap_mpi_state", _STATE)
_PROBE = 2 * (2 + shard_collectives.MAX_DIMS)


def activate(comm):
    """Point compiled shards at ``comm`` (an mpi4py communicator)."""
    _STATE[0] = mpi_calls.handle_of(comm)
    _STATE[1] = comm.Get_size()
    _STATE[2] = comm.Get_rank()


def _datatype(x):
    """The MPI datatype code of ``x``'s Numba type, or None (keep the callback)."""
    if isinstance(x, types.Array):
        return DATATYPES.get(str(x.dtype))
    if isinstance(x, (types.Float, types.Integer)) and not isinstance(x, types.Boolean):
        return DATATYPES.get(str(x))
    return None


def _shapes_agree(shape, code, comm):
    pass


@overload(_shapes_agree)
def _shapes_agree_compiled(shape, code, comm):
    """Whether ``shape`` (and the datatype ``code``) is the same on every rank."""
    ndim = len(shape)

    def impl(shape, code, comm):
        probe = np.zeros(_PROBE, np.int64)
        probe[0], probe[1], probe[2], probe[3] = ndim, -ndim, code, -code
        for i in range(ndim):
            probe[4 + 2 * i] = shape[i]
            probe[5 + 2 * i] = -shape[i]
        seen = np.empty(_PROBE, np.int64)
        reduce_into(probe, seen, _PROBE, mpi_calls.INT64, mpi_calls.MAX, comm)
        for i in range(0, _PROBE, 2):
            if seen[i] != -seen[i + 1]:
                return False
        return True
    return impl


def _gathered(send, datatype, comm, processes):
    pass


@overload(_gathered)
def _gathered_compiled(send, datatype, comm, processes):
    def impl(send, datatype, comm, processes):
        out = np.empty((processes,) + send.shape, send.dtype)
        gather_into(send, out, send.size, datatype, comm)
        return out
    return impl


def _total(send, datatype, comm, processes, op):
    pass


@overload(_total)
def _total_compiled(send, datatype, comm, processes, op):
    """The device-order reduction of ``send`` (a contiguous 1-d or more
    array) over the processes; ``op``: 0 sum, 1 max, 2 min."""
    def impl(send, datatype, comm, processes, op):
        if op == 0 and processes <= 2:
            out = np.empty(send.shape, send.dtype)
            reduce_into(send, out, send.size, datatype, SUM, comm)
            return out
        parts = _gathered(send, datatype, comm, processes)
        out = parts[0].copy()
        for k in range(1, processes):
            if op == 0:
                out += parts[k]
            elif op == 1:
                np.maximum(out, parts[k], out)
            else:
                np.minimum(out, parts[k], out)
        return out
    return impl


# --- the backend of shard_collectives ---------------------------------------------

def _reduce(send, code, op, check):
    pass


@overload(_reduce)
def _reduce_compiled(send, code, op, check):
    def impl(send, code, op, check):
        comm, processes = _state(0), _state(1)
        if check and not _shapes_agree(send.shape, code, comm):
            return send, processes, False
        return _total(send, code, comm, processes, op), processes, True
    return impl


def _gather(send, code, check):
    pass


@overload(_gather)
def _gather_compiled(send, code, check):
    def impl(send, code, check):
        comm, processes = _state(0), _state(1)
        if check and not _shapes_agree(send.shape, code, comm):
            return np.empty((0,) + send.shape, send.dtype), False
        return _gathered(send, code, comm, processes), True
    return impl


@numba.njit(cache=True)
def _index():
    return _state(2)


def _mismatch(what, axis):
    return (f"lax.{what} over axis {axis!r}: its operand's shape differs across processes "
            "(every rank raises this); every device must pass an operand of the same shape")


BACKEND = shard_collectives.Backend(
    "mpi", "MPI collectives", _datatype, _reduce, _gather, _index, MismatchError, _mismatch)


def namespace(axis):
    """A stand-in for ``tangent_x.lax`` in a shard mapped over ``axis``: its
    collectives over ``axis`` compile to MPI calls; every other name is
    ``lax``'s own."""
    return shard_collectives.namespace(BACKEND, axis)


def rebinding(axis):
    """The ``rebind`` of a shard mapped over ``axis`` (a string)."""
    return shard_collectives.Rebinding(BACKEND, axis)
