"""tangent_x.random: bit-exact agreement with jax.random, statistics, errors.

The reference draws in tests/data/random_vectors.npz come from JAX
(tools/gen_random_vectors.py); JAX itself is not needed to run these tests.
"""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

import tangent_x.random as random
from tangent_x.config import config
from tangent_x.random import _threefry, _xla_math
from tangent_x.random._threefry import threefry2x32, threefry2x32_core

DATA = os.path.join(os.path.dirname(__file__), "data", "random_vectors.npz")


# ------------------------------------------------------------ JAX vectors
def _weights(n, dtype):
    # The same as tools/gen_random_vectors.py:weights (an integer hash).
    x = np.arange(n, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    x ^= x >> np.uint64(31)
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(27)
    return (((x >> np.uint64(40)) + np.uint64(1)).astype(np.float64) / 2.0**24).astype(dtype)


def _dec(v):
    if isinstance(v, dict):
        if "weights" in v:
            return _weights(v["weights"], v["dtype"])
        if "array" in v:
            return np.array(v["array"], dtype=v["dtype"])
        if "scalar" in v:
            return np.dtype(v["dtype"]).type(v["scalar"])
        if "tuple" in v:
            return tuple(_dec(x) for x in v["tuple"])
        if "dtype" in v:
            return np.dtype(v["dtype"]).type
    if isinstance(v, list):
        return tuple(v)     # JSON turns shape tuples such as num=(2, 3) into lists
    return v


def _load():
    with np.load(DATA) as f:
        meta = json.loads(str(f["manifest"]))
        arrays = {c["name"]: f[c["name"]] for c in meta["cases"]}
    return meta["cases"], arrays


CASES, ARRAYS = _load()


def _key(spec):
    k = random.PRNGKey(_dec(spec["seed"]))
    for op in spec["ops"]:
        k = random.split(k, op[1])[op[2]] if op[0] == "split" else random.fold_in(k, op[1])
    return k


def _run(case):
    if case["fn"] == "PRNGKey":
        return random.PRNGKey(_dec(case["key"]["seed"]))
    kwargs = {name: _dec(v) for name, v in case["kwargs"].items()}
    return getattr(random, case["fn"])(_key(case["key"]), **kwargs)


def _bits(a):
    a = np.ascontiguousarray(a)
    return a.view(f"u{a.dtype.itemsize}") if a.dtype.kind == "f" else a


@pytest.mark.parametrize(
    "case", CASES,
    ids=[f"{c['name']}-{c['fn']}-{'part' if c['threefry_partitionable'] else 'orig'}"
         f"{'-x64' if c['x64'] else ''}" for c in CASES])
def test_matches_jax(case):
    with config.override("threefry_partitionable", case["threefry_partitionable"]), \
            config.override("enable_x64", case["x64"]):
        got = np.asarray(_run(case))
    want = ARRAYS[case["name"]]
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_array_equal(_bits(got), _bits(want))


def test_vectors_cover_everything():
    fns = {c["fn"] for c in CASES}
    assert fns >= {"PRNGKey", "split", "fold_in", "bits", "uniform", "normal",
                   "bernoulli", "randint", "permutation", "choice"}
    combos = {(c["threefry_partitionable"], c["x64"]) for c in CASES}
    assert combos == {(True, False), (True, True), (False, False), (False, True)}
    dtypes = {c["dtype"] for c in CASES if c["fn"] in ("uniform", "normal")}
    assert dtypes == {"float16", "float32", "float64"}
    shapes = {tuple(c["shape"]) for c in CASES if c["fn"] == "normal"}
    assert {(), (1,), (7,), (3, 5)} <= shapes


# ----------------------------------------------------------------- keys
def test_key_is_readonly_uint32_pair():
    k = random.PRNGKey(0)
    assert k.dtype == np.uint32 and k.shape == (2,)
    with pytest.raises(ValueError):
        k[0] = 1
    assert random.key(5).tolist() == random.PRNGKey(5).tolist()
    keys = random.split(k, 3)
    data = random.key_data(keys)
    assert data.dtype == np.uint32 and data.shape == (3, 2)
    np.testing.assert_array_equal(data, keys)
    assert len({tuple(row) for row in data.tolist()} | {tuple(k.tolist())}) == 4


def test_reusing_a_key_repeats_the_numbers():
    k = random.PRNGKey(123)
    np.testing.assert_array_equal(random.normal(k, (10,)), random.normal(k, (10,)))
    k1, k2 = random.split(k)
    assert not np.array_equal(random.normal(k1, (10,)), random.normal(k2, (10,)))


def test_seed_conventions():
    assert random.PRNGKey(-1).tolist() == [0, 0xFFFFFFFF]
    assert random.PRNGKey(2**32 + 7).tolist() == [0, 7]
    with config.override("enable_x64", True):
        assert random.PRNGKey(-1).tolist() == [0xFFFFFFFF, 0xFFFFFFFF]
        assert random.PRNGKey(2**32 + 7).tolist() == [1, 7]
        assert random.PRNGKey(np.int32(-1)).tolist() == [0, 0xFFFFFFFF]
    with pytest.raises(OverflowError):
        random.PRNGKey(2**64)
    with pytest.raises(TypeError, match="integer"):
        random.PRNGKey(0.5)
    with pytest.raises(TypeError, match="scalar"):
        random.PRNGKey(np.arange(3))


@pytest.mark.parametrize("bad, exc, match", [
    (np.zeros(3, np.uint32), ValueError, r"shape \(2,\)"),
    (np.zeros((2, 3), np.uint32), ValueError, r"shape \(2,\)"),
    (np.zeros(2, np.int64), TypeError, "uint32"),
    (np.zeros(2, np.float32), TypeError, "uint32"),
    (42, TypeError, r"PRNGKey\(42\)"),
    ("key", TypeError, "uint32"),
])
def test_bad_keys_raise_clear_errors(bad, exc, match):
    for fn in (lambda k: random.uniform(k, (2,)), lambda k: random.split(k),
               lambda k: random.fold_in(k, 1), lambda k: random.normal(k)):
        with pytest.raises(exc, match=match):
            fn(bad)


def test_batched_key_needs_vmap():
    keys = random.split(random.PRNGKey(0), 4)
    with pytest.raises(ValueError, match="single key.*vmap"):
        random.uniform(keys, (3,))


def test_fold_in_data_checks():
    k = random.PRNGKey(0)
    with pytest.raises(OverflowError):
        random.fold_in(k, -1)
    with pytest.raises(TypeError):
        random.fold_in(k, np.arange(2))
    np.testing.assert_array_equal(random.fold_in(k, np.int64(-2)),
                                  random.fold_in(k, 2**32 - 2))


def test_argument_errors():
    k = random.PRNGKey(0)
    with pytest.raises(TypeError, match="tuple"):
        random.uniform(k, 3)
    with pytest.raises(ValueError, match="float dtype"):
        random.uniform(k, (3,), dtype=np.int32)
    with pytest.raises(TypeError, match="integer"):
        random.randint(k, (3,), 0, 5, dtype=np.float32)
    with pytest.raises(ValueError, match="broadcast"):
        random.uniform(k, (3,), minval=np.zeros(4))
    with pytest.raises(TypeError, match="floating"):
        random.bernoulli(k, 1)
    with pytest.raises(ValueError, match="larger sample"):
        random.choice(k, 3, (5,), replace=False)
    with pytest.raises(ValueError, match="p must be"):
        random.choice(k, 3, (2,), p=[0.5, 0.5])


def test_config_unknown_option():
    with pytest.raises(AttributeError, match="Unrecognized config option"):
        config.update("no_such_option", True)
    with pytest.raises(AttributeError, match="Unrecognized config option"):
        config.no_such_option
    with pytest.raises(TypeError):
        config.update("threefry_partitionable", 1)
    assert config.read("jax_threefry_partitionable") is config.threefry_partitionable


# --------------------------------------------------------- the Numba core
def test_numba_core_matches_numpy_core():
    rng = np.random.default_rng(0)
    for _ in range(5):
        k0, k1 = (int(v) for v in rng.integers(0, 2**32, 2))
        x0 = rng.integers(0, 2**32, 1001, dtype=np.uint32)
        x1 = rng.integers(0, 2**32, 1001, dtype=np.uint32)
        a0, a1 = threefry2x32(np.uint32(k0), np.uint32(k1), x0, x1)
        b0, b1 = threefry2x32_core(np.uint32(k0), np.uint32(k1), x0, x1)
        np.testing.assert_array_equal(a0, b0)
        np.testing.assert_array_equal(a1, b1)


def test_threefry_known_answer():
    # Known-answer vectors of the Random123 reference implementation
    # (Threefry-2x32, 20 rounds).
    cases = [((0, 0), (0, 0), (0x6B200159, 0x99BA4EFE)),
             ((0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF), (0x1CB996FC, 0xBB002BE7)),
             ((0x13198A2E, 0x03707344), (0x243F6A88, 0x85A308D3), (0xC4923A9C, 0x483DF7A0))]
    for (k0, k1), (x0, x1), want in cases:
        y = threefry2x32(np.uint32(k0), np.uint32(k1), np.array([x0], np.uint32),
                         np.array([x1], np.uint32))
        assert (int(y[0][0]), int(y[1][0])) == want
        z = threefry2x32_core(np.uint32(k0), np.uint32(k1), np.array([x0], np.uint32),
                              np.array([x1], np.uint32))
        assert (int(z[0][0]), int(z[1][0])) == want


@pytest.mark.parametrize("m", [0, 1, 2, 7, 2 * _threefry._CHUNK + 5, 2 * _threefry._CHUNK + 6])
def test_original_stream_words_follow_jax_layout(m):
    # The chunked generator (counters made on the fly, outputs written into
    # the two halves) against JAX's definition spelled out on whole arrays:
    # pad the counters 0..m-1 with a zero to even length, hash first half
    # against second half, concatenate.
    key = random.fold_in(random.PRNGKey(9), 4)
    count = np.arange(m, dtype=np.uint32)
    if m % 2:
        count = np.concatenate([count, np.zeros(1, np.uint32)])
    y0, y1 = threefry2x32(key[0], key[1], count[:count.size // 2], count[count.size // 2:])
    want = np.concatenate([y0, y1])[:m]
    np.testing.assert_array_equal(_threefry._halves_words(key[0], key[1], m), want)
    np.testing.assert_array_equal(_threefry.threefry_2x32(key, np.arange(m, dtype=np.uint32)),
                                  want)


@pytest.mark.parametrize("start", [0, 2**32 - 5, 2**33 + 1])
def test_partitionable_stream_words_follow_jax_layout(start):
    # hi ^ lo of Threefry of the 64-bit counters start, start+1, ... --
    # across chunk boundaries and across a change of the counters' high word.
    key = random.PRNGKey(17)
    n = _threefry._CHUNK + 9
    idx = np.arange(start, start + n, dtype=np.uint64)
    hi, lo = threefry2x32(key[0], key[1], (idx >> np.uint64(32)).astype(np.uint32),
                          idx.astype(np.uint32))
    np.testing.assert_array_equal(_threefry._iota_bits_xor(key[0], key[1], start, n), hi ^ lo)


@pytest.mark.parametrize("partitionable", [True, False])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_large_eager_draws_use_kernels_with_the_same_bits(partitionable, dtype, monkeypatch):
    # Eager draws of KERNEL_MIN values or more come from the fused Numba
    # kernels; the NumPy hash (forced by raising the threshold) must agree
    # bit for bit, at an odd size that also exercises the original stream's
    # zero pad and several NumPy chunks.
    from tangent_x.random import _distributions
    k = random.fold_in(random.PRNGKey(5), 2)
    shape = (3, _distributions.KERNEL_MIN // 3 + 1)
    with config.override("threefry_partitionable", partitionable):
        assert _distributions._fused("uniform", k, shape, np.dtype(dtype)) is not None
        fused = {name: getattr(random, name)(k, shape, dtype) for name in ("uniform", "normal")}
        others = {"bernoulli": lambda: random.bernoulli(k, np.asarray(0.25, dtype), shape),
                  "scaled": lambda: random.uniform(k, shape, dtype, -3.0, np.arange(1, 4.0)[:, None])}
        fused.update((name, draw()) for name, draw in others.items())
        monkeypatch.setattr(_distributions, "KERNEL_MIN", float("inf"))
        for name, got in fused.items():
            if name in others:
                want = others[name]()
            else:
                want = getattr(random, name)(k, shape, dtype)
            assert got.dtype == want.dtype and got.shape == want.shape == shape
            np.testing.assert_array_equal(_bits(got), _bits(want))


@pytest.mark.parametrize("partitionable", [True, False])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(), (1,), (7,), (3, 5), (1001,)])
def test_jit_kernels_match_eager(partitionable, dtype, shape):
    from tangent_x.random import _distributions, _numba
    # Small enough for the eager call to take the NumPy path: the kernels
    # are compared with the other implementation, not with themselves.
    assert int(np.prod(shape)) < _distributions.KERNEL_MIN
    k = random.fold_in(random.PRNGKey(3), 11)
    with config.override("threefry_partitionable", partitionable):
        for name in ("uniform", "normal"):
            eager = getattr(random, name)(k, shape, dtype)
            jitted = getattr(_numba, name)(k, shape, dtype)
            assert jitted.dtype == eager.dtype and jitted.shape == eager.shape
            np.testing.assert_array_equal(_bits(jitted), _bits(eager))


def test_xla_math_special_values():
    f = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e-45], np.float32)
    with np.errstate(all="ignore"):
        got = _xla_math.log(f)
    assert got[0] == -np.inf and got[1] == -np.inf and got[4] == np.inf
    assert np.isnan(got[3]) and np.isnan(got[6]) and got[2] == 0
    # XLA (Eigen's plog) clamps denormal inputs to the smallest normal float.
    tiny = np.finfo(np.float32).tiny
    assert got[7] == _xla_math.log(np.array([tiny]))[0]
    assert abs(float(got[7]) - np.log(float(tiny))) < 1e-5
    e = _xla_math.erfinv(np.array([1.0, -1.0, 0.0], np.float32))
    assert e[0] == np.inf and e[1] == -np.inf and e[2] == 0


# ------------------------------------------------------------- statistics
N = 10**6


@pytest.mark.parametrize("partitionable", [True, False])
def test_uniform_and_normal_moments(partitionable):
    with config.override("threefry_partitionable", partitionable):
        k1, k2 = random.split(random.PRNGKey(2024))
        u = random.uniform(k1, (N,)).astype(np.float64)
        z = random.normal(k2, (N,)).astype(np.float64)
    assert 0 <= u.min() and u.max() < 1
    assert abs(u.mean() - 0.5) < 5 * np.sqrt(1 / 12 / N)
    assert abs(u.var() - 1 / 12) < 5 * np.sqrt(1 / 180 / N)
    assert abs(z.mean()) < 5 / np.sqrt(N)
    assert abs(z.var() - 1) < 5 * np.sqrt(2 / N)
    assert abs(np.mean(z**3)) < 5 * np.sqrt(15 / N)         # symmetric
    assert abs(np.mean(z**4) - 3) < 5 * np.sqrt(96 / N)     # normal kurtosis


def test_float64_normal_moments():
    z = random.normal(random.PRNGKey(5), (N,), np.float64)
    assert z.dtype == np.float64
    assert abs(z.mean()) < 5 / np.sqrt(N) and abs(z.var() - 1) < 5 * np.sqrt(2 / N)


def test_split_and_fold_in_streams_are_uncorrelated():
    key = random.PRNGKey(0)
    # (In the default stream split(key, n)[i] == fold_in(key, i), as in JAX,
    # so the folded-in values are chosen apart from the split indices.)
    keys = list(random.split(key, 4)) + [random.fold_in(key, 1000 + i) for i in range(3)]
    draws = np.stack([random.normal(k, (N // 4,)) for k in keys]).astype(np.float64)
    c = np.corrcoef(draws)
    off = c[~np.eye(len(keys), dtype=bool)]
    assert np.abs(off).max() < 5 / np.sqrt(N // 4)
    # Lag-1 autocorrelation within one stream.
    d = draws[0]
    assert abs(np.corrcoef(d[:-1], d[1:])[0, 1]) < 5 / np.sqrt(d.size)


def test_discrete_samplers_statistics():
    k = random.PRNGKey(7)
    b = random.bernoulli(k, 0.3, (N,))
    assert abs(b.mean() - 0.3) < 5 * np.sqrt(0.21 / N)
    r = random.randint(k, (N,), 0, 10)
    counts = np.bincount(r, minlength=10)
    assert r.min() == 0 and r.max() == 9
    chi2 = ((counts - N / 10) ** 2 / (N / 10)).sum()
    assert chi2 < 40          # 9 degrees of freedom; p ~ 1e-5
    p = np.array([0.1, 0.2, 0.3, 0.4], np.float32)
    c = random.choice(k, 4, (N,), p=p)
    assert np.allclose(np.bincount(c, minlength=4) / N, p, atol=5 * np.sqrt(0.25 / N))


def test_permutation_and_choice_without_replacement():
    k = random.PRNGKey(1)
    perm = random.permutation(k, 5000)
    assert sorted(perm.tolist()) == list(range(5000))
    x = np.arange(30).reshape(10, 3)
    px = random.permutation(k, x)
    assert sorted(px[:, 0].tolist()) == list(range(0, 30, 3))
    np.testing.assert_array_equal(px[:, 1] - px[:, 0], 1)     # rows stay intact
    s = random.choice(k, 100, (50,), replace=False)
    assert len(set(s.tolist())) == 50
    # Every position is equally likely to hold element 0.
    first = [int(np.argmax(random.permutation(random.fold_in(k, i), 4) == 0))
             for i in range(4000)]
    assert np.all(np.abs(np.bincount(first, minlength=4) / 4000 - 0.25) < 0.04)


# ------------------------------------------------------ inside njit code
def _jit_program(seed):
    k = random.PRNGKey(seed)
    keys = random.split(k, 3)
    k1, k2 = keys[0], keys[1]
    k3 = random.fold_in(k2, 7)
    return (random.uniform(k1, (3, 4), np.float32, -2.0, 5.0),
            random.normal(k3, (7,)),
            random.normal(k3, (5,), np.float64),
            random.bernoulli(k1, 0.3, (6,)),
            random.split(k, 5),
            random.uniform(k1, ()),
            random.key_data(keys))


@pytest.mark.parametrize("partitionable", [True, False])
def test_functions_compile_under_numba(partitionable):
    import numba
    compiled = numba.njit(_jit_program)
    with config.override("threefry_partitionable", partitionable):
        got = compiled(42)
        want = _jit_program(42)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)


def test_tangent_x_random_does_not_import_jax():
    import subprocess
    import sys
    code = ("import sys, tangent_x.random as r; r.normal(r.PRNGKey(0), (3,)); "
            "assert 'jax' not in sys.modules, 'jax imported'")
    subprocess.run([sys.executable, "-c", code], check=True)
