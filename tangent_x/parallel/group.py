"""``Group``: the devices one collective spans, seen from one worker; and
``ThreadGroup``, its one-process form (one thread per local device).

A collective is a rendezvous: every worker hands in its value, waits until
all have, reads every value, and waits again before the slots are reused.
Reductions run in device order (``((x0 + x1) + x2) + ...``) on every
worker, so all workers get bitwise the same result, and the same as a loop
over the devices adding in that order.

A worker that fails calls ``abort``: the barrier breaks, every worker
waiting in (or later entering) a collective raises ``WorkerAborted``, and
pmap re-raises the first worker's own error -- no hang.
"""
import threading

import numpy as np

_REDUCE = {"sum": np.add, "max": np.maximum, "min": np.minimum}


class WorkerAborted(RuntimeError):
    """Raised in a worker whose collective cannot finish because another
    worker failed (pmap reports that worker's error instead)."""


class Group:
    """The interface every group implements (threads here; MPI across
    processes in ``tangent_x.parallel.mpi``).

    ``size``: devices in the whole group; ``index``: this worker's global
    device index.  Values are NumPy arrays or scalars; results have the
    argument's shape and dtype (``allgather``: a new leading axis of
    ``size``)."""

    size = 1
    index = 0

    def allreduce(self, x, op):
        raise NotImplementedError

    def allgather(self, x):
        raise NotImplementedError

    def permute(self, x, perm):
        """``ppermute``: ``perm`` is a list of (source, destination) device
        pairs; a device that is no destination gets zeros."""
        raise NotImplementedError

    def barrier(self):
        raise NotImplementedError

    def abort(self, exc):
        raise NotImplementedError


class _Shared:
    """What the threads of one pmap call share: a slot per device and a
    barrier that breaks when any of them aborts."""

    def __init__(self, size, timeout):
        self.size = size
        self.slots = [None] * size
        self.barrier = threading.Barrier(size, timeout=timeout)
        self.error = None


class ThreadGroup(Group):
    """One worker thread's view of a group of ``size`` threads.

    ``ThreadGroup.create(size)`` returns the ``size`` views, one per worker.
    ``timeout`` (seconds, None: none) bounds a rendezvous, so that a worker
    that never arrives (it skipped a collective the others entered) is an
    error rather than a hang."""

    def __init__(self, shared, index):
        self._shared = shared
        self.size = shared.size
        self.index = index

    @classmethod
    def create(cls, size, timeout=None):
        shared = _Shared(size, timeout)
        return [cls(shared, i) for i in range(size)]

    def _wait(self):
        try:
            self._shared.barrier.wait()
        except threading.BrokenBarrierError:
            raise WorkerAborted(
                "pmap: another worker failed (or did not reach this collective); "
                "its error is the one reported") from None

    def _exchange(self, x):
        """Every worker's ``x``, in device order (the same list on all)."""
        shared = self._shared
        shared.slots[self.index] = x
        self._wait()
        values = list(shared.slots)
        self._wait()                # nobody overwrites a slot still being read
        return values

    def allreduce(self, x, op):
        values = self._exchange(x)
        _check_alike(values, "allreduce")
        ufunc = _REDUCE[op]
        out = values[0]
        for v in values[1:]:
            out = ufunc(out, v)
        return _like(out, x)

    def allgather(self, x):
        values = self._exchange(x)
        _check_alike(values, "all_gather")
        return np.stack([np.asarray(v) for v in values])

    def permute(self, x, perm):
        values = self._exchange(x)
        for src, dst in perm:
            if dst == self.index:
                return _like(np.array(values[src], copy=True), x)
        return _like(np.zeros_like(np.asarray(x)), x)

    def barrier(self):
        self._wait()

    def abort(self, exc):
        if self._shared.error is None:
            self._shared.error = exc
        self._shared.barrier.abort()


def _check_alike(values, what):
    shapes = {np.shape(v) for v in values}
    if len(shapes) > 1:
        listed = ", ".join(f"device {i}: {np.shape(v)}" for i, v in enumerate(values))
        raise ValueError(f"{what}: the workers' values have different shapes ({listed}); "
                         "every worker must pass a value of the same shape")


def _like(out, x):
    """``out`` with ``x``'s kind: a NumPy scalar for a scalar, an array for an array."""
    if isinstance(x, np.ndarray):
        return np.asarray(out, dtype=x.dtype)
    if isinstance(x, (float, int, complex, bool, np.generic)):
        return np.asarray(out, dtype=np.result_type(x))[()]
    return out


class SoloGroup(Group):
    """A group of ``size`` devices that all hold the caller's value: what a
    probe of one example sees (results of the right shape and dtype)."""

    def __init__(self, size):
        self.size = size
        self.index = 0

    def allreduce(self, x, op):
        return _like(np.asarray(x) * self.size, x) if op == "sum" else x

    def allgather(self, x):
        return np.stack([np.asarray(x)] * self.size)

    def permute(self, x, perm):
        return x

    def barrier(self):
        pass

    def abort(self, exc):
        pass
