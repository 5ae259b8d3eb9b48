"""Shapes and dtypes of tangent_x.random's draws, checked as JAX checks them
(shared by the NumPy distributions and their Numba kernels)."""
from __future__ import annotations

import operator

import numpy as np

from ..config import config

_FLOATS = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64))


def _shape(name: str, shape) -> tuple:
    if isinstance(shape, (int, np.integer)):
        raise TypeError(f"{name}: shape must be a tuple of ints, e.g. ({shape},); got {shape!r}")
    try:
        out = tuple(operator.index(d) for d in shape)
    except TypeError:
        raise TypeError(f"{name}: shape must be a tuple of ints, got {shape!r}") from None
    if any(d < 0 for d in out):
        raise ValueError(f"{name}: shape must be non-negative, got {shape!r}")
    return out


def default_float() -> np.dtype:
    return np.dtype(np.float64 if config.enable_x64 else np.float32)


def default_int() -> np.dtype:
    return np.dtype(np.int64 if config.enable_x64 else np.int32)


def _float_dtype(name: str, dtype) -> np.dtype:
    # Python's ``float`` means "the default float", as in JAX.
    dt = default_float() if dtype is None or dtype is float else np.dtype(dtype)
    if dt not in _FLOATS:
        raise ValueError(f"dtype argument to `{name}` must be a float dtype "
                         f"(float16, float32 or float64), got {dt}")
    return dt


def _int_dtype(name: str, dtype) -> np.dtype:
    dt = default_int() if dtype is None or dtype is int else np.dtype(dtype)
    if not np.issubdtype(dt, np.integer):
        raise TypeError(f"{name} only accepts integer dtypes, got {dt}")
    return dt
