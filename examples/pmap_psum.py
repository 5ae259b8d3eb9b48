"""pmap with psum: normalise a vector split over the devices.

Each device holds one shard of ``x``; ``lax.psum`` adds every device's
partial sum, so each shard is divided by the same total.  Run it:

    TANGENT_X_NUM_DEVICES=4 python examples/pmap_psum.py
    tangent-x pmap examples/pmap_psum.py:normalize    # the per-shard code
"""
import numpy as np

import tangent_x as tx
from tangent_x import lax


def normalize(x):
    """This shard of ``x`` divided by the sum of every shard."""
    return x / lax.psum(np.sum(x), "i")


def main():
    n = tx.local_device_count()
    x = np.arange(1.0, 1.0 + 3 * n).reshape(n, 3)      # one row per device
    shards = tx.pmap(normalize, axis_name="i")(x)
    print(f"{n} devices; per-shard results:\n{shards}")
    print("sum of every shard:", np.sum(shards))
    print("same as NumPy on the whole:", np.allclose(shards, x / np.sum(x)))
    # the same function, mapped by vmap over a batch axis named 'i'
    print("same as vmap(axis_name='i'):",
          np.array_equal(shards, tx.vmap(normalize, axis_name="i")(x)))
    # a derivative inside pmap: the transpose of psum is psum
    grads = tx.pmap(tx.grad(lambda v: np.sum(normalize(v) ** 2)), axis_name="i")(x)
    print("pmap(grad):\n", grads)
    return shards


if __name__ == "__main__":
    main()
