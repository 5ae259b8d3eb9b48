"""jit(pmap(f)) with one device per process: the shard's collectives are
direct MPI calls (numba_stage.mpi_shard), psum_scatter and ppermute too.
Run under ``mpiexec -n N`` with
``TANGENT_X_NUM_DEVICES=1``, or without mpiexec with
``TANGENT_X_NUM_DEVICES=N`` (threads): both print the same digest of every
result's bits (the test compares them).  Each run checks its results
against the unmapped loop over the devices (bitwise: sums in device order)
and a data-parallel gradient against the single-process gradient (1e-12);
under mpiexec also that the direct path ran, and that an operand whose
shape (or an argument whose shape) differs across ranks gets the same
MismatchError on every rank."""
import hashlib
import sys

import numpy as np

import tangent_x as tx
from tangent_x import lax

MPI = tx.distributed.launched_by_mpiexec()
if MPI:
    tx.distributed.initialize()
RANK, PROCESSES = tx.process_index(), tx.process_count()
DEVICES = tx.device_count()
LOCAL = tx.local_device_count()
AXIS = "i"
SHIFT = tuple((d, d + 1) for d in range(DEVICES - 1))     # device 0 receives nothing


def data(device):
    rng = np.random.default_rng(10 + device)
    return rng.normal(size=(3, 4)), float(rng.normal()), rng.normal(size=(6, 5)), rng.normal(size=(6, 3))


def collectives(x, s, a, y):
    total = lax.psum(x, AXIS)
    mean = lax.pmean(x, AXIS)
    biggest, smallest = lax.pmax(x, AXIS), lax.pmin(x, AXIS)
    gathered = lax.all_gather(x, AXIS)
    tiled = lax.all_gather(x, AXIS, tiled=True)
    scalar = lax.psum(s, AXIS) + lax.pmean(s * s, AXIS)
    where = lax.axis_index(AXIS) * 1.0
    scattered = lax.psum_scatter(lax.all_gather(x, AXIS), AXIS)
    shifted = lax.ppermute(x, AXIS, SHIFT)
    return total, mean, biggest, smallest, gathered, tiled, scalar, where, scattered, shifted


def loss(w, a, y):
    return np.mean((np.tanh(a @ w) - y) ** 2)


def data_parallel_grad(w, a, y):
    return lax.pmean(tx.grad(loss)(w, a, y), AXIS)


def loop(parts):
    """The unmapped loop: sums in device order."""
    total = parts[0]
    for p in parts[1:]:
        total = total + p
    return total


def main():
    mine = range(RANK * LOCAL, (RANK + 1) * LOCAL)
    shards = [np.stack([data(d)[k] for d in mine]) for k in range(4)]
    shards[1] = np.array([data(d)[1] for d in mine])
    mapped = tx.jit(tx.pmap(collectives, axis_name=AXIS))
    out = [np.asarray(o) for o in mapped(*shards)]
    everyone = [data(d) for d in range(DEVICES)]
    xs = [e[0] for e in everyone]
    ss = [e[1] for e in everyone]
    total = loop(xs)
    expected = [total, total / DEVICES, np.max(xs, axis=0), np.min(xs, axis=0), np.stack(xs),
                np.concatenate(xs), loop(ss) + loop([s * s for s in ss]) / DEVICES]
    for k, want in enumerate(expected):
        for local in range(LOCAL):
            assert np.array_equal(out[k][local], want), (k, out[k][local], want)
    assert list(out[7]) == [float(d) for d in mine], out[7]
    for local, device in enumerate(mine):
        assert np.array_equal(out[8][local], loop([xs[device]] * DEVICES)), (device, out[8][local])
        sent = xs[device - 1] if device > 0 else np.zeros_like(xs[0])   # device 0 receives nothing
        assert np.array_equal(out[9][local], sent), (device, out[9][local])

    # the gradient of a data-parallel loss: one pmean of the per-device gradients
    w = np.random.default_rng(0).normal(size=(5, 3)) / 3
    grads = tx.jit(tx.pmap(data_parallel_grad, axis_name=AXIS, in_axes=(None, 0, 0)))(
        w, shards[2], shards[3])
    whole = tx.grad(loss)(w, np.concatenate([e[2] for e in everyone]),
                      np.concatenate([e[3] for e in everyone]))
    gap = float(np.max(np.abs(grads - whole)))
    assert gap <= 1e-12, gap

    if MPI and LOCAL == 1:
        # the direct MPI path ran (its module is its own), not the objmode callback
        assert "_mpi_" in mapped._mpi_jitted._last.path, mapped._mpi_jitted._last.path
        assert "objmode" not in mapped._mpi_jitted._last.text
        check_mismatch()
    for local, device in enumerate(mine):
        results = [o[local] for o in out] + [grads[local]]
        digest = hashlib.sha1(b"".join(np.ascontiguousarray(r).tobytes() for r in results))
        print(f"device {device} digest {digest.hexdigest()}", flush=True)
    print(f"OK rank {RANK} of {PROCESSES}x{LOCAL} gap {gap:.1e}", flush=True)


def ragged(x):
    return lax.psum(x[:lax.axis_index(AXIS) + 2], AXIS)


def check_mismatch():
    from tangent_x.parallel.mpi import MismatchError
    try:
        tx.jit(tx.pmap(ragged, axis_name=AXIS))(np.ones((1, 4)))
    except MismatchError as exc:
        assert "lax.psum over axis 'i'" in str(exc) and "every rank raises" in str(exc), exc
    else:
        raise AssertionError("operands of different shapes were summed")
    try:        # checked before the shards start, naming the argument
        tx.jit(tx.pmap(ragged, axis_name=AXIS))(np.ones((1, 4 + RANK)))
    except MismatchError as exc:
        assert str(exc).startswith("pmap: argument 'x' differs across processes"), exc
        assert "process 0: shape (1, 4) float64, process 1: shape (1, 5) float64" in str(exc), exc
    else:
        raise AssertionError("arguments of different shapes were mapped")


if __name__ == "__main__":
    main()
    sys.stdout.flush()
