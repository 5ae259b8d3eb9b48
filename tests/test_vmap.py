"""vmap against a Python loop over the batch: the batching corpus, control
flow with batched conditions, composition, pytrees, and bad inputs."""
import os
import re
import sys

import numpy as np
import pytest

import tangent_x as tx
from tangent_x.rules import BATCHING, load_all

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # vmap_corpus
from vmap_corpus import (BATCH, CASES, loop_over_examples as _loop,  # noqa: E402
                         stack_examples as _batch, steps_to)


def _cases():
    for name in CASES:
        for axis in (0, 1, -1):
            for which in ("both", "first", "second"):
                yield name, axis, which


@pytest.mark.parametrize("name,axis,which", list(_cases()))
def test_corpus_matches_loop(name, axis, which):
    fun, make = CASES[name]
    examples = [make() for _ in range(BATCH)]
    per_arg = list(zip(*examples))
    in_axes = {"both": (axis, axis), "first": (axis, None), "second": (None, axis)}[which]
    # a scalar per example has no axis 1: map it along its only axis instead
    in_axes = tuple(0 if ax == 1 and np.ndim(per_arg[i][0]) == 0 else ax
                    for i, ax in enumerate(in_axes))
    batched = [_batch(list(p), ax) for p, ax in zip(per_arg, in_axes)]
    expected = _loop(fun, batched, in_axes)
    got = tx.vmap(fun, in_axes=in_axes)(*batched)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


def _accumulate_into(x, v):
    x += v              # in place: x keeps its dtype
    return x * 2.0


def test_augmented_assignment_keeps_float32():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(BATCH, 3)).astype(np.float32)
    v = rng.normal(size=(BATCH, 3))
    got = tx.vmap(_accumulate_into)(x.copy(), v)
    expected = np.stack([_accumulate_into(x[k].copy(), v[k]) for k in range(BATCH)])
    assert got.dtype == expected.dtype == np.float32
    np.testing.assert_allclose(got, expected, rtol=1e-6)


def _alias_then_aug(x, v):
    z = x
    x += v                   # z sees it: x is an array in each example
    row = x[0]               # a number in each example of a batch of vectors
    x[0] = 2.0 * row
    return z * row


def test_sharing_decided_per_example():
    """``is_array`` under vmap: whether an example's value is an array."""
    rng = np.random.default_rng(4)
    x, v = rng.normal(size=(BATCH, 3)), rng.normal(size=(BATCH, 3))
    got = tx.vmap(_alias_then_aug)(x.copy(), v)
    expected = np.stack([_alias_then_aug(x[k].copy(), v[k]) for k in range(BATCH)])
    np.testing.assert_allclose(got, expected, rtol=1e-12)


def _aux_from_cond(x):
    return tx.lax.cond(x[0] > 0, lambda v: (np.sum(v * v), v[0]),
                       lambda v: (np.sum(2.0 * v), v[1]), x)


def test_per_example_grads_with_aux_known_only_when_run():
    """has_aux whose pair is built at run time (checked by check_aux_pair)."""
    x = np.array([[1.0, 2.0], [-1.0, 3.0], [0.5, -0.5]])
    g, aux = tx.vmap(tx.grad(_aux_from_cond, has_aux=True))(x)
    np.testing.assert_allclose(g, [[2.0, 4.0], [2.0, 2.0], [1.0, -1.0]])
    np.testing.assert_allclose(aux, [1.0, 3.0, 0.5])


def _float_of_norm(x):
    return x * float(np.sqrt(np.sum(x * x)))


def _nested_number_lanes():
    """vmap of vmap of ``float(s)`` of a batched ``s``: the inner vmap's
    ``number_lanes`` batched by the outer one (float32 stays float32)."""
    x = np.random.default_rng(3).normal(size=(2, 3, 4)).astype(np.float32)
    got = tx.vmap(tx.vmap(_float_of_norm))(x)
    expected = np.stack([np.stack([_float_of_norm(row) for row in block]) for block in x])
    assert got.dtype == expected.dtype == np.float32
    np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_nested_number_lanes():
    _nested_number_lanes()


def test_every_batching_rule_is_exercised():
    """Every primitive with a batching rule appears in vectorised code the
    corpus (or the composition tests below) generates."""
    load_all()
    from tangent_x.api import vmap as vmapping
    vmapping._VMAPPED.clear()      # earlier tests' specialisations would be reused
    seen = set()
    original = dict(BATCHING)
    for key, rule in original.items():
        def spy(eqn, b, _rule=rule, _key=key):
            out = _rule(eqn, b)
            if out is not None:
                seen.add(_key)
            return out
        BATCHING[key] = spy
    try:
        for fun, make in CASES.values():
            examples = [make() for _ in range(BATCH)]
            for in_axes in ((0, 0), (0, None), (None, 0)):
                batched = [_batch(list(p), ax) for p, ax in zip(zip(*examples), in_axes)]
                tx.vmap(fun, in_axes=in_axes)(*batched)
        _per_example_grads()
        _composition_grads()
        rng = np.random.default_rng(12)
        for argnums in (0, 1):
            tx.vmap(tx.grad(dot_loss, argnums=argnums), in_axes=(0, None))(
                rng.normal(size=(4, 3)), rng.normal(size=(2, 3)))
        test_functional_index_add_matches_loop()
        test_functional_index_min_max_multiply_match_loop()
        test_per_example_gradients_through_container_updates()
        test_augmented_assignment_keeps_float32()
        test_sharing_decided_per_example()
        test_per_example_grads_with_aux_known_only_when_run()
        test_atleast_and_checks_batched()
        _collectives_batched()
        test_trees_and_erf_batched()
        _write_into_real_part_batched()
        _nested_number_lanes()
    finally:
        BATCHING.clear()
        BATCHING.update(original)
    missing = sorted(set(original) - seen)
    assert not missing, f"batching rules never used: {missing}"


def _write_into_real_part_batched():
    """``with_real``: a write into ``np.real(w)`` written back into ``w``."""
    def f(w, v):
        w = w * 1.0
        r = np.real(w)
        r[0] = v
        return w
    W, V = np.random.default_rng(15).normal(size=(3, 2)), np.array([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(tx.vmap(f)(W, V), [f(W[b], V[b]) for b in range(3)])


def _collectives_batched():
    """The collectives' batching rules: over vmap's own axis, and (inside a
    pmap) over another map's axis, derivatives included."""
    from tangent_x import lax
    X = np.random.default_rng(14).normal(size=(2, 3))
    own = [lambda v: lax.psum(v, "i") + lax.pmean(v, "i") + lax.pmax(v, "i")
           + lax.pmin(v, "i") + lax.axis_index("i"),
           lambda v: lax.all_gather(v, "i"),
           lambda v: lax.psum_scatter(np.outer(np.ones(2), v), "i")]
    for f in own:
        tx.vmap(f, axis_name="i")(X)
    perm = [(0, 1), (1, 0)]
    other = tx.vmap(tx.grad(lambda v: np.sum(np.cos(v) * lax.ppermute(v * v, "i", perm))),
                    axis_name="j")
    old = os.environ.get("TANGENT_X_NUM_DEVICES")
    os.environ["TANGENT_X_NUM_DEVICES"] = "2"
    try:
        tx.pmap(other, axis_name="i")(X[:, None, :])
    finally:
        if old is None:
            del os.environ["TANGENT_X_NUM_DEVICES"]
        else:
            os.environ["TANGENT_X_NUM_DEVICES"] = old


def dot_loss(x, W):
    return np.sum(np.tanh(np.dot(W, x)))


def test_per_example_gradients_through_np_dot():
    rng = np.random.default_rng(13)
    X, W = rng.normal(size=(4, 3)), rng.normal(size=(2, 3))
    for argnums in (0, 1):
        got = tx.vmap(tx.grad(dot_loss, argnums=argnums), in_axes=(0, None))(X, W)
        expected = np.stack([tx.grad(dot_loss, argnums=argnums)(x, W) for x in X])
        np.testing.assert_allclose(got, expected, rtol=1e-12)


def container_loss(x, w):
    d = {"a": x, "b": w}
    d["b"] = d["b"] * x
    xs = [x, w]
    for i in range(2):          # an item set at a run-time key: ``with_item``
        xs[i] = xs[i] * w
    return np.sum(d["a"] * d["b"]) + np.sum(xs[0] * xs[1])


def test_per_example_gradients_through_container_updates():
    rng = np.random.default_rng(15)
    X, w = rng.normal(size=(4, 3)), rng.normal(size=3)
    got = tx.vmap(tx.grad(container_loss), in_axes=(0, None))(X, w)
    np.testing.assert_allclose(got, np.stack([tx.grad(container_loss)(x, w) for x in X]),
                               rtol=1e-12)


def at_add(x, y):
    z = np.zeros(3)
    z = z.at[np.array([0, 0, 2])].add(y)
    return z * x


def test_functional_index_add_matches_loop():
    """``.at[].add`` is not NumPy: the reference is tangent_x's own Python stage."""
    from tangent_x.api.generate import build
    plain = build(at_add, "python").function
    rng = np.random.default_rng(14)
    X, Y = rng.normal(size=(4, 3)), rng.normal(size=4)
    expected = np.stack([plain(x, y) for x, y in zip(X, Y)])
    np.testing.assert_allclose(tx.vmap(at_add)(X, Y), expected)
    np.testing.assert_allclose(tx.vmap(at_add, in_axes=(None, 0))(X[0], Y),
                               np.stack([plain(X[0], y) for y in Y]))


def at_combine(x, y):
    idx = np.array([0, 0, 2])
    z = x.at[idx].min(y)
    z = z.at[idx].max(y * 0.5)
    return z.at[idx].multiply(y)


def at_combine_plain(x, y):     # NumPy's spelling: every update at a repeated index counts
    idx = np.array([0, 0, 2])
    z = np.array(x)
    np.minimum.at(z, idx, y)
    np.maximum.at(z, idx, y * 0.5)
    np.multiply.at(z, idx, y)
    return z


def test_functional_index_min_max_multiply_match_loop():
    rng = np.random.default_rng(16)
    X, Y = rng.normal(size=(4, 3)), rng.normal(size=(4, 3))
    np.testing.assert_allclose(tx.vmap(at_combine)(X, Y),
                               np.stack([at_combine_plain(x, y) for x, y in zip(X, Y)]))
    np.testing.assert_allclose(tx.vmap(at_combine, in_axes=(None, 0))(X[0], Y),
                               np.stack([at_combine_plain(X[0], y) for y in Y]))
    np.testing.assert_allclose(tx.vmap(at_combine, in_axes=(0, None))(X, Y[0]),
                               np.stack([at_combine_plain(x, Y[0]) for x in X]))


# --- control flow -------------------------------------------------------------

def test_if_with_batched_condition_takes_both_branches():
    def f(x):
        if x > 0:
            y = x * 2.0
        else:
            y = -x
        return y
    xs = np.array([-2.0, -1.0, 0.5, 3.0])
    vf = tx.vmap(f)
    np.testing.assert_allclose(vf(xs), [2.0, 1.0, 1.0, 6.0])
    assert "select_lanes" in tx.source(vf)


def test_while_lanes_finish_at_different_iterations():
    def count(x):
        n = 0.0
        while x < 100.0:
            x = x * 2.0
            n = n + 1.0
        return n
    xs = np.array([1.0, 50.0, 99.0, 200.0, 3.0])
    expected = [count(x) for x in xs]
    np.testing.assert_allclose(tx.vmap(count)(xs), expected)
    assert expected == [7.0, 1.0, 1.0, 0.0, 6.0]


# --- acceptance: per-example gradients, batched matmul ---------------------------

def tanh(x):
    return np.tanh(x)


def test_per_example_gradients_of_tanh():
    xs = np.linspace(-2.0, 2.0, 5)
    np.testing.assert_allclose(tx.vmap(tx.grad(tanh))(xs), 1.0 - np.tanh(xs) ** 2,
                               rtol=1e-15)


def _mlp_setup():
    import importlib.util
    import os
    path = os.path.join(os.path.dirname(__file__), "..", "examples", "mlp.py")
    spec = importlib.util.spec_from_file_location("mlp_example", path)
    mlp = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mlp)
    rng = np.random.default_rng(0)
    params = mlp.init_params([784, 64, 10])
    return mlp, params, rng.normal(size=(128, 784)), rng.normal(size=(128, 10))


def example_loss(params, x, y):
    return _MLP.loss(params, x[None, :], y[None, :])


_MLP = None


def _per_example_grads():
    global _MLP
    mlp, params, X, Y = _mlp_setup()
    _MLP = mlp
    per_example = tx.vmap(tx.grad(example_loss), in_axes=(None, 0, 0))(params, X, Y)
    return mlp, params, X, Y, per_example


def test_per_example_gradients_of_the_mlp_loss():
    mlp, params, X, Y, per_example = _per_example_grads()
    single = tx.grad(example_loss)
    for k in range(128):
        g = single(params, X[k], Y[k])
        for layer in range(2):
            for key in ("W", "b"):
                np.testing.assert_allclose(per_example[layer][key][k], g[layer][key],
                                           rtol=1e-10, atol=1e-12)


def test_batched_matmul_reads_as_one_matmul():
    W = np.random.default_rng(1).normal(size=(4, 3))
    b = np.ones(4)

    def layer(x):
        return np.tanh(W @ x + b)
    vf = tx.vmap(layer)
    X = np.random.default_rng(2).normal(size=(6, 3))
    np.testing.assert_allclose(vf(X), np.stack([layer(x) for x in X]))
    text = tx.source(vf)
    body = text.split("def vmap_layer")[1]
    assert "x @ W.T" in body
    assert "for " not in body and "map_lanes" not in body


# --- composition --------------------------------------------------------------------

def f_mixed(x, w):
    return np.sum(np.tanh(x * w) ** 2) + np.sin(x[0]) * w[1]


def _composition_grads():
    rng = np.random.default_rng(3)
    X, w = rng.normal(size=(4, 3)), rng.normal(size=3)
    vf = tx.vmap(f_mixed, in_axes=(0, None))
    vf(X, w)     # called once: its code is specialised before grad inlines it
    total = tx.grad(lambda w, X: np.sum(vf(X, w)))
    return X, w, vf, total(w, X)


def test_grad_of_vmap_directly():
    rng = np.random.default_rng(11)
    X, w = rng.normal(size=(4, 3)), rng.normal(size=3)

    def summed(X, w):
        return np.sum(tx.vmap(f_mixed, in_axes=(0, None))(X, w))
    del summed
    vf = tx.vmap(lambda x, w: f_mixed(x, w) ** 2, in_axes=(0, None))
    jac = tx.jacrev(vf, argnums=1)(X, w)
    expected = np.stack([2.0 * f_mixed(x, w) * tx.grad(f_mixed, argnums=1)(x, w) for x in X])
    np.testing.assert_allclose(jac, expected, rtol=1e-12)


def test_grad_of_vmap_equals_sum_of_grads():
    X, w, vf, g = _composition_grads()
    expected = sum(tx.grad(f_mixed, argnums=1)(x, w) for x in X)
    np.testing.assert_allclose(g, expected, rtol=1e-12)


def test_jacrev_and_jacfwd_of_vmap():
    rng = np.random.default_rng(4)
    X, w = rng.normal(size=(4, 3)), rng.normal(size=3)
    vf = tx.vmap(f_mixed, in_axes=(0, None))
    expected = np.stack([tx.grad(f_mixed, argnums=1)(x, w) for x in X])
    np.testing.assert_allclose(tx.jacrev(vf, argnums=1)(X, w), expected, rtol=1e-12)
    np.testing.assert_allclose(tx.jacfwd(vf, argnums=1)(X, w), expected, rtol=1e-12)


def test_vmap_of_vmap():
    def f(x, y):
        return np.tanh(x) * y + np.sum(x)
    X = np.random.default_rng(5).normal(size=(3, 4, 2))
    Y = np.random.default_rng(6).normal(size=(4,))
    vv = tx.vmap(tx.vmap(f, in_axes=(0, 0)), in_axes=(0, None))
    expected = np.stack([np.stack([f(X[i, j], Y[j]) for j in range(4)]) for i in range(3)])
    np.testing.assert_allclose(vv(X, Y), expected, rtol=1e-12)


def test_vmap_of_jacfwd():
    def f(x):
        return np.sin(x) * np.sum(x)
    X = np.random.default_rng(8).normal(size=(5, 3))
    got = tx.vmap(tx.jacfwd(f))(X)
    expected = np.stack([np.diag(np.cos(x)) * np.sum(x) + np.outer(np.sin(x), np.ones(3))
                         for x in X])
    np.testing.assert_allclose(got, expected, rtol=1e-12)


# --- pytrees, axes, strategies ------------------------------------------------------

def tree_fun(p, x):
    return {"out": p["w"] * x + p["b"], "norm": np.sum(x * x)}


def test_pytree_in_axes_prefix_and_out_axes():
    rng = np.random.default_rng(9)
    p = {"w": rng.normal(size=(3, 5)), "b": rng.normal(size=3)}
    x = rng.normal(size=(5, 3))
    vf = tx.vmap(tree_fun, in_axes=({"w": 1, "b": None}, 0), out_axes={"out": 1, "norm": 0})
    got = vf(p, x)
    loop = [tree_fun({"w": p["w"][:, k], "b": p["b"]}, x[k]) for k in range(5)]
    np.testing.assert_allclose(got["out"], np.stack([o["out"] for o in loop], axis=1))
    np.testing.assert_allclose(got["norm"], [o["norm"] for o in loop])


def test_shared_output_is_broadcast_and_out_axes_none_allowed_for_it():
    def f(x, y):
        return x * 2.0, np.sum(y)
    xs = np.arange(4.0)
    y = np.ones(3)
    a, s = tx.vmap(f, in_axes=(0, None))(xs, y)
    np.testing.assert_allclose(a, xs * 2.0)
    np.testing.assert_allclose(s, [3.0] * 4)
    a, s = tx.vmap(f, in_axes=(0, None), out_axes=(0, None))(xs, y)
    assert np.shape(s) == ()


@pytest.mark.parametrize("method", ["vectorize", "loop"])
def test_methods_agree(method):
    def f(x, y):
        return np.where(x > 0, np.sin(x), x * y) @ np.ones(3)
    X = np.random.default_rng(10).normal(size=(6, 3))
    y = 2.0
    got = tx.vmap(f, in_axes=(0, None), method=method)(X, y)
    np.testing.assert_allclose(got, [f(x, y) for x in X])


def test_loop_method_source_is_a_loop():
    def f(x):
        return np.tanh(x)
    vf = tx.vmap(f, method="loop")
    vf(np.ones((3, 2)))
    assert "for k in range(batch_size):" in tx.source(vf)


def test_specialisation_cached_per_structure():
    def f(x):
        return np.sum(x * x)
    vf = tx.vmap(f)
    vf(np.ones((3, 2)))
    first = vf.generated
    vf(np.ones((7, 2)))
    assert vf.generated is first           # same rank and dtype: same code
    vf(np.ones((3, 2, 2)))
    assert vf.generated is not first       # another rank: new code
    np.testing.assert_allclose(vf(np.ones((3, 2, 2))), [4.0] * 3)


# --- bad inputs ------------------------------------------------------------------------

def two(x, y):
    return x + y


def test_in_axes_longer_than_arguments():
    with pytest.raises(ValueError, match=r"len\(in_axes\)=3, len\(args\)=2"):
        tx.vmap(two, in_axes=(0, 0, 0))(np.ones(3), np.ones(3))


def test_axis_out_of_range():
    with pytest.raises(ValueError, match="argument y along axis 2.*rank should be at least 3"):
        tx.vmap(two, in_axes=(0, 2))(np.ones(3), np.ones((3, 3)))


def test_mismatched_batch_sizes_name_the_arguments():
    with pytest.raises(ValueError, match="inconsistent sizes(.|\n)*argument x(.|\n)*size 3"
                                         "(.|\n)*argument y(.|\n)*size 4"):
        tx.vmap(two)(np.ones(3), np.ones(4))


def test_out_axes_none_for_a_batched_output():
    with pytest.raises(tx.TransformError, match="mapped output but out_axes is None"):
        tx.vmap(two, out_axes=None)(np.ones(3), np.ones(3))


def test_no_mapped_argument():
    with pytest.raises(ValueError, match="at least one non-None"):
        tx.vmap(two, in_axes=None)(np.ones(3), np.ones(3))


def test_bad_axis_spec_type():
    with pytest.raises(TypeError, match="in_axes must be an int, None"):
        tx.vmap(two, in_axes="0")


def test_ragged_results_are_a_clear_error():
    def positives(x):
        return x[x > 0]
    with pytest.raises(ValueError):
        tx.vmap(positives)(np.array([[1.0, -1.0], [1.0, 2.0]]))


# --- random: a batch of keys ------------------------------------------------------------

def draws(key, scale):
    a, b = tx.random.split(key)
    return (tx.random.normal(a, (3,)) * scale + tx.random.uniform(b, ())
            + tx.random.bernoulli(b, 0.5, (3,)) + tx.random.randint(a, (), 0, 10))


def test_vmap_over_a_batch_of_keys_is_bit_identical_to_a_loop():
    keys = tx.random.split(tx.random.PRNGKey(0), 6)
    got = tx.vmap(draws, in_axes=(0, None))(keys, 2.0)
    expected = np.stack([draws(k, 2.0) for k in keys])
    assert got.shape == (6, 3)
    np.testing.assert_array_equal(got, expected)


def test_jacobians_are_batched_by_vmap():
    """jacfwd is one vmapped jvp over all basis tangents, jacrev one vmapped
    backward pass over all basis cotangents (no Python loop over elements)."""
    from tangent_x.api import jacobians

    def f(x, W):
        return np.tanh(W @ x) * np.sum(x)
    rng = np.random.default_rng(16)
    x, W = rng.normal(size=3), rng.normal(size=(2, 3))
    calls = []
    original = jacobians._vmapped

    def counting(fun, in_axes, wrap=None):
        calls.append(in_axes)
        return original(fun, in_axes, wrap)
    jacobians._vmapped = counting
    try:
        fwd = tx.jacfwd(f)(x, W)
        rev = tx.jacrev(f)(x, W)
    finally:
        jacobians._vmapped = original
    assert len(calls) == 2
    eps = 1e-6
    fd = np.stack([(f(x + eps * e, W) - f(x - eps * e, W)) / (2 * eps) for e in np.eye(3)],
                  axis=-1)
    np.testing.assert_allclose(fwd, fd, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(rev, fd, rtol=1e-7, atol=1e-9)


def summed_tanh(x, w):
    return np.sum(np.tanh(x * w))


_VF = tx.vmap(summed_tanh, in_axes=(0, None))


def uses_vmapped(w, X):
    return np.sum(_VF(X, w))


def applies_vmap_inside(w, X):
    return np.sum(tx.vmap(summed_tanh, in_axes=(0, None))(X, w))


def test_grad_of_a_function_calling_a_vmapped_function_before_any_call():
    """The vmapped function has never been called: the first grad call runs
    the function once to specialise it (as JAX traces)."""
    X, w = np.random.default_rng(17).normal(size=(4, 3)), np.ones(3)
    fresh = tx.vmap(summed_tanh, in_axes=(0, None))
    assert fresh._last is None and _VF._last is None
    got = tx.grad(uses_vmapped)(w, X)
    expected = sum(tx.grad(summed_tanh, argnums=1)(x, w) for x in X)
    np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_vmap_applied_inside_a_transformed_function():
    X, w = np.random.default_rng(19).normal(size=(4, 3)), np.ones(3)
    got = tx.grad(applies_vmap_inside)(w, X)
    expected = sum(tx.grad(summed_tanh, argnums=1)(x, w) for x in X)
    np.testing.assert_allclose(got, expected, rtol=1e-12)


def grad_inside(x):
    return tx.grad(np.sin)(x) * x


def applies_to_a_local(w, X):
    local = lambda x, w: np.sum(x * w)     # noqa: E731
    return np.sum(tx.vmap(local, in_axes=(0, None))(X, w))


def test_grad_applied_inside_and_the_clear_error_for_non_static_arguments():
    np.testing.assert_allclose(tx.grad(grad_inside)(0.3), np.cos(0.3) - 0.3 * np.sin(0.3))
    with pytest.raises(tx.TransformError, match=r"test_vmap.py:\d+.*needs static arguments"
                                                r"(.|\n)*apply it once outside"):
        tx.grad(applies_to_a_local)(np.ones(3), np.ones((4, 3)))


def test_branches_returning_containers_of_batched_and_shared_values():
    def f(x, y):
        if np.sum(y) > 0:          # a shared condition
            pair = (x * 2.0, y)
        else:
            pair = (y, x)           # x batched in the other slot
        return pair[0] + pair[1]
    X, y = np.random.default_rng(18).normal(size=(4, 3)), np.ones(3)
    for yy in (y, -y):
        got = tx.vmap(f, in_axes=(0, None))(X, yy)
        np.testing.assert_allclose(got, np.stack([f(x, yy) for x in X]))


# --- with jit ----------------------------------------------------------------------------

def test_jit_of_vmap_and_vmap_of_jit():
    x = np.linspace(-1.0, 1.0, 7)
    expected = 1.0 - np.tanh(x) ** 2
    np.testing.assert_allclose(tx.jit(tx.vmap(tx.grad(tanh)))(x), expected, rtol=1e-14)
    vj = tx.vmap(tx.jit(tx.grad(tanh)))
    from tangent_x.numba_stage.compile import Jitted   # (each jitted function has its own subclass)
    assert isinstance(vj, Jitted)                  # still compiled: jit(vmap(f))
    np.testing.assert_allclose(vj(x), expected, rtol=1e-14)


def test_jit_of_vmap_with_lanes_finishing_at_different_iterations():
    xs = np.array([1.0, 3.0, 40.0, 200.0])
    got = tx.jit(tx.vmap(steps_to, in_axes=(0, None)))(xs, 100.0)
    np.testing.assert_array_equal(got, [steps_to(x, 100.0) for x in xs])
    with tx.disable_jit():
        np.testing.assert_array_equal(
            tx.jit(tx.vmap(steps_to, in_axes=(0, None)))(xs, 100.0), got)


# --- derivatives of vectorised control flow (select_lanes, broadcast_lanes) ----------

def branchy(x, w):
    if x[0] > 0:
        y = x * w
    else:
        y = -x * w[0]
    n = 0.0
    while n < np.abs(x[1]) * 3.0:      # lanes finish at different iterations
        y = np.sin(y) * w
        n = n + 1.0
    return np.sum(y) + n


_VBRANCHY = tx.vmap(branchy, in_axes=(0, None))


def vectorised_loss(w, X):
    return np.sum(_VBRANCHY(X, w) ** 2)


@pytest.mark.parametrize("shape", [(5, 3), (1, 3), (7, 4)])
def test_derivatives_through_vectorised_branches_and_loops(shape):
    from tangent_x.test_util import check_grads
    rng = np.random.default_rng(20)
    X, w = rng.normal(size=shape), rng.normal(size=shape[1:])
    check_grads(lambda w: vectorised_loss(w, X), (w,), order=2, modes=("fwd", "rev"))
    text = tx.source(_VBRANCHY)
    assert "select_lanes" in text and "broadcast_lanes" in text


@pytest.mark.parametrize("in_axes, shapes", [
    (0, [(4,)]), (0, [(4, 3), (4,)]), (1, [(2, 4)]), (-1, [(3, 4), (2, 4)]),
    ((0, None), [(4, 2), (2,)]), ((None, 1), [(3,), (5, 4)]),
    (0, [(4, 1, 3)]), ((0, 0), [(1,), (1, 2)])])
def test_plain_array_boundary_matches_the_general_one(in_axes, shapes, monkeypatch):
    """The shortcut for calls with arrays only gives the axes, size and
    cache key the pytree walk gives (one cache, whichever path ran)."""
    from tangent_x.api import vmap as vmapping
    v = tx.vmap(lambda *a: sum(np.sum(x) for x in a), in_axes=in_axes)
    args = tuple(np.ones(s) for s in shapes)
    fast = v._boundary(args)
    monkeypatch.setattr(vmapping, "_plain_boundary", lambda in_axes, args: None)
    assert fast == v._boundary(args)


@pytest.mark.parametrize("in_axes, shapes, message", [
    (0, [(4,), (3,)], "inconsistent sizes"), (2, [(4, 3)], "rank should be at least"),
    ((0, 0, 0), [(4,), (4,)], "len(in_axes)=3")])
def test_plain_array_boundary_leaves_errors_to_the_general_path(in_axes, shapes, message):
    v = tx.vmap(lambda *a: a[0], in_axes=in_axes)
    with pytest.raises(ValueError, match=re.escape(message)):
        v(*(np.ones(s) for s in shapes))


def _loop_with_dict_params(x, z, p):
    y = z * p["b"] + np.sum(p["w"] * x)
    while np.sum(y) < 4.0:
        y = y * 1.5 + 0.1
    return np.sum(np.sin(y))


@pytest.mark.parametrize("method", [None, "loop"])
@pytest.mark.parametrize("batch", [2, 4])
def test_dict_with_shared_and_mapped_leaves_in_the_loop_strategy(method, batch):
    # the loop strategy indexed every leaf of a dict argument by the
    # example, the shared ones too: p['w'][k] (a wrong value) for k < 3,
    # an IndexError past it
    x = np.linspace(-1.0, 1.0, 3)
    zs = np.linspace(0.1, 1.0, 3 * batch).reshape(batch, 3)
    ps = {"w": np.array([0.3, -0.2, 0.5]), "b": np.linspace(0.5, 1.0, batch)}
    in_axes = (None, 0, {"b": 0, "w": None})
    g = tx.grad(_loop_with_dict_params, argnums=(0, 1, 2))
    kwargs = {} if method is None else {"method": method}
    got = tx.vmap(g, in_axes=in_axes, **kwargs)(x, zs, ps)
    rows = [g(x, zs[k], {"w": ps["w"], "b": ps["b"][k]}) for k in range(batch)]
    np.testing.assert_allclose(got[0], np.stack([r[0] for r in rows]), rtol=1e-12)
    np.testing.assert_allclose(got[1], np.stack([r[1] for r in rows]), rtol=1e-12)
    for key in ("w", "b"):
        np.testing.assert_allclose(got[2][key], np.stack([r[2][key] for r in rows]), rtol=1e-12)
    values = tx.vmap(_loop_with_dict_params, in_axes=in_axes, **kwargs)(x, zs, ps)
    np.testing.assert_allclose(values, [_loop_with_dict_params(x, zs[k], {"w": ps["w"],
                                                                          "b": ps["b"][k]})
                                        for k in range(batch)], rtol=1e-12)


def _atleast_and_assert(x):
    assert np.all(np.abs(x) < 10.0), "entries stay small"
    return np.sum(np.atleast_1d(x[0]) + np.atleast_2d(x)) + np.sum(np.atleast_3d(x)[0, :, 0])


def test_atleast_and_checks_batched():
    xs = np.linspace(-1.0, 1.0, 12).reshape(4, 3)
    got = tx.vmap(_atleast_and_assert)(xs)
    np.testing.assert_allclose(got, [_atleast_and_assert(x) for x in xs], rtol=1e-12)
    with pytest.raises(AssertionError, match="entries stay small"):
        tx.vmap(_atleast_and_assert)(xs * 20.0)


def _trees_and_erf(params, x):
    treedef = tx.tree_util.tree_structure(params)
    doubled = tx.tree_util.tree_map(lambda p: tx.lax.erf(p) * x, params)
    again = tx.tree_util.tree_unflatten(treedef, tx.tree_util.tree_leaves(doubled))
    return np.sum(again["w"]) + np.sum(tx.lax.erfc(again["b"] * x))


def test_trees_and_erf_batched():
    """tree_map/tree_structure/tree_unflatten and erf/erfc (#19 items 2,
    11) under vmap, params batched and shared, against a loop."""
    params = {"w": np.linspace(-1.0, 1.0, 12).reshape(4, 3), "b": np.linspace(0.5, 2.0, 12)
              .reshape(4, 3)}
    xs = np.linspace(0.2, 0.8, 4)
    for in_axes in ((0, 0), (None, 0), ({"w": 0, "b": None}, 0)):
        got = tx.vmap(_trees_and_erf, in_axes=in_axes)(params, xs)
        want = []
        for i in range(4):
            p = {k: (v[i] if (in_axes[0] == 0 or isinstance(in_axes[0], dict)
                              and in_axes[0][k] == 0) else v) for k, v in params.items()}
            want.append(_trees_and_erf(p, xs[i]))
        np.testing.assert_allclose(got, want, rtol=1e-12)


# --- a list a loop grows, in a loop whose lanes stop at different turns ---------------

def zips_in_a_while(x, y):
    w = np.tanh(y)
    while w < 0.23:                          # runs no turn for the first example
        pairs = list(zip(x - 1.0, x * w))    # a loop over zip: its list grows per turn
        lst = [u * v for u, v in pairs]
        x = 0.5 * x + lst[0]
        w = w + 0.3
    return x


def test_a_list_grown_where_some_lanes_are_done_runs_per_example():
    """Fuzz seed 400481: the probe (the first example) never ran the outer
    loop, so the inner loop's list had no known shape, and the lanes the
    outer loop had left made ``select_lanes`` meet lists of two lengths
    (a crash).  An inner loop that appends is now seen from its code: the
    function runs once per example, equal to the per-example loop, its
    gradient equal to finite differences."""
    X = np.linspace(-1.0, 1.0, 12).reshape(4, 3)
    Y = np.array([0.9, 0.1, -0.5, 0.3])
    want = np.stack([zips_in_a_while(X[i], Y[i]) for i in range(4)])
    np.testing.assert_allclose(tx.vmap(zips_in_a_while)(X, Y), want, rtol=1e-14)

    def loss(x, y):
        return np.sum(zips_in_a_while(x, y))
    got = tx.vmap(tx.grad(loss))(X, Y)
    eye = np.eye(3) * 1e-6
    for i in range(4):
        fd = [(loss(X[i] + e, Y[i]) - loss(X[i] - e, Y[i])) / 2e-6 for e in eye]
        np.testing.assert_allclose(got[i], fd, rtol=1e-6, atol=1e-9)


# --- the loop over examples gives each example arrays of its own -----------------------

def changes_its_dict(x, p):
    pb = p["b"]
    for v in x:
        pb += p["w"] * v                  # the caller's p["b"] in eager NumPy
    return np.sum(pb) * x


def _fresh_params():
    return {"b": np.array([0.3, -0.4]), "w": np.array([0.1, 0.2])}


@pytest.mark.parametrize("method", [None, "loop"])
@pytest.mark.parametrize("axes", [None, {"b": 0, "w": None}], ids=["shared", "b-mapped"])
def test_examples_changing_a_dict_in_place_see_only_their_own_changes(method, axes):
    """Fuzz seed 401042: vmap's loop over examples passed a shared dict
    as it was, so each example saw the changes of those before it (a
    wrong value) and the caller's dict changed.  Every array leaf is now
    each example's own copy; the reference is a loop over examples on
    copies."""
    X = np.array([[0.1, 0.2], [0.3, -0.5], [1.0, 2.0]])
    p = _fresh_params()
    if axes is not None:
        p["b"] = np.stack([p["b"], 2 * p["b"], -p["b"]])
    kept = {k: v.copy() for k, v in p.items()}
    examples = [{"b": (kept["b"][i] if axes else kept["b"]).copy(), "w": kept["w"].copy()}
                for i in range(3)]
    want = np.stack([changes_its_dict(X[i], examples[i]) for i in range(3)])
    kwargs = {} if method is None else {"method": method}
    for fn in (tx.vmap(changes_its_dict, in_axes=(0, axes), **kwargs),
               tx.jit(tx.vmap(changes_its_dict, in_axes=(0, axes), **kwargs))):
        np.testing.assert_allclose(fn(X, p), want, rtol=1e-14)
        for k in p:
            np.testing.assert_array_equal(p[k], kept[k])


# --- both branches run under vmap: neither may write into what the other reads --------

def returns_an_item_on_one_path(x, z):
    if np.sum(x) > 0.5:
        return z[1][2]
    return 0.5


def test_vmap_of_grad_of_a_branch_writing_into_a_shared_cotangent():
    """Fuzz seed 420000: grad's code adds ``z``'s cotangent in place
    (``add_at(z_bar, ...)``) in the branch that reads ``z``, right when one
    branch runs; vmap runs both, and the other branch's ``z_bar`` (zeros)
    had been written into: every example got the taken branch's gradient.
    Such a write now goes into a copy; the reference is a loop of grad."""
    X = np.array([[1.0, 0.0], [0.0, 0.1], [0.4, 0.3]])
    z = np.arange(6.0).reshape(2, 3)
    g = tx.grad(returns_an_item_on_one_path, argnums=(0, 1))
    want = [np.stack(leaves) for leaves in zip(*[g(x, z) for x in X])]
    for fn in (tx.vmap(g, in_axes=(0, None)), tx.jit(tx.vmap(g, in_axes=(0, None)))):
        got = fn(X, z)
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)
    assert want[1][1].sum() == 0.0 and want[1][0].sum() == 1.0   # both paths taken


def returns_an_item_inside_a_nested_branch(x, y):
    if y >= 0.5:
        return y
    if np.mean(x):
        return x[1][2]
    return y


def test_vmap_of_grad_of_a_nested_branch_writing_into_a_shared_cotangent():
    """Fuzz seed 430242: as above, the write inside an ``if`` (on a shared
    test) inside the branch vmap runs on every lane."""
    x = np.arange(6.0).reshape(2, 3)
    ys = np.array([0.7, 0.1, 0.2])
    g = tx.grad(returns_an_item_inside_a_nested_branch, argnums=(0, 1))
    want = [np.stack(leaves) for leaves in zip(*[g(x, y) for y in ys])]
    for fn in (tx.vmap(g, in_axes=(None, 0)), tx.jit(tx.vmap(g, in_axes=(None, 0)))):
        for a, b in zip(fn(x, ys), want):
            np.testing.assert_array_equal(a, b)
    assert want[0][:, 1, 2].tolist() == [0.0, 1.0, 1.0]
