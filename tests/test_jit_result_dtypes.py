"""jit of results whose dtype depends on the path (numba_stage.result_dtypes),
and the joins that read a joined value through a fused kernel or a
comparison with an exact constant (numba_stage.joins).

Each function runs on both of its paths, compiled and eagerly: the same
values, and the same dtype on each path.  Joins whose widening would change
a value stay refused, with the user's line."""
import numpy as np
import pytest

import tangent_x as tx
from tangent_x.errors import TransformError

X32 = np.array([0.5, -0.25, 1.5], dtype=np.float32)
Y64 = np.array([0.3, 0.7, -0.2])


def same(got, want):
    """Equal dtypes and values, leaf by leaf (float32 ones to float32's
    precision: Numba's float32 functions may round otherwise than NumPy's
    in the last place; float64 ones to a few units in the last place)."""
    got_leaves, want_leaves = tx.tree_util.tree_leaves(got), tx.tree_util.tree_leaves(want)
    assert len(got_leaves) == len(want_leaves)
    for g, w in zip(got_leaves, want_leaves):
        assert np.asarray(g).dtype == np.asarray(w).dtype, (g, w)
        rtol = 1e-6 if np.asarray(w).dtype == np.float32 else 1e-15
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=rtol, atol=0)


def both_paths(f, *args_per_path):
    """f compiled equals f eager on each argument tuple, called twice (the
    second call takes the fast path)."""
    jitted = tx.jit(f)
    for args in args_per_path:
        for _ in range(2):
            same(jitted(*args), f(*args))
    return jitted


def early_return(x, y):
    if np.sum(x) > 0:
        return np.sum(x) * 2.0            # float32
    return np.sum(y) * 0.5                # float64


def test_number_returned_float32_on_one_path_float64_on_the_other():
    both_paths(early_return, (X32, Y64), (-X32, Y64))
    assert type(tx.jit(early_return)(X32, Y64)) is np.float32


def arrays_by_path(x, y):
    if x[0] > 0:
        return x * 2.0                    # float32 array
    return y + 1.0                        # float64 array


def test_array_returned_float32_on_one_path_float64_on_the_other():
    both_paths(arrays_by_path, (X32, Y64), (-X32, Y64))


def pair_by_path(x, y):
    if np.sum(x) > 1.0:
        return np.sum(x), y * 2.0
    elif np.sum(x) > -1.0:
        return np.sum(y), y * 3.0
    return np.max(x) - 1.0, y


def test_tuple_with_one_result_whose_dtype_depends_on_the_path():
    both_paths(pair_by_path, (X32 * 3, Y64), (X32 * 0.1, Y64), (-X32 * 3, Y64))


def nested(x, y):
    if x[0] > 0:
        if x[1] > 0:
            return x[0] - -x[1]
        return 0.5 - -np.arctan(x[2])
    for i in range(2):
        if y[i] > 0.5:
            return y[i] * 2.0
    return 0.5 - -np.arctan(x[0])


def test_results_through_nested_ifs_and_a_loop():
    both_paths(nested, (X32, Y64), (np.abs(X32), Y64), (-X32, Y64),
               (-X32, np.array([0.1, 0.2, 0.3])))


def shown_elsewhere(x, y):
    if np.sum(x) > 0:
        a = np.sum(x)
    else:
        a = np.sum(y)
    return np.tanh(a)      # tanh in float32 eagerly on the first path: not the float64 one


def test_join_read_by_arithmetic_splits_the_paths():
    # each path's code is its own after the if (specialize/splitting.py):
    # tanh in float32 on the first path, in float64 on the second
    jitted = both_paths(shown_elsewhere, (X32, Y64), (-X32, Y64))
    assert "split_result" in jitted.numba_source()    # the last call's


def gradient_split(x, y):
    if np.sum(x) > 0:
        b = x * 2.0                  # float32
    else:
        b = y                        # float64
    c = np.sin(b) * b                # in float32 on the first path
    return np.sum(c * c)


def test_grad_and_vmap_of_split_paths():
    y32 = Y64.astype(np.float32)
    g = tx.grad(gradient_split, argnums=(0, 1))
    for args in ((X32, Y64), (-X32, Y64), (X32, y32)):
        same(tx.jit(g)(*args), g(*args))
        same(tx.jit(gradient_split)(*args), gradient_split(*args))
    xs = np.stack([X32, -X32, X32 * 2])
    want = np.stack([gradient_split(x, Y64) for x in xs])
    for method in ("loop", "vectorize"):
        got = tx.jit(tx.vmap(gradient_split, in_axes=(0, None), method=method))(xs, Y64)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-6)


def through_kernel(x, y):
    if np.sum(x) > 0:
        b = np.mean(x)                      # float32
    else:
        b = np.mean(y)                      # float64
    v = b * (np.ones((2, 3)) * -0.4) + 1.11  # float64 either way: the same numbers
    return np.sum(v * v)


def test_join_read_by_a_fused_kernel_in_float64_either_way_compiles():
    both_paths(through_kernel, (X32, Y64), (-X32, Y64))
    assert "elementwise" in tx.jit(through_kernel).numba_source(X32, Y64)


def through_kernel_float32(x, y):
    if np.sum(x) > 0:
        b = np.mean(x)
    else:
        b = np.mean(y)
    v = b * (x * 0.5) - 1.25 * x          # float32 eagerly on the first path
    return np.sum(v * v)


def test_join_read_by_a_fused_kernel_in_float32_splits_the_paths():
    both_paths(through_kernel_float32, (X32, Y64), (-X32, Y64))


def compared_exact(x, y):
    if np.sum(x) > 0:
        a = np.sum(x)
    else:
        a = np.sum(y)
    if a >= -0.75:                 # -0.75 is a float32: compared alike
        return y * 2.0
    return y


def compared_rounded(x, y):
    if np.sum(x) > 0:
        a = np.sum(x)
    else:
        a = np.sum(y)
    if a >= 0.1:                   # 0.1 rounds to another float32
        return y * 2.0
    return y


def test_join_compared_with_an_exact_constant_compiles():
    both_paths(compared_exact, (X32, Y64), (-X32, Y64), (-X32 * 0.1, Y64))


def test_join_compared_with_a_rounded_constant_splits_the_paths():
    f = tx.jit(compared_rounded)
    for args in ((X32, Y64), (-X32, Y64), (np.full(3, 0.1, np.float32), Y64)):
        same(f(*args), compared_rounded(*args))
    assert "split_result" in f.numba_source()


def gradient_by_path(x, y):
    if np.sum(x) > 0:
        return np.sum(x * x)                             # y's gradient: float32 zeros
    return np.sum(y * np.linspace(0.0, 1.0, 3)) * 2.0    # y's gradient: float64, then cast


def test_grad_whose_cotangent_is_float32_on_one_path_float64_on_the_other():
    y32 = Y64.astype(np.float32)
    g = tx.grad(gradient_by_path, argnums=(0, 1))
    for args in ((X32, y32), (-X32, y32)):
        for _ in range(2):
            same(tx.jit(g)(*args), g(*args))


def test_value_and_grad_value_by_path():
    g = tx.value_and_grad(early_return)
    for args in ((X32, Y64), (-X32, Y64)):
        same(tx.jit(g)(*args), g(*args))


def test_tagged_source_reads_as_the_user_wrote_it():
    text = tx.jit(early_return)
    text(X32, Y64)
    source = text.numba_source()
    assert "dtype_code(" in source
    assert source.count("return (") >= 1


@pytest.mark.parametrize("method", ["loop", "vectorize"])
def test_jit_vmap_stacks_the_examples_results_as_numpy_does(method):
    """jit(vmap)'s loop over examples keeps each lane's dtype code: the
    batched result is float32 where every example's is, else float64 (what
    np.stack gives of the examples' results); the batched code is compared
    against the same per-example loop."""
    f = tx.jit(tx.vmap(early_return, in_axes=(0, None), method=method))
    for xs in (np.stack([X32, X32 * 2]), np.stack([X32, -X32]), np.stack([-X32, -X32])):
        want = np.stack([early_return(x, Y64) for x in xs])
        for _ in range(2):
            got = f(xs, Y64)
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)


def arrays_per_example(x, w):
    if np.sum(x) > 0:
        return np.cos(x)                  # float32
    return np.cos(x) * w                  # float64


def test_jit_vmap_of_arrays_whose_dtype_depends_on_the_example():
    f = tx.jit(tx.vmap(arrays_per_example, in_axes=(0, None), method="loop"))
    for xs in (np.stack([X32, X32 * 2]), np.stack([X32, -X32])):
        want = np.stack([arrays_per_example(x, Y64) for x in xs])
        got = f(xs, Y64)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def means_over_axes(y, z):
    acc = np.mean(y, axis=1)
    var = np.var(z, axis=0)          # a mean of a mean's deviations
    return acc * 0.7 + 1.06, var - 0.02


def test_a_float32_mean_over_axes_stays_float32_compiled_and_batched():
    # fuzz seed 581477, shrunk: jit(vmap) took np.mean(y) of each example as
    # a mean over axis 1 of the batch, whose compiled form divided the
    # float32 sum by a float64 count: float64 where NumPy gives float32
    y, z = np.ones((4, 2), np.float32) * 0.3, np.arange(6, dtype=np.float32).reshape(2, 3)
    same(tx.jit(means_over_axes)(y, z), means_over_axes(y, z))
    per_example = tx.jit(tx.vmap(lambda y: np.mean(y) + 1.06))(y)
    assert per_example.dtype == np.float32
    np.testing.assert_allclose(per_example, np.mean(y, axis=1) + np.float32(1.06), rtol=1e-6)
