"""Data-parallel SGD (examples/pmap_sgd.py's ``step``: pmap of grad with
pmean) over every device of every process, checked against single-process
training (to 1e-12).  Prints a digest of the parameters' bits: the test
compares 1 process x 4 threads, 2 x 2 and 4 x 1 (sums in device order:
bitwise equal).  Run with or without mpiexec; argument "eager" or "jit";
``TANGENT_X_NUM_DEVICES`` sets the devices per process."""
import hashlib
import os
import sys

import numpy as np

import tangent_x as tx

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples"))
import pmap_sgd as example  # noqa: E402

if tx.distributed.launched_by_mpiexec():
    tx.distributed.initialize()
RANK, PROCESSES = tx.process_index(), tx.process_count()
LOCAL = tx.local_device_count()
assert tx.device_count() == LOCAL * PROCESSES

x, y = example.data(32 * 4)
part = len(x) // PROCESSES
mine = slice(RANK * part, (RANK + 1) * part)
mapped = tx.pmap(example.step, axis_name="batch", in_axes=(None,) * 4 + (0, 0), out_axes=None)
if sys.argv[1] == "jit":
    mapped = tx.jit(mapped)
params = example.train(mapped, example.init(), x[mine], y[mine], LOCAL, steps=10)
single = example.init()
for _ in range(10):
    single = example.single_step(*single, x, y)
gap = max(float(np.max(np.abs(a - b))) for a, b in zip(params, single))
assert gap <= 1e-12, gap
digest = hashlib.sha1(b"".join(np.ascontiguousarray(p).tobytes() for p in params)).hexdigest()
print(f"OK rank {RANK} of {PROCESSES}x{LOCAL} digest {digest} gap {gap:.1e}", flush=True)
