#!/usr/bin/env python
"""Regenerate tests/data/random_vectors.npz: reference draws from jax.random.

    pip install jax jaxlib
    python tools/gen_random_vectors.py [--out tests/data/random_vectors.npz]
    python tools/gen_random_vectors.py --check-exhaustive

Every case is recorded as (function name, key recipe, arguments, config) plus
JAX's result, and tests/test_random.py replays the same call through
tangent_x.random and demands identical bits.  Cases cover every public
function, shapes including () and odd sizes, float16/32/64, small / large /
negative seeds, and both Threefry streams (jax_threefry_partitionable True
and False), each with and without jax_enable_x64 (float64 and 64-bit
integer cases only in x64 mode, where JAX honours them).

JAX is needed only here; tangent_x never imports it.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np

try:
    import jax
    import jax.random as jr
except ImportError:  # pragma: no cover
    sys.exit("gen_random_vectors.py needs JAX: pip install jax jaxlib")

jax.config.update("jax_platforms", "cpu")


# ------------------------------------------------------------------ encoding
def enc(v):
    """JSON-able description of an argument that keeps NumPy types exact."""
    if isinstance(v, np.ndarray):
        return {"array": v.tolist(), "dtype": v.dtype.name}
    if isinstance(v, np.generic):
        return {"scalar": v.item(), "dtype": v.dtype.name}
    if isinstance(v, type) and issubclass(v, np.generic):
        return {"dtype": np.dtype(v).name}
    if isinstance(v, tuple):
        return {"tuple": [enc(x) for x in v]}
    return v


def weights(n, dtype):
    """Irregular positive weights in (0, 1], the same bits on any machine.

    (A SplitMix-style integer hash, not NumPy's RNG, whose float methods are
    not guaranteed stable across versions.)
    """
    x = np.arange(n, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    x ^= x >> np.uint64(31)
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(27)
    return (((x >> np.uint64(40)) + np.uint64(1)).astype(np.float64) / 2.0**24).astype(dtype)


def dec(v):
    if isinstance(v, dict):
        if "weights" in v:
            return weights(v["weights"], v["dtype"])
        if "array" in v:
            return np.array(v["array"], dtype=v["dtype"])
        if "scalar" in v:
            return np.dtype(v["dtype"]).type(v["scalar"])
        if "tuple" in v:
            return tuple(dec(x) for x in v["tuple"])
        if "dtype" in v:
            return np.dtype(v["dtype"]).type
    return v


def make_key(spec):
    k = jr.PRNGKey(dec(spec["seed"]))
    for op in spec.get("ops", []):
        if op[0] == "split":
            k = jr.split(k, op[1])[op[2]]
        else:
            k = jr.fold_in(k, op[1])
    return k


# --------------------------------------------------------------------- cases
SEEDS = [0, 1, 42, 2**31 + 5, -1, -7, 2**32 + 7, -2**40 + 3, 2**62 + 12345,
         np.int32(-3), np.uint32(4000000000), np.int64(-5)]
SHAPES = [(), (1,), (7,), (3, 5), (2, 3, 4), (1000,)]


def keyspec(seed, *ops):
    return {"seed": enc(seed), "ops": [list(o) for o in ops]}


def cases_for(x64: bool):
    """Yield (fn, keyspec, kwargs) for one x64 setting."""
    K = [keyspec(0), keyspec(42), keyspec(2**32 + 7),
         keyspec(-1, ("split", 3, 2)), keyspec(1, ("fold_in", 7))]
    for s in SEEDS:
        yield "PRNGKey", keyspec(s), {}
    for k in K[:3]:
        for n in (1, 2, 3, 7, (2, 3)):
            yield "split", k, {"num": n}
        for d in (0, 1, 7, 2**32 - 1, np.uint32(123), np.int64(-2), np.int32(99)):
            yield "fold_in", k, {"data": d}
    for k in K[:2]:
        for dt in (np.uint8, np.uint16, np.uint32) + ((np.uint64,) if x64 else ()):
            for shape in ((), (7,), (3, 5), (33,)):
                yield "bits", k, {"shape": shape, "dtype": dt}
    floats = (np.float32, np.float16) + ((np.float64,) if x64 else ())
    for k in K:
        for dt in floats:
            for shape in SHAPES:
                yield "uniform", k, {"shape": shape, "dtype": dt}
                yield "normal", k, {"shape": shape, "dtype": dt}
    for k in K[:3]:
        for dt in floats:
            yield "uniform", k, {"shape": (7,), "dtype": dt, "minval": -3.7, "maxval": 11.1}
            yield "uniform", k, {"shape": (3, 5), "dtype": dt,
                                 "minval": np.linspace(-2, 2, 5).astype(dt), "maxval": 5.5}
            yield "uniform", k, {"shape": (), "dtype": dt, "minval": 1e-3, "maxval": 1e-3 + 1e-6}
        yield "uniform", k, {"shape": (4,)}
        yield "normal", k, {"shape": (4,)}
    for k in K:
        yield "bernoulli", k, {"p": 0.5, "shape": (7,)}
        yield "bernoulli", k, {"p": 0.3, "shape": (3, 5)}
        yield "bernoulli", k, {"p": np.array([0.1, 0.5, 0.9, 0.0, 1.0], np.float32), "shape": (3, 5)}
        yield "bernoulli", k, {"p": np.array([0.25, 0.75], np.float32)}
        yield "bernoulli", k, {"p": np.float32(0.7)}
        if x64:
            yield "bernoulli", k, {"p": np.array([0.2, 0.4, 0.6], np.float64), "shape": (2, 3)}
    ints = (np.int32, np.uint32, np.int8, np.uint8, np.int16) + ((np.int64, np.uint64) if x64 else ())
    for k in K:
        for shape in ((), (1,), (7,), (3, 5), (257,)):
            yield "randint", k, {"shape": shape, "minval": 0, "maxval": 10}
            yield "randint", k, {"shape": shape, "minval": -5, "maxval": 1000003}
        for dt in ints:
            info = np.iinfo(dt)
            bound = 2**63 if x64 else 2**31      # Python ints must fit JAX's int
            lo, hi = max(int(info.min), -bound), min(int(info.max), bound - 1)
            yield "randint", k, {"shape": (9,), "minval": 0, "maxval": 100, "dtype": dt}
            yield "randint", k, {"shape": (9,), "minval": lo, "maxval": hi, "dtype": dt}
            yield "randint", k, {"shape": (5,), "minval": 3, "maxval": 3, "dtype": dt}
        yield "randint", k, {"shape": (3, 4), "minval": np.array([0, 10, 100, -50], np.int32),
                             "maxval": np.array([5, 20, 1000, 50], np.int32)}
        yield "randint", k, {"shape": (6,), "minval": 0, "maxval": 256, "dtype": np.uint8}
        yield "randint", k, {"shape": (6,), "minval": -2**31, "maxval": 2**31 - 1}
        if x64:
            yield "randint", k, {"shape": (6,), "minval": 0, "maxval": 2**40, "dtype": np.int64}
            yield "randint", k, {"shape": (6,), "minval": 0, "maxval": 2**32, "dtype": np.uint32}
    for k in K:
        for n in (0, 1, 2, 10, 257):
            yield "permutation", k, {"x": n}
        yield "permutation", k, {"x": np.arange(7, dtype=np.float32) * 1.5}
        yield "permutation", k, {"x": np.arange(12, dtype=np.int32).reshape(4, 3)}
        yield "permutation", k, {"x": np.arange(12, dtype=np.int32).reshape(4, 3), "axis": 1}
        yield "permutation", k, {"x": np.arange(20, dtype=np.int32).reshape(4, 5), "axis": 1,
                                 "independent": True}
        yield "permutation", k, {"x": np.arange(20, dtype=np.int32).reshape(4, 5), "independent": True}
    for k in K[:2]:
        yield "permutation", k, {"x": 2000}         # > 1625 elements: two shuffle rounds
    p5 = np.array([0.1, 0.2, 0.3, 0.15, 0.25], np.float32)
    for k in K:
        yield "choice", k, {"a": 10, "shape": (5,)}
        yield "choice", k, {"a": 10}
        yield "choice", k, {"a": 10, "shape": (2, 3), "replace": False}
        yield "choice", k, {"a": np.arange(24, dtype=np.int32).reshape(6, 4), "shape": (3,), "axis": 1}
        yield "choice", k, {"a": np.arange(24, dtype=np.int32).reshape(6, 4), "shape": (3,),
                            "replace": False}
        yield "choice", k, {"a": 5, "shape": (7,), "p": p5}
        yield "choice", k, {"a": 5, "shape": (3,), "p": p5, "replace": False}
        yield "choice", k, {"a": np.arange(5, dtype=np.float32) * 2, "shape": (2, 2), "p": p5}
        yield "choice", k, {"a": 300, "shape": (40,), "p": np.linspace(0, 1, 300).astype(np.float32)}
        yield "choice", k, {"a": 300, "shape": (40,), "p": np.linspace(0, 1, 300).astype(np.float32),
                            "replace": False}
        if k is K[0] or k is K[1]:
            # Long p: XLA sums it in blocks of 16 (see _xla_cumsum).
            big = {"weights": 30000, "dtype": "float32"}
            yield "choice", k, {"a": 30000, "shape": (1000,), "p": big}
            yield "choice", k, {"a": 30000, "shape": (100,), "p": big, "replace": False}
        if x64:
            p64 = p5.astype(np.float64)
            yield "choice", k, {"a": 5, "shape": (7,), "p": p64}
            yield "choice", k, {"a": 5, "shape": (3,), "p": p64, "replace": False}


def run_jax(fn, spec, kwargs):
    if fn == "PRNGKey":
        return np.asarray(jr.PRNGKey(dec(spec["seed"])))
    key = make_key(spec)
    kw = {name: dec(v) for name, v in kwargs.items()}
    if fn == "split":
        return np.asarray(jr.split(key, kw["num"]))
    if fn == "fold_in":
        return np.asarray(jr.fold_in(key, kw["data"]))
    return np.asarray(getattr(jr, fn)(key, **kw))


def check_exhaustive():
    """Compare tangent_x's XLA math with JAX on every float32 input normal() sees.

    float32 normal() feeds erfinv one of 2**23 values (one per mantissa
    pattern), so all of them can be checked; Gumbel's log(-log(u)) too.
    Too slow and JAX-dependent for the test suite; run after changing
    tangent_x/random/_xla_math.py or upgrading JAX.
    """
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    import jax.numpy as jnp

    from tangent_x.random import _xla_math as xm

    jax.config.update("jax_enable_x64", False)
    m = np.arange(2**23, dtype=np.uint32)
    unit = (m | np.uint32(0x3F800000)).view(np.float32) - np.float32(1)
    lo = np.nextafter(np.float32(-1), np.float32(0))
    u = np.maximum(lo, unit * np.float32(2) + lo)
    want = np.asarray(jax.jit(lambda u: np.float32(np.sqrt(2)) * jax.lax.erf_inv(u))(u))
    got = xm.erfinv(u) * np.float32(np.sqrt(2))
    bad = int((want.view(np.uint32) != got.view(np.uint32)).sum())
    print(f"normal float32: {bad} of {u.size} inputs differ from JAX")
    g = np.maximum(np.float32(np.finfo(np.float32).tiny), unit + np.finfo(np.float32).tiny)
    want = np.asarray(jax.jit(lambda x: -jnp.log(-jnp.log(x)))(g))
    got = -xm.log(-xm.log(g))
    bad2 = int((want.view(np.uint32) != got.view(np.uint32)).sum())
    print(f"gumbel float32: {bad2} of {g.size} inputs differ from JAX")
    return bad + bad2


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--out", default=os.path.join(here, "..", "tests", "data",
                                                  "random_vectors.npz"))
    ap.add_argument("--check-exhaustive", action="store_true",
                    help="instead of writing vectors, compare float32 normal/gumbel "
                         "math with JAX on every possible input")
    args = ap.parse_args(argv)
    if args.check_exhaustive:
        sys.exit(1 if check_exhaustive() else 0)

    manifest, arrays = [], {}
    for partitionable in (True, False):
        for x64 in (False, True):
            jax.config.update("jax_threefry_partitionable", partitionable)
            jax.config.update("jax_enable_x64", x64)
            for fn, spec, kwargs in cases_for(x64):
                kwargs = {name: enc(v) for name, v in kwargs.items()}
                out = run_jax(fn, spec, kwargs)
                name = f"c{len(manifest):05d}"
                arrays[name] = out
                manifest.append({"name": name, "fn": fn, "key": spec, "kwargs": kwargs,
                                 "threefry_partitionable": partitionable, "x64": x64,
                                 "dtype": out.dtype.name, "shape": list(out.shape)})
    meta = {"jax_version": jax.__version__, "cases": manifest}
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    np.savez_compressed(args.out, manifest=np.array(json.dumps(meta)), **arrays)
    print(f"wrote {len(manifest)} cases to {os.path.relpath(args.out)} "
          f"({os.path.getsize(args.out) / 1e6:.2f} MB, jax {jax.__version__})")


if __name__ == "__main__":
    main()
