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

Everything here is plain NumPy (the hash is vectorised uint32 arithmetic);
XLA's exact ``erfinv``/``log`` and the fused multiply-adds they need are
compiled with Numba.  ``threefry2x32_core`` is the Numba-compiled hash used
by jit-compiled code.
"""
from ._distributions import bernoulli, bits, choice, normal, permutation, randint, uniform
from ._keys import PRNGKey, fold_in, key, key_data, split
from ._threefry import random_bits, threefry2x32, threefry2x32_core
__all__ = ["PRNGKey", "key", "split", "fold_in", "key_data", "bits", "uniform",
           "normal", "bernoulli", "randint", "permutation", "choice",
           "threefry2x32", "threefry2x32_core", "random_bits"]

# Teach Numba to compile calls to the functions above (for tangent_x.jit).
from . import _overloads  # noqa: E402,F401
