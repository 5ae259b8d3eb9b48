"""Benchmarks of MPI collectives across the ranks of one machine.

    python tools/bench_mpi.py            # measures, then starts itself under mpiexec -n 2
    python tools/bench_mpi.py --ranks 4

1. One all-reduce of one float64 (issue #20's target: at most 20 us with 2
   ranks from compiled code, ``tangent_x.numba_stage.mpi_calls`` inside
   ``numba.njit``: ``allreduce_unchecked``, one MPI call, and ``allreduce``,
   which checks sizes and dtypes with a small all-reduce first); for comparison, mpi4py's buffer ``Allreduce`` from
   Python, and ``MPIGroup.allreduce`` (the path of pmap's eager workers:
   shapes checked, sums in device order).  Median over rounds of ``count``
   calls in a loop, divided by ``count``; the ranks start each round
   together (a barrier).
2. Data-parallel gradient (issue #20's target: 2 ranks at least 1.6x
   faster than 1 process): ``tx.grad`` of the 784-64-10 tanh MLP of
   examples/mlp.py on a batch of 256, in one process (measured before the
   launch, alone), against 2 ranks each on 128 rows followed by the
   all-reduce of the gradients (MPIGroup), whose mean equals the one-process
   gradient (checked to 1e-12 first).

BLAS and Numba run one thread each, so that ranks, not threads, give the
parallelism.  Needs the ``[mpi]`` extra.  Rank 0 prints markdown tables.
"""
import argparse
import os
import subprocess
import sys
import time

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ[_var] = "1"
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "examples"))

import numpy as np  # noqa: E402

import tangent_x as tx  # noqa: E402
from tangent_x import distributed  # noqa: E402

BATCH = 256


def mlp_problem():
    from mlp import init_params, loss   # examples/mlp.py
    rng = np.random.default_rng(0)
    x = rng.normal(size=(BATCH, 784))
    y = rng.normal(size=(BATCH, 10))
    return init_params([784, 64, 10]), x, y, tx.grad(loss)


def median_seconds(fn, rounds, repeat, before=None):
    times = []
    for _ in range(rounds):
        if before is not None:
            before()
        start = time.perf_counter()
        for _ in range(repeat):
            fn()
        times.append((time.perf_counter() - start) / repeat)
    return float(np.median(times))


def one_process_gradient(rounds):
    params, x, y, grad = mlp_problem()
    grad(params, x, y)
    return median_seconds(lambda: grad(params, x, y), rounds, 10)


def relaunch(args, alone):
    mpiexec = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    command = [mpiexec, "-n", str(args.ranks), sys.executable, os.path.abspath(__file__),
               "--ranks", str(args.ranks), "--count", str(args.count), "--rounds", str(args.rounds),
               "--alone", repr(alone)]
    raise SystemExit(subprocess.call(command))


def bench_allreduce(args, comm, group):
    import numba
    from mpi4py import MPI
    from tangent_x.numba_stage import mpi_calls
    handle = mpi_calls.handle_of(comm)

    @numba.njit
    def compiled(count, comm):
        total = 0.0
        for i in range(count):
            total += mpi_calls.allreduce_unchecked(1.0 * i, mpi_calls.SUM, comm)
        return total

    @numba.njit
    def compiled_checked(count, comm):
        total = 0.0
        for i in range(count):
            total += mpi_calls.allreduce(1.0 * i, mpi_calls.SUM, comm)
        return total

    def mpi4py_buffers(count):
        send, out = np.ones(1), np.empty(1)
        for _ in range(count):
            comm.Allreduce(send, out, MPI.SUM)

    def group_python(count):
        for _ in range(count):
            group.allreduce(1.0, "sum")

    assert compiled(10, handle) == comm.Get_size() * 45.0     # right answer first (and compiled)
    assert compiled_checked(10, handle) == comm.Get_size() * 45.0
    rows = []
    for name, fn, count in (("compiled (njit, mpi_calls.allreduce_unchecked)",
                             lambda n: compiled(n, handle), args.count),
                            ("compiled, sizes checked first (mpi_calls.allreduce)",
                             lambda n: compiled_checked(n, handle), args.count),
                            ("mpi4py Allreduce from Python", mpi4py_buffers, args.count),
                            ("MPIGroup.allreduce (eager pmap path)", group_python, args.count // 10)):
        fn(100)
        seconds = median_seconds(lambda: fn(count), args.rounds, 1, before=comm.Barrier) / count
        rows.append((name, 1e6 * seconds))
    return rows


def bench_gradient(args, comm, group):
    params, x, y, grad = mlp_problem()
    ranks, rank = comm.Get_size(), comm.Get_rank()
    part = BATCH // ranks
    mine = slice(rank * part, (rank + 1) * part)

    def step():
        grads = grad(params, x[mine], y[mine])
        return tx.tree_util.tree_map(lambda g: group.allreduce(g, "sum", name="gradient") / ranks,
                                     grads)

    whole = grad(params, x, y)
    gap = max(float(np.max(np.abs(a - b))) for a, b in
              zip(tx.tree_util.tree_leaves(step()), tx.tree_util.tree_leaves(whole)))
    assert gap <= 1e-12, gap
    return median_seconds(step, args.rounds, 10, before=comm.Barrier)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--count", type=int, default=20000, help="all-reduces per round")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--alone", type=float, help="(set by the launch) one process's gradient time")
    args = parser.parse_args()
    if not distributed.launched_by_mpiexec():
        relaunch(args, one_process_gradient(args.rounds))
    distributed.initialize()
    from tangent_x.parallel.mpi import MPIGroup
    comm, group = distributed.communicator(), MPIGroup(1)
    ranks = comm.Get_size()
    reduce_rows = bench_allreduce(args, comm, group)
    parallel = bench_gradient(args, comm, group)
    if comm.Get_rank() != 0:
        return
    print("load average (1, 5, 15 min): %.1f %.1f %.1f on %d CPUs: figures mean little when it "
          "exceeds the CPUs\n" % (*os.getloadavg(), os.cpu_count()))
    print(f"all-reduce of one float64, {ranks} ranks on one machine (median of {args.rounds} rounds)\n")
    print("| from | us per all-reduce |")
    print("| --- | --- |")
    for name, micros in reduce_rows:
        print(f"| {name} | {micros:.2f} |")
    print(f"\ndata-parallel gradient, MLP 784-64-10, batch {BATCH}\n")
    print(f"| 1 process | {ranks} ranks (incl. all-reduce) | speed-up |")
    print("| --- | --- | --- |")
    print(f"| {1e3 * args.alone:.2f} ms | {1e3 * parallel:.2f} ms | {args.alone / parallel:.2f}x |")
    compiled = reduce_rows[0][1]
    print(f"\ntargets with 2 ranks: compiled all-reduce <= 20 us: {compiled:.2f} us; "
          f"gradient speed-up >= 1.6x: {args.alone / parallel:.2f}x")


if __name__ == "__main__":
    main()
