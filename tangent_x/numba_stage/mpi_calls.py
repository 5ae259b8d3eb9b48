"""MPI collectives callable from Numba-compiled code (``@njit``, ``cache=True`` too).

    from tangent_x.numba_stage import mpi_calls

    @numba.njit(cache=True)
    def step(x, comm):
        return mpi_calls.allreduce(x, mpi_calls.SUM, comm)

``allreduce(x, op, comm)`` (op: ``SUM``, ``MAX``, ``MIN``) returns an array
of ``x``'s shape, or a scalar for a scalar; ``allgather(x, comm)`` returns
shape ``(size, *x.shape)`` in rank order.  Both first check, with one small
all-reduce, that every rank's operand has the same size and dtype (else a
ValueError on every rank, never wrong numbers); ``allreduce_unchecked`` and
``allgather_unchecked`` skip it, for operands known to agree; ``barrier``, ``comm_rank`` and
``comm_size`` too; float64, float32 and int64, arrays (any layout: a
non-contiguous one is copied) and scalars.  ``comm`` is a communicator
handle, an int (``handle_of(mpi4py_comm)``; the default ``COMM_WORLD``).
The same functions called from Python run through mpi4py.  As with any
MPI collective, every process calls them in the same order, and one thread
per process at a time on a communicator: workers of one process reduce
among themselves first and one of them calls (as ``parallel.mpi.MPIGroup``
does).  A process that raises instead stops the launch (MPI_Abort, see
``tangent_x.distributed``).

How: importing this module loads the MPI library mpi4py uses (the same
file, so the same initialised MPI) with ``llvmlite``'s
``load_library_permanently``, and declares ``MPI_Allreduce`` and the others
as Numba external functions *by symbol name*.  Compiled code then holds a
call to the symbol, which the loader resolves when the code is loaded:
no address is frozen into it, so Numba's disk cache serves a later process
(ctypes function pointers would be frozen constants, which Numba refuses to
cache).  Handles are C ints, as in MPICH's ABI (the ``mpich`` wheel of the
``[mpi]`` extra); datatype and operation handles are compile-time
constants, read from mpi4py.  Another MPI ABI (Open MPI's pointer handles)
is refused at import with a clear error.

Waiting: each collective is started non-blocking (``MPI_Iallreduce``,
``MPI_Iallgather``, ``MPI_Ibarrier``) and waited for by ``_wait``, which
polls ``MPI_Test`` for a while and then sleeps between polls (``usleep``
from the C library), reading ``distributed.WAITING`` at run time through
its address: a rank waiting for a late one leaves its core to the
processes still computing (MPICH's blocking calls poll throughout).
"""
import os
import sys

import numpy as np
from llvmlite import binding as llvm
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.core.errors import TypingError
from numba.extending import intrinsic, overload

from .. import distributed

MPI = distributed.mpi()


def library_path():
    """The file of the MPI library mpi4py has loaded (so that compiled code
    calls into the same, already initialised, MPI)."""
    if os.path.exists("/proc/self/maps"):
        with open("/proc/self/maps", encoding="utf-8") as maps:
            for line in maps:
                path = line.split()[-1]
                name = os.path.basename(path)
                if name.startswith("libmpi") and ".so" in name and not name.startswith("libmpi_abi"):
                    return path
    for path in (os.environ.get("MPI4PY_LIBMPI", ""), os.path.join(sys.prefix, "lib", "libmpi.so.12")):
        if path and os.path.exists(path):
            return path
    raise ImportError("tangent_x.numba_stage.mpi_calls: cannot find the MPI library mpi4py uses; "
                      f"set MPI4PY_LIBMPI to its path, or {distributed.INSTALL_HINT}")


def _mpich_handle(obj, what):
    handle = MPI._handleof(obj)
    # A C int; mpi4py hands a negative one back as an unsigned 64-bit value.
    if isinstance(handle, int) and 2 ** 64 - 2 ** 31 <= handle < 2 ** 64:
        handle -= 2 ** 64
    if not isinstance(handle, int) or not -2 ** 31 <= handle < 2 ** 31:
        raise ImportError(f"tangent_x.numba_stage.mpi_calls needs an MPI with MPICH's ABI (int handles); "
                          f"{what} is {handle!r} in {MPI.Get_library_version().splitlines()[0]}. "
                          f"{distributed.INSTALL_HINT}")
    return handle


llvm.load_library_permanently(library_path())

COMM_WORLD = _mpich_handle(MPI.COMM_WORLD, "MPI_COMM_WORLD")
SUM = _mpich_handle(MPI.SUM, "MPI_SUM")
MAX = _mpich_handle(MPI.MAX, "MPI_MAX")
MIN = _mpich_handle(MPI.MIN, "MPI_MIN")
INT64 = _mpich_handle(MPI.INT64_T, "MPI_INT64_T")
DATATYPES = {"float64": _mpich_handle(MPI.DOUBLE, "MPI_DOUBLE"),
             "float32": _mpich_handle(MPI.FLOAT, "MPI_FLOAT"),
             "int64": _mpich_handle(MPI.INT64_T, "MPI_INT64_T")}
_PY_OPS = {SUM: MPI.SUM, MAX: MPI.MAX, MIN: MPI.MIN}

_int = types.int32
_ptr = types.voidptr
_MPI_Iallreduce = types.ExternalFunction("MPI_Iallreduce",
                                         _int(_ptr, _ptr, _int, _int, _int, _int, _ptr))
_MPI_Iallgather = types.ExternalFunction("MPI_Iallgather",
                                         _int(_ptr, _int, _int, _ptr, _int, _int, _int, _ptr))
_MPI_Ibarrier = types.ExternalFunction("MPI_Ibarrier", _int(_int, _ptr))
_MPI_Test = types.ExternalFunction("MPI_Test", _int(_ptr, _ptr, _ptr))
_MPI_Wait = types.ExternalFunction("MPI_Wait", _int(_ptr, _ptr))
_MPI_Wtime = types.ExternalFunction("MPI_Wtime", types.float64())
_usleep = types.ExternalFunction("usleep", _int(types.uint32))     # the C library's
_MPI_Comm_size = types.ExternalFunction("MPI_Comm_size", _int(_int, _ptr))
_MPI_Comm_rank = types.ExternalFunction("MPI_Comm_rank", _int(_int, _ptr))
# MPI_Request is a C int in MPICH's ABI; MPI_Status a few (ints enough to hold it)
_STATUS_INTS = -(-MPI._sizeof(MPI.Status) // 4)


def global_array(symbol, array):
    """An intrinsic ``entry(i)`` reading ``array[i]`` (float64 or int64,
    1-d) at run time in compiled code, through a symbol the loader
    resolves to the array's address: nothing frozen into cached code."""
    llvm.add_symbol(symbol, array.ctypes.data)
    element = types.float64 if array.dtype == np.float64 else types.int64
    llvm_type = ir.DoubleType() if element is types.float64 else ir.IntType(64)

    @intrinsic
    def entry(typingctx, index):
        if not isinstance(index, types.Integer):
            return None

        def codegen(context, builder, signature, args):
            module = builder.module
            cell = module.globals.get(symbol)
            if cell is None:
                cell = ir.GlobalVariable(module, ir.ArrayType(llvm_type, len(array)), symbol)
            slot = builder.gep(cell, [ir.Constant(ir.IntType(32), 0), args[0]])
            return builder.load(slot)
        return element(types.intp), codegen
    return entry


# distributed.WAITING: spin, first pause, longest pause (seconds), spin per byte
_waiting = global_array("tangent_x_mpi_waiting", distributed.WAITING)


def handle_of(comm):
    """The int handle of an mpi4py communicator, for compiled code."""
    return _mpich_handle(comm, "the communicator")


def _comm(handle):
    return MPI.Comm.fromhandle(handle % 2 ** 64)


# -- helpers for the compiled versions ------------------------------------
@intrinsic
def _address(typingctx, array):
    """The data pointer of an array, as ``void *``."""
    if not isinstance(array, types.Array):
        return None

    def codegen(context, builder, signature, args):
        data = context.make_array(array)(context, builder, args[0]).data
        return builder.bitcast(data, cgutils.voidptr_t)
    return _ptr(array), codegen


def _datatype(numba_type, where):
    dtype = numba_type.dtype if isinstance(numba_type, types.Array) else numba_type
    code = DATATYPES.get(str(dtype))
    if code is None:
        raise TypingError(f"mpi_calls.{where}: MPI collectives take float64, float32 or int64 "
                          f"arrays and scalars, not {numba_type}")
    return code


def _scalar(numba_type):
    return isinstance(numba_type, (types.Float, types.Integer)) and \
        not isinstance(numba_type, types.Boolean)


def _check(code, call):
    pass


@overload(_check)
def _check_compiled(code, call):
    def impl(code, call):
        if code != 0:
            raise RuntimeError("an MPI call returned an error code")
    return impl


def _agree(size, datatype, comm):
    """Raise alike on every rank unless every rank's operand has ``size``
    elements of ``datatype`` (one MPI_Allreduce of four int64 with MPI_MAX:
    a size and its negation give the largest and the smallest)."""
    probe = np.array([size, -size, datatype, -datatype], np.int64)
    seen = np.empty(4, np.int64)
    distributed.wait(_comm(comm).Iallreduce(probe, seen, MPI.MAX))
    if seen[0] != -seen[1] or seen[2] != -seen[3]:
        raise ValueError(MISMATCH)


MISMATCH = ("mpi_calls: the operand's size or dtype differs across ranks (every rank raises "
            "this); pass operands of one shape and dtype on every rank")


@overload(_agree)
def _agree_compiled(size, datatype, comm):
    def impl(size, datatype, comm):
        probe = np.empty(4, np.int64)
        probe[0], probe[1], probe[2], probe[3] = size, -size, datatype, -datatype
        seen = np.empty(4, np.int64)
        reduce_into(probe, seen, 4, INT64, MAX, comm)
        if seen[0] != -seen[1] or seen[2] != -seen[3]:
            raise ValueError(MISMATCH)
    return impl


def _wait(request, nbytes):
    pass


@overload(_wait)
def _wait_compiled(request, nbytes):
    """Wait for the non-blocking collective of ``request`` (an int32 array
    of one MPI_Request), which sends ``nbytes``, as ``distributed.wait``:
    tested in a loop for a while, then between sleeps that leave the core
    to the processes still computing (with an infinite spin, MPI_Wait)."""
    def impl(request, nbytes):
        flag = np.zeros(1, np.int32)
        status = np.empty(_STATUS_INTS, np.int32)
        if _waiting(0) == np.inf:
            _check(_MPI_Wait(_address(request), _address(status)), "MPI_Wait")
            return
        spin = _waiting(0) + nbytes * _waiting(3)
        start = -1.0
        pause = _waiting(1)
        while True:
            _check(_MPI_Test(_address(request), _address(flag), _address(status)), "MPI_Test")
            if flag[0] != 0:
                return
            now = _MPI_Wtime()
            if start < 0.0:
                start = now
            elif now - start > spin:
                _usleep(np.uint32(pause * 1e6))
                pause = min(2.0 * pause, _waiting(2))
    return impl


def reduce_into(send, out, count, datatype, op, comm):
    pass


@overload(reduce_into)
def _reduce_into_compiled(send, out, count, datatype, op, comm):
    """Compiled only: the all-reduce (MPI_Iallreduce) of the first ``count``
    elements of the contiguous arrays ``send`` into ``out``, waited for by
    ``_wait``."""
    def impl(send, out, count, datatype, op, comm):
        request = np.zeros(1, np.int32)
        _check(_MPI_Iallreduce(_address(send), _address(out), count, datatype, op, comm,
                               _address(request)), "MPI_Iallreduce")
        _wait(request, count * send.itemsize)
    return impl


def gather_into(send, out, count, datatype, comm):
    pass


@overload(gather_into)
def _gather_into_compiled(send, out, count, datatype, comm):
    """Compiled only: the allgather (MPI_Iallgather) of ``count`` elements of
    ``send`` from every rank into ``out`` (rank order), waited for by
    ``_wait``."""
    def impl(send, out, count, datatype, comm):
        request = np.zeros(1, np.int32)
        _check(_MPI_Iallgather(_address(send), count, datatype, _address(out), count, datatype,
                               comm, _address(request)), "MPI_Iallgather")
        _wait(request, count * send.itemsize)
    return impl


# -- the collectives: Python versions (mpi4py), then compiled ones ---------
def comm_size(comm=COMM_WORLD):
    """The number of processes of ``comm``."""
    return _comm(comm).Get_size()


def comm_rank(comm=COMM_WORLD):
    """This process's rank in ``comm``."""
    return _comm(comm).Get_rank()


def barrier(comm=COMM_WORLD):
    """Wait for every process of ``comm``."""
    distributed.wait(_comm(comm).Ibarrier())


def allreduce(x, op=SUM, comm=COMM_WORLD):
    """``op`` (SUM, MAX, MIN) over the processes of ``comm``; ``x``'s shape.
    Checks first that every rank's ``x`` has the same size and dtype (a
    ValueError on every rank otherwise)."""
    return _allreduce_py(x, op, comm, True)


def allreduce_unchecked(x, op=SUM, comm=COMM_WORLD):
    """``allreduce`` without the check, one MPI call: for operands known to
    agree (pmap's, whose arguments were checked).  Operands that differ give
    wrong numbers or an MPI error."""
    return _allreduce_py(x, op, comm, False)


def allgather(x, comm=COMM_WORLD):
    """Shape ``(size, *x.shape)``: every process's ``x`` in rank order
    (sizes and dtypes checked first, as ``allreduce``)."""
    return _allgather_py(x, comm, True)


def allgather_unchecked(x, comm=COMM_WORLD):
    """``allgather`` without the check (see ``allreduce_unchecked``)."""
    return _allgather_py(x, comm, False)


def _allreduce_py(x, op, comm, checked):
    send = np.ascontiguousarray(x)
    if checked:
        _agree(send.size, DATATYPES.get(send.dtype.name, -1), comm)
    out = np.empty_like(send)
    distributed.wait(_comm(comm).Iallreduce(send, out, _PY_OPS[op]), send.nbytes)
    return out if isinstance(x, np.ndarray) else out[()]


def _allgather_py(x, comm, checked):
    send = np.ascontiguousarray(x)
    if checked:
        _agree(send.size, DATATYPES.get(send.dtype.name, -1), comm)
    handle = _comm(comm)
    out = np.empty((handle.Get_size(),) + send.shape, send.dtype)
    distributed.wait(handle.Iallgather(send, out), send.nbytes)
    return out


@overload(comm_size)
def _comm_size_compiled(comm=COMM_WORLD):
    def impl(comm=COMM_WORLD):
        size = np.zeros(1, np.int32)
        _check(_MPI_Comm_size(comm, _address(size)), "MPI_Comm_size")
        return size[0]
    return impl


@overload(comm_rank)
def _comm_rank_compiled(comm=COMM_WORLD):
    def impl(comm=COMM_WORLD):
        rank = np.zeros(1, np.int32)
        _check(_MPI_Comm_rank(comm, _address(rank)), "MPI_Comm_rank")
        return rank[0]
    return impl


@overload(barrier)
def _barrier_compiled(comm=COMM_WORLD):
    def impl(comm=COMM_WORLD):
        request = np.zeros(1, np.int32)
        _check(_MPI_Ibarrier(comm, _address(request)), "MPI_Ibarrier")
        _wait(request, 0)
    return impl


def _allreduce_overload(checked):
    def typer(x, op=SUM, comm=COMM_WORLD):
        datatype = _datatype(x, "allreduce")
        if isinstance(x, types.Array):
            def impl(x, op=SUM, comm=COMM_WORLD):
                send = np.ascontiguousarray(x)
                if checked:
                    _agree(send.size, datatype, comm)
                out = np.empty(send.shape, send.dtype)
                reduce_into(send, out, send.size, datatype, op, comm)
                return out
            return impl
        if _scalar(x):
            def impl_scalar(x, op=SUM, comm=COMM_WORLD):
                send = np.full(1, x)
                if checked:
                    _agree(1, datatype, comm)
                out = np.empty(1, send.dtype)
                reduce_into(send, out, 1, datatype, op, comm)
                return out[0]
            return impl_scalar
        return None
    return typer


def _allgather_overload(checked):
    def typer(x, comm=COMM_WORLD):
        datatype = _datatype(x, "allgather")
        if isinstance(x, types.Array):
            def impl(x, comm=COMM_WORLD):
                send = np.ascontiguousarray(x)
                if checked:
                    _agree(send.size, datatype, comm)
                out = np.empty((comm_size(comm),) + send.shape, send.dtype)
                gather_into(send, out, send.size, datatype, comm)
                return out
            return impl
        if _scalar(x):
            def impl_scalar(x, comm=COMM_WORLD):
                send = np.full(1, x)
                if checked:
                    _agree(1, datatype, comm)
                out = np.empty(comm_size(comm), send.dtype)
                gather_into(send, out, 1, datatype, comm)
                return out
            return impl_scalar
        return None
    return typer


overload(allreduce)(_allreduce_overload(True))
overload(allreduce_unchecked)(_allreduce_overload(False))
overload(allgather)(_allgather_overload(True))
overload(allgather_unchecked)(_allgather_overload(False))
