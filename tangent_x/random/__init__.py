"""Stateless pseudo-random numbers, bit-identical to ``jax.random``.

Randomness is explicit: every sampler takes a *key* and returns the same
numbers for the same key, shape and dtype -- call it twice with one key and
you get the same draw twice.  To get fresh numbers, derive new keys::

    from tangent_x import random
    key = random.PRNGKey(0)
    key, sub = random.split(key)          # never reuse a key you have split
    x = random.normal(sub, (3,))
    k7 = random.fold_in(key, 7)           # a key per step / example / layer

A key is a read-only ``uint32`` array of shape ``(2,)``, the same as
``jax.random.PRNGKey`` returns, and the generator is JAX's default
Threefry-2x32, so the values match JAX bit for bit in its current default
stream (``jax_threefry_partitionable=True``) or, after
``tangent_x.config.update("threefry_partitionable", False)``, in JAX's older
stream.  float64 draws match JAX with ``jax_enable_x64``.

The hash is vectorised NumPy uint32 arithmetic; XLA's exact ``erfinv`` and
``log`` (and the fused multiply-adds they contain) are compiled with Numba.
Large float32/float64 ``uniform`` and ``normal`` draws (and what is built on
them) skip the NumPy hash for fused Numba kernels that compute the same bits
with about a third of the work (``_distributions.KERNEL_MIN`` says why and
what that costs at start-up).
Inside ``numba.njit`` code -- what ``tangent_x.jit`` produces -- ``PRNGKey``,
``split``, ``fold_in``, ``key_data``, ``uniform``, ``normal`` and
``bernoulli`` compile too (``_overloads.py``), with the same bits.

Where tangent_x differs from JAX:

* keys are always raw uint32 arrays; ``key(seed)`` is ``PRNGKey(seed)``
  (JAX's ``key`` returns a typed key array), and ``key_data`` is identity;
* float64 / int64 requests are honoured without ``enable_x64`` (NumPy has no
  32-bit mode); ``enable_x64`` only changes what ``dtype=None``, Python
  scalars and 64-bit seeds mean, as ``jax_enable_x64`` does;
* "bit-identical" means identical to JAX on x86-64 CPUs (the reference
  vectors in tests/data come from JAX's CPU backend, whose kernels use FMA
  instructions).  One documented soft spot: ``choice(p=..., replace=False)``
  with float32 ``p`` adds ``log(p)`` computed by an eager XLA kernel that
  uses libm's ``logf`` for a few tail elements; here the vectorised formula
  is used throughout, which can reorder near-exact ties (never seen in
  testing).
"""
from ._distributions import bernoulli, bits, choice, normal, permutation, randint, uniform
from ._keys import PRNGKey, fold_in, key, key_data, split
from ._threefry import random_bits, threefry2x32, threefry2x32_core

__all__ = ["PRNGKey", "key", "split", "fold_in", "key_data", "bits", "uniform",
           "normal", "bernoulli", "randint", "permutation", "choice",
           "threefry2x32", "threefry2x32_core", "random_bits"]

# Teach Numba to compile calls to the functions above (for tangent_x.jit).
from . import _overloads  # noqa: E402,F401
