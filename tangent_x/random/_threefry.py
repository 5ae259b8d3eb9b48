"""Threefry-2x32 and the raw-bit streams JAX builds from it.

Threefry-2x32 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3",
SC 2011) is a keyed bijection on pairs of 32-bit words: 20 rounds of
add / rotate / xor, with the key (plus a parity word ``k0 ^ k1 ^ 0x1BD11BDA``)
injected every 4 rounds.  Being a pure function of (key, counter), it needs
no state, vectorises trivially, and any element of a stream can be computed
without the others -- which is what makes JAX's keys splittable.

Two implementations of the same function live here:

* :func:`threefry2x32` -- eager, vectorised NumPy uint32 arithmetic.  It works
  chunk by chunk with in-place ufuncs so the working set stays in cache; a
  naive whole-array version is several times slower at 10**7 elements.
* :func:`threefry2x32_core` -- explicit scalar loops compiled by
  ``numba.njit``, for the jit path (see ``_numba.py``).  The tests check both
  give the same bits.

On top of the hash, :func:`random_bits`, :func:`split_key` and
:func:`fold_in_key` reproduce JAX's two stream layouts
(``config.threefry_partitionable`` True / False).
"""
from __future__ import annotations

import math
import os

import numpy as np

from ..config import config

__all__ = ["threefry2x32", "threefry2x32_core", "threefry_2x32", "random_bits",
           "split_key", "fold_in_key", "seed_key"]

U32 = np.uint32
_M32 = 0xFFFFFFFF
_PARITY = 0x1BD11BDA
ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))

# Elements processed per chunk by the NumPy kernel: three uint32 buffers of
# this size (~400 KiB) stay in L2, which matters more than ufunc overhead.
_CHUNK = 1 << 15
# Arrays at least this large are hashed by several threads (NumPy's ufuncs
# release the GIL, so chunks on different cores run in parallel).
_PARALLEL_MIN = 1 << 20
_pool = None


def _parallel(fn, n):
    """Run ``fn(start, stop)`` over [0, n), split across worker threads."""
    global _pool
    workers = min(4, os.cpu_count() or 1)
    if n < _PARALLEL_MIN or workers == 1:
        fn(0, n)
        return
    if _pool is None:
        from concurrent.futures import ThreadPoolExecutor
        _pool = ThreadPoolExecutor(workers, thread_name_prefix="tangent_x-threefry")
    step = -(-n // workers)
    step = -(-step // _CHUNK) * _CHUNK            # whole chunks per worker
    futures = [_pool.submit(fn, s, min(s + step, n)) for s in range(0, n, step)]
    for f in futures:
        f.result()


def _u32(v) -> np.ndarray:
    """``v`` mod 2**32 as a 0-d uint32 array.

    Constants are passed to the ufuncs in this form: a 0-d array is the
    cheapest operand NumPy accepts (a NumPy scalar is converted on every
    call, which costs about as much as hashing a thousand elements).
    """
    return np.array(int(v) & _M32, U32)


# (left, right) shift amounts of each rotation, as ufunc operands.
_ROT = tuple(tuple((_u32(r), _u32(32 - r)) for r in rs) for rs in ROTATIONS)


def _key_schedule(k0: int, k1: int):
    """The key words and the per-block additions: after block i, ``x0 += a[i]``
    and ``x1 += b[i]`` (mod 2**32)."""
    ks = (k0, k1, k0 ^ k1 ^ _PARITY)
    adds0 = [_u32(ks[(i + 1) % 3]) for i in range(5)]
    adds1 = [_u32(ks[(i + 2) % 3] + i + 1) for i in range(5)]
    return ks[0], ks[1], adds0, adds1


def _rounds_inplace(a, b, t, adds0, adds1, skip_first=False):
    """The 20 Threefry rounds on uint32 buffers ``a``, ``b`` (``t`` is scratch).

    The key words have already been added (and, with ``skip_first``, the
    first round done too).  Everything is done in place with positional
    ``out`` arguments: no temporaries, and the least per-call overhead --
    a chunk takes about 100 ufunc calls, so call overhead is not negligible.
    """
    add, xor, lor = np.add, np.bitwise_xor, np.bitwise_or
    shl, shr = np.left_shift, np.right_shift
    for i in range(5):
        for j, (left, right) in enumerate(_ROT[i % 2]):
            if skip_first and i == 0 and j == 0:
                continue
            add(a, b, a)
            shl(b, left, t)                 # rotate b left ...
            shr(b, right, b)
            lor(b, t, b)                    # ... done
            xor(b, a, b)
        add(a, adds0[i], a)
        add(b, adds1[i], b)


def threefry2x32(k0, k1, x0, x1):
    """Threefry-2x32 of counter pairs ``(x0, x1)`` under key ``(k0, k1)``.

    ``k0`` and ``k1`` are uint32 scalars; ``x0`` and ``x1`` are uint32 arrays
    of equal shape.  Returns two new uint32 arrays of that shape.
    """
    x0 = np.asarray(x0, dtype=U32)
    x1 = np.asarray(x1, dtype=U32)
    if x0.shape != x1.shape:
        raise ValueError(f"threefry2x32: counter shapes differ: {x0.shape} vs {x1.shape}")
    ks0, ks1, adds0, adds1 = _key_schedule(int(k0), int(k1))
    ks0, ks1 = _u32(ks0), _u32(ks1)
    y0 = np.empty(x0.shape, U32)
    y1 = np.empty(x0.shape, U32)
    f0, f1, g0, g1 = x0.reshape(-1), x1.reshape(-1), y0.reshape(-1), y1.reshape(-1)

    def work(start, stop):
        t = np.empty(min(stop - start, _CHUNK), U32)
        for s in range(start, stop, _CHUNK):
            e = min(s + _CHUNK, stop)
            a, b = g0[s:e], g1[s:e]
            np.add(f0[s:e], ks0, a)
            np.add(f1[s:e], ks1, b)
            _rounds_inplace(a, b, t[: e - s], adds0, adds1)

    _parallel(work, f0.size)
    return y0, y1


def _iota_bits_xor(k0, k1, start, n, finish=None):
    """``hi ^ lo`` of Threefry applied to the 64-bit counters start..start+n-1.

    This is the partitionable stream's 32-bit output, generated chunk-wise
    without materialising counter arrays.  ``finish(chunk)``, if given, is
    applied in place to each finished uint32 chunk while it is still in
    cache (the samplers use it to turn bits into floats without another
    pass over memory).
    """
    ks0, ks1, adds0, adds1 = _key_schedule(int(k0), int(k1))
    out = np.empty(n, U32)
    base = np.arange(min(n, _CHUNK), dtype=U32)

    def work(first, stop):
        size = min(stop - first, _CHUNK)
        b = np.empty(size, U32)
        t = np.empty(size, U32)
        left, right = _ROT[0][0]
        for s in range(first, stop, _CHUNK):
            e = min(s + _CHUNK, stop)
            m = e - s
            a, bm, tm = out[s:e], b[:m], t[:m]
            lo0 = start + s
            if (lo0 + m - 1) >> 32 == lo0 >> 32:    # counters share a high word
                np.add(base[:m], _u32(lo0 + ks1), bm)
                # First round's a += b with a = hi + ks0 constant: one pass.
                np.add(bm, _u32((lo0 >> 32) + ks0), a)
                np.left_shift(bm, left, tm)
                np.right_shift(bm, right, bm)
                np.bitwise_or(bm, tm, bm)
                np.bitwise_xor(bm, a, bm)
                _rounds_inplace(a, bm, tm, adds0, adds1, skip_first=True)
            else:                                    # crosses a 2**32 boundary
                idx = np.arange(lo0, lo0 + m, dtype=np.uint64)
                np.add((idx >> np.uint64(32)).astype(U32), _u32(ks0), a)
                np.add(idx.astype(U32), _u32(ks1), bm)
                _rounds_inplace(a, bm, tm, adds0, adds1)
            np.bitwise_xor(a, bm, a)
            if finish is not None:
                finish(a)

    _parallel(work, n)
    return out


def _halves_words(k0, k1, m, finish=None):
    """``threefry_2x32(key, arange(m))`` -- the original stream's m words.

    JAX pairs counter j with counter half + j (half = ceil(m / 2); the last
    pair's second counter is a zero pad when m is odd) and writes the two
    outputs to words j and half + j.  Here each chunk of pairs is hashed in
    place in the two halves of the output, counters made on the fly;
    ``finish`` is applied to each finished chunk, as in :func:`_iota_bits_xor`.
    """
    ks0, ks1, adds0, adds1 = _key_schedule(int(k0), int(k1))
    half = -(-m // 2)
    out = np.empty(2 * half, U32)
    base = np.arange(min(half, _CHUNK), dtype=U32)

    def work(first, stop):
        t = np.empty(min(stop - first, _CHUNK), U32)
        for s in range(first, stop, _CHUNK):
            e = min(s + _CHUNK, stop)
            a, b = out[s:e], out[half + s:half + e]
            np.add(base[:e - s], _u32(s + ks0), a)
            np.add(base[:e - s], _u32(half + s + ks1), b)
            if m % 2 and e == half:
                b[-1] = ks1                         # the zero pad's counter
            _rounds_inplace(a, b, t[:e - s], adds0, adds1)
            if finish is not None:
                finish(a)
                finish(b)

    _parallel(work, half)
    return out[:m]


def bits32(key, n, finish=None) -> np.ndarray:
    """The first ``n`` 32-bit words of ``key``'s stream (flat), in the mode
    ``config.threefry_partitionable`` selects; ``finish`` as in
    :func:`_iota_bits_xor` (it may also see a pad word past ``n``)."""
    if config.threefry_partitionable:
        return _iota_bits_xor(key[0], key[1], 0, n, finish)
    if n >= _M32:
        raise NotImplementedError(
            "random_bits: more than 2**32-1 words in threefry_partitionable=False mode")
    return _halves_words(key[0], key[1], n, finish)


# --------------------------------------------------------------------------
# The Numba core.  Numba promotes uint32 arithmetic to 64 bits, so the words
# are carried as int64 values in [0, 2**32) and masked after each addition.
# --------------------------------------------------------------------------

def _make_numba_core():
    try:
        import numba
    except ImportError:  # pragma: no cover - numba is a hard dependency
        return None, None

    R0, R1 = ROTATIONS

    @numba.njit(inline="always")
    def _rotl(v, r):
        return ((v << r) | (v >> (32 - r))) & 0xFFFFFFFF

    @numba.njit(inline="always")
    def block(k0, k1, x0, x1):
        """One Threefry-2x32 evaluation on int64-held uint32 words."""
        k2 = k0 ^ k1 ^ 0x1BD11BDA
        a = (x0 + k0) & 0xFFFFFFFF
        b = (x1 + k1) & 0xFFFFFFFF
        a = (a + b) & 0xFFFFFFFF; b = _rotl(b, R0[0]) ^ a
        a = (a + b) & 0xFFFFFFFF; b = _rotl(b, R0[1]) ^ a
        a = (a + b) & 0xFFFFFFFF; b = _rotl(b, R0[2]) ^ a
        a = (a + b) & 0xFFFFFFFF; b = _rotl(b, R0[3]) ^ a
        a = (a + k1) & 0xFFFFFFFF
        b = (b + k2 + 1) & 0xFFFFFFFF
        a = (a + b) & 0xFFFFFFFF; b = _rotl(b, R1[0]) ^ a
        a = (a + b) & 0xFFFFFFFF; b = _rotl(b, R1[1]) ^ a
        a = (a + b) & 0xFFFFFFFF; b = _rotl(b, R1[2]) ^ a
        a = (a + b) & 0xFFFFFFFF; b = _rotl(b, R1[3]) ^ a
        a = (a + k2) & 0xFFFFFFFF
        b = (b + k0 + 2) & 0xFFFFFFFF
        a = (a + b) & 0xFFFFFFFF; b = _rotl(b, R0[0]) ^ a
        a = (a + b) & 0xFFFFFFFF; b = _rotl(b, R0[1]) ^ a
        a = (a + b) & 0xFFFFFFFF; b = _rotl(b, R0[2]) ^ a
        a = (a + b) & 0xFFFFFFFF; b = _rotl(b, R0[3]) ^ a
        a = (a + k0) & 0xFFFFFFFF
        b = (b + k1 + 3) & 0xFFFFFFFF
        a = (a + b) & 0xFFFFFFFF; b = _rotl(b, R1[0]) ^ a
        a = (a + b) & 0xFFFFFFFF; b = _rotl(b, R1[1]) ^ a
        a = (a + b) & 0xFFFFFFFF; b = _rotl(b, R1[2]) ^ a
        a = (a + b) & 0xFFFFFFFF; b = _rotl(b, R1[3]) ^ a
        a = (a + k1) & 0xFFFFFFFF
        b = (b + k2 + 4) & 0xFFFFFFFF
        a = (a + b) & 0xFFFFFFFF; b = _rotl(b, R0[0]) ^ a
        a = (a + b) & 0xFFFFFFFF; b = _rotl(b, R0[1]) ^ a
        a = (a + b) & 0xFFFFFFFF; b = _rotl(b, R0[2]) ^ a
        a = (a + b) & 0xFFFFFFFF; b = _rotl(b, R0[3]) ^ a
        a = (a + k2) & 0xFFFFFFFF
        b = (b + k0 + 5) & 0xFFFFFFFF
        return a, b

    @numba.njit(cache=True, nogil=True)
    def threefry2x32_core(k0, k1, x0, x1):
        """Threefry-2x32 with explicit loops (``numba.njit``).

        ``k0``, ``k1``: uint32 key words; ``x0``, ``x1``: 1-D uint32 arrays.
        Returns ``(y0, y1)``, new uint32 arrays -- the same bits as the NumPy
        :func:`threefry2x32`.
        """
        n = x0.shape[0]
        y0 = np.empty(n, np.uint32)
        y1 = np.empty(n, np.uint32)
        q0 = np.int64(k0)
        q1 = np.int64(k1)
        for i in range(n):
            a, b = block(q0, q1, np.int64(x0[i]), np.int64(x1[i]))
            y0[i] = a
            y1[i] = b
        return y0, y1

    return block, threefry2x32_core


threefry_block, threefry2x32_core = _make_numba_core()


# --------------------------------------------------------------------------
# JAX's stream layouts
# --------------------------------------------------------------------------

def threefry_2x32(key, count):
    """JAX's ``threefry_2x32(key, count)``: hash a flat counter array.

    The counters are split into a first and second half (padded with one
    zero if odd), hashed as pairs, and the two output halves concatenated
    back -- the layout of JAX's original (non-partitionable) stream.
    """
    count = np.asarray(count, dtype=U32)
    flat = count.reshape(-1)
    odd = flat.size % 2
    if odd:
        flat = np.concatenate([flat, np.zeros(1, U32)])
    half = flat.size // 2
    y0, y1 = threefry2x32(key[0], key[1], flat[:half], flat[half:])
    out = np.concatenate([y0, y1])
    if odd:
        out = out[:-1]
    return out.reshape(count.shape)


_UINT = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


def random_bits(key, bit_width: int, shape) -> np.ndarray:
    """Uniform random unsigned integers of ``bit_width`` bits and ``shape``.

    Matches ``jax.random.bits`` / JAX's internal ``_random_bits`` for a raw
    threefry key, in the stream selected by ``config.threefry_partitionable``.
    """
    if bit_width not in _UINT:
        raise TypeError(f"random_bits: bit_width must be 8, 16, 32 or 64, got {bit_width}")
    shape = tuple(int(d) for d in shape)
    size = math.prod(shape)
    if config.threefry_partitionable:
        return _bits_partitionable(key, bit_width, shape, size)
    return _bits_original(key, bit_width, shape, size)


def _bits_partitionable(key, bit_width, shape, size):
    # Element i (flat, C order) is Threefry(key, (i >> 32, i & 0xffffffff));
    # narrow widths keep the low bits of hi ^ lo, 64 bits concatenate hi:lo.
    if bit_width == 64:
        idx = np.arange(size, dtype=np.uint64)
        hi, lo = threefry2x32(key[0], key[1], (idx >> np.uint64(32)).astype(U32),
                              idx.astype(U32))
        out = (hi.astype(np.uint64) << np.uint64(32)) | lo.astype(np.uint64)
        return out.reshape(shape)
    bits = bits32(key, size)
    if bit_width != 32:
        bits = bits.astype(_UINT[bit_width])
    return bits.reshape(shape)


def _bits_original(key, bit_width, shape, size):
    # The old stream hashes the counters 0..ceil(width*size/32)-1 in JAX's
    # half/half layout and reinterprets the words.
    words = bits32(key, -(-bit_width * size // 32))
    if bit_width == 64:
        half = words.size // 2
        out = (words[:half].astype(np.uint64) << np.uint64(32)) | words[half:].astype(np.uint64)
    elif bit_width == 32:
        out = words
    else:
        # Little-endian unpacking of each word into 32/width narrow values.
        out = words.astype("<u4").view(_UINT[bit_width])[:size]
    return np.ascontiguousarray(out).reshape(shape)


def split_key(key, shape) -> np.ndarray:
    """``num`` new raw keys, shape ``(*shape, 2)``."""
    shape = tuple(int(d) for d in shape)
    n = math.prod(shape)
    if config.threefry_partitionable:
        idx = np.arange(n, dtype=np.uint64)
        y0, y1 = threefry2x32(key[0], key[1], (idx >> np.uint64(32)).astype(U32),
                              idx.astype(U32))
        out = np.stack([y0, y1], axis=-1)
    else:
        out = _halves_words(key[0], key[1], 2 * n)
    return out.reshape(shape + (2,))


def fold_in_key(key, data: int) -> np.ndarray:
    """Hash 32-bit ``data`` into ``key`` (the same in both stream modes)."""
    y0, y1 = threefry2x32(key[0], key[1], np.zeros(1, U32),
                          np.array([data & _M32], U32))
    return np.array([y0[0], y1[0]], U32)


def seed_key(seed: int, x64: bool) -> np.ndarray:
    """Raw key of an integer seed: ``[high 32 bits, low 32 bits]``.

    Without x64 (JAX's default) the seed is first reduced to a 32-bit
    integer, so the high word is always 0 -- exactly what
    ``jax.random.PRNGKey`` returns in that mode.
    """
    if not x64:
        return np.array([0, seed & _M32], U32)
    return np.array([(seed >> 32) & _M32, seed & _M32], U32)
