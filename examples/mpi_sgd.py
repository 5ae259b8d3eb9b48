"""Data-parallel SGD of the MLP over the processes of an mpiexec launch.

    mpiexec -n 2 python examples/mpi_sgd.py                 # one machine
    mpiexec -hosts a,b -n 4 python examples/mpi_sgd.py      # two machines

Each process takes its slice of the batch, computes the gradient of the mean
loss on it with ``tx.grad``, and the processes average the gradients with
one all-reduce per parameter (the data-parallel pmean); every process then
takes the same step.  With equal slices the average of the slices' mean
gradients is the whole batch's, so the parameters equal those of training
on one process; rank 0 trains that way too and compares (to 1e-12).
"""
import os
import sys

import numpy as np

import tangent_x as tx
from tangent_x import distributed
from tangent_x.parallel.mpi import MPIGroup

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mlp import init_params, loss  # noqa: E402


def data(batch=128):
    rng = np.random.default_rng(1)
    x = rng.normal(size=(batch, 4))
    y = np.sin(x @ np.array([[1.0], [-2.0], [0.5], [0.3]]))
    return x, y


def train(x, y, steps, mean_over_processes=None):
    params = init_params([4, 16, 1])
    grad_fn = tx.grad(loss)
    for _ in range(steps):
        grads = grad_fn(params, x, y)
        if mean_over_processes is not None:
            grads = tx.tree_util.tree_map(mean_over_processes, grads)
        params = tx.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads)
    return params


def main(steps=100):
    distributed.initialize()
    rank, processes = distributed.process_index(), distributed.process_count()
    x, y = data()
    if len(x) % processes:
        raise SystemExit(f"the batch of {len(x)} does not split into {processes} equal slices")
    part = len(x) // processes
    mine = slice(rank * part, (rank + 1) * part)
    group = MPIGroup(1)
    params = train(x[mine], y[mine], steps,
                   mean_over_processes=lambda g: group.allreduce(g, "sum", name="gradient") / processes)
    print(f"rank {rank}: loss on the whole batch {loss(params, x, y):.6f}", flush=True)
    if rank == 0:
        alone = train(x, y, steps)
        gap = max(np.max(np.abs(a - b)) for a, b in
                  zip(tx.tree_util.tree_leaves(params), tx.tree_util.tree_leaves(alone)))
        assert gap <= 1e-12, gap
        print(f"{processes} processes: same parameters as one process (largest difference {gap:.1e})")


if __name__ == "__main__":
    main()
