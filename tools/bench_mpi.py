"""Benchmarks of MPI collectives across the ranks of one machine.

    python tools/bench_mpi.py            # measures, then starts itself under mpiexec -n 2
    python tools/bench_mpi.py --ranks 4

1. One all-reduce of one float64 (issue #20's target: at most 20 us with 2
   ranks from compiled code): ``lax.psum`` in a ``jit(pmap(f))`` shard with
   one device per rank (a direct MPI call, ``numba_stage.mpi_shard``), the
   same through the objmode callback (the path with several local
   devices), and a psum of a 64-element array (a shape check, one small
   all-reduce, then the data); ``tangent_x.numba_stage.mpi_calls`` inside
   ``numba.njit`` (``allreduce_unchecked``, one MPI call, and ``allreduce``,
   sizes checked first); controls: mpi4py's buffer ``Allreduce`` from
   Python, and ``MPIGroup.allreduce`` (eager pmap's path).  Median over
   rounds of ``count`` calls in a loop, divided by ``count``; the ranks
   start each round together (a barrier).
2. Data-parallel gradient (issue #20's target: 2 ranks at least 1.6x
   faster than 1 process on twice the batch): ``jit(pmap(step))`` of
   examples/pmap_sgd.py's step (gradient, one pmean per parameter, update)
   on tools/bench_pmap.py's 256-512-10 MLP: one process, one device, 1024
   rows (measured before the launch, alone) against each rank on 512 rows;
   also through the callback, and eager ``tx.grad`` of examples/mlp.py's
   784-64-10 MLP with ``MPIGroup.allreduce`` (batch 256).  Control: plain
   NumPy matrix products, the same total work in 1 process and split over
   the ranks -- what the machine gives now (other jobs share its cores).

BLAS and Numba run one thread each, so that ranks, not threads, give the
parallelism.  Needs the ``[mpi]`` extra.  Rank 0 prints markdown tables and
the ratios the acceptance names.
"""
import argparse
import json
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
from tangent_x import distributed, lax  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_pmap  # noqa: E402  (tools/: the MLP problem of the threads benchmark)
import pmap_sgd  # noqa: E402  (examples/)

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


MATMULS = 24        # the control's matrix products (600 x 600), split over the ranks


def control_work(share):
    a = np.random.default_rng(1).random((600, 600))
    for _ in range(share):
        a @ a


def psum_loop(x, count):
    """``count`` all-reduces of ``x`` from a compiled shard."""
    total = x * 0.0
    for _ in range(count):
        total = total + lax.psum(x, "i")
    return total


def mapped_step(callback=False):
    """jit(pmap(step)) of the data-parallel SGD step; ``callback``: its
    collectives through the objmode callback (the path before direct MPI)."""
    mapped = tx.jit(tx.pmap(pmap_sgd.step, axis_name="batch", in_axes=(None,) * 4 + (0, 0),
                            out_axes=None))
    if callback:
        mapped._mpi_shard = lambda shard_fn: shard_fn
    return mapped


def step_problem(ranks, rank):
    """The MLP's parameters and this rank's rows (all of them for 1 process)."""
    params, x, y = bench_pmap._problem(False)
    part = len(x) // ranks
    mine = slice(rank * part, (rank + 1) * part)
    return params, x[mine][None], y[mine][None]


def one_process(rounds):
    """What 1 process takes (seconds), measured before the launch."""
    params, x, y, grad = mlp_problem()
    grad(params, x, y)
    times = {"eager": median_seconds(lambda: grad(params, x, y), rounds, 10)}
    p, xs, ys = step_problem(1, 0)
    step = mapped_step()
    step(*p, xs, ys)
    times["jit_pmap"] = median_seconds(lambda: step(*p, xs, ys), rounds, 3)
    return times


def relaunch(args, alone):
    mpiexec = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    command = [mpiexec, "-n", str(args.ranks), sys.executable, os.path.abspath(__file__),
               "--ranks", str(args.ranks), "--count", str(args.count), "--rounds", str(args.rounds),
               "--alone", json.dumps(alone)]
    environ = dict(os.environ, TANGENT_X_NUM_DEVICES="1")
    raise SystemExit(subprocess.call(command, env=environ))


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

    ranks = comm.Get_size()
    assert compiled(10, handle) == ranks * 45.0     # right answer first (and compiled)
    assert compiled_checked(10, handle) == ranks * 45.0
    direct = tx.jit(tx.pmap(psum_loop, axis_name="i", in_axes=(0, None)))
    through_callback = tx.jit(tx.pmap(psum_loop, axis_name="i", in_axes=(0, None)))
    through_callback._mpi_shard = lambda shard_fn: shard_fn
    vector = tx.jit(tx.pmap(psum_loop, axis_name="i", in_axes=(0, None)))
    one, ones = np.array([1.0]), np.ones((1, 64))
    for mapped, operand in ((direct, one), (through_callback, one), (vector, ones)):
        assert np.array_equal(mapped(operand, 10), 10.0 * ranks * operand)
    rows = []
    for name, fn, count in (("jit(pmap) shard's lax.psum, direct MPI call (one device per rank)",
                             lambda n: direct(one, n), args.count),
                            ("jit(pmap) shard's lax.psum through the objmode callback (before)",
                             lambda n: through_callback(one, n), args.count // 10),
                            ("jit(pmap) lax.psum of a float64[64], shape check + MPI_Allreduce",
                             lambda n: vector(ones, n), args.count),
                            ("compiled (njit, mpi_calls.allreduce_unchecked)",
                             lambda n: compiled(n, handle), args.count),
                            ("compiled, sizes checked first (mpi_calls.allreduce)",
                             lambda n: compiled_checked(n, handle), args.count),
                            ("mpi4py Allreduce from Python", mpi4py_buffers, args.count),
                            ("MPIGroup.allreduce (eager pmap path)", group_python, args.count // 10)):
        fn(100)
        seconds = median_seconds(lambda: fn(count), args.rounds, 1, before=comm.Barrier) / count
        rows.append((name, 1e6 * seconds))
    return rows


def interleaved(comm, alone, together, rounds, repeat):
    """Median seconds of ``alone()`` on rank 0 (the other ranks sleep,
    polling for its end, so that they take no core) and of ``together()``
    on every rank, alternating round by round: on a shared machine both see
    the same load."""
    ones, alls = [], []
    for _ in range(rounds):
        comm.Barrier()
        if comm.Get_rank() == 0:
            ones.append(median_seconds(alone, 1, repeat))
            for other in range(1, comm.Get_size()):
                comm.send(None, dest=other, tag=7)
        else:
            while not comm.Iprobe(source=0, tag=7):
                time.sleep(0.001)
            comm.recv(source=0, tag=7)
        alls.append(median_seconds(together, 1, repeat, before=comm.Barrier))
    return (float(np.median(ones)) if ones else float("nan")), float(np.median(alls))


def bench_step(args, comm):
    """The data-parallel step, 1 process (jit of the same step on the whole
    batch: a pmean over one device is the identity) against jit(pmap(step))
    on every rank's rows, direct and through the callback; and the NumPy
    control: (1 process, ranks) seconds each, measured interleaved."""
    ranks, rank = comm.Get_size(), comm.Get_rank()
    p, xs, ys = step_problem(ranks, rank)
    _, whole_x, whole_y = step_problem(1, 0)
    single = tx.jit(pmap_sgd.single_step)
    whole = single(*p, whole_x[0], whole_y[0])
    pairs = []
    for callback in (False, True):
        step = mapped_step(callback)
        out = step(*p, xs, ys)
        gap = max(float(np.max(np.abs(a - b))) for a, b in zip(out, whole))
        assert gap <= 1e-12, gap
        pairs.append(interleaved(comm, lambda: single(*p, whole_x[0], whole_y[0]),
                                 lambda: step(*p, xs, ys), args.rounds, 3))
    pairs.append(interleaved(comm, lambda: control_work(MATMULS),
                             lambda: control_work(MATMULS // ranks), args.rounds, 1))
    return pairs


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
    parser.add_argument("--alone", help="(set by the launch) one process's times, JSON")
    args = parser.parse_args()
    if not distributed.launched_by_mpiexec():
        relaunch(args, one_process(args.rounds))
    distributed.initialize()
    from tangent_x.parallel.mpi import MPIGroup
    comm, group = distributed.communicator(), MPIGroup(1)
    ranks = comm.Get_size()
    progress = (lambda what: print(what, file=sys.stderr, flush=True)) if comm.Get_rank() == 0 \
        else (lambda what: None)
    progress("all-reduces ...")
    reduce_rows = bench_allreduce(args, comm, group)
    progress("eager gradient ...")
    parallel = bench_gradient(args, comm, group)
    progress("jit(pmap(step)) and control, interleaved ...")
    direct, callback, control = bench_step(args, comm)
    alone = json.loads(args.alone)
    if comm.Get_rank() != 0:
        return
    print("load average (1, 5, 15 min): %.1f %.1f %.1f on %d CPUs: figures mean little when it "
          "exceeds the CPUs\n" % (*os.getloadavg(), os.cpu_count()))
    print(f"all-reduce of one float64, {ranks} ranks on one machine (median of {args.rounds} rounds)\n")
    print("| from | us per all-reduce |")
    print("| --- | --- |")
    for name, micros in reduce_rows:
        print(f"| {name} | {micros:.2f} |")
    print(f"\ndata-parallel gradient: 1 process on the whole batch vs {ranks} ranks on "
          f"1/{ranks} each (median of {args.rounds} rounds)\n")
    print(f"| workload | 1 process | {ranks} ranks | speed-up |")
    print("| --- | --- | --- | --- |")
    sizes = "-".join(map(str, bench_pmap.SIZES))
    rows = [(f"jit(pmap(step)), MLP {sizes}, batch {2 * bench_pmap.PER_WORKER}, direct MPI "
             "(1 process: jit of the step, interleaved)", *direct),
            ("same, collectives through the objmode callback", *callback),
            ("jit(pmap(step)) with 1 worker, measured before the launch, vs direct MPI",
             alone["jit_pmap"], direct[1]),
            (f"eager tx.grad + MPIGroup.allreduce, MLP 784-64-10, batch {BATCH} (before the "
             "launch)", alone["eager"], parallel),
            (f"control: {MATMULS} NumPy 600x600 products split over the ranks (no tangent_x, "
             "interleaved)", *control)]
    for name, one, many in rows:
        print(f"| {name} | {1e3 * one:.2f} ms | {1e3 * many:.2f} ms | {one / many:.2f}x |")
    psum = reduce_rows[0][1]
    print(f"\nacceptance ({ranks} ranks; target with 2): jit(pmap) all-reduce of a float64 "
          f"{psum:.2f} us (<= 20 us; mpi4py Allreduce from Python: {reduce_rows[5][1]:.2f} us); "
          f"data-parallel gradient {direct[0] / direct[1]:.2f}x (>= 1.6x; the machine "
          f"gives {control[0] / control[1]:.2f}x now, control row)")


if __name__ == "__main__":
    main()
