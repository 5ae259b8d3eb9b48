"""Micro-benchmark: one all-reduce of one float64 across 2 MPI ranks.

    python tools/bench_mpi.py            # starts itself under mpiexec -n 2
    python tools/bench_mpi.py --ranks 4

Issue #20's target: from compiled code (``tangent_x.numba_stage.mpi_calls``
inside ``numba.njit``), at most 20 us per all-reduce with 2 ranks.  For
comparison, in the same run: mpi4py's buffer ``Allreduce`` from Python, and
MPIGroup's ``allreduce`` (the Python path pmap's eager workers take: one
pickled allgather, sums in device order).  Each figure is the median over
rounds of ``count`` calls in a loop, divided by ``count``; the ranks
start each round together (a barrier).  Needs the ``[mpi]`` extra.
Printed by rank 0 as a markdown table.
"""
import argparse
import os
import subprocess
import sys
import time


def relaunch(ranks):
    mpiexec = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    command = [mpiexec, "-n", str(ranks), sys.executable, os.path.abspath(__file__),
               "--ranks", str(ranks)]
    raise SystemExit(subprocess.call(command))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--count", type=int, default=20000, help="all-reduces per round")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    from tangent_x import distributed
    if not distributed.launched_by_mpiexec():
        relaunch(args.ranks)
    import numba
    import numpy as np
    distributed.initialize()
    from tangent_x.numba_stage import mpi_calls
    from tangent_x.parallel.mpi import MPIGroup
    comm = distributed.communicator()
    handle = mpi_calls.handle_of(comm)

    @numba.njit
    def compiled(count, comm):
        total = 0.0
        for i in range(count):
            total += mpi_calls.allreduce(1.0 * i, mpi_calls.SUM, comm)
        return total

    from mpi4py import MPI

    def mpi4py_buffers(count, _):
        send, out = np.ones(1), np.empty(1)
        for _ in range(count):
            comm.Allreduce(send, out, MPI.SUM)

    group = MPIGroup(1)

    def group_python(count, _):
        for _ in range(count):
            group.allreduce(1.0, "sum")

    ranks = comm.Get_size()
    assert compiled(10, handle) == ranks * 45.0      # right answer first (and compiled)
    rows = []
    for name, fn, count in (("compiled (njit, mpi_calls.allreduce)", compiled, args.count),
                            ("mpi4py Allreduce from Python", mpi4py_buffers, args.count),
                            ("MPIGroup.allreduce (eager pmap path)", group_python, args.count // 10)):
        fn(100, handle)
        times = []
        for _ in range(args.rounds):
            comm.Barrier()
            start = time.perf_counter()
            fn(count, handle)
            times.append((time.perf_counter() - start) / count)
        rows.append((name, 1e6 * float(np.median(times))))
    if comm.Get_rank() == 0:
        print(f"all-reduce of one float64, {ranks} ranks on one machine (median of {args.rounds} rounds)\n")
        print("| from | us per all-reduce |")
        print("| --- | --- |")
        for name, micros in rows:
            print(f"| {name} | {micros:.2f} |")
        verdict = "holds" if rows[0][1] <= 20 else "MISSED"
        print(f"\ntarget: compiled <= 20 us with 2 ranks: {verdict} ({rows[0][1]:.2f} us)")


if __name__ == "__main__":
    main()
