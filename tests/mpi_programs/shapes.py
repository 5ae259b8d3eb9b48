"""Run under mpiexec: an operand (or argument) whose shape differs across
ranks gets the same ValueError on every rank, naming it and the shapes."""
import numpy as np

from tangent_x import distributed
from tangent_x.parallel.mpi import MismatchError, MPIGroup, WorkerAborted

distributed.initialize()
RANK = distributed.process_index()
group = MPIGroup(1)
for call in (lambda: group.allreduce(np.ones(2 + RANK), "sum", name="grads"),
             lambda: group.allgather(np.ones((2, 1 + RANK)), name="grads"),
             lambda: group.allreduce(np.ones(2, dtype=np.float32 if RANK else np.float64), name="grads")):
    try:
        call()
    except MismatchError as exc:
        message = str(exc)
        assert "'grads'" in message and "same shape and dtype on every device" in message, message
        assert "device 0 (process 0)" in message and "device 1 (process 1)" in message, message
    else:
        raise AssertionError("shapes differing across ranks were not refused")
try:
    group.check_arguments({"params": np.ones(3), "batch": np.ones((4, 2 + RANK)), "lr": 0.1})
except MismatchError as exc:
    mismatch, text = exc, str(exc)
    assert text.startswith("pmap: argument 'batch' differs across processes"), text
    assert "process 0: shape (4, 2) float64, process 1: shape (4, 3) float64" in text, text
else:
    raise AssertionError("arguments differing across ranks were not refused")
group.check_arguments({"params": np.ones(3), "lr": 0.1})
# a mismatch is raised alike on every rank: a worker handing it to abort()
# (as pmap does) breaks its own process's rendezvous but stops no rank
other = MPIGroup(2)
other.worker(1).abort(mismatch)
try:
    other.worker(0).allreduce(1.0)
except WorkerAborted as aborted:
    assert isinstance(aborted.__cause__, MismatchError), aborted
else:
    raise AssertionError("the aborted group's other worker went on")
# the compiled collectives (and their Python versions) check sizes and dtypes first
import numba  # noqa: E402
from tangent_x.numba_stage import mpi_calls  # noqa: E402


@numba.njit
def compiled_sum(x):
    return mpi_calls.allreduce(x, mpi_calls.SUM)


@numba.njit
def compiled_gather(x):
    return mpi_calls.allgather(x)


for call in (lambda: compiled_sum(np.ones(3 + RANK)), lambda: compiled_gather(np.ones(3 + RANK)),
             lambda: compiled_sum(np.ones(3, dtype=np.float32 if RANK else np.float64)),
             lambda: compiled_sum(np.float32(1.0) if RANK else 1.0),
             lambda: mpi_calls.allreduce(np.ones(3 + RANK)),
             lambda: mpi_calls.allgather(np.ones((1, 3 + RANK)))):
    try:
        result = call()
    except ValueError as exc:
        assert "differs across ranks" in str(exc), exc
    else:
        raise AssertionError(f"operands differing across ranks gave {result}")
assert np.array_equal(compiled_sum(np.ones(2)), np.full(2, distributed.process_count()))
group.barrier()
assert np.array_equal(group.allreduce(np.ones(2)), np.full(2, distributed.process_count()))
print(f"OK rank {RANK}: {message}", flush=True)
