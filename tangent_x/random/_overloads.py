"""Numba implementations of the public functions, for jit-compiled code.

``tangent_x.jit`` hands generated Python source to ``numba.njit``.  When that
source calls ``random.split(key)`` or ``random.normal(key, (n,))``, Numba
needs to know how to compile the call; registering ``numba.extending.overload``
implementations for the very same function objects makes those calls just
work, with the same bits as the eager functions.

Supported inside njit code (the common cases of model code):

* ``PRNGKey(seed)`` / ``key(seed)`` with an integer seed;
* ``split(key, num)`` with an integer ``num``; ``fold_in(key, data)``;
  ``key_data(key)``;
* ``uniform(key, shape, dtype, minval, maxval)`` with scalar bounds,
  ``normal(key, shape, dtype)`` and ``bernoulli(key, p, shape)`` with a scalar
  ``p`` and explicit shape, for float32 / float64, ``shape`` a tuple of ints.
  (A float64 ``p`` is read as a Python float: Numba cannot tell them apart.)

``randint``, ``permutation`` and ``choice`` are eager-only for now.

``threefry_partitionable`` is read from ``config`` on every call (through a
tiny ``numba.objmode`` block, ~2 us), so compiled code follows
``config.update`` like eager code does.  ``enable_x64`` changes types (the
default float dtype), so it is read when Numba compiles a call: it is part
of the compiled specialisation, and a jit cache must key on it.
"""
from __future__ import annotations

import numba
import numpy as np
from numba import types
from numba.extending import overload

from ..config import config
from . import _distributions as dist
from . import _keys
from ._numba import _KERNELS
from ._threefry import threefry_block
from ._xla_math import fma

_DEFAULT = (types.NoneType, types.Omitted)


@numba.njit
def _partitionable():
    """``config.threefry_partitionable`` at run time (not baked in at compile time)."""
    with numba.objmode(flag="boolean"):
        flag = bool(config.threefry_partitionable)
    return flag


def _size(shape):
    """Number of elements of a shape tuple (a stub compiled through its overload)."""
    n = 1
    for d in shape:
        n *= d
    return n


@overload(_size)
def _size_impl(shape):
    if isinstance(shape, types.UniTuple):
        def impl(shape):
            n = 1
            for d in shape:
                n *= d
            return n
        return impl
    return lambda shape: 1          # () -- Numba cannot iterate an empty tuple


def _float_type(dtype, name):
    """NumPy float dtype named by a Numba argument type (or the default)."""
    if dtype is None or isinstance(dtype, _DEFAULT):
        return np.float64 if config.enable_x64 else np.float32
    if isinstance(dtype, types.NumberClass):
        dtype = dtype.instance_type
    elif isinstance(dtype, types.DType):
        dtype = dtype.dtype
    if dtype == types.float32:
        return np.float32
    if dtype == types.float64:
        return np.float64
    raise TypeError(f"{name} under jit supports float32 and float64, got {dtype}")


def _check_shape_type(shape, name):
    ok = isinstance(shape, types.UniTuple) and isinstance(shape.dtype, types.Integer)
    if not (ok or shape == types.Tuple(())) and not isinstance(shape, types.Omitted):
        raise TypeError(f"{name} under jit needs shape as a tuple of ints, got {shape}")


def _is_key_type(key):
    return isinstance(key, types.Array) and key.dtype == types.uint32 and key.ndim == 1


@overload(_keys.PRNGKey)
def _prngkey(seed):
    if not isinstance(seed, types.Integer):
        return None
    wide = config.enable_x64 and seed.bitwidth == 64

    def impl(seed):
        out = np.empty(2, np.uint32)
        s = np.int64(seed)
        out[0] = (s >> 32) & 0xFFFFFFFF if wide else 0
        out[1] = s & 0xFFFFFFFF
        return out
    return impl


@overload(_keys.split)
def _split(key, num=2):
    if not _is_key_type(key) or not isinstance(num, (types.Integer, types.Omitted, int)):
        return None

    def impl(key, num=2):
        k0, k1 = np.int64(key[0]), np.int64(key[1])
        out = np.empty((num, 2), np.uint32)
        if _partitionable():
            for i in range(num):
                a, b = threefry_block(k0, k1, i >> 32, i & 0xFFFFFFFF)
                out[i, 0] = a
                out[i, 1] = b
        else:
            # Words 0..2n-1 hashed as pairs (j, n + j); key i is words 2i, 2i+1.
            words = np.empty(2 * num, np.uint32)
            for j in range(num):
                a, b = threefry_block(k0, k1, j, num + j)
                words[j] = a
                words[num + j] = b
            for i in range(num):
                out[i, 0] = words[2 * i]
                out[i, 1] = words[2 * i + 1]
        return out
    return impl


@overload(_keys.fold_in)
def _fold_in(key, data):
    if not _is_key_type(key) or not isinstance(data, types.Integer):
        return None

    def impl(key, data):
        a, b = threefry_block(np.int64(key[0]), np.int64(key[1]), 0,
                              np.int64(data) & 0xFFFFFFFF)
        out = np.empty(2, np.uint32)
        out[0] = a
        out[1] = b
        return out
    return impl


@overload(_keys.key_data)
def _key_data(keys):
    if isinstance(keys, types.Array) and keys.dtype == types.uint32:
        return lambda keys: keys
    return None


def _sampler(kind, key, shape, dtype):
    name = kind
    if not _is_key_type(key):
        return None
    _check_shape_type(shape, name)
    dt = _float_type(dtype, name)
    return _KERNELS[kind, dt], dt


@overload(dist.uniform)
def _uniform(key, shape=(), dtype=None, minval=0., maxval=1.):
    found = _sampler("uniform", key, shape, dtype)
    if found is None:
        return None
    kernel, dt = found
    for v in (minval, maxval):
        if not isinstance(v, (types.Number, types.Omitted, float, int)):
            raise TypeError("uniform under jit supports scalar minval/maxval")

    def impl(key, shape=(), dtype=None, minval=0., maxval=1.):
        n = _size(shape)
        out = np.empty(n, dt)
        kernel(np.int64(key[0]), np.int64(key[1]), n, out, _partitionable())
        lo = dt(minval)
        span = dt(maxval) - lo
        if not (lo == 0 and span == 1):
            for i in range(n):                 # one FMA, as XLA computes it
                v = fma(out[i], span, lo)
                out[i] = v if v > lo else lo
        return out.reshape(shape)
    return impl


@overload(dist.normal)
def _normal(key, shape=(), dtype=None):
    found = _sampler("normal", key, shape, dtype)
    if found is None:
        return None
    kernel, dt = found

    def impl(key, shape=(), dtype=None):
        n = _size(shape)
        out = np.empty(n, dt)
        kernel(np.int64(key[0]), np.int64(key[1]), n, out, _partitionable())
        return out.reshape(shape)
    return impl


@overload(dist.bernoulli)
def _bernoulli(key, p=0.5, shape=None):
    if not _is_key_type(key) or isinstance(shape, (types.NoneType, types.Omitted)):
        return None          # shape=None (p's shape) is eager-only
    if not isinstance(p, (types.Float, float)):
        raise TypeError("bernoulli under jit supports a scalar float p and an explicit shape")
    _check_shape_type(shape, "bernoulli")
    # Numba types Python floats as float64, so a float64 p is taken to be a
    # Python float: the draw uses the default float dtype, as in JAX.
    dt = np.float32 if p == types.float32 else _float_type(None, "bernoulli")
    kernel = _KERNELS["uniform", dt]

    def impl(key, p=0.5, shape=None):
        n = _size(shape)
        u = np.empty(n, dt)
        kernel(np.int64(key[0]), np.int64(key[1]), n, u, _partitionable())
        return (u < dt(p)).reshape(shape)
    return impl
