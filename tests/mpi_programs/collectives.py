"""Run under mpiexec: MPIGroup's and mpi_calls' collectives equal NumPy on the gathered data.

Every rank draws every device's operand from the device's own seed, so the
expected values are NumPy over the whole data, computed without MPI.
Argument: the local devices (threads) per process.
"""
import sys
import threading

import numba
import numpy as np

from tangent_x import distributed
from tangent_x.parallel.mpi import MPIGroup

distributed.initialize()
from tangent_x.numba_stage import mpi_calls  # noqa: E402  (needs mpi4py, imported after initialize)

LOCAL = int(sys.argv[1]) if len(sys.argv) > 1 else 1
RANK, PROCESSES = distributed.process_index(), distributed.process_count()
DEVICES = LOCAL * PROCESSES


def operand(device, dtype, shape=(3, 2)):
    rng = np.random.default_rng(100 + device)
    if dtype == np.int64:
        return rng.integers(-50, 50, size=shape).astype(dtype)
    return rng.normal(size=shape).astype(dtype)


def sequential_sum(parts):
    total = parts[0].copy()
    for part in parts[1:]:
        total += part
    return total


def check_group(worker, dtype, transposed):
    everyone = np.stack([operand(d, dtype) for d in range(DEVICES)])
    x = operand(worker.index, dtype)
    if transposed:      # a non-contiguous operand: its values, not its memory order, count
        everyone, x = everyone.transpose(0, 2, 1), x.T
    got = worker.allreduce(x, "sum")
    assert got.dtype == dtype and got.shape == x.shape
    assert np.array_equal(got, sequential_sum(list(everyone))), (got, everyone)
    assert np.array_equal(worker.allreduce(x, "max"), everyone.max(axis=0))
    assert np.array_equal(worker.allreduce(x, "min"), everyone.min(axis=0))
    assert np.array_equal(worker.allgather(x), everyone)
    scalar = worker.allreduce(float(worker.index + 1), "sum")
    assert scalar == DEVICES * (DEVICES + 1) / 2 and np.ndim(scalar) == 0
    # a ring: device i sends to i + 1; with one extra pair missing, device 0 gets zeros
    perm = [(i, i + 1) for i in range(DEVICES - 1)]
    moved = worker.permute(x, perm)
    expected = everyone[worker.index - 1] if worker.index > 0 else np.zeros_like(x)
    assert np.array_equal(moved, expected)
    worker.barrier()


def run_group():
    workers = MPIGroup.create(LOCAL)
    assert [w.size for w in workers] == [DEVICES] * LOCAL
    assert [w.index for w in workers] == list(range(RANK * LOCAL, (RANK + 1) * LOCAL))
    errors = []

    def work(i):
        try:
            for dtype in (np.float64, np.float32, np.int64):
                for transposed in (False, True):
                    check_group(workers[i], dtype, transposed)
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)
            workers[i].abort(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(LOCAL)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


@numba.njit(cache=True)
def compiled_collectives(x, s, comm):
    return (mpi_calls.allreduce(x, mpi_calls.SUM, comm), mpi_calls.allreduce(x, mpi_calls.MAX, comm),
            mpi_calls.allreduce(x, mpi_calls.MIN, comm), mpi_calls.allgather(x, comm),
            mpi_calls.allreduce(s, mpi_calls.SUM, comm), mpi_calls.allgather(s, comm),
            mpi_calls.comm_rank(comm), mpi_calls.comm_size(comm),
            mpi_calls.allreduce_unchecked(x, mpi_calls.SUM, comm), mpi_calls.allgather_unchecked(x, comm))


def run_compiled():
    comm = mpi_calls.handle_of(distributed.communicator())
    for dtype in (np.float64, np.float32, np.int64):
        everyone = np.stack([operand(r, dtype) for r in range(PROCESSES)])
        x = operand(RANK, dtype)
        for operand_x, whole in ((x, everyone), (x.T, everyone.transpose(0, 2, 1))):
            scalar = dtype(RANK + 1)
            total, high, low, gathered, s_total, s_gathered, rank, size, total_u, gathered_u = \
                compiled_collectives(operand_x, scalar, comm)
            assert np.array_equal(total_u, total) and np.array_equal(gathered_u, gathered)
            # MPI sums in its own order: equal to NumPy's up to rounding
            assert total.dtype == dtype and total.shape == operand_x.shape
            assert np.allclose(total, whole.sum(axis=0), rtol=1e-6 if dtype == np.float32 else 1e-14)
            assert np.array_equal(high, whole.max(axis=0)) and np.array_equal(low, whole.min(axis=0))
            assert np.array_equal(gathered, whole)
            assert s_total == PROCESSES * (PROCESSES + 1) // 2 and s_gathered.dtype == dtype
            assert np.array_equal(s_gathered, np.arange(1, PROCESSES + 1, dtype=dtype))
            assert (rank, size) == (RANK, PROCESSES)
            # the same functions called from Python (mpi4py)
            assert np.allclose(mpi_calls.allreduce(operand_x, mpi_calls.SUM, comm), total)
            assert np.array_equal(mpi_calls.allgather(operand_x, comm), whole)
    mpi_calls.barrier(comm)


run_group()
run_compiled()
print(f"OK rank {RANK} of {PROCESSES}, {LOCAL} local devices", flush=True)
