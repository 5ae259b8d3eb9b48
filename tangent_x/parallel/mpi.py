"""The Group contract across the processes of an ``mpiexec`` launch (MPIGroup).

The devices of the group are numbered process by process: process ``p``
owns devices ``p * local_count ... (p + 1) * local_count - 1``, one worker
thread each.  A collective meets in two steps: the process's workers
rendezvous (a ``threading.Barrier``), worker 0 makes one MPI call for the
whole process, and every worker takes its share of the result.

Sums are taken in device order over the gathered values (an allgather, not
MPI_Allreduce), so every rank gets the same bits, equal to a sum over the
devices in order in one process (the threads backend) whatever the number of
processes.  Before the data, a small allgather carries every device's shape
and dtype: a collective whose operand differs in shape or dtype across
devices raises on every rank the same ValueError naming the operand,
instead of MPI mismatching buffers.

Those checks raise MismatchError (a ValueError) alike on every rank; any
other error is one rank's.  A worker that raises calls ``abort(exc)``: the process's other workers
stop waiting (they raise ``WorkerAborted``) and, with more than one
process, the traceback is printed with the rank and ``MPI_Abort`` stops
every process of the launch (nothing hangs in a collective).
"""
import hashlib
import threading
import traceback

import numpy as np

from .. import distributed

OPS = ("sum", "max", "min")


class WorkerAborted(RuntimeError):
    """Raised in the workers that were waiting when another worker aborted."""


class MismatchError(ValueError):
    """Operands or arguments differing across devices: found by a collective
    check, so raised alike on every rank, which need not be stopped."""


class MPIGroup:
    """Every device of every process; ``local_devices`` (a count or a list)
    are this process's, run as threads.  Collective: every process builds
    its MPIGroup at the same point, with the same number of local devices.

    ``worker(i)`` is the Group seen by local worker ``i`` (``size``,
    ``index``, ``allreduce``, ``allgather``, ``permute``, ``barrier``,
    ``abort``); with one local device the group is also its own worker 0.
    """

    def __init__(self, local_devices=1, comm=None, timeout=None, arguments=None):
        """``arguments``: as ``check_arguments``'s, checked with the device
        counts in one all-reduce (what pmap passes)."""
        self.comm = distributed.communicator() if comm is None else comm
        self.local_count = local_devices if isinstance(local_devices, int) else len(local_devices)
        if self.local_count < 1:
            raise ValueError(f"MPIGroup: local_devices must be at least 1, got {self.local_count}")
        self.process_index = self.comm.Get_rank()
        self.process_count = self.comm.Get_size()
        mine = None if arguments is None else _shapes_of(arguments)
        if not _alike(self.comm, repr((self.local_count, mine))):
            counts = self.comm.allgather(self.local_count)
            if len(set(counts)) != 1:
                raise MismatchError("MPIGroup: every process must have the same number of local "
                                    f"devices; per process: {counts} (set TANGENT_X_NUM_DEVICES "
                                    "alike on every rank)")
            if mine is not None:
                self._name_mismatch(mine, "pmap")
        self.size = self.local_count * self.process_count
        self._meeting = threading.Barrier(self.local_count, timeout=timeout)
        self._slots = [None] * self.local_count
        self._result = None
        self._failure = None
        self._abort_lock = threading.Lock()
        self._workers = [MPIWorker(self, i) for i in range(self.local_count)]

    @classmethod
    def create(cls, local_devices, comm=None, timeout=None):
        """The workers' views, one per local device (as ``ThreadGroup.create``).
        ``timeout`` (seconds) bounds the local rendezvous."""
        group = cls(local_devices, comm, timeout)
        return [group.worker(i) for i in range(group.local_count)]

    def check_arguments(self, named, what="pmap"):
        """Collective, from one thread per process: every process's
        arguments ``named`` (a dict: argument name -> array or scalar) must
        have the same shapes and dtypes; else every rank raises the same
        ValueError naming the first argument that differs and its shape on
        each process.  One all-reduce of two int64 (a digest of the shapes
        and dtypes); only when they differ, an allgather of the shapes to
        name the argument."""
        mine = _shapes_of(named)
        if not _alike(self.comm, repr(mine)):
            self._name_mismatch(mine, what)

    def _name_mismatch(self, mine, what):
        """Raise, alike on every rank, naming the first argument whose shape
        or dtype differs (``mine``: this process's, from ``_shapes_of``)."""
        everyone = self.comm.allgather(mine)
        for position, (name, _, _) in enumerate(mine):
            seen = [described[position] if position < len(described) else None
                    for described in everyone]
            if len(set(seen)) != 1:
                listed = ", ".join(f"process {p}: " + ("missing" if s is None else f"shape {s[1]} {s[2]}")
                                   for p, s in enumerate(seen))
                raise MismatchError(f"{what}: argument {name!r} differs across processes ({listed}); "
                                 "every process must pass arguments of the same shapes and dtypes "
                                 "(its own slice of the data, of equal size)")
        if len({len(described) for described in everyone}) != 1:
            counts = ", ".join(f"process {p}: {len(d)}" for p, d in enumerate(everyone))
            raise MismatchError(f"{what}: the processes pass different numbers of arguments ({counts})")

    def worker(self, local_index):
        """The Group seen from local worker ``local_index``."""
        return self._workers[local_index]

    # With one local device the group is its own (only) worker.
    @property
    def index(self):
        return self._only().index

    def allreduce(self, x, op="sum", name="x"):
        return self._only().allreduce(x, op, name)

    def allgather(self, x, name="x"):
        return self._only().allgather(x, name)

    def permute(self, x, perm, name="x"):
        return self._only().permute(x, perm, name)

    def barrier(self):
        self._only().barrier()

    def abort(self, exc):
        self._only().abort(exc)

    def _only(self):
        if self.local_count != 1:
            raise TypeError(f"MPIGroup has {self.local_count} local devices: "
                            "call collectives on group.worker(i)")
        return self._workers[0]

    # -- the meeting of the local workers ------------------------------------
    def _meet(self, local_index, value, combine):
        """Every local worker hands in ``value``; worker 0 calls
        ``combine(values)`` (the one MPI call); all get its result."""
        if self.local_count == 1:
            return combine([value])
        self._slots[local_index] = value
        self._wait()
        if local_index == 0:
            try:
                self._result = combine(list(self._slots))
            except BaseException as exc:  # noqa: BLE001 -- handed to every worker
                self._result = _Raised(exc)
        self._wait()
        result = self._result
        if isinstance(result, _Raised):
            raise result.exc
        return result

    def _wait(self):
        try:
            self._meeting.wait()
        except threading.BrokenBarrierError:
            failure = self._failure
            raise WorkerAborted(f"another worker of this process raised: {failure!r}") from failure

    def _gather_checked(self, blocks, name, what):
        """Allgather this process's ``blocks`` (one per local device) -> one
        array over all devices, in device order; the same ValueError on every
        rank when shapes or dtypes differ across devices.  Two buffer
        allgathers: each device's shape and dtype (a row of ints), then the data."""
        local = [np.asarray(b) for b in blocks]
        headers = np.full((self.size, 3 + MAX_DIMS), -1, dtype=np.int64)
        distributed.wait(self.comm.Iallgather(np.stack([_header(b) for b in local]), headers))
        if (headers != headers[0]).any():
            per_device = ", ".join(f"device {d} (process {d // self.local_count}): "
                                   f"shape {shape} {dtype}"
                                   for d, (shape, dtype) in enumerate(map(_described, headers)))
            raise MismatchError(f"{what}: the operand {name!r} must have the same shape and dtype on "
                             f"every device; got {per_device}")
        stacked = np.ascontiguousarray(np.stack(local))   # stack keeps a transposed layout
        gathered = np.empty((self.size,) + stacked.shape[1:], stacked.dtype)
        distributed.wait(self.comm.Iallgather(stacked, gathered), stacked.nbytes)
        return gathered


MAX_DIMS = 64       # NumPy's limit


def _shapes_of(named):
    return [(name, np.shape(value), np.asarray(value).dtype.name) for name, value in named.items()]


def _alike(comm, value):
    """Whether ``value`` (an int, or a string: its digest) is the same on
    every process of ``comm``; the same answer on every rank (one buffer
    all-reduce of a number and its negation, MAX)."""
    if isinstance(value, str):
        value = int.from_bytes(hashlib.sha1(value.encode()).digest()[:8], "little", signed=True)
        value = max(value, -2 ** 63 + 1)     # its negation fits
    probe = np.array([value, -value], dtype=np.int64)
    seen = np.empty(2, dtype=np.int64)
    distributed.wait(comm.Iallreduce(probe, seen, distributed.mpi().MAX))
    return seen[0] == -seen[1]


def _header(array):
    """A row of ints saying ``array``'s shape and dtype (for _gather_checked)."""
    row = np.full(3 + MAX_DIMS, -1, dtype=np.int64)
    row[:3] = array.ndim, ord(array.dtype.kind), array.dtype.itemsize
    row[3:3 + array.ndim] = array.shape
    return row


def _described(row):
    ndim, kind, itemsize = (int(v) for v in row[:3])
    return tuple(int(n) for n in row[3:3 + ndim]), np.dtype(f"{chr(kind)}{itemsize}").name


class _Raised:
    __slots__ = ("exc",)

    def __init__(self, exc):
        self.exc = exc


class MPIWorker:
    """One worker's view of an MPIGroup: the Group contract."""

    def __init__(self, group, local_index):
        self.group = group
        self.local_index = local_index
        self.size = group.size
        self.index = group.process_index * group.local_count + local_index

    def allreduce(self, x, op="sum", name="x"):
        """Sum, max or min over every device; same shape and dtype as ``x``."""
        if op not in OPS:
            raise ValueError(f"allreduce: op must be one of {OPS}, got {op!r}")
        scalar = np.ndim(x) == 0 and not isinstance(x, np.ndarray)

        def combine(values):
            gathered = self.group._gather_checked(values, name, f"allreduce({op})")
            if op == "sum":
                total = gathered[0].copy()
                for part in gathered[1:]:
                    total += part
            else:
                total = gathered.max(axis=0) if op == "max" else gathered.min(axis=0)
            return total

        out = self.group._meet(self.local_index, x, combine)
        return out[()] if scalar else out.copy()

    def allgather(self, x, name="x"):
        """Shape ``(size, *x.shape)``: every device's ``x``, in device order."""
        gathered = self.group._meet(
            self.local_index, x,
            lambda values: self.group._gather_checked(values, name, "allgather"))
        return gathered.copy()

    def permute(self, x, perm, name="x"):
        """ppermute: device ``dst`` gets ``x`` of device ``src`` for each
        ``(src, dst)`` in ``perm``; devices that are no destination get zeros."""
        perm = [(int(s), int(d)) for s, d in perm]
        sources = [s for s, _ in perm]
        targets = [d for _, d in perm]
        if len(set(sources)) != len(sources) or len(set(targets)) != len(targets):
            raise ValueError(f"ppermute: perm {perm} sends from or to a device twice")
        if any(not 0 <= i < self.size for i in sources + targets):
            raise ValueError(f"ppermute: perm {perm} names a device outside 0..{self.size - 1}")
        gathered = self.group._meet(
            self.local_index, x,
            lambda values: self.group._gather_checked(values, name, "ppermute"))
        for src, dst in perm:
            if dst == self.index:
                return gathered[src].copy()
        return np.zeros_like(gathered[0])

    def barrier(self):
        """Wait until every device of every process has reached it."""
        self.group._meet(self.local_index, None,
                         lambda values: distributed.wait(self.group.comm.Ibarrier()))

    def abort(self, exc):
        """Stop every worker: this process's others raise WorkerAborted;
        with several processes, every rank stops (MPI_Abort) after this
        rank prints ``exc``'s traceback -- except for a MismatchError, which
        every rank raises alike."""
        group = self.group
        with group._abort_lock:
            first = group._failure is None
            if first:
                group._failure = exc
        group._meeting.abort()
        # a WorkerAborted is a consequence of the first failure, which stops the launch;
        # a MismatchError is raised alike on every rank
        if first and group.process_count > 1 and not isinstance(exc, (MismatchError, WorkerAborted)):
            text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
            distributed.abort(f"device {self.index} raised:\n{text}")
