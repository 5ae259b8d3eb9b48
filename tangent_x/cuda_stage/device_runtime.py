"""What CUDA kernels call in place of helpers that allocate arrays.

A thread cannot allocate an array of run-time size, so ``kernel_text``
rewrites the per-example code's random keys into pairs of 32-bit words
(tuples, which live in registers) and calls these.  They are
``numba.njit`` functions over scalars (Numba's CUDA target compiles them
for the device; the simulator runs them as they are), built on the same
Threefry block and float conversions as ``tangent_x.random``'s jit
kernels, so a draw in a kernel has the bits of the same draw on the CPU.
"""
import numba
import numpy as np

from ..random._numba import _normal_f32, _normal_f64, _unit_f32, _unit_f64
from ..random._threefry import threefry_block

__all__ = ["split_pair", "normal_pair", "uniform_pair", "normal_pair32", "uniform_pair32",
           "fold_in_pair"]

_inline = numba.njit(inline="always", error_model="numpy")


@_inline
def split_pair(key, partitionable):
    """``split(key)`` (two new keys) of a key given as its two words."""
    k0, k1 = np.int64(key[0]), np.int64(key[1])
    if partitionable:
        a0, b0 = threefry_block(k0, k1, 0, 0)
        a1, b1 = threefry_block(k0, k1, 0, 1)
        return ((np.uint32(a0), np.uint32(b0)), (np.uint32(a1), np.uint32(b1)))
    # JAX's original stream: words (j, 2 + j) hashed, key i = words 2i, 2i+1
    a0, b0 = threefry_block(k0, k1, 0, 2)
    a1, b1 = threefry_block(k0, k1, 1, 3)
    return ((np.uint32(a0), np.uint32(a1)), (np.uint32(b0), np.uint32(b1)))


@_inline
def _scalar_words(key, partitionable):
    """The two 32-bit words a float64 draw of shape ``()`` is made of."""
    return threefry_block(np.int64(key[0]), np.int64(key[1]), 0, 0 if partitionable else 1)


@_inline
def normal_pair(key, partitionable):
    """One float64 ``normal(key, ())`` draw."""
    a, b = _scalar_words(key, partitionable)
    return _normal_f64(a, b)


@_inline
def uniform_pair(key, partitionable):
    """One float64 ``uniform(key, ())`` draw in [0, 1)."""
    a, b = _scalar_words(key, partitionable)
    return _unit_f64(a, b)


@_inline
def fold_in_pair(key, data):
    """``fold_in(key, data)`` of a key given as its two words."""
    a, b = threefry_block(np.int64(key[0]), np.int64(key[1]), 0, np.int64(data) & 0xFFFFFFFF)
    return (np.uint32(a), np.uint32(b))


@_inline
def _scalar_word(key, partitionable):
    """The 32-bit word a float32 draw of shape ``()`` is made of."""
    a, b = threefry_block(np.int64(key[0]), np.int64(key[1]), 0, 0)
    return a ^ b if partitionable else a


@_inline
def normal_pair32(key, partitionable):
    """One float32 ``normal(key, ())`` draw (the default dtype without x64)."""
    return _normal_f32(_scalar_word(key, partitionable))


@_inline
def uniform_pair32(key, partitionable):
    """One float32 ``uniform(key, ())`` draw in [0, 1)."""
    return _unit_f32(_scalar_word(key, partitionable))
