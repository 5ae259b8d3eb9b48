"""PRNG keys: creating, checking, splitting and folding.

A key is a read-only ``uint32`` array of shape ``(2,)`` -- exactly what
``jax.random.PRNGKey`` returns -- and a batch of keys has shape ``(..., 2)``.
Marking them read-only makes the "keys are values" rule hard to break by
accident: ``key[0] = 1`` raises instead of silently changing every stream
derived from that key.
"""
from __future__ import annotations

import operator

import numpy as np

from ..config import config
from . import _threefry

__all__ = ["PRNGKey", "key", "split", "fold_in", "key_data", "check_key"]

_EXPECTED = ("a PRNG key: a uint32 array of shape (2,) as returned by "
             "tangent_x.random.PRNGKey, split or fold_in")


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a, dtype=np.uint32)
    a.flags.writeable = False
    return a


def check_key(name: str, key, allow_batched: bool = False) -> np.ndarray:
    """Validate ``key`` for function ``name``; return it as a uint32 array.

    Raises ``TypeError`` for a non-key (wrong type or dtype) and
    ``ValueError`` for a key array of the wrong shape, naming what was
    expected.
    """
    if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
        raise TypeError(f"{name} expected {_EXPECTED}; got the integer {key!r} "
                        f"(did you mean tangent_x.random.PRNGKey({key!r})?)")
    try:
        arr = np.asarray(key)
    except Exception:  # pragma: no cover - exotic objects
        raise TypeError(f"{name} expected {_EXPECTED}; got {type(key).__name__}") from None
    if arr.dtype != np.uint32:
        raise TypeError(f"{name} expected {_EXPECTED}; got an array of dtype "
                        f"{arr.dtype} and shape {arr.shape}")
    if arr.ndim == 0 or arr.shape[-1] != 2:
        raise ValueError(f"{name} expected {_EXPECTED}; got a uint32 array of "
                         f"shape {arr.shape}")
    if arr.ndim > 1 and not allow_batched:
        raise ValueError(
            f"{name} accepts a single key of shape (2,), but was given a key "
            f"array of shape {arr.shape}. Use tangent_x.vmap (or a loop) to "
            f"map over a batch of keys.")
    return arr


def PRNGKey(seed) -> np.ndarray:
    """Create a key from an integer seed (the same key as ``jax.random.PRNGKey``).

    The key is ``[high 32 bits, low 32 bits]`` of the seed.  As in JAX's
    default mode, seeds are reduced to 32 bits first (so ``PRNGKey(-1)`` is
    ``[0, 0xffffffff]``); with ``config.update("enable_x64", True)`` a 64-bit
    seed keeps its high word, as with ``jax_enable_x64``.

    Keys are values: the same key always produces the same numbers, so use
    :func:`split` or :func:`fold_in` to get fresh keys instead of reusing one.
    """
    if isinstance(seed, (bool, np.bool_)) or (
            hasattr(seed, "dtype") and np.dtype(seed.dtype) == np.bool_):
        raise TypeError(f"PRNGKey seed must be an integer; got {seed!r}")
    if np.ndim(seed):
        raise TypeError(f"PRNGKey accepts a scalar seed, but was given an array "
                        f"of shape {np.shape(seed)} != (). Use split to make "
                        f"many keys, or vmap for batching")
    if isinstance(seed, int):
        if not -2**63 <= seed < 2**63:
            raise OverflowError(f"PRNGKey seed {seed} does not fit in int64")
        wide = True
    else:
        arr = np.asarray(seed)
        if not np.issubdtype(arr.dtype, np.integer):
            raise TypeError(f"PRNGKey seed must be an integer; got {seed!r} "
                            f"of dtype {arr.dtype}")
        wide = arr.dtype.itemsize == 8
        seed = int(arr)
    return _frozen(_threefry.seed_key(seed, wide and config.enable_x64))


key = PRNGKey


def _num_shape(num) -> tuple:
    if isinstance(num, (tuple, list)):
        shape = tuple(operator.index(d) for d in num)
    else:
        try:
            shape = (operator.index(num),)
        except TypeError:
            raise TypeError(f"split: num must be an int or a tuple of ints, got {num!r}") from None
    if any(d < 0 for d in shape):
        raise ValueError(f"split: num must be non-negative, got {num!r}")
    return shape


def split(key, num=2) -> np.ndarray:
    """Split a key into ``num`` new keys (an array of shape ``(num, 2)``).

    ``num`` may also be a tuple, giving keys of shape ``(*num, 2)``.  The
    new keys are independent of each other and of ``key``'s own stream;
    ``key`` itself should not be used again.
    """
    k = check_key("split", key)
    return _frozen(_threefry.split_key(k, _num_shape(num)))


def fold_in(key, data) -> np.ndarray:
    """A new key that is a deterministic function of ``key`` and 32-bit ``data``.

    Handy for deriving per-step or per-example keys: ``fold_in(key, step)``.
    """
    k = check_key("fold_in", key)
    if np.ndim(data):
        raise TypeError(f"fold_in accepts a scalar, but was given an array of "
                        f"shape {np.shape(data)} != (). Use vmap for batching.")
    if isinstance(data, (bool, np.bool_)):
        raise TypeError("fold_in data must be an integer, got a bool")
    if isinstance(data, int):
        if not 0 <= data < 2**32:
            raise OverflowError(f"fold_in data {data} is out of bounds for uint32")
        value = data
    else:
        arr = np.asarray(data)
        if not np.issubdtype(arr.dtype, np.integer):
            raise TypeError(f"fold_in data must be an integer; got dtype {arr.dtype}")
        value = int(arr) & 0xFFFFFFFF        # NumPy integers wrap, as in JAX
    return _frozen(_threefry.fold_in_key(k, value))


def key_data(keys) -> np.ndarray:
    """The raw ``uint32`` data of a key or batch of keys (shape ``(..., 2)``).

    Keys here already are their data, so this only validates and returns it;
    it exists so that code written for JAX's typed keys runs unchanged.
    """
    return check_key("key_data", keys, allow_batched=True)
