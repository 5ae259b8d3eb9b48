"""Benchmarks of MPI collectives across the ranks of one machine.

    python tools/bench_mpi.py            # starts itself under mpiexec -n 2
    python tools/bench_mpi.py --ranks 4
    python tools/bench_mpi.py --bind     # ranks bound to cores (-bind-to core)

1. One all-reduce of one float64 (issue #20's target: at most 20 us with 2
   ranks from compiled code): ``lax.psum`` in a ``jit(pmap(f))`` shard with
   one device per rank (a direct MPI call, ``numba_stage.mpi_shard``,
   waited for by ``MPI_Wait``; also with the opt-in sleeping waits), the same through the objmode
   callback (the path with several local devices), and a psum of a
   64-element array (a shape check, one small all-reduce, then the data);
   ``tangent_x.numba_stage.mpi_calls`` inside ``numba.njit``
   (``allreduce_unchecked``, one MPI call, and ``allreduce``, sizes checked
   first); controls: mpi4py's blocking ``Allreduce`` from Python, and
   ``MPIGroup.allreduce`` (eager pmap's path).  Median over rounds of
   ``count`` calls in a loop, divided by ``count``; the ranks start each
   round together (a barrier).
2. Data-parallel gradient (issue #20's target: 2 ranks at least 1.6x
   faster than 1 process on twice the batch): ``jit(pmap(step))`` of
   examples/pmap_sgd.py's step (gradient, one pmean per parameter, update)
   on tools/bench_pmap.py's 256-512-10 MLP, each rank on 512 rows, against
   one process on all 1024 rows (``jit`` of the same step: a pmean over one
   device is the identity, so the 1-process side does no less work than
   a 1-worker pmap).  Both sides run in the same launch, on rank 0 alone
   (the other ranks sleep) and on every rank, alternating round by round:
   the same process, memory settings (``distributed.keep_freed_memory``)
   and thread counts, and on a shared machine the same load.  The speed-up
   is the median over rounds of each round's ratio (with its quartiles).
   Rows: collectives waited for by MPI (``MPI_Wait``, MPICH's polling: the
   default), the opt-in sleeping waits (``distributed.SLEEPING``), collectives
   through the objmode callback; eager ``tx.grad`` of examples/mlp.py's
   784-64-10 MLP with ``MPIGroup.allreduce``; and a control: plain NumPy
   matrix products, the same total work on 1 process and split over the
   ranks -- what the machine gives now (other jobs share its cores).  The
   CPU time per step (1 process; the busiest rank) tells the work done
   from the share of the cores the machine gave: its ratio bounds the
   speed-up the ranks would reach with a core each (polling while waiting
   counts as work, and a loaded machine makes the waits longer, so it is
   lower there than on an idle machine).

BLAS and Numba run one thread each, so that ranks, not threads, give the
parallelism.  Needs the ``[mpi]`` extra.  Rank 0 prints markdown tables, the
load average before and after, and the ratios the acceptance names.
"""
import argparse
import os
import resource
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


def relaunch(args):
    mpiexec = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    command = [mpiexec, *(["-bind-to", "core"] if args.bind else []), "-n", str(args.ranks),
               sys.executable, os.path.abspath(__file__), "--ranks", str(args.ranks),
               "--count", str(args.count), "--rounds", str(args.rounds),
               "--step-rounds", str(args.step_rounds)]
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

    def sleeping(n):
        before = distributed.set_waiting(*distributed.SLEEPING)
        try:
            direct(one, n)
        finally:
            distributed.set_waiting(*before)

    rows = []
    for name, fn, count in (("jit(pmap) shard's lax.psum, direct MPI call (one device per rank)",
                             lambda n: direct(one, n), args.count),
                            ("same, sleeping waits (set_waiting(*distributed.SLEEPING), opt-in)",
                             sleeping, args.count),
                            ("jit(pmap) shard's lax.psum through the objmode callback (before)",
                             lambda n: through_callback(one, n), args.count // 10),
                            ("jit(pmap) lax.psum of a float64[64], shape check + MPI_Allreduce",
                             lambda n: vector(ones, n), args.count),
                            ("compiled (njit, mpi_calls.allreduce_unchecked)",
                             lambda n: compiled(n, handle), args.count),
                            ("compiled, sizes checked first (mpi_calls.allreduce)",
                             lambda n: compiled_checked(n, handle), args.count),
                            ("mpi4py's blocking Allreduce from Python", mpi4py_buffers, args.count),
                            ("MPIGroup.allreduce (eager pmap path)", group_python, args.count // 10)):
        fn(100)
        seconds = median_seconds(lambda: fn(count), args.rounds, 1, before=comm.Barrier) / count
        rows.append((name, 1e6 * seconds))
    return rows


def _cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _timed(fn, repeat):
    """(wall, CPU) seconds per call of ``fn``, over ``repeat`` calls."""
    cpu, start = _cpu_seconds(), time.perf_counter()
    for _ in range(repeat):
        fn()
    return (time.perf_counter() - start) / repeat, (_cpu_seconds() - cpu) / repeat


def interleaved(comm, alone, together, rounds, repeat):
    """``alone()`` on rank 0 (the other ranks sleep, polling for its end,
    so that they take no core), then each of ``together`` (a dict: name ->
    function) on every rank (started together), round after round (the
    order of ``together`` turning each round), so that on a shared machine
    every side sees the same load.  Returns, on rank 0, a dict per name:
    medians of the wall and CPU seconds per call of each side (CPU: the
    busiest rank's), and the median and quartiles of the rounds' ratios
    (1 process / ranks, wall)."""
    rank, names = comm.Get_rank(), list(together)
    ones, alls = [], {name: [] for name in names}
    for round_ in range(rounds):
        comm.Barrier()
        if rank == 0:
            ones.append(_timed(alone, repeat))
            for other in range(1, comm.Get_size()):
                comm.send(None, dest=other, tag=7)
        else:
            while not comm.Iprobe(source=0, tag=7):
                time.sleep(0.001)
            comm.recv(source=0, tag=7)
        for k in range(len(names)):
            name = names[(round_ + k) % len(names)]
            comm.Barrier()
            alls[name].append(_timed(together[name], repeat))
    out = {}
    for name in names:
        # the busiest rank's CPU per call
        cpu = comm.allreduce(float(np.median([c for _, c in alls[name]])), op=_mpi_max())
        if rank == 0:
            ratios = np.array([w for w, _ in ones]) / np.array([w for w, _ in alls[name]])
            out[name] = {"one": float(np.median([w for w, _ in ones])),
                         "many": float(np.median([w for w, _ in alls[name]])),
                         "one_cpu": float(np.median([c for _, c in ones])), "many_cpu": cpu,
                         "ratio": float(np.median(ratios)),
                         "quartiles": tuple(float(q) for q in np.percentile(ratios, [25, 75]))}
    return out if rank == 0 else None


def _mpi_max():
    from mpi4py import MPI
    return MPI.MAX


def _with_waiting(fn, waiting):
    """``fn`` run with ``distributed.set_waiting(*waiting)``."""
    def run():
        before = distributed.set_waiting(*waiting)
        try:
            return fn()
        finally:
            distributed.set_waiting(*before)
    return run


def bench_step(args, comm, group):
    """The data-parallel step, 1 process (jit of the same step on the whole
    batch) against jit(pmap(step)) on every rank's rows: waiting as
    ``distributed.wait`` does, waiting left to MPI, through the callback;
    eager tx.grad with MPIGroup.allreduce; the NumPy control.  Each a dict
    of ``interleaved``'s, measured interleaved."""
    ranks, rank = comm.Get_size(), comm.Get_rank()
    p, xs, ys = step_problem(ranks, rank)
    _, whole_x, whole_y = step_problem(1, 0)
    single = tx.jit(pmap_sgd.single_step)
    whole = single(*p, whole_x[0], whole_y[0])
    direct, callback = mapped_step(), mapped_step(callback=True)
    for step in (direct, callback):
        out = step(*p, xs, ys)
        gap = max(float(np.max(np.abs(a - b))) for a, b in zip(out, whole))
        assert gap <= 1e-12, gap
    alone = lambda: single(*p, whole_x[0], whole_y[0])    # noqa: E731
    rows = interleaved(comm, alone, {
        "direct": lambda: direct(*p, xs, ys),
        "mpi_wait": _with_waiting(lambda: direct(*p, xs, ys), distributed.SLEEPING),
        "callback": lambda: callback(*p, xs, ys)}, args.step_rounds, 3) or {}

    params, x, y, grad = mlp_problem()
    part = BATCH // ranks
    mine = slice(rank * part, (rank + 1) * part)

    def eager_step():
        grads = grad(params, x[mine], y[mine])
        return tx.tree_util.tree_map(lambda g: group.allreduce(g, "sum", name="gradient") / ranks,
                                     grads)

    gap = max(float(np.max(np.abs(a - b))) for a, b in
              zip(tx.tree_util.tree_leaves(eager_step()),
                  tx.tree_util.tree_leaves(grad(params, x, y))))
    assert gap <= 1e-12, gap
    rows.update(interleaved(comm, lambda: grad(params, x, y), {"eager": eager_step},
                            args.step_rounds, 10) or {})
    rows.update(interleaved(comm, lambda: control_work(MATMULS),
                            {"control": lambda: control_work(MATMULS // ranks)},
                            args.step_rounds, 1) or {})
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--count", type=int, default=20000, help="all-reduces per round")
    parser.add_argument("--rounds", type=int, default=7, help="rounds of all-reduces")
    parser.add_argument("--step-rounds", type=int, default=15,
                        help="rounds of the data-parallel steps (each: 1 process, then the ranks)")
    parser.add_argument("--bind", action="store_true",
                        help="bind each rank to a core (mpiexec -bind-to core)")
    args = parser.parse_args()
    if not distributed.launched_by_mpiexec():
        relaunch(args)
    load_before = os.getloadavg()
    distributed.initialize()
    from tangent_x.parallel.mpi import MPIGroup
    comm, group = distributed.communicator(), MPIGroup(1)
    ranks = comm.Get_size()
    progress = (lambda what: print(what, file=sys.stderr, flush=True)) if comm.Get_rank() == 0 \
        else (lambda what: None)
    progress("all-reduces ...")
    reduce_rows = bench_allreduce(args, comm, group)
    progress("data-parallel steps and control, interleaved ...")
    steps = bench_step(args, comm, group)
    if comm.Get_rank() != 0:
        return
    print("load average (1, 5, 15 min): before %.1f %.1f %.1f, after %.1f %.1f %.1f, on %d CPUs: "
          "wall-clock figures mean little when it exceeds the CPUs\n"
          % (*load_before, *os.getloadavg(), os.cpu_count()))
    print(f"all-reduce of one float64, {ranks} ranks on one machine (median of {args.rounds} rounds)\n")
    print("| from | us per all-reduce |")
    print("| --- | --- |")
    for name, micros in reduce_rows:
        print(f"| {name} | {micros:.2f} |")
    print(f"\ndata-parallel gradient: 1 process on the whole batch vs {ranks} ranks on "
          f"1/{ranks} each, interleaved ({args.step_rounds} rounds; the first three rows in the "
          "same rounds; speed-up: the median of the rounds' ratios, [quartiles]; CPU: per step, "
          "1 process / the busiest rank)\n")
    print(f"| workload | 1 process | {ranks} ranks | speed-up | CPU per step | CPU ratio |")
    print("| --- | --- | --- | --- | --- | --- |")
    sizes = "-".join(map(str, bench_pmap.SIZES))
    names = {"direct": f"jit(pmap(step)), MLP {sizes}, batch {2 * bench_pmap.PER_WORKER}, direct "
                       "MPI calls, MPI's own waiting (1 process: jit of the step)",
             "mpi_wait": "same, sleeping waits (set_waiting(*distributed.SLEEPING), opt-in)",
             "callback": "same, collectives through the objmode callback",
             "eager": f"eager tx.grad + MPIGroup.allreduce, MLP 784-64-10, batch {BATCH}",
             "control": f"control: {MATMULS} NumPy 600x600 products split over the ranks "
                        "(no tangent_x)"}
    for key, name in names.items():
        r = steps[key]
        print(f"| {name} | {1e3 * r['one']:.2f} ms | {1e3 * r['many']:.2f} ms | {r['ratio']:.2f}x "
              f"[{r['quartiles'][0]:.2f}, {r['quartiles'][1]:.2f}] | {1e3 * r['one_cpu']:.2f} / "
              f"{1e3 * r['many_cpu']:.2f} ms | {r['one_cpu'] / r['many_cpu']:.2f} |")
    psum, direct, control = reduce_rows[0][1], steps["direct"], steps["control"]
    print(f"\nacceptance ({ranks} ranks; target with 2): jit(pmap) all-reduce of a float64 "
          f"{psum:.2f} us (<= 20 us; mpi4py's Allreduce from Python: {reduce_rows[6][1]:.2f} us); "
          f"data-parallel gradient {direct['ratio']:.2f}x (>= 1.6x; the machine gives "
          f"{control['ratio']:.2f}x now, control row; CPU-time ratio "
          f"{direct['one_cpu'] / direct['many_cpu']:.2f})")


if __name__ == "__main__":
    main()
