"""vmap(grad) on programs the fuzzer found: results against a per-example loop."""
import numpy as np
import pytest

import tangent_x as tx
from tangent_x import tree_util

import vmap_found_programs as P

B = 4


def _take(tree, b, ax):
    return tree_util.tree_map(lambda a, x: a if x is None else np.take(a, b, axis=x),
                              tree, ax, is_leaf=lambda v: v is None)


def _axes_like(arg, ax):
    return tree_util.tree_map(lambda _: ax, arg) if isinstance(arg, dict) else ax


def check_vmap_grad(loss, args, in_axes):
    argnums = tuple(range(len(args)))
    g = tx.grad(loss, argnums=argnums)
    got = tx.vmap(g, in_axes=in_axes)(*args)
    per = [g(*[_take(a, b, _axes_like(a, ax)) for a, ax in zip(args, in_axes)])
           for b in range(B)]
    expected = tree_util.tree_map(lambda *xs: np.stack(xs), *per)
    got_leaves = tree_util.tree_leaves(got)
    exp_leaves = tree_util.tree_leaves(expected)
    assert tree_util.tree_structure(got) == tree_util.tree_structure(expected)
    for a, e in zip(got_leaves, exp_leaves):
        assert np.shape(a) == np.shape(e)
        np.testing.assert_allclose(a, e, rtol=1e-7, atol=1e-12)


def _rng():
    return np.random.default_rng(0)


def test_seed19_unused_dict_leaf_gradient_is_batched_zero():
    r = _rng()
    args = (r.normal(size=(B,)), r.normal(size=(3,)), {'b': r.normal(size=(B, 2, 3))})
    check_vmap_grad(P.loss_seed19, args, (0, None, 0))


def test_seed1_unused_dict_leaf_gradient_is_batched_zero():
    r = _rng()
    args = (r.normal(size=(3, B)), r.normal(size=(2, 3, B)), r.normal(size=(B, 3)),
            {'b': r.normal(size=(B,)), 'w': r.normal(size=(B, 3))})
    check_vmap_grad(P.loss_seed1, args, (1, -1, 0, 0))


@pytest.mark.parametrize("in_axes", [(0, 0), (0, None)])
def test_unused_dict_leaf(in_axes):
    r = _rng()
    q = {'b': r.normal(size=(B,)), 'w': r.normal(size=(B, 3))}
    if in_axes[1] is None:
        q = {'b': 1.5, 'w': r.normal(size=(3,))}
    check_vmap_grad(P.loss_dict_unused, (r.normal(size=(B, 3)), q), in_axes)


def test_a_loop_variable_that_changes_rank_runs_per_example():
    """vmap gave the carry the rank it had at the end of the loop while its
    first step ran with the starting rank: a broadcast error, or a crash in
    the gradient; such a loop now runs once per example."""
    r = _rng()
    x = r.normal(size=(B, 3, 2))
    loop = np.array([P.carry_grows_over_rows(e) for e in x])
    np.testing.assert_allclose(tx.vmap(P.carry_grows_over_rows)(x), loop, rtol=1e-12)
    check_vmap_grad(P.carry_grows_over_rows, (x,), (0,))
    y, k = r.normal(size=(B,)), np.array([0.6, 0.7, 0.8])
    loop = np.array([P.carry_grows_with_shared_vector(e, k) for e in y])
    np.testing.assert_allclose(tx.vmap(P.carry_grows_with_shared_vector, in_axes=(0, None))(y, k),
                               loop, rtol=1e-12)
    check_vmap_grad(P.carry_grows_with_shared_vector, (y, k), (0, None))


def test_a_dot_adjoint_whose_operands_are_all_shared():
    r = _rng()
    check_vmap_grad(P.dot_of_shared_with_batched, (r.normal(size=(B, 3)), r.normal(size=(B,))),
                    (0, 0))


def test_jvp_through_vmaps_per_example_loop():
    """stack_lanes (the per-example loop's stacking) had an adjoint and no
    tangent rule."""
    x, y = np.array([0.1, 0.5]), _rng().normal(size=(3, 2))
    tx_, ty = np.array([1.0, -0.5]), _rng().normal(size=(3, 2))
    out, tangent = tx.jvp(P.sum_of_a_per_example_loop, (x, y), (tx_, ty))

    def loop(e):
        return sum(P._early_returns(x + e * tx_, r + e * t) for r, t in zip(y, ty))
    assert out == pytest.approx(loop(0.0))
    assert tangent == pytest.approx((loop(1e-6) - loop(-1e-6)) / 2e-6, rel=1e-6)


def check_vmap_like_loop(f, args, in_axes):
    """vmap(f) against a loop over the examples: values, and every leaf's
    dtype the dtype NumPy gives the stacked per-example results."""
    n = next(np.shape(a)[ax] for a, ax in zip(args, in_axes) if ax is not None)
    per = [f(*[a if ax is None else np.take(a, b, axis=ax) for a, ax in zip(args, in_axes)])
           for b in range(n)]
    expected = tree_util.tree_map(lambda *xs: np.stack([np.asarray(x) for x in xs]), *per)
    got = tx.vmap(f, in_axes=in_axes)(*args)
    assert tree_util.tree_structure(got) == tree_util.tree_structure(expected)
    for a, e in zip(tree_util.tree_leaves(got), tree_util.tree_leaves(expected)):
        assert type(a) is np.ndarray
        assert a.dtype == e.dtype, (a.dtype, e.dtype)
        np.testing.assert_allclose(a, e, rtol=1e-6 if e.dtype == np.float32 else 1e-12)
    return expected


def _f32(*shape, seed=0):
    return np.random.default_rng(seed).uniform(-1, 1, size=shape).astype(np.float32)


def test_seed818_number_carried_through_float32_loop():
    for in_axes, x in [((0,), _f32(B, 3)), ((1,), _f32(3, B))]:
        out = check_vmap_like_loop(P.number_carried_through_float32_loop, (x,), in_axes)
        assert out.dtype == np.float32


def test_seed366_number_or_float32_by_branch():
    out = check_vmap_like_loop(P.number_or_float32_by_branch, (_f32(B, 3),), (0,))
    assert out.dtype == np.float32


@pytest.mark.parametrize("t", [-5.0, 5.0, 0.0])
def test_seed1490_float64_scalar_or_float32_by_branch(t):
    """Every example on one side: that side's dtype (float32 for t=-5,
    float64 for t=5); examples on both sides: float64, as NumPy stacks them."""
    y = _f32(B, 3)
    y[:2] += 0.9
    y[2:] -= 0.9
    out = check_vmap_like_loop(P.float64_scalar_or_float32_by_branch, (y, t), (0, None))
    assert out.dtype == {-5.0: np.float32, 5.0: np.float64, 0.0: np.float64}[t]


def test_counter_and_number_in_while():
    x = _f32(B, 2)
    x[0, 0] = 2.0           # stops after one step
    x[1, 0] = 0.01          # runs five steps
    s, k = check_vmap_like_loop(P.counter_and_number_in_while, (x,), (0,))
    assert s.dtype == np.float32 and k.dtype == np.int64


def test_number_through_exp_stays_strong():
    out = check_vmap_like_loop(P.number_through_exp, (_f32(B, 3),), (0,))
    assert out.dtype == np.float64


def test_float64_programs_unchanged():
    r = _rng()
    check_vmap_like_loop(P.number_carried_through_float32_loop, (r.normal(size=(B, 3)),), (0,))
    check_vmap_like_loop(P.counter_and_number_in_while, (r.normal(size=(B, 2)),), (0,))


def test_number_summed_in_while_then_float32():
    x = np.array([[0.05, 0.1], [0.15, -0.3], [0.9, 0.2], [-0.5, 0.4]], np.float32)
    out = check_vmap_like_loop(P.number_summed_in_while_then_float32, (x,), (0,))
    assert out.dtype == np.float32
