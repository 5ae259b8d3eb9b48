"""Run under mpiexec twice with one NUMBA_CACHE_DIR: the second launch
loads the compiled collectives from Numba's disk cache and still computes
the right sums.  Argument: "first" or "second"."""
import sys

import numba
import numpy as np

from tangent_x import distributed

distributed.initialize()
from tangent_x.numba_stage import mpi_calls  # noqa: E402

RANK, PROCESSES = distributed.process_index(), distributed.process_count()


@numba.njit(cache=True)
def total(x, comm):
    return mpi_calls.allreduce(x, mpi_calls.SUM, comm) + mpi_calls.allreduce(1.0, mpi_calls.SUM, comm)


got = total(np.arange(4.0) * (RANK + 1), mpi_calls.handle_of(distributed.communicator()))
expected = np.arange(4.0) * (PROCESSES * (PROCESSES + 1) / 2) + PROCESSES
assert np.array_equal(got, expected), (got, expected)
hits = sum(total.stats.cache_hits.values())
if sys.argv[1] == "second":
    assert hits == 1, total.stats
print(f"OK rank {RANK} cache hits {hits}", flush=True)
