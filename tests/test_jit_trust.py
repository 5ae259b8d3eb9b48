"""``tx.jit`` runs what eager code runs (issue #17, items 8, 9 and 13).

- Indices out of range raise NumPy's IndexError under jit too (Numba reads
  past an array's end without a word: garbage, or a segfault for 10**12).
- A global or closure container changed in place between calls, a global
  array written into, a global number rebound: jit sees each change as
  eager code does.
- Big-endian arrays are taken (as their native copies).

Every expected value is computed by NumPy / plain Python on the same
inputs, or by the eager function; Numba compiles are kept few (one
function per test, called many times).
"""
import importlib
import re
import sys
import types

import numpy as np
import pytest

import tangent_x as tx
from tangent_x.numba_stage.compile import jitted_of


def _raises_like_numpy(jitted, eager, *args):
    """``jitted(*args)`` raises the IndexError (same message) ``eager`` does."""
    with pytest.raises(IndexError) as want:
        eager(*args)
    with pytest.raises(IndexError, match=re.escape(str(want.value))):
        jitted(*args)


# --- item 8: out-of-range indices --------------------------------------------

def pick(x, i):
    return x[i] * 2.0


def test_an_integer_index_out_of_range_raises_numpys_index_error():
    jf = tx.jit(pick)
    x = np.arange(3.0)
    assert jf(x, 1) == 2.0
    assert jf(x, -1) == 4.0             # negative indices wrap as in NumPy
    assert jf(x, -3) == 0.0
    for i in (3, 5, -4, 10 ** 12, -10 ** 12):
        _raises_like_numpy(jf, pick, x, i)
    with pytest.raises(IndexError, match="index 5 is out of bounds for axis 0 with size 3"):
        jf(x, 5)
    # an empty array has no index 0 (a constant index is checked too)
    jz = tx.jit(lambda x: x[0] + 1.0)
    with pytest.raises(IndexError, match="index 0 is out of bounds for axis 0 with size 0"):
        jz(np.zeros(0))
    assert jz(np.array([2.0])) == 3.0


def several(x, i, j, idx, mask):
    y = x.copy()
    y[i, j] = 7.0                       # a store
    return y[i, j] + np.sum(x[..., j]) + np.sum(x[idx, 0]) + np.sum(x[mask]) + x.shape[i]


def test_every_kind_of_index_is_checked_against_its_axis():
    jf = tx.jit(several)
    x = np.arange(6.0).reshape(2, 3)
    ok = (1, 2, np.array([0, 1, -2]), np.array([True, False]))
    np.testing.assert_allclose(jf(x, *ok), several(x, *ok))
    bad_calls = [
        (2, 0) + ok[2:],                               # axis 0 of the store and load
        (1, 3) + ok[2:],                               # axis 1, and after ...
        (0, -4) + ok[2:],
        (1, 2, np.array([0, 2]), ok[3]),               # an index array
        (1, 2, np.array([-3]), ok[3]),
        (1, 2, ok[2], np.array([True, False, True])),  # a mask of the wrong shape
    ]
    for args in bad_calls:
        _raises_like_numpy(jf, several, x, *args)


def test_gradients_and_scatters_check_their_indices():
    def loss(x, idx):
        y = np.zeros(3)
        np.add.at(y, idx, x)
        return np.sum(y * y) + np.sum(y[idx])

    g = tx.jit(tx.grad(loss))
    x = np.array([1.0, 2.0])
    idx = np.array([0, 2])
    np.testing.assert_allclose(g(x, idx), tx.grad(loss)(x, idx))
    np.testing.assert_allclose(g(x, idx), 2 * x + 1.0)
    _raises_like_numpy(g, tx.grad(loss), x, np.array([0, 3]))
    _raises_like_numpy(g, tx.grad(loss), x, np.array([-4, 0]))


# --- item 9: what the function reads from outside -----------------------------

CONFIG = {"scale": 2.0, "relu": True}
OFFSETS = [1.0, 2.0]
TABLE = np.array([1.0, 2.0, 3.0])
SHIFT = 0.5


def configured(x):
    y = x * CONFIG["scale"] + OFFSETS[1]
    if CONFIG["relu"]:
        y = np.maximum(y, 0.0)
    return np.sum(y * TABLE) + TABLE[0] + SHIFT


def test_globals_changed_between_calls_are_seen_as_eager_code_sees_them():
    global SHIFT
    jf = tx.jit(configured)
    x = np.array([-3.0, 0.5, 1.0])
    saved = (dict(CONFIG), list(OFFSETS), TABLE.copy(), SHIFT)
    try:
        def agree():
            want = configured(x)
            for _ in range(2):          # the general path, then the fast path
                np.testing.assert_allclose(jf(x), want)
            return want

        first = agree()
        compiled = jitted_of(jf)._last
        assert agree() == first and jitted_of(jf)._last is compiled   # nothing changed
        CONFIG["scale"] = 5.0           # a dict item
        assert agree() != first
        OFFSETS[1] = -20.0              # a list item
        agree()
        CONFIG["relu"] = False          # a folded branch
        agree()
        TABLE[0] = 100.0                # an array written into
        agree()
        SHIFT = 4.0                     # a number rebound
        agree()
        CONFIG["scale"] = 5.0           # the same value again: no new compile
        compiled = jitted_of(jf)._last
        agree()
        assert jitted_of(jf)._last is compiled
    finally:
        CONFIG.clear()
        CONFIG.update(saved[0])
        OFFSETS[:] = saved[1]
        TABLE[:] = saved[2]
        SHIFT = saved[3]


def test_a_closure_container_changed_in_place_is_seen():
    weights = {"k": 1.0}
    order = [0, 1]

    def f(x):
        return x[order[1]] * weights["k"]

    jf = tx.jit(f)
    g = tx.jit(tx.grad(f))
    x = np.array([2.0, 3.0])
    assert jf(x) == 3.0
    np.testing.assert_allclose(g(x), [0.0, 1.0])
    weights["k"] = 10.0
    order[1] = 0
    assert jf(x) == f(x) == 20.0
    np.testing.assert_allclose(g(x), [10.0, 0.0])
    np.testing.assert_allclose(g(x), tx.grad(f)(x))



class _Scaler:
    def __init__(self, k):
        self.k = k

    def apply(self, x):
        return x * self.k


HELPERS = types.SimpleNamespace(activate=np.tanh)


def test_attributes_rebound_between_calls_are_seen_by_the_fast_path(tmp_path, monkeypatch):
    """The fast path checks each attribute the code read (a namespace's
    function, an instance's bound method, a user module's function after
    ``importlib.reload``) before calling compiled code: by identity, or by
    equality for bound methods, which are new objects on every access.
    Eager transforms see the same changes."""
    scaler = _Scaler(2.0)
    (tmp_path / "trust_helpers.py").write_text("def inner(x):\n    return x * 3.0\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import trust_helpers

    def f(x):
        return np.sum(HELPERS.activate(scaler.apply(x)))

    def g(x):
        return np.sum(trust_helpers.inner(x) * x)

    jf, jg, dg = tx.jit(f), tx.jit(g), tx.grad(g)
    x = np.array([0.1, -0.2, 0.3])
    saved = HELPERS.activate
    try:
        for _ in range(2):                     # the general path, then the fast path
            np.testing.assert_allclose(jf(x), f(x))
        compiled = jitted_of(jf)._last
        jf(x)
        assert jitted_of(jf)._last is compiled     # a bound method compares equal
        HELPERS.activate = np.sin
        for _ in range(2):
            np.testing.assert_allclose(jf(x), np.sum(np.sin(2.0 * x)))
        scaler.apply = lambda v: v * 5.0       # an instance's method replaced
        for _ in range(2):
            np.testing.assert_allclose(jf(x), np.sum(np.sin(5.0 * x)))
        for _ in range(2):
            np.testing.assert_allclose(jg(x), np.sum(3.0 * x * x))
            np.testing.assert_allclose(dg(x), 6.0 * x)
        (tmp_path / "trust_helpers.py").write_text("def inner(x):\n    return x * 7.0\n")
        importlib.reload(trust_helpers)        # the module's source edited and reloaded
        for _ in range(2):
            np.testing.assert_allclose(jg(x), np.sum(7.0 * x * x))
            np.testing.assert_allclose(dg(x), 14.0 * x)
    finally:
        HELPERS.activate = saved
        sys.modules.pop("trust_helpers", None)

# --- item 13: byte order -------------------------------------------------------

def test_big_endian_arrays_are_taken_as_numpy_takes_them():
    def f(x):
        return x * 2.0 + np.sin(x)

    x = np.arange(3.0).astype(">f8")
    want = f(x)
    jf = tx.jit(f)
    for _ in range(2):
        got = jf(x)
        np.testing.assert_array_equal(got, want)
        assert got.dtype == want.dtype == np.float64     # native, as NumPy gives
    np.testing.assert_array_equal(jf(x.astype("<f8")), want)

    g = tx.jit(tx.grad(lambda x: np.sum(f(x))))
    np.testing.assert_allclose(g(x), 2.0 + np.cos(np.arange(3.0)))
    assert g(x).dtype == x.dtype            # a gradient has its argument's dtype
    np.testing.assert_array_equal(x, np.arange(3.0))      # the argument is not changed

    k = np.array([2], dtype=">i8")
    assert tx.jit(pick)(np.arange(4.0), k[0]) == 4.0
    assert tx.jit(lambda x, k: np.sum(x[k]))(np.arange(4.0), k) == 2.0
