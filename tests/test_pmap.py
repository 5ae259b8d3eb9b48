"""pmap: devices, JAX's checks and errors, results against an unmapped loop
and vmap(axis_name=...), faults, derivatives of and inside pmap, the
per-shard source, the examples, and compiled shards (jit(pmap(f)))."""
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import tangent_x as tx
from tangent_x import lax

from _fd import numerical_grad

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture
def devices(monkeypatch):
    def use(n):
        monkeypatch.setenv("TANGENT_X_NUM_DEVICES", str(n))
        return n
    return use


def within(seconds, fn, *args):
    """``fn(*args)`` in a thread; fails the test instead of hanging."""
    box = {}

    def run():
        try:
            box["value"] = fn(*args)
        except BaseException as exc:    # noqa: B902 (handed to the test)
            box["error"] = exc
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"no answer within {seconds} s: a hang"
    return box


# --- devices ---------------------------------------------------------------------

@pytest.mark.parametrize("n", [4, 8])
def test_devices_follow_the_environment_variable(devices, n):
    devices(n)
    assert tx.local_device_count() == tx.device_count() == n
    assert [d.id for d in tx.devices()] == list(range(n))
    assert tx.local_devices() == tx.devices()
    assert repr(tx.devices()[1]) == "CpuDevice(id=1)"
    assert (tx.process_index(), tx.process_count()) == (0, 1)


def test_default_device_count_is_the_cpu_count(monkeypatch):
    monkeypatch.delenv("TANGENT_X_NUM_DEVICES", raising=False)
    assert tx.local_device_count() == (os.cpu_count() or 1)


def test_bad_device_count_is_a_clear_error(devices):
    devices("zero")
    with pytest.raises(ValueError, match="TANGENT_X_NUM_DEVICES must be a positive integer"):
        tx.local_device_count()


# --- results: an unmapped loop, vmap ---------------------------------------------------

def normalize(x):
    return x / lax.psum(np.sum(x), "i")


@pytest.mark.parametrize("n", [4, 8])
def test_psum_normalisation_equals_an_unmapped_loop_bitwise(devices, n):
    devices(n)
    x = np.random.default_rng(n).random((n, 5))
    got = tx.pmap(normalize, axis_name="i")(x)
    total = np.sum(x[0])
    for k in range(1, n):               # the devices' sums, added in device order
        total = total + np.sum(x[k])
    want = np.stack([x[k] / total for k in range(n)])
    np.testing.assert_array_equal(got, want)


def test_pmap_equals_vmap_with_axis_name_bitwise(devices):
    n = devices(4)             # NumPy's sum over axis 0 of 4 rows adds them in order
    x = np.random.default_rng(1).random((n, 5))
    np.testing.assert_array_equal(tx.pmap(normalize, axis_name="i")(x),
                                  tx.vmap(normalize, axis_name="i")(x))


def test_pmap_equals_vmap_with_8_devices(devices):
    n = devices(8)             # (NumPy sums 8 numbers pairwise: not bitwise)
    x = np.random.default_rng(2).random((n, 5))
    np.testing.assert_allclose(tx.pmap(normalize, axis_name="i")(x),
                               tx.vmap(normalize, axis_name="i")(x), rtol=1e-15)


def test_in_axes_out_axes_and_static_arguments(devices):
    devices(4)
    x = np.random.default_rng(3).random((3, 4))         # mapped along axis 1

    def f(a, w, power):
        return a ** power * w, lax.psum(np.sum(a), "i")
    mapped = tx.pmap(f, axis_name="i", in_axes=(1, None, None), out_axes=(1, None),
                     static_broadcasted_argnums=(2,))
    out, total = mapped(x, 2.0, 3)
    np.testing.assert_array_equal(out, x ** 3 * 2.0)
    assert total == pytest.approx(np.sum(x))
    pytree = tx.pmap(lambda d: {"s": d["a"] + d["b"]}, in_axes=({"a": 0, "b": None},))(
        {"a": np.arange(4.0), "b": 1.0})
    np.testing.assert_array_equal(pytree["s"], np.arange(4.0) + 1.0)


def test_axis_size_without_mapped_arguments(devices):
    devices(2)
    got = tx.pmap(lambda c: c + lax.axis_index("i"), axis_name="i", in_axes=None,
                  axis_size=2)(10)
    np.testing.assert_array_equal(got, [10, 11])


# --- JAX's errors ------------------------------------------------------------------------

def test_more_shards_than_devices_is_jax_error(devices):
    devices(2)
    with pytest.raises(ValueError, match=r"compiling computation that requires 3 logical "
                                         r"devices, but only 2 XLA devices are available"):
        tx.pmap(lambda v: v)(np.zeros(3))


def test_mismatched_sizes_name_the_arguments(devices):
    devices(4)
    with pytest.raises(ValueError, match="(?s)inconsistent sizes.*argument a.*argument b"):
        tx.pmap(lambda a, b: a + b)(np.zeros(2), np.zeros(3))


def test_collective_over_an_unbound_axis_is_a_name_error(devices):
    devices(2)
    with pytest.raises(NameError, match="unbound axis name: j"):
        tx.pmap(lambda v: lax.psum(v, "j"), axis_name="i")(np.zeros(2))
    with pytest.raises(NameError, match="unbound axis name: i"):
        tx.pmap(lambda v: lax.psum(v, "i"))(np.zeros(2))       # no axis_name given


def test_collective_of_different_shapes_is_a_clear_error(devices):
    devices(2)
    with pytest.raises(ValueError, match=r"different shapes \(device 0: \(3,\), device 1: "
                                         r"\(4,\)\)"):
        tx.pmap(lambda v: v * lax.psum(np.ones(3 + lax.axis_index("i")), "i")[0],
                axis_name="i")(np.zeros(2))


# --- faults ------------------------------------------------------------------------------

def fails_on_device_1(v):
    total = lax.psum(v, "i")
    if lax.axis_index("i") == 1:
        raise ValueError("device 1 failed")
    return lax.psum(total, "i")        # the others wait here for device 1


@pytest.mark.parametrize("n", [2, 8])
def test_a_failing_worker_stops_every_worker_with_its_error(devices, n):
    devices(n)
    box = within(30, tx.pmap(fails_on_device_1, axis_name="i"), np.arange(float(n)))
    assert isinstance(box.get("error"), ValueError)
    assert "device 1 failed" in str(box["error"])
    assert not [t for t in threading.enumerate() if t.name.startswith("pmap-worker")]


def skips_a_collective_on_device_0(v):
    if lax.axis_index("i") == 0:
        return v
    return lax.psum(v, "i")


def test_a_worker_returning_while_others_wait_is_a_clear_error(devices):
    devices(4)
    box = within(30, tx.pmap(skips_a_collective_on_device_0, axis_name="i"), np.arange(4.0))
    assert type(box.get("error")).__name__ == "CollectiveMismatch"
    assert "device(s) 0 returned without reaching" in str(box["error"])


# --- derivatives ---------------------------------------------------------------------------

def loss(w, x):
    return np.sum(np.tanh(x @ w)) / lax.psum(x.shape[0], "i")


def test_pmap_of_grad_with_shared_weights_against_finite_differences(devices):
    n = devices(4)
    rng = np.random.default_rng(4)
    w, xs = rng.normal(size=3), rng.normal(size=(n, 5, 3))
    per_device = tx.pmap(tx.grad(loss), axis_name="i", in_axes=(None, 0))(w, xs)
    want = numerical_grad(lambda w: np.sum(np.tanh(xs @ w)) / (5 * n), (w,))
    np.testing.assert_allclose(np.sum(per_device, axis=0), want, rtol=1e-7)


def test_grad_of_pmap_sums_the_cotangents_of_shared_arguments(devices):
    n = devices(4)
    rng = np.random.default_rng(5)
    w, xs = rng.normal(size=3), rng.normal(size=(n, 5, 3))

    def total(w, xs):
        return np.sum(tx.pmap(loss, axis_name="i", in_axes=(None, 0))(w, xs))
    gw, gx = tx.grad(total, argnums=(0, 1))(w, xs)
    np.testing.assert_allclose(gw, numerical_grad(total, (w, xs), 0), rtol=1e-7)
    np.testing.assert_allclose(gx, numerical_grad(total, (w, xs), 1), rtol=1e-6, atol=1e-9)


def spread(x):
    return np.sin(x) * lax.psum(x, "i")


def test_jvp_of_pmap_is_pmap_of_the_jvp(devices):
    n = devices(4)
    rng = np.random.default_rng(7)
    x, t = rng.normal(size=(n, 3)), rng.normal(size=(n, 3))
    mapped = tx.pmap(spread, axis_name="i")
    out, tangent = tx.jvp(mapped, (x,), (t,))
    eps = 1e-6
    np.testing.assert_array_equal(out, mapped(x))
    np.testing.assert_allclose(tangent, (mapped(x + eps * t) - mapped(x - eps * t)) / (2 * eps),
                               rtol=1e-6, atol=1e-8)
    total = lambda x: np.sum(mapped(x) ** 2)      # noqa: E731
    np.testing.assert_allclose(tx.jacfwd(total)(x), tx.grad(total)(x), rtol=1e-12)


# --- source, command line, examples -------------------------------------------------------

def test_source_of_a_data_parallel_gradient_has_one_pmean_per_parameter():
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    try:
        import pmap_sgd
    finally:
        sys.path.pop(0)
    text = tx.source(tx.pmap(pmap_sgd.step, axis_name="batch"))
    code = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    for name in ("gW1", "gb1", "gW2", "gb2"):
        assert code.count(f"lax.pmean({name}, 'batch')") == 1
    assert code.count("lax.pmean(") == 4        # one all-reduce per parameter, no other
    assert "import tangent_x.lax as lax" in text
    numba = tx.source(tx.jit(tx.pmap(normalize, axis_name="i")), stage="numba",
                      example_args=(np.ones(3),))
    assert "psum_sum_x = lax.psum(sum_x, 'i')" in numba


def test_command_line_prints_the_per_shard_code():
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-m", "tangent_x", "pmap",
                          "examples/pmap_psum.py:normalize"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "lax.psum(sum_x, 'i')" in out.stdout


@pytest.mark.parametrize("n", [4, 8])
def test_examples_run_with_4_and_8_devices(n):
    env = {**os.environ, "TANGENT_X_NUM_DEVICES": str(n),
           "PYTHONPATH": os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")])}
    psum = subprocess.run([sys.executable, "examples/pmap_psum.py"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert psum.returncode == 0, psum.stderr
    assert f"{n} devices" in psum.stdout and "False" not in psum.stdout
    sgd = subprocess.run([sys.executable, "examples/pmap_sgd.py"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=300)
    assert sgd.returncode == 0, sgd.stderr


def test_data_parallel_sgd_matches_single_process_training(devices):
    n = devices(4)
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    try:
        import pmap_sgd
    finally:
        sys.path.pop(0)
    with_pmap, with_vmap, single = pmap_sgd.main(steps=30, devices=n)
    for a, b, c in zip(with_pmap, with_vmap, single):
        np.testing.assert_allclose(a, c, rtol=0, atol=1e-12)
        np.testing.assert_allclose(b, c, rtol=0, atol=1e-12)


# --- compiled shards ------------------------------------------------------------------------

def collectives_mix(v):
    return (np.sum(np.tanh(v) * lax.pmean(v, "i")) + lax.pmax(np.sum(v), "i")
            + np.sum(lax.all_gather(v, "i")[1] ** 2) + lax.axis_index("i"))


def test_jit_of_pmap_equals_eager_and_its_gradient_too(devices):
    devices(2)
    x = np.random.default_rng(6).normal(size=(2, 3))
    np.testing.assert_allclose(tx.jit(tx.pmap(collectives_mix, "i"))(x),
                               tx.pmap(collectives_mix, "i")(x), rtol=1e-14)
    np.testing.assert_allclose(tx.jit(tx.pmap(tx.grad(collectives_mix), "i"))(x),
                               tx.pmap(tx.grad(collectives_mix), "i")(x), rtol=1e-14)


def test_a_failing_compiled_worker_stops_every_worker(devices):
    devices(2)
    box = within(120, tx.jit(tx.pmap(fails_on_device_1, axis_name="i")), np.arange(2.0))
    assert isinstance(box.get("error"), ValueError)
    assert "device 1 failed" in str(box["error"])
