"""Samplers: uniform, normal, bernoulli, randint, permutation, choice.

Each sampler turns raw Threefry bits into values with the same arithmetic,
in the same order, as ``jax.random`` -- that is what makes the results
bit-identical rather than merely equal in distribution.  The recipes:

* ``uniform``: put the top mantissa-many random bits under the exponent of
  1.0, giving a float in [1, 2); subtract 1 and scale to [minval, maxval)
  with one fused multiply-add, clamped below at ``minval``.
* ``normal``: ``sqrt(2) * erfinv(u)`` for ``u`` uniform in (-1, 1), with
  XLA's exact ``erfinv`` (see ``_xla_math``).
* ``bernoulli``: ``uniform(...) < p``.
* ``randint``: two words of random bits per value reduced modulo the span
  (slightly biased for spans that are not powers of two, as documented by
  JAX).
* ``permutation``: repeated stable sorts by fresh 32-bit random keys; the
  number of rounds makes key collisions negligible.
* ``choice``: ``randint`` / ``permutation`` without ``p``; inverse-CDF search
  on ``cumsum(p)`` (summed in XLA's order) with replacement, Gumbel top-k
  without.
"""
from __future__ import annotations

import math
import operator
from collections.abc import Sequence

import numpy as np

from ..config import config
from . import _xla_math
from ._dtypes import _float_dtype, _int_dtype, _shape, default_float, default_int  # noqa: F401
from ._keys import check_key
from ._threefry import bits32, random_bits, split_key

__all__ = ["bits", "uniform", "normal", "bernoulli", "randint", "permutation", "choice"]

_UINT = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}

# ------------------------------------------------------------------ helpers
def _check_param_shapes(name: str, shape: tuple, *param_shapes) -> None:
    try:
        result = np.broadcast_shapes(shape, *param_shapes)
    except ValueError:
        result = None
    if result != shape:
        raise ValueError(
            f"{name} parameter shapes must be broadcast-compatible with shape "
            f"argument, and the result of broadcasting the shapes must equal the "
            f"shape argument, but got parameter shapes {list(param_shapes)} for "
            f"shape argument {shape}.")


def _normalize_axis(axis: int, ndim: int) -> int:
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def _is_python_value(x) -> bool:
    """Python scalars and lists take the default dtype; NumPy values keep theirs."""
    return not isinstance(x, (np.ndarray, np.generic))


# --------------------------------------------------------------------- bits
def bits(key, shape=(), dtype=None) -> np.ndarray:
    """Uniform random bits as unsigned integers (``jax.random.bits``).

    ``dtype`` is uint8/16/32/64 (default uint32, uint64 with ``enable_x64``).
    """
    k = check_key("bits", key)
    if dtype is None:
        dt = np.dtype(np.uint64 if config.enable_x64 else np.uint32)
    else:
        dt = np.dtype(dtype)
    if not np.issubdtype(dt, np.unsignedinteger):
        raise ValueError(f"dtype argument to `bits` must be an unsigned int dtype, got {dt}")
    return random_bits(k, dt.itemsize * 8, _shape("bits", shape))


# ------------------------------------------------------------------ uniform
# Eager draws of at least this many float32/float64 values are computed by
# the fused Numba kernels of ``_numba.py`` (the ones jitted code calls)
# instead of the NumPy hash below.  Same bits -- tests/test_random.py checks
# the two paths against each other -- but about 3x less work: the NumPy hash
# makes ~105 passes over uint32 buffers, bound by cache bandwidth, and the
# default stream needs one hash per value, so at 10**7 float32 uniforms it
# costs ~4x ``numpy.random.default_rng().random`` in CPU time while the
# kernel (16 lanes of 32-bit words with rotate instructions, see
# ``_threefry``) costs ~0.7x (tools/bench_random.py).  The price is Numba's
# one-off start-up in a process (~0.2-0.3 s with a warm on-disk cache; eager
# ``normal`` pays it anyway for ``erfinv``, jitted code for itself) and, once
# per installation, compiling the kernels (~0.5 s for uniform, ~3.5 s for
# normal on a 2-core machine; then cached on disk, ``cache=True``).  Smaller
# draws stay on the NumPy path, which costs them nothing up front.
KERNEL_MIN = 1 << 16
_KERNEL_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _fused(name: str, key, shape: tuple, dt: np.dtype):
    """The draw from the fused Numba kernel ``name``, or None if too small
    (or a dtype the kernels do not cover)."""
    n = math.prod(shape)
    if n < KERNEL_MIN or dt not in _KERNEL_DTYPES:
        return None
    # local import: the Numba kernels compile on first use; most draws never need them
    from . import _numba
    out = np.empty(n, dt)
    kernel = _numba.uniform_kernel if name == "uniform" else _numba.normal_kernel
    kernel(key[0], key[1], n, out, config.threefry_partitionable)
    return out.reshape(shape)


def _unit_floats(key, shape: tuple, dt: np.dtype) -> np.ndarray:
    """Floats in [0, 1): random mantissa bits under the exponent of 1.0."""
    fused = _fused("uniform", key, shape, dt)
    if fused is not None:
        return fused
    finfo = np.finfo(dt)
    nbits, nmant = finfo.bits, finfo.nmant
    ut = _UINT[nbits]
    shift, one, fone = np.array(nbits - nmant, ut), np.array(1, dt).view(ut), np.array(1, dt)
    if nbits == 32:
        # Convert each chunk as soon as it is hashed, while it is in cache.
        def finish(chunk):
            np.right_shift(chunk, shift, chunk)
            np.bitwise_or(chunk, one, chunk)
            f = chunk.view(dt)
            np.subtract(f, fone, f)

        return bits32(key, math.prod(shape), finish).view(dt).reshape(shape)
    bits = random_bits(key, nbits, shape)
    bits >>= shift
    bits |= one
    out = bits.view(dt)
    out -= fone
    return out


def _uniform(key, shape: tuple, dt: np.dtype, minval: np.ndarray,
             maxval: np.ndarray) -> np.ndarray:
    floats = _unit_floats(key, shape, dt)
    if not (np.all(minval == 0) and np.all(maxval == 1)):
        # XLA computes floats * (maxval - minval) + minval as one FMA.
        span = np.asarray(maxval - minval, dt)
        floats = np.maximum(minval, _xla_math.fma_array(floats, span, minval))
    elif floats.shape != shape:  # pragma: no cover - defensive
        floats = floats.reshape(shape)
    return floats


def uniform(key, shape=(), dtype=None, minval=0., maxval=1.) -> np.ndarray:
    """Uniform floats in ``[minval, maxval)`` of ``shape`` and float ``dtype``.

    ``dtype`` defaults to float32 (float64 with ``enable_x64``); ``minval``
    and ``maxval`` broadcast against ``shape``.  Same bits as
    ``jax.random.uniform`` for the same key.
    """
    k = check_key("uniform", key)
    shape = _shape("uniform", shape)
    dt = _float_dtype("uniform", dtype)
    minval = np.asarray(minval).astype(dt)
    maxval = np.asarray(maxval).astype(dt)
    _check_param_shapes("uniform", shape, minval.shape, maxval.shape)
    return _uniform(k, shape, dt, minval, maxval)


# ------------------------------------------------------------------- normal
_SQRT2 = np.sqrt(2.0)


def _normal(key, shape: tuple, dt: np.dtype) -> np.ndarray:
    # u uniform in (-1, 1): floats*2 + lo is exact in the product, so the FMA
    # XLA uses here needs no emulation.
    fused = _fused("normal", key, shape, dt)
    if fused is not None:
        return fused
    lo = np.nextafter(dt.type(-1), dt.type(0))
    u = _unit_floats(key, shape, dt)
    u *= dt.type(2)
    u += lo
    np.maximum(u, lo, out=u)
    if dt == np.float16:   # XLA evaluates half-precision erfinv in float32
        e = _xla_math.erfinv(u.astype(np.float32)).astype(dt)
    else:
        e = _xla_math.erfinv(u)
    e *= dt.type(_SQRT2)
    return e


def normal(key, shape=(), dtype=None) -> np.ndarray:
    """Standard normal floats of ``shape`` and ``dtype``: ``sqrt(2)*erfinv(u)``.

    Same bits as ``jax.random.normal`` (XLA's ``erfinv`` is reproduced
    operation by operation).
    """
    k = check_key("normal", key)
    shape = _shape("normal", shape)
    dt = _float_dtype("normal", dtype)
    return _normal(k, shape, dt)


# ---------------------------------------------------------------- bernoulli
def bernoulli(key, p=0.5, shape=None) -> np.ndarray:
    """Booleans that are True with probability ``p`` (broadcast to ``shape``).

    ``p``'s float dtype sets the precision of the underlying uniform draw
    (Python floats mean the default float dtype), as in JAX.
    """
    k = check_key("bernoulli", key)
    p_arr = np.asarray(p)
    if not np.issubdtype(p_arr.dtype, np.floating):
        raise TypeError(f"bernoulli probability `p` must have a floating dtype, "
                        f"got {p_arr.dtype}.")
    dt = default_float() if _is_python_value(p) else p_arr.dtype
    p_arr = p_arr.astype(dt)
    if shape is None:
        shape = p_arr.shape
    else:
        shape = _shape("bernoulli", shape)
        _check_param_shapes("bernoulli", shape, p_arr.shape)
    return _unit_floats(k, shape, dt) < p_arr


# ------------------------------------------------------------------ randint
def _int_param(v) -> np.ndarray:
    a = np.asarray(v)
    if _is_python_value(v) and np.issubdtype(a.dtype, np.integer):
        return a.astype(np.int64)
    if not np.issubdtype(a.dtype, np.integer):
        a = a.astype(default_int())
    return a


def _clip_convert(val: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Convert integers to ``dtype``, clipping to its range instead of wrapping."""
    lo = max(int(np.iinfo(dtype).min), int(np.iinfo(val.dtype).min))
    hi = min(int(np.iinfo(dtype).max), int(np.iinfo(val.dtype).max))
    return np.clip(val, np.array(lo, val.dtype), np.array(hi, val.dtype)).astype(dtype)


def _rem(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Unsigned remainder with XLA's convention ``a % 0 == a``."""
    zero = b == 0
    return np.where(zero, a, a % np.where(zero, b.dtype.type(1), b))


def _randint(key, shape, minval, maxval, dtype):
    _check_param_shapes("randint", shape, minval.shape, maxval.shape)
    info = np.iinfo(dtype)
    nbits = info.bits
    ut = np.dtype(_UINT[nbits])
    out_of_range = maxval > min(int(info.max), int(np.iinfo(maxval.dtype).max))
    # Work on arrays of rank >= 1: NumPy warns about (and we want) wrapping
    # arithmetic only on scalars.
    lo = np.atleast_1d(_clip_convert(minval, dtype))
    hi = np.atleast_1d(_clip_convert(maxval, dtype))
    out_of_range = np.atleast_1d(out_of_range)

    k1, k2 = split_key(key, (2,))
    higher = np.atleast_1d(random_bits(k1, nbits, shape))
    lower = np.atleast_1d(random_bits(k2, nbits, shape))

    # (maxval - minval) wraps in the signed type, then is read as unsigned.
    span = hi.astype(ut) - lo.astype(ut)
    span = np.where(hi <= lo, ut.type(1), span)
    span = np.where(out_of_range & (hi > lo), span + ut.type(1), span)
    # 2**nbits % span, via (2**(nbits/2) % span)**2 % span, all in nbits.
    multiplier = _rem(np.full(span.shape, 1 << (nbits // 2), ut), span)
    multiplier = _rem(multiplier * multiplier, span)
    offset = _rem(_rem(higher, span) * multiplier + _rem(lower, span), span)
    return (lo.astype(ut) + offset).view(dtype).reshape(shape)


def randint(key, shape, minval, maxval, dtype=None) -> np.ndarray:
    """Integers in ``[minval, maxval)`` of ``shape`` and integer ``dtype``.

    ``dtype`` defaults to int32 (int64 with ``enable_x64``).  If
    ``maxval <= minval`` the result is ``minval``.  Like JAX this reduces
    2*nbits random bits modulo the span, which is very slightly biased when
    the span is not a power of two.
    """
    k = check_key("randint", key)
    shape = _shape("randint", shape)
    dt = _int_dtype("randint", dtype)
    minval, maxval = _int_param(minval), _int_param(maxval)
    info = np.iinfo(dt)
    sample_dt = dt
    if info.bits < 32:
        # Sample in 32 bits to keep the modulo bias small.
        sample_dt = np.dtype(np.int32)
        minval = minval.astype(np.int32).clip(int(info.min), int(info.max))
        maxval = maxval.astype(np.int32).clip(int(info.min), int(info.max) + 1)
    return _randint(k, shape, minval, maxval, sample_dt).astype(dt)


# -------------------------------------------------------------- permutation
def _shuffle(key, x: np.ndarray, axis: int) -> np.ndarray:
    # Sorting by random 32-bit keys is a uniform shuffle when the keys are
    # distinct; repeating with fresh keys (stable sorts) makes collisions
    # negligible.  3 * log(n) / log(2**32 - 1) rounds, as in JAX.
    exponent = 3
    uint32max = np.iinfo(np.uint32).max
    num_rounds = int(np.ceil(exponent * np.log(max(1, x.size)) / np.log(uint32max)))
    for _ in range(num_rounds):
        key, subkey = split_key(key, (2,))
        sort_keys = random_bits(subkey, 32, x.shape)
        order = np.argsort(sort_keys, axis=axis, kind="stable")
        x = np.take_along_axis(x, order, axis)
    return x


def permutation(key, x, axis=0, independent=False) -> np.ndarray:
    """A random permutation of ``arange(x)`` (int ``x``) or of ``x`` along ``axis``.

    With ``independent=True`` every slice along ``axis`` is shuffled with
    its own permutation; otherwise one permutation reorders whole slices.
    """
    k = check_key("permutation", key)
    if np.ndim(x) == 0:
        if not np.issubdtype(np.asarray(x).dtype, np.integer):
            raise TypeError("x must be an integer or at least 1-dimensional")
        _normalize_axis(axis, 1)
        return _shuffle(k, np.arange(int(x), dtype=default_int()), 0)
    x = np.asarray(x)
    axis = _normalize_axis(axis, x.ndim)
    if independent or x.ndim == 1:
        return _shuffle(k, x, axis)
    ind = _shuffle(k, np.arange(x.shape[axis], dtype=default_int()), 0)
    return np.take(x, ind, axis)


# ------------------------------------------------------------------- choice
_SCAN_BLOCK = 16


def _xla_cumsum(x: np.ndarray) -> np.ndarray:
    """``jnp.cumsum`` of a 1-D float array with XLA's order of additions.

    XLA rewrites long prefix sums into blocks of 16: sequential sums within
    each block, plus the (recursively computed) exclusive prefix sum of the
    block totals.  Rounding depends on that order, and ``choice(p=...)``
    compares against these sums, so a plain sequential ``np.cumsum`` would
    pick different indices now and then.
    """
    n = x.shape[0]
    if n <= _SCAN_BLOCK:
        return np.cumsum(x, dtype=x.dtype)
    nb = -(-n // _SCAN_BLOCK)
    padded = np.zeros(nb * _SCAN_BLOCK, x.dtype)
    padded[:n] = x
    partial = np.cumsum(padded.reshape(nb, _SCAN_BLOCK), axis=1, dtype=x.dtype)
    offsets = np.zeros(nb, x.dtype)
    offsets[1:] = _xla_cumsum(partial[:, -1])[:-1]
    return (partial + offsets[:, None]).reshape(-1)[:n]


def _gumbel(key, shape: tuple, dt: np.dtype) -> np.ndarray:
    tiny = np.array(np.finfo(dt).tiny, dt)
    u = _uniform(key, shape, dt, tiny, np.array(1, dt))
    return -_xla_math.log(-_xla_math.log(u))


def choice(key, a, shape=(), replace=True, p=None, axis=0) -> np.ndarray:
    """Random sample of ``shape`` from ``a`` (an array, or ``arange(a)`` for an int).

    ``replace=False`` draws without replacement; ``p`` gives the
    probabilities of the entries of ``a`` along ``axis``.
    """
    k = check_key("choice", key)
    if not isinstance(shape, Sequence):
        raise TypeError(f"shape argument of choice must be a sequence, got {shape}")
    shape = _shape("choice", shape)
    arr = np.asarray(a)
    if arr.ndim == 0:
        if not np.issubdtype(arr.dtype, np.integer):
            raise TypeError(f"choice: a must be an int or an array, got {a!r}")
        n_inputs = int(arr)
    else:
        axis = _normalize_axis(axis, arr.ndim)
        n_inputs = arr.shape[axis]
    n_draws = int(np.prod(shape, dtype=np.int64))
    if n_draws == 0:
        return np.zeros(shape, dtype=default_int() if arr.ndim == 0 else arr.dtype)
    if n_inputs <= 0:
        raise ValueError("a must be greater than 0 unless no samples are taken")
    if not replace and n_draws > n_inputs:
        raise ValueError(f"Cannot take a larger sample (size {n_draws}) than "
                         f"population (size {n_inputs}) when 'replace=False'")

    if p is None:
        if replace:
            ind = randint(k, shape, 0, n_inputs)
            result = ind if arr.ndim == 0 else np.take(arr, ind, axis)
        else:
            slices = (slice(None),) * (axis if arr.ndim else 0) + (slice(n_draws),)
            result = permutation(k, n_inputs if arr.ndim == 0 else arr, axis)[slices]
    else:
        p_arr = np.asarray(p)
        if _is_python_value(p) or not np.issubdtype(p_arr.dtype, np.floating):
            p_arr = p_arr.astype(default_float())
        if p_arr.shape != (n_inputs,):
            raise ValueError(
                "p must be None or a 1D vector with the same size as a.shape[axis]. "
                f"p has shape {p_arr.shape} and a.shape[axis] is {n_inputs}.")
        dt = p_arr.dtype
        if replace:
            p_cuml = _xla_cumsum(p_arr)
            u = _unit_floats(k, shape, dt)
            r = p_cuml[-1] * (dt.type(1) - u)
            ind = np.searchsorted(p_cuml, r, side="left").astype(default_int())
        else:
            g = _gumbel(k, (n_inputs,), dt) + _xla_math.log(p_arr)
            ind = np.argsort(-g, kind="stable")[:n_draws].astype(default_int())
        result = ind if arr.ndim == 0 else np.take(arr, ind, axis)
    out_shape = shape if arr.ndim == 0 else arr.shape[:axis] + shape + arr.shape[axis + 1:]
    return np.asarray(result).reshape(out_shape)
