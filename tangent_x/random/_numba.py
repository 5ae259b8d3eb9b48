"""Fused Numba kernels: Threefry straight into uniform / normal floats.

The NumPy samplers make many passes over memory (hash rounds, float
conversion, erfinv).  Compiled code can do the whole chain per element in
registers, which is what jit-compiled user code should get -- and what large
eager draws get too (``_distributions.KERNEL_MIN``).  The kernels
here are plain ``numba.njit`` functions over scalars (``threefry_block``,
``_xla_math.erfinv_f32`` ...), so they can also be called from other
njit code -- this is the API the ``jit`` transform builds on:

* ``uniform_kernel(k0, k1, n, out, partitionable)`` fills the 1-D float32
  or float64 array ``out`` (n elements) with ``uniform`` draws;
* ``normal_kernel(k0, k1, n, out, partitionable)`` likewise for ``normal``.

``k0``/``k1`` are the two key words.  Bits are those of the eager path (and
so of JAX) in both Threefry streams.  The Python wrappers :func:`uniform`
and :func:`normal` validate arguments like their eager counterparts and
read ``config.threefry_partitionable`` at call time.

Why no bit casts: a float in [0, 1) built from ``m`` random mantissa bits is
exactly ``m * 2**-nmant``, so the kernels convert integers instead of
reinterpreting bits, which Numba cannot do on scalars.
"""
from __future__ import annotations

import math

import numba
import numpy as np

from ..config import config
from . import _xla_math as xm
from ._dtypes import _float_dtype, _shape
from ._keys import check_key
from ._threefry import threefry_block

__all__ = ["uniform", "normal", "uniform_kernel", "normal_kernel"]

_jit = numba.njit(cache=True, nogil=True, error_model="numpy")
_inline = numba.njit(cache=True, nogil=True, inline="always", error_model="numpy")

_SCALE32 = np.float32(2.0 ** -23)
_SCALE64 = 2.0 ** -52
_LO32 = np.nextafter(np.float32(-1), np.float32(0))
_LO64 = np.nextafter(-1.0, 0.0)
_TWO32 = np.float32(2.0)
_SQRT2_32 = np.float32(np.sqrt(2.0))
_SQRT2_64 = np.sqrt(2.0)


@_inline
def _unit_f32(word):
    return np.float32(word >> 9) * _SCALE32


@_inline
def _unit_f64(hi, lo):
    # The top 52 bits of the 64-bit word hi:lo.
    return np.float64((hi << 20) | (lo >> 12)) * _SCALE64


@_inline
def _normal_f32(word):
    u = _unit_f32(word) * _TWO32 + _LO32
    if u < _LO32:
        u = _LO32
    return xm.erfinv_f32(u) * _SQRT2_32


@_inline
def _normal_f64(hi, lo):
    u = _unit_f64(hi, lo) * 2.0 + _LO64
    if u < _LO64:
        u = _LO64
    return xm.erfinv_f64(u) * _SQRT2_64


# Each kernel walks the stream layout once.  Partitionable: element i hashes
# the 64-bit counter i.  Original: 32-bit words w[0..m) come from pairs
# (j, half + j) whose outputs land at w[j] and w[half + j]; float64 values
# join w[i] (high) and w[n + i] (low).

def _kernel_f32(draw):
    """The float32 kernel turning one 32-bit word into a value by ``draw``."""
    @_jit
    def kernel(k0, k1, n, out, partitionable):
        if partitionable:
            for i in range(n):
                a, b = threefry_block(k0, k1, i >> 32, i & 0xFFFFFFFF)
                out[i] = draw(a ^ b)
        else:
            half = (n + 1) // 2
            for j in range(half):
                x1 = half + j if half + j < n else 0
                a, b = threefry_block(k0, k1, j, x1)
                out[j] = draw(a)
                if half + j < n:
                    out[half + j] = draw(b)
    return kernel


def _kernel_f64(draw):
    """The float64 kernel turning two 32-bit words into a value by ``draw``."""
    @_jit
    def kernel(k0, k1, n, out, partitionable):
        for i in range(n):
            if partitionable:
                a, b = threefry_block(k0, k1, i >> 32, i & 0xFFFFFFFF)
            else:
                a, b = threefry_block(k0, k1, i, n + i)
            out[i] = draw(a, b)
    return kernel


_KERNELS = {("uniform", np.float32): _kernel_f32(_unit_f32),
            ("uniform", np.float64): _kernel_f64(_unit_f64),
            ("normal", np.float32): _kernel_f32(_normal_f32),
            ("normal", np.float64): _kernel_f64(_normal_f64)}


def uniform_kernel(k0, k1, n, out, partitionable):
    """Fill ``out[:n]`` (float32 or float64) with ``uniform`` draws in [0, 1).

    Callable from Python and from njit code (dispatch on ``out.dtype``).
    """
    _KERNELS["uniform", out.dtype.type](int(k0), int(k1), n, out, bool(partitionable))


def normal_kernel(k0, k1, n, out, partitionable):
    """Fill ``out[:n]`` (float32 or float64) with ``normal`` draws.

    Callable from Python and from njit code (dispatch on ``out.dtype``).
    """
    _KERNELS["normal", out.dtype.type](int(k0), int(k1), n, out, bool(partitionable))


def _overload_kernel(py_func, name):
    from numba.core import types
    from numba.extending import overload

    @overload(py_func, jit_options={"nogil": True})
    def _impl(k0, k1, n, out, partitionable):
        if not isinstance(out, types.Array) or out.dtype not in (types.float32, types.float64):
            return None
        kernel = _KERNELS[name, np.float32 if out.dtype == types.float32 else np.float64]

        def impl(k0, k1, n, out, partitionable):
            kernel(np.int64(k0), np.int64(k1), n, out, partitionable)
        return impl


_overload_kernel(uniform_kernel, "uniform")
_overload_kernel(normal_kernel, "normal")


def _prepare(name, key, shape, dtype):
    k = check_key(name, key)
    shape = _shape(name, shape)
    dt = _float_dtype(name, dtype)
    if dt == np.float16:
        raise NotImplementedError(f"{name}: the jit kernels support float32 and float64")
    return k, shape, dt, np.empty(math.prod(shape), dt)


def uniform(key, shape=(), dtype=None) -> np.ndarray:
    """``random.uniform(key, shape, dtype)`` on [0, 1) via the fused Numba kernel."""
    k, shape, dt, out = _prepare("uniform", key, shape, dtype)
    uniform_kernel(k[0], k[1], out.size, out, config.threefry_partitionable)
    return out.reshape(shape)


def normal(key, shape=(), dtype=None) -> np.ndarray:
    """``random.normal(key, shape, dtype)`` via the fused Numba kernel."""
    k, shape, dt, out = _prepare("normal", key, shape, dtype)
    normal_kernel(k[0], k[1], out.size, out, config.threefry_partitionable)
    return out.reshape(shape)
