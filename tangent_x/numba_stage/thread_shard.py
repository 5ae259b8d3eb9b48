"""pmap's collectives compiled for worker threads: no GIL, no callback.

Under ``jit(pmap(f))`` with the threads backend, a shard's ``lax.psum``,
``pmean``, ``pmax``, ``pmin``, ``all_gather`` (``axis=0``) and
``axis_index`` over pmap's axis compile to a rendezvous in shared memory.
This module is the threads ``BACKEND`` of ``shard_collectives`` (which
builds the shard's stand-in ``lax`` and decides which calls take the
backend, the others keeping the callback of ``overloads.collectives``,
the Python ``ThreadGroup``): it gives the reduction, the gather and the
device index, and ``Session``, the state of one pmap call.

The rendezvous: one process-wide state array (int64, addressed by symbol
name ``tangent_x_pmap_thread_state``, so Numba's disk cache serves later
processes) holds a barrier (an arrival counter and a generation, changed
by atomic instructions), a stop word, each worker's thread identity (its
device index is found by ``pthread_self``) and one record per device: the
address, dtype, rank and shape of its operand.  A collective publishes its
record, waits at the barrier, checks that every record has its shape and
dtype, reads every device's operand in place and reduces them *in device
order* (``((x0 + x1) + x2) + ...``, as ``ThreadGroup`` and a loop do, so
the result is bitwise theirs), then waits again before the operands may
change.  A waiting worker spins briefly, then yields its core, then
sleeps 50 us at a time (pmap's caller blocks meanwhile: it never spins).

Faults: a worker that fails or returns sets the stop word (``Session``);
a worker waiting at (or reaching) a barrier then raises ``Stopped``, which
pmap turns into ``WorkerAborted`` or ``CollectiveMismatch`` as the Python
group would.  Operands of different shapes raise ``Mismatch`` on every
worker (all see the same records), reported with the shapes.  One pmap
call at a time uses the state (``Session`` holds a lock; a second,
concurrent call takes the callback path).
"""
import os
import threading

import numpy as np
from llvmlite import binding as llvm
from llvmlite import ir
import numba
from numba import types
from numba.extending import intrinsic, overload

from ..parallel.group import CollectiveMismatch, WorkerAborted
from . import shard_collectives

MAX_DEVICES = 256
MAX_DIMS = shard_collectives.MAX_DIMS
_ARRIVED, _GENERATION, _STOP, _SIZE = 0, 1, 2, 3
_IDENTS = 8
_RECORDS = _IDENTS + MAX_DEVICES
_RECORD = 4 + MAX_DIMS          # address, dtype code, rank, unused, shape
_STATE = np.zeros(_RECORDS + MAX_DEVICES * _RECORD, np.int64)
_SYMBOL = "tangent_x_pmap_thread_state"
llvm.add_symbol(_SYMBOL, _STATE.ctypes.data)
# a waiting worker: spins, then yields, then sleeps; it gives up after
# about RENDEZVOUS_TIMEOUT seconds of sleeps (a worker stuck elsewhere)
_SPINS, _YIELDS, _SLEEP_US = 200, 2000, 50
RENDEZVOUS_TIMEOUT = 600.0
_SLEEPS = int(RENDEZVOUS_TIMEOUT * 1e6 / _SLEEP_US)

_yield = types.ExternalFunction("sched_yield", types.int32())
_sleep = types.ExternalFunction("usleep", types.int32(types.uint32))
_self = types.ExternalFunction("pthread_self", types.uint64())


class Stopped(RuntimeError):
    """Raised by compiled code in a worker whose rendezvous cannot finish
    (another worker failed or returned, or the wait timed out); pmap reports
    the cause instead."""


class Mismatch(ValueError):
    """Raised by compiled code on every worker when the operands of a
    collective differ in shape or dtype; pmap reports the shapes."""


class NoSession(RuntimeError):
    """A compiled-threads shard called outside pmap's workers."""


# --- the state array, from compiled code --------------------------------------------

def _cell(builder, index):
    module = builder.module
    cell = module.globals.get(_SYMBOL)
    if cell is None:
        cell = ir.GlobalVariable(module, ir.ArrayType(ir.IntType(64), len(_STATE)), _SYMBOL)
    return builder.gep(cell, [ir.Constant(ir.IntType(32), 0), index])


@intrinsic
def _load(typingctx, index):
    """Entry ``index`` of the state (a sequentially consistent atomic load)."""
    if not isinstance(index, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        return builder.load_atomic(_cell(builder, args[0]), "seq_cst", 8)
    return types.int64(types.intp), codegen


@intrinsic
def _store(typingctx, index, value):
    """Set entry ``index`` of the state (atomically)."""
    if not isinstance(index, types.Integer) or not isinstance(value, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        builder.store_atomic(args[1], _cell(builder, args[0]), "seq_cst", 8)
        return context.get_dummy_value()
    return types.none(types.intp, types.int64), codegen


@intrinsic
def _add(typingctx, index, value):
    """Atomically add ``value`` to entry ``index``; the entry's old value."""
    if not isinstance(index, types.Integer) or not isinstance(value, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        return builder.atomic_rmw("add", _cell(builder, args[0]), args[1], "seq_cst")
    return types.int64(types.intp, types.int64), codegen


@intrinsic
def _address(typingctx, array):
    """The address of a (contiguous) array's data, as an int64."""
    if not isinstance(array, types.Array):
        return None

    def codegen(context, builder, signature, args):
        data = context.make_array(signature.args[0])(context, builder, args[0]).data
        return builder.ptrtoint(data, ir.IntType(64))
    return types.int64(array), codegen


@intrinsic
def _pointer(typingctx, address, like):
    """``address`` as a pointer to elements of the array type ``like``."""
    if not isinstance(address, types.Integer) or not isinstance(like, types.Array):
        return None
    target = types.CPointer(like.dtype)

    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], context.get_value_type(target))
    return target(address, like), codegen


# --- the rendezvous ---------------------------------------------------------------

@numba.njit(cache=True)
def _wait(size):
    """The barrier: returns when all ``size`` workers have reached it."""
    generation = _load(_GENERATION)
    if _add(_ARRIVED, 1) == size - 1:
        _store(_ARRIVED, 0)
        _add(_GENERATION, 1)
        return
    waited = 0
    while True:
        if _load(_GENERATION) != generation:
            return
        if _load(_STOP) != 0:
            if _load(_GENERATION) != generation:
                return
            raise Stopped("pmap: a collective cannot finish")
        waited += 1
        if waited < _SPINS:
            continue
        if waited < _SPINS + _YIELDS:
            _yield()
        elif waited < _SPINS + _YIELDS + _SLEEPS:
            _sleep(_SLEEP_US)
        else:
            _store(_STOP, 3)
            raise Stopped("pmap: a collective timed out")


@numba.njit(cache=True)
def _device():
    """This worker's device index and the number of devices."""
    me = np.int64(_self())
    size = _load(_SIZE)
    for k in range(size):
        if _load(_IDENTS + k) == me:
            return k, size
    raise NoSession("a compiled pmap shard ran outside pmap's workers")


def _publish(send, code, index, size):
    pass


@overload(_publish)
def _publish_compiled(send, code, index, size):
    """Hand in ``send``'s record, wait for all; whether every record has its
    dtype and shape (every worker sees the same records, so all agree)."""
    ndim = send.ndim

    def impl(send, code, index, size):
        base = _RECORDS + index * _RECORD
        _store(base, _address(send))
        _store(base + 1, code)
        _store(base + 2, ndim)
        for i in range(ndim):
            _store(base + 4 + i, send.shape[i])
        _wait(size)
        for k in range(size):
            other = _RECORDS + k * _RECORD
            same = _load(other + 1) == code and _load(other + 2) == ndim
            for i in range(ndim):
                same = same and _load(other + 4 + i) == send.shape[i]
            if not same:
                return False
        return True
    return impl


def _part(send, k):
    pass


@overload(_part)
def _part_compiled(send, k):
    """Device ``k``'s operand (read in place; valid until the second wait)."""
    def impl(send, k):
        address = _load(_RECORDS + k * _RECORD)
        return numba.carray(_pointer(address, send), send.shape)
    return impl


def _reduce(send, code, op, check):
    pass


@overload(_reduce)
def _reduce_compiled(send, code, op, check):
    """``shard_collectives``' reduction: the device-order reduction of the
    contiguous ``send`` (``op``: 0 sum, 1 max, 2 min), the number of
    devices, and whether the operands agree (always checked: the records
    are read anyway)."""
    def impl(send, code, op, check):
        index, size = _device()
        if not _publish(send, code, index, size):
            return send, size, False
        out = _part(send, 0).copy()
        for k in range(1, size):
            part = _part(send, k)
            if op == 0:
                out += part
            elif op == 1:
                np.maximum(out, part, out)
            else:
                np.minimum(out, part, out)
        _wait(size)
        return out, size, True
    return impl


def _gather(send, code, check):
    pass


@overload(_gather)
def _gather_compiled(send, code, check):
    """Every device's ``send`` stacked in device order; whether the operands
    agree."""
    def impl(send, code, check):
        index, size = _device()
        if not _publish(send, code, index, size):
            return np.empty((0,) + send.shape, send.dtype), False
        out = np.empty((size,) + send.shape, send.dtype)
        for k in range(size):
            out[k] = _part(send, k)
        _wait(size)
        return out, True
    return impl


@numba.njit(cache=True)
def _index():
    return _device()[0]


# --- the backend of shard_collectives ---------------------------------------------

_KINDS = {"f": 1, "i": 2, "u": 3, "c": 4}


def _code(x):
    """A number naming ``x``'s element type, or None (keep the callback)."""
    dtype = getattr(x, "dtype", x)
    if isinstance(dtype, types.Boolean) or not isinstance(dtype, (types.Float, types.Integer,
                                                                  types.Complex)):
        return None
    np_dtype = np.dtype(str(dtype))
    return _KINDS[np_dtype.kind] * 64 + np_dtype.itemsize


BACKEND = shard_collectives.Backend(
    "thr", "thread collectives", _code, _reduce, _gather, _index, Mismatch,
    lambda op, axis: "pmap: the operands of a collective differ in shape")


def namespace(axis):
    """A stand-in for ``tangent_x.lax`` in a shard mapped over ``axis``: its
    collectives over ``axis`` compile to the shared-memory rendezvous;
    every other name is ``lax``'s own."""
    return shard_collectives.namespace(BACKEND, axis)


def rebinding(axis):
    """The ``rebind`` of a shard mapped over ``axis`` (a string)."""
    return shard_collectives.Rebinding(BACKEND, axis)


# --- one pmap call, from Python --------------------------------------------------------

_LOCK = threading.Lock()


def _forked():
    global _LOCK
    _LOCK = threading.Lock()      # a forked child: no call of the parent's runs here


os.register_at_fork(after_in_child=_forked)


class Session:
    """The state for one pmap call over ``size`` workers: ``Session.open``
    gives one (or None while another call holds the state); ``enter(k)`` on
    worker ``k``'s thread before it runs its shard, ``finish(k)`` when it
    returns, ``abort()`` when it fails, ``close()`` after all have."""

    def __init__(self, size):
        self.size = size
        self.finished = set()
        self._lock = threading.Lock()
        _STATE[:] = 0
        _STATE[_SIZE] = size

    @classmethod
    def open(cls, size):
        if size > MAX_DEVICES or not _LOCK.acquire(blocking=False):
            return None
        return cls(size)

    def enter(self, index):
        _STATE[_IDENTS + index] = np.int64(np.uint64(threading.get_ident()))

    def finish(self, index):
        with self._lock:
            self.finished.add(index)
        if _STATE[_STOP] == 0:
            _STATE[_STOP] = 2

    def abort(self):
        _STATE[_STOP] = 1

    def close(self):
        _STATE[_SIZE] = 0
        _LOCK.release()

    def explain(self, exc, index):
        """The error pmap reports for worker ``index``'s ``exc``."""
        if isinstance(exc, Mismatch):
            shapes = []
            for k in range(self.size):
                base = _RECORDS + k * _RECORD
                dims = _STATE[base + 4:base + 4 + _STATE[base + 2]]
                shapes.append(f"device {k}: {tuple(int(d) for d in dims)}")
            return ValueError(f"collective: the workers' values have different shapes "
                              f"({', '.join(shapes)}); every worker must pass a value of "
                              "the same shape")
        stop = int(_STATE[_STOP])
        # A worker stopped at a barrier raises Stopped from nogil code; seen
        # once in CI as a SystemError instead (cause not found yet: see the
        # session 11 note), so with the stop word set that is read as the
        # stop it is, and the worker that stopped the group is named.
        if not isinstance(exc, Stopped) and not (isinstance(exc, SystemError) and stop):
            return exc
        # (its text says which of Numba's two SystemErrors it was, if seen again)
        seen = f" (the worker saw SystemError: {exc})" if isinstance(exc, SystemError) else ""
        if stop == 1:
            return WorkerAborted("pmap: another worker failed; its error is the one reported"
                                 + seen)
        if stop == 2:
            done = sorted(self.finished)
            return CollectiveMismatch(
                f"pmap: device {index} waits in a collective that device(s) "
                f"{', '.join(map(str, done))} returned without reaching: every "
                "device must call the same collectives in the same order" + seen)
        return CollectiveMismatch(f"pmap: device {index} waited {RENDEZVOUS_TIMEOUT:.0f} s in a "
                                  "collective that not every device reached")
