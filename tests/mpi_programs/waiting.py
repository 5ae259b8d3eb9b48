"""Run under mpiexec -n 2: a rank that reaches a collective first waits for
the late one without holding a core (``distributed.wait`` and its compiled
twin in ``mpi_calls``), and the collective's result is right.

Rank 1 sleeps ``LATE`` seconds before each collective; rank 0 measures the
CPU time it spends waiting there.  MPICH's own blocking wait polls
throughout (about ``LATE`` seconds of CPU on an idle core); the wait takes
a small part of it.  Argument ``pmap``: also a ``jit(pmap)`` shard's psum
(compiling it takes a while).  It sets the sleeping waits
(``set_waiting(*distributed.SLEEPING)``, opt-in); ``mpi-wait``: leave the
waiting to MPI (the default), to see the polling they guard against.
"""
import sys
import time

import numba
import numpy as np

import tangent_x as tx
from tangent_x import distributed, lax
from tangent_x.parallel.mpi import MPIGroup

distributed.initialize()
from tangent_x.numba_stage import mpi_calls  # noqa: E402  (needs mpi4py, imported after initialize)

LATE = 1.0
MOST_CPU = 0.25     # seconds of CPU rank 0 may spend waiting LATE seconds
RANK, PROCESSES = distributed.process_index(), distributed.process_count()
COMM = distributed.communicator()
HANDLE = mpi_calls.handle_of(COMM)
assert PROCESSES == 2, PROCESSES
# sleeping waits are opt-in (MPI's own waiting is the default: distributed.WAITING)
distributed.set_waiting(*(distributed.SLEEPING if "mpi-wait" not in sys.argv
                          else (float("inf"),)))


@numba.njit
def compiled_sum(x, comm):
    return mpi_calls.allreduce(x, mpi_calls.SUM, comm)


@numba.njit
def compiled_barrier(comm):
    mpi_calls.barrier(comm)


def shard(x):
    return lax.psum(x, "i")


mapped = tx.jit(tx.pmap(shard, axis_name="i"))
x = np.arange(3.0) + 10 * RANK
both = np.arange(3.0) * 2 + 10
calls = [("compiled mpi_calls.allreduce", lambda: compiled_sum(x, HANDLE), both),
         ("mpi_calls.allreduce from Python", lambda: mpi_calls.allreduce(x, mpi_calls.SUM, HANDLE),
          both),
         ("MPIGroup.allreduce (eager pmap)", lambda: MPIGroup(1).allreduce(x, "sum"), both),
         ("compiled mpi_calls.barrier", lambda: compiled_barrier(HANDLE), None)]
if "pmap" in sys.argv:
    calls.append(("jit(pmap) shard's psum", lambda: mapped(x[None])[0], both))
for name, call, expected in calls:
    call()                          # compiled (and met) once first
    COMM.Barrier()
    if RANK == 1:
        time.sleep(LATE)
    cpu, wall = time.process_time(), time.perf_counter()
    got = call()
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    if expected is not None:
        assert np.array_equal(got, expected), (name, got)
    if RANK == 0:
        print(f"{name}: waited {wall:.2f} s, {cpu:.3f} s of CPU", flush=True)
        assert wall > 0.8 * LATE, (name, wall)         # it did wait for rank 1
        assert cpu < MOST_CPU, f"{name}: {cpu:.3f} s of CPU waiting {wall:.2f} s"
print(f"OK rank {RANK}", flush=True)
