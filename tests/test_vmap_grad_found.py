"""vmap(grad) on programs the fuzzer found (mode vmap_grad): against a
per-example loop of grad, itself checked against finite differences."""
import numpy as np
import pytest

import tangent_x as tx
from tangent_x import tree_util
from fuzzing import oracles

import vmap_grad_found_programs as P

B = 4


def check(loss, args, in_axes):
    argnums = tuple(range(len(args)))
    g = tx.grad(loss, argnums=argnums)
    got = tx.vmap(g, in_axes=in_axes)(*args)
    examples = [[a if ax is None else np.take(a, b, axis=ax) for a, ax in zip(args, in_axes)]
                for b in range(B)]
    per = [g(*ex) for ex in examples]
    for ex, gr in zip(examples, per):
        fd = oracles.stable_fd(lambda eps: oracles.fd_grad(loss, list(ex), eps))
        for a, e in zip(tree_util.tree_leaves(gr), tree_util.tree_leaves(fd)):
            np.testing.assert_allclose(a, e, rtol=1e-5, atol=1e-6)
    expected = tree_util.tree_map(lambda *xs: np.stack(xs), *per)
    for k, (a, e) in enumerate(zip(got, expected)):
        assert np.shape(a) == np.shape(e)
        np.testing.assert_allclose(a, e, rtol=1e-7, atol=1e-12)


def _rng():
    return np.random.default_rng(0)


def _batched(r, shape, ax):
    if ax is None:
        return r.normal(size=shape)
    full = list(shape)
    full.insert(ax % (len(shape) + 1), B)
    return r.normal(size=full)


@pytest.mark.parametrize("in_axes", [(-1, 1), (0, 0), (0, 1), (1, -1), (None, 1)])
@pytest.mark.parametrize("loss", [P.loss_seed105, P.loss_seed295])
def test_element_index_of_argument(loss, in_axes):
    r = _rng()
    args = (_batched(r, (5,), in_axes[0]), _batched(r, (2, 3), in_axes[1]))
    check(loss, args, in_axes)


@pytest.mark.parametrize("in_axes", [(0, 0), (-1, 1), (1, None)])
def test_seed281_element_of_product(in_axes):
    r = _rng()
    args = (_batched(r, (2, 3), in_axes[0]), _batched(r, (3,), in_axes[1]))
    check(P.loss_seed281, args, in_axes)


def test_seed269_element_through_lambda():
    r = _rng()
    in_axes = (0, -1, 1)
    args = (_batched(r, (3,), 0), _batched(r, (2, 3), -1), _batched(r, (2, 2), 1))
    check(P.loss_seed269, args, in_axes)


@pytest.mark.parametrize("scale", [0.1, 5.0])
def test_seed287_loop_breaking_over_range(scale):
    r = _rng()
    x = r.uniform(0.2, 1.0, size=(B, 2)) * scale
    x[0] *= 0.01                      # lanes break at different steps (or never)
    check(P.loss_seed287, (x, r.normal(size=(B, 3))), (0, 0))


def test_seed46_augmented_assignment_keeps_float32():
    r = _rng()
    x = r.normal(size=(3,)).astype(np.float32)
    y = r.normal(size=(3,)).astype(np.float32)
    want = P.loss_seed46(x.copy(), y)
    assert np.asarray(want).dtype == np.float32
    value, grads = tx.value_and_grad(P.loss_seed46, argnums=(0, 1))(x.copy(), y)
    assert np.asarray(value).dtype == np.float32
    assert [g.dtype for g in grads] == [np.float32, np.float32]
    fd = oracles.stable_fd(lambda eps: oracles.fd_grad(
        lambda a, b: P.loss_seed46(np.array(a, dtype=np.float64), b), [x.astype(np.float64), y], eps))
    np.testing.assert_allclose(grads[0], fd[0], rtol=1e-4, atol=1e-4)
    primal, tangent = tx.jvp(P.loss_seed46, (x.copy(), y), (x, y))
    assert np.asarray(primal).dtype == np.asarray(tangent).dtype == np.float32
    xs = np.stack([x, 2 * x]).astype(np.float32)
    got = tx.vmap(P.loss_seed46, in_axes=(0, None))(xs.copy(), y)
    assert got.dtype == np.float32
    gx = tx.vmap(tx.grad(P.loss_seed46), in_axes=(0, None))(xs.copy(), y)
    assert gx.dtype == np.float32
    np.testing.assert_allclose(gx, np.stack([tx.grad(P.loss_seed46)(a.copy(), y) for a in xs]))


@pytest.mark.parametrize("in_axes", [(None, 0), (0, 0), (1, None)])
def test_seed1583_zip_item_with_zero_cotangent(in_axes):
    """The pair of ``zip(x, x)`` items gets a batched and a shared zero
    cotangent, added as one pair (``tree_add``): shared must stay shared."""
    r = _rng()
    args = (_batched(r, (3,), in_axes[0]), _batched(r, (2,), in_axes[1]))
    check(P.loss_seed1583, args, in_axes)
