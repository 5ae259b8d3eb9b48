"""Run under mpiexec: the last rank raises while the others wait in a
collective; every rank must stop (no hang) with that error printed.
Argument: where the others wait: "python", "compiled" or "thread"."""
import sys
import threading

import numba
import numpy as np

from tangent_x import distributed
from tangent_x.parallel.mpi import MPIGroup

distributed.initialize()
from tangent_x.numba_stage import mpi_calls  # noqa: E402

WHERE = sys.argv[1]
RANK, LAST = distributed.process_index(), distributed.process_count() - 1


@numba.njit
def wait_in_compiled(x, comm):
    return mpi_calls.allreduce(x, mpi_calls.SUM, comm)


if WHERE == "thread":
    # two local workers; worker 1 of the last rank fails, the rest wait in allreduce
    group = MPIGroup(2)

    def work(i):
        worker = group.worker(i)
        try:
            if RANK == LAST and i == 1:
                raise ValueError(f"device {worker.index} fails on purpose")
            worker.allreduce(np.ones(3))
        except BaseException as exc:  # noqa: BLE001
            worker.abort(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
elif RANK == LAST:
    raise ValueError(f"rank {RANK} fails on purpose")
elif WHERE == "compiled":
    wait_in_compiled(np.ones(3), mpi_calls.handle_of(distributed.communicator()))
else:
    MPIGroup(1).allreduce(np.ones(3))
if RANK != LAST:     # (the failing rank's own other threads may run while it ends)
    print(f"rank {RANK} went on after the failure", flush=True)
