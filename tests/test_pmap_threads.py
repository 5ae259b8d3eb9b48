"""jit(pmap(f)) on threads with compiled collectives (numba_stage.thread_shard):
no callback into Python, results bitwise equal to an unmapped loop, to
vmap(axis_name=...) and to eager pmap; a data-parallel gradient; faults
stop every worker with the Python group's errors; the workers are kept."""
import functools
import threading

import numpy as np
import pytest

import tangent_x as tx
from tangent_x import lax
from tangent_x.lax import collectives as lax_collectives
from tangent_x.parallel.pool import POOL

from test_pmap import (devices, within, fails_on_device_1,  # noqa: F401 (devices: a fixture)
                       skips_a_collective_on_device_0)


@pytest.fixture
def no_callbacks(monkeypatch):
    """Counts the collectives that call back into Python (objmode)."""
    calls = []
    original = lax_collectives._collective

    def counted(*args, **kwargs):
        calls.append(args[0])
        return original(*args, **kwargs)
    monkeypatch.setattr(lax_collectives, "_collective", counted)
    return calls


def every_collective(v):
    return (lax.psum(v, "i"), lax.pmean(v, "i"), lax.pmax(v, "i"), lax.pmin(np.sum(v), "i"),
            lax.all_gather(v, "i"), lax.all_gather(v, "i", tiled=True), lax.psum(v[0], "i"),
            lax.all_gather(v[1], "i"), lax.axis_index("i"),
            lax.pmean(v.astype(np.float32), "i"), lax.psum(2 * lax.axis_index("i"), "i"),
            lax.psum_scatter(lax.all_gather(v, "i"), "i"),
            lax.psum_scatter(lax.all_gather(v, "i", tiled=True), "i", tiled=True),
            lax.ppermute(v, "i", [(0, 1), (1, 2), (2, 0)]), lax.ppermute(v[2], "i", ((3, 0),)))


def test_compiled_collectives_equal_a_loop_vmap_and_eager_pmap_bitwise(devices, no_callbacks):
    n = devices(4)             # NumPy's reductions over 4 rows (vmap) add them in order
    x = np.random.default_rng(11).normal(size=(n, 3))
    x[2, 1] = x[0, 1]          # a tie for pmax
    got = tx.jit(tx.pmap(every_collective, axis_name="i"))(x)
    assert no_callbacks == []  # every collective ran compiled
    total = functools.reduce(lambda a, b: a + b, list(x))                   # device order
    loop = (total, total / n, functools.reduce(np.maximum, list(x)),
            functools.reduce(np.minimum, [np.sum(r) for r in x]), x, x.reshape(-1),
            functools.reduce(lambda a, b: a + b, list(x[:, 0])), x[:, 1], None,
            functools.reduce(lambda a, b: a + b, list(x.astype(np.float32))) / np.float32(n),
            np.int64(2 * sum(range(n))),
            # per device (a list): psum_scatter's entry and block, ppermute's receipts
            [functools.reduce(lambda a, b: a + b, [r] * n) for r in x],
            [functools.reduce(lambda a, b: a + b, [r] * n) for r in x],
            [x[2], x[0], x[1], np.zeros(3)], [x[3, 2], 0.0, 0.0, 0.0])
    for k, (g, w) in enumerate(zip(got, loop)):
        want = np.arange(n) if w is None else np.stack(w if isinstance(w, list) else [w] * n)
        np.testing.assert_array_equal(g, want, err_msg=f"result {k}")
        assert np.asarray(g).dtype == want.dtype
    for g, w in zip(got, tx.vmap(every_collective, axis_name="i")(x)):
        np.testing.assert_array_equal(g, w)
    for g, w in zip(got, tx.pmap(every_collective, axis_name="i")(x)):
        np.testing.assert_array_equal(g, w)


def dp_loss(w, x):
    return np.sum(np.tanh(x @ w) ** 2)


def dp_gradient(w, x):
    """This device's gradient, averaged over the devices (one pmean)."""
    return lax.pmean(tx.grad(dp_loss)(w, x), "i")


def test_data_parallel_gradient_compiled_equals_the_loop_bitwise(devices, no_callbacks):
    n = devices(2)
    rng = np.random.default_rng(12)
    w, xs = rng.normal(size=(3, 2)), rng.normal(size=(n, 5, 3))
    got = tx.jit(tx.pmap(dp_gradient, axis_name="i", in_axes=(None, 0)))(w, xs)
    assert no_callbacks == []
    per_device = tx.jit(tx.grad(dp_loss))                     # the same compiled arithmetic
    total = per_device(w, xs[0])
    for k in range(1, n):
        total = total + per_device(w, xs[k])
    np.testing.assert_array_equal(got, np.stack([total / n] * n))
    # and eager pmap / vmap (NumPy's arithmetic, not Numba's: to rounding)
    np.testing.assert_allclose(got, tx.vmap(dp_gradient, axis_name="i", in_axes=(None, 0))(w, xs),
                               rtol=1e-13)
    # the kept workers: a second call reuses them
    before = {t.ident for t in threading.enumerate() if t.name.startswith("pmap-pool-worker")}
    np.testing.assert_array_equal(
        tx.jit(tx.pmap(dp_gradient, axis_name="i", in_axes=(None, 0)))(w, xs), got)
    after = {t.ident for t in threading.enumerate() if t.name.startswith("pmap-pool-worker")}
    assert before and after == before


def test_a_compiled_worker_returning_while_others_wait_is_a_clear_error(devices, no_callbacks):
    devices(4)
    box = within(120, tx.jit(tx.pmap(skips_a_collective_on_device_0, axis_name="i")),
                 np.arange(4.0))
    assert type(box.get("error")).__name__ == "CollectiveMismatch"
    assert "device(s) 0 returned without reaching" in str(box["error"])
    assert POOL.busy == 0 and no_callbacks == []


def test_a_failing_compiled_worker_stops_the_kept_workers(devices, no_callbacks):
    devices(2)
    box = within(120, tx.jit(tx.pmap(fails_on_device_1, axis_name="i")), np.arange(2.0))
    assert isinstance(box.get("error"), ValueError)
    assert "device 1 failed" in str(box["error"])
    assert POOL.busy == 0 and no_callbacks == []
    # the workers serve the next call
    np.testing.assert_array_equal(
        tx.jit(tx.pmap(lambda v: lax.psum(v, "i"), axis_name="i"))(np.arange(2.0)), [1.0, 1.0])


def test_compiled_collective_of_different_shapes_is_a_clear_error(devices, no_callbacks):
    devices(2)
    with pytest.raises(ValueError, match=r"different shapes \(device 0: \(3,\), device 1: "
                                         r"\(4,\)\)"):
        tx.jit(tx.pmap(lambda v: v * lax.psum(np.ones(3 + lax.axis_index("i")), "i")[0],
                       axis_name="i"))(np.zeros(2))
    assert no_callbacks == []


def shift_by_two(v):
    return lax.ppermute(v, "i", [(d, d + 2) for d in range(2)])


def test_a_perm_built_in_a_loop_is_refused_under_jit_not_misread(devices):
    """The numba stage passes a comprehension's pairs as their columns
    (sources, destinations); read as pairs they sent 0->1 and 2->3."""
    devices(4)
    x = np.arange(4.0) + 1
    np.testing.assert_array_equal(tx.pmap(shift_by_two, axis_name="i")(x), [0.0, 0.0, 1.0, 2.0])
    with pytest.raises(Exception, match="Numba cannot compile"):
        tx.jit(tx.pmap(shift_by_two, axis_name="i"))(x)
