"""``Group``: the devices one collective spans, seen from one worker; and
``ThreadGroup``, its one-process form (one thread per local device).

A collective is a rendezvous: every worker hands in its value, waits until
all have, reads every value, and waits again before the slots are reused.
Reductions run in device order (``((x0 + x1) + x2) + ...``) on every
worker, so all workers get bitwise the same result, and the same as a loop
over the devices adding in that order.

A worker that fails calls ``abort``: the rendezvous breaks, every worker
waiting in (or later entering) a collective raises ``WorkerAborted``, and
pmap re-raises the first worker's own error -- no hang.  A worker that
returns while others wait in a collective breaks it too
(``CollectiveMismatch``: the devices called different collectives).
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


class CollectiveMismatch(RuntimeError):
    """A worker returned while the others wait in a collective: the devices
    did not call the same collectives in the same order."""


class _Rendezvous:
    """A reusable barrier for ``size`` threads that breaks, instead of
    hanging, when a worker aborts or returns while others wait."""

    def __init__(self, size, timeout):
        self.size = size
        self.timeout = timeout
        self.cond = threading.Condition()
        self.arrived = 0
        self.generation = 0
        self.broken = None          # the exception waiting workers raise
        self.finished = set()

    def wait(self, index):
        with self.cond:
            if self.broken is not None:
                raise type(self.broken)(str(self.broken))
            generation = self.generation
            self.arrived += 1
            if self.arrived == self.size:
                self.arrived = 0
                self.generation += 1
                self.cond.notify_all()
                return
            waited = 0.0
            while generation == self.generation and self.broken is None:
                if self.finished:
                    done = sorted(self.finished)
                    self.broken = CollectiveMismatch(
                        f"pmap: device {index} waits in a collective that device(s) "
                        f"{', '.join(map(str, done))} returned without reaching: every "
                        "device must call the same collectives in the same order")
                    self.cond.notify_all()
                    break
                if self.timeout is not None and waited >= self.timeout:
                    self.broken = CollectiveMismatch(
                        f"pmap: device {index} waited {self.timeout:.0f} s in a collective "
                        "that not every device reached")
                    self.cond.notify_all()
                    break
                self.cond.wait(0.5)
                waited += 0.5
            if generation == self.generation:
                raise type(self.broken)(str(self.broken))

    def finish(self, index):
        with self.cond:
            self.finished.add(index)
            self.cond.notify_all()

    def abort(self):
        with self.cond:
            if self.broken is None:
                self.broken = WorkerAborted(
                    "pmap: another worker failed; its error is the one reported")
            self.cond.notify_all()


class _Shared:
    """What the threads of one pmap call share: a slot per device and the
    rendezvous."""

    def __init__(self, size, timeout):
        self.size = size
        self.slots = [None] * size
        self.rendezvous = _Rendezvous(size, timeout)
        self.error = None


class ThreadGroup(Group):
    """One worker thread's view of a group of ``size`` threads.

    ``ThreadGroup.create(size)`` returns the ``size`` views, one per worker.
    ``timeout`` (seconds, None: none) bounds a rendezvous; a worker that
    returns while others wait in a collective breaks it at once
    (``CollectiveMismatch``)."""

    def __init__(self, shared, index):
        self._shared = shared
        self.size = shared.size
        self.index = index

    @classmethod
    def create(cls, size, timeout=None):
        shared = _Shared(size, timeout)
        return [cls(shared, i) for i in range(size)]

    def _wait(self):
        self._shared.rendezvous.wait(self.index)

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

    def finish(self):
        """This worker returned: a collective the others wait in can never
        complete."""
        self._shared.rendezvous.finish(self.index)

    def abort(self, exc):
        if self._shared.error is None:
            self._shared.error = exc
        self._shared.rendezvous.abort()


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
