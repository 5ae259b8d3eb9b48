"""Collectives and their rules: JAX's reference values, derivatives against
finite differences, and vmap(axis_name=...) against pmap.

The oracle for a derivative inside a map: in JAX's semantics (psum's
transpose is psum) device k's gradient of ``f`` is the derivative of
``sum_j f_j`` (every device's output) with respect to device k's input,
so ``pmap(grad(f))(X)`` equals the finite-difference gradient of
``X -> np.sum(pmap(f)(X))``."""
import functools

import numpy as np
import pytest

import tangent_x as tx
from tangent_x import lax

from _fd import numerical_grad


@pytest.fixture(autouse=True)
def four_devices(monkeypatch):
    monkeypatch.setenv("TANGENT_X_NUM_DEVICES", "4")


X2 = np.array([1.0, 2.0])


# --- JAX 0.10.2's values (float64, 2 devices, x = [1., 2.]) -------------------

def test_jax_reference_grad_of_psum_inside_pmap():
    got = tx.pmap(tx.grad(lambda v: lax.psum(v ** 2, "i")), axis_name="i")(X2)
    np.testing.assert_array_equal(got, [4.0, 8.0])


def test_jax_reference_grad_of_all_gather_inside_pmap():
    got = tx.pmap(tx.grad(lambda v: lax.all_gather(v, "i")[1]), axis_name="i")(X2)
    np.testing.assert_array_equal(got, [0.0, 2.0])


def test_jax_reference_grad_inside_vmap_with_axis_name():
    got = tx.vmap(tx.grad(lambda v: v * lax.psum(v, "i")), axis_name="i")(X2)
    np.testing.assert_array_equal(got, [6.0, 6.0])


# --- values --------------------------------------------------------------------

X = np.random.default_rng(0).normal(size=(4, 3))


def test_values_against_numpy():
    out = tx.pmap(lambda v: (lax.psum(v, "i"), lax.pmean(v, "i"), lax.pmax(v, "i"),
                             lax.pmin(v, "i"), lax.axis_index("i")), axis_name="i")(X)
    psum, pmean, pmax, pmin, index = out
    total = ((X[0] + X[1]) + X[2]) + X[3]           # device order
    np.testing.assert_array_equal(psum, np.broadcast_to(total, X.shape))
    np.testing.assert_array_equal(pmean, np.broadcast_to(total / 4, X.shape))
    np.testing.assert_array_equal(pmax, np.broadcast_to(X.max(0), X.shape))
    np.testing.assert_array_equal(pmin, np.broadcast_to(X.min(0), X.shape))
    np.testing.assert_array_equal(index, np.arange(4))


def test_all_gather_tiled_psum_scatter_and_ppermute():
    gathered = tx.pmap(lambda v: lax.all_gather(v, "i", axis=1), axis_name="i")(X)
    np.testing.assert_array_equal(gathered[2], X.T)
    tiled = tx.pmap(lambda v: lax.all_gather(v, "i", tiled=True), axis_name="i")(X)
    np.testing.assert_array_equal(tiled[1], X.reshape(-1))
    M = np.arange(4 * 4 * 2.0).reshape(4, 4, 2)
    scattered = tx.pmap(lambda m: lax.psum_scatter(m, "i"), axis_name="i")(M)
    np.testing.assert_array_equal(scattered, M.sum(0))
    perm = [(0, 1), (1, 2), (2, 0)]                 # device 3 receives nothing: zeros
    moved = tx.pmap(lambda v: lax.ppermute(v, "i", perm), axis_name="i")(X)
    np.testing.assert_array_equal(moved, np.stack([X[2], X[0], X[1], np.zeros(3)]))


# --- derivatives ------------------------------------------------------------------

PERM = ((0, 1), (1, 2), (2, 3), (3, 0))       # a tuple: fixed, so vmap can batch it

PER_SHARD = {
    "psum": lambda v: np.sum(np.sin(v) * lax.psum(v, "i")),
    "pmean": lambda v: np.sum(np.tanh(v) * lax.pmean(v ** 2, "i")),
    "pmax": lambda v: np.sum(v * lax.pmax(np.cos(v), "i")),
    "pmin": lambda v: np.sum(lax.pmin(v * v, "i") * v),
    "all_gather": lambda v: np.sum(np.sin(v) * lax.all_gather(v, "i")[2]),
    "all_gather_tiled": lambda v: np.sum(lax.all_gather(v, "i", tiled=True)[2:7] ** 3),
    "psum_scatter": lambda v: np.sum(np.sin(v) * lax.psum_scatter(np.outer(np.arange(4.0), v),
                                                                  "i")),
    "ppermute": lambda v: np.sum(np.cos(v) * lax.ppermute(v * v, "i", PERM)),
    "axis_index": lambda v: np.sum(v ** 2) * (lax.axis_index("i") + 1.0),
    "tuple_of_names": lambda v: np.sum(lax.psum(v, ("i",)) * v),
}


def _total(f):
    return lambda A: np.sum(tx.pmap(f, axis_name="i")(A))


@pytest.mark.parametrize("name", sorted(PER_SHARD))
def test_grad_inside_pmap_against_finite_differences(name):
    f = PER_SHARD[name]
    got = tx.pmap(tx.grad(f), axis_name="i")(X)
    np.testing.assert_allclose(got, numerical_grad(_total(f), (X,)), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", sorted(PER_SHARD))
def test_grad_inside_vmap_with_axis_name_equals_pmap(name):
    f = PER_SHARD[name]
    np.testing.assert_allclose(tx.vmap(tx.grad(f), axis_name="i")(X),
                               tx.pmap(tx.grad(f), axis_name="i")(X), rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(tx.vmap(f, axis_name="i")(X), tx.pmap(f, axis_name="i")(X),
                               rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize("name", ["psum", "pmean", "pmax", "all_gather", "ppermute"])
def test_grad_of_pmap_against_finite_differences(name):
    f = PER_SHARD[name]
    got = tx.grad(_total(f))(X)
    np.testing.assert_allclose(got, numerical_grad(_total(f), (X,)), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", ["psum", "pmean", "pmax", "pmin", "all_gather",
                                  "psum_scatter", "ppermute"])
def test_jvp_inside_pmap_against_finite_differences(name):
    """Each device's tangent moves its own input: the tangents of every
    device's output are the directional derivative of pmap(f) along T."""
    f = PER_SHARD[name]
    T = np.random.default_rng(1).normal(size=X.shape)
    # (a partial is no plain function: pmap runs it as it is, tx.jvp per shard)
    out, tangent = tx.pmap(functools.partial(tx.jvp, f), axis_name="i")((X,), (T,))
    mapped = tx.pmap(f, axis_name="i")
    eps = 1e-6
    want = (mapped(X + eps * T) - mapped(X - eps * T)) / (2 * eps)
    np.testing.assert_allclose(out, mapped(X), rtol=1e-14)
    np.testing.assert_allclose(tangent, want, rtol=1e-6, atol=1e-8)


def test_jacfwd_inside_pmap_moves_every_device_at_once():
    """jacfwd's one-hot tangent is the same on every device: column m is the
    derivative of each device's output when every device's entry m moves."""
    f = PER_SHARD["pmax"]
    got = tx.pmap(tx.jacfwd(f), axis_name="i")(X)
    mapped = tx.pmap(f, axis_name="i")
    eps = 1e-6
    for m in range(X.shape[1]):
        e = np.zeros(X.shape)
        e[:, m] = 1.0
        want = (mapped(X + eps * e) - mapped(X - eps * e)) / (2 * eps)
        np.testing.assert_allclose(got[:, m], want, rtol=1e-6, atol=1e-8)


def test_ppermute_whose_pairs_are_not_known_is_refused_clearly_under_vmap():
    def shift(v, k):
        return lax.ppermute(v, "i", [(0, k), (k, 0)])
    with pytest.raises(tx.TransformError, match="ppermute over the axis a vmap maps"):
        tx.vmap(shift, in_axes=(0, None), axis_name="i")(X, 1)


def test_pmax_ties_share_the_cotangent_equally():
    """Beyond JAX (no rule there): devices holding the maximum split it."""
    v = np.array([3.0, 1.0, 3.0, 3.0])
    got = tx.pmap(tx.grad(lambda x: lax.pmax(x, "i")), axis_name="i")(v)
    # every device's output is the max: 4 cotangents of 1 shared by 3 winners
    np.testing.assert_allclose(got, [4 / 3, 0.0, 4 / 3, 4 / 3])
    assert np.sum(got) == pytest.approx(4.0)


# --- vmap with axis_name -----------------------------------------------------------

def test_vmap_psum_of_a_shared_value_multiplies_by_the_batch_size():
    got = tx.vmap(lambda v, w: v + lax.psum(w, "i"), in_axes=(0, None), axis_name="i")(X, 2.0)
    np.testing.assert_array_equal(got, X + 8.0)


def test_nested_vmaps_reduce_over_a_tuple_of_axis_names():
    A = np.random.default_rng(2).normal(size=(2, 3, 5))
    inner = tx.vmap(lambda v: v / lax.psum(v, ("i", "j")), axis_name="j")
    got = tx.vmap(inner, axis_name="i")(A)
    np.testing.assert_allclose(got, A / A.sum((0, 1)), rtol=1e-14)
    index = tx.vmap(tx.vmap(lambda v: lax.axis_index("i") * 10 + lax.axis_index("j") + 0 * v,
                            axis_name="j"), axis_name="i")(A[..., 0])
    np.testing.assert_array_equal(index, [[0, 1, 2], [10, 11, 12]])


def test_vmap_inside_pmap_with_both_axis_names():
    A = np.random.default_rng(3).normal(size=(4, 3, 2))
    f = tx.vmap(lambda v: v - lax.pmean(v, ("i", "j")), axis_name="j")
    got = tx.pmap(f, axis_name="i")(A)
    np.testing.assert_allclose(got, A - A.mean((0, 1)), rtol=1e-13, atol=1e-15)
    g = tx.pmap(tx.vmap(tx.grad(lambda v: np.sum(v * lax.psum(v, ("i", "j")))),
                        axis_name="j"), axis_name="i")(A)
    np.testing.assert_allclose(g, 2 * np.broadcast_to(A.sum((0, 1)), A.shape), rtol=1e-13)


def test_collectives_outside_a_map_raise_name_error_like_jax():
    with pytest.raises(NameError, match="unbound axis name: i"):
        lax.psum(1.0, "i")
    with pytest.raises(NameError, match="unbound axis name: j"):
        tx.vmap(lambda v: lax.psum(v, "j"), axis_name="i")(X)


def test_jit_of_vmap_with_axis_name_runs_the_batched_code():
    """Never the loop over examples (a collective spans them): the batched code."""
    normalize = lambda v: v / lax.psum(np.sum(v), "i")        # noqa: E731
    got = tx.jit(tx.vmap(normalize, axis_name="i"))(X)
    np.testing.assert_allclose(got, X / np.sum(X), rtol=1e-14)
