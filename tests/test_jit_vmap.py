"""jit of vmap (the compiled loop over examples, numba.prange) and jit of
the Jacobian drivers (jacfwd, jacrev, hessian): each against eager
tangent_x and a Python loop over examples."""
import os
import sys

import numpy as np
import pytest

import tangent_x as tx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # vmap_corpus
from vmap_corpus import (BATCH, CASES, loop_over_examples as _loop,  # noqa: E402
                         stack_examples as _batch, steps_to)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Batching-corpus functions whose one example Numba compiles in a few
# seconds: control flow per example (the loop strategy's reason to be),
# the per-example fallback (map_lanes), containers, casts, scalar/vector
# mixes.  (The rest compile too, but take minutes of Numba's NumPy on two
# shared cores; the known exceptions are Numba's, not the loop's: einsum,
# np.diagonal, np.min over an axis tuple, np.float64(array), a dict
# updated in place, lax.scan's container carry.)
LOOP_CASES = ["if_batched", "if_shared_and_batched", "while_lanes", "while_shared",
              "for_loop", "break_loop", "newton_sqrt", "per_example_trip_count",
              "opaque_callable", "named", "containers", "rank_mismatch", "elementwise_scalar",
              "indexing_by_batched_index", "scalar_casts", "negation"]


def _variants():
    for name in LOOP_CASES:
        yield name, 0, "both"
    for name in ("if_batched", "for_loop", "while_lanes", "opaque_callable", "containers"):
        yield name, 0, "first"
        yield name, 0, "second"
    for name in ("if_batched", "for_loop", "indexing_by_batched_index"):
        yield name, 1, "both"
        yield name, -1, "first"


@pytest.mark.parametrize("name,axis,which", list(_variants()))
def test_loop_over_examples_matches_eager_vmap_and_a_python_loop(name, axis, which):
    fun, make = CASES[name]
    examples = [make() for _ in range(BATCH)]
    per_arg = list(zip(*examples))
    in_axes = {"both": (axis, axis), "first": (axis, None), "second": (None, axis)}[which]
    in_axes = tuple(0 if ax in (1, -1) and np.ndim(per_arg[i][0]) == 0 else ax
                    for i, ax in enumerate(in_axes))
    batched = [_batch(list(p), ax) for p, ax in zip(per_arg, in_axes)]
    expected = _loop(fun, batched, in_axes)
    jitted = tx.jit(tx.vmap(fun, in_axes=in_axes, method="loop"))
    got = jitted(*batched)
    assert jitted.strategy(*batched) == "loop"
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(tx.vmap(fun, in_axes=in_axes)(*batched), got,
                               rtol=1e-12, atol=1e-12)
    assert "numba.prange" in jitted.numba_source()


@pytest.mark.parametrize("name,strategy", [
    ("while_lanes", "loop"),            # lanes finish at different iterations
    ("if_batched", "loop"),             # both branches, picked per lane
    ("opaque_callable", "loop"),        # np.sort has no batching rule: map_lanes
    ("break_loop", "loop"),             # a break on a per-example condition
    ("per_example_trip_count", "loop"),
    ("elementwise_unary", "batched"),   # straight-line whole-array code
    ("rank_mismatch", "batched"),
    ("while_shared", "batched"),        # a shared loop over vector examples
])
def test_the_cost_model_picks_the_strategy_and_both_agree_with_eager(name, strategy):
    fun, make = CASES[name]
    examples = [make() for _ in range(BATCH)]
    batched = [_batch(list(p), 0) for p in zip(*examples)]
    jitted = tx.jit(tx.vmap(fun))
    got = jitted(*batched)
    assert jitted.strategy(*batched) == strategy
    np.testing.assert_allclose(got, _loop(fun, batched, (0, 0)), rtol=1e-12, atol=1e-12)
    if strategy == "loop":
        assert "numba.prange" in jitted.numba_source()
    else:
        assert "prange" not in jitted.numba_source()


def test_loop_strategy_disable_jit_out_axes_and_a_batch_of_one():
    xs = np.array([1.0, 3.0, 40.0, 200.0, 0.5, 7.0])
    jitted = tx.jit(tx.vmap(steps_to, in_axes=(0, None)))
    got = jitted(xs, 100.0)
    np.testing.assert_array_equal(got, [steps_to(x, 100.0) for x in xs])
    assert jitted.strategy(xs, 100.0) == "loop"
    with tx.disable_jit():
        np.testing.assert_array_equal(jitted(xs, 100.0), got)
    np.testing.assert_array_equal(jitted(xs[:1], 100.0), got[:1])
    with pytest.raises(ValueError, match="size 0"):
        jitted(xs[:0], 100.0)
    # vmap(jit(f)) is jit(vmap(f)): the same loop
    vj = tx.vmap(tx.jit(steps_to), in_axes=(0, None))
    np.testing.assert_array_equal(vj(xs, 100.0), got)


def pair_loop(x, w):
    """Returns a tuple: a per-example vector and a per-example scalar."""
    acc = x * 0.0
    n = 0.0
    while n < 3.0:
        acc = np.sin(acc + x * w["scale"]) + w["shift"]
        n = n + 1.0
    return acc, np.sum(acc) * n


def test_loop_strategy_with_pytrees_in_and_out_and_out_axes():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(4, 3))
    w = {"scale": rng.normal(size=4), "shift": 0.25}
    in_axes = (0, {"scale": 0, "shift": None})
    for out_axes in (0, -1, (1, 0)):
        jitted = tx.jit(tx.vmap(pair_loop, in_axes=in_axes, out_axes=out_axes, method="loop"))
        acc, s = jitted(X, w)
        want = [pair_loop(X[k], {"scale": w["scale"][k], "shift": 0.25}) for k in range(4)]
        want_acc = np.stack([a for a, _ in want])
        first_axis = out_axes if isinstance(out_axes, int) else out_axes[0]
        np.testing.assert_allclose(acc, np.moveaxis(want_acc, 0, first_axis), rtol=1e-12)
        np.testing.assert_allclose(s, [b for _, b in want], rtol=1e-12)
        eager = tx.vmap(pair_loop, in_axes=in_axes, out_axes=out_axes)(X, w)
        np.testing.assert_allclose(eager[0], acc, rtol=1e-12)
        np.testing.assert_allclose(eager[1], s, rtol=1e-12)


def branchy(x):
    if x > 0:
        y = np.sin(x)
    else:
        y = x * x
    for _ in range(5):
        y = np.sin(y) * 0.9 + 0.1
    return y


def test_per_example_gradients_by_the_loop():
    f = branchy
    xs = np.linspace(-1.0, 1.0, 9)
    jitted = tx.jit(tx.vmap(tx.grad(f)))
    got = jitted(xs)
    assert jitted.strategy(xs) == "loop"
    np.testing.assert_allclose(got, [tx.grad(f)(x) for x in xs], rtol=1e-12)
    np.testing.assert_allclose(got, tx.vmap(tx.grad(f))(xs), rtol=1e-12)


def _uses_z_and_b_only(x, z, p):
    y = z * p["b"]
    while np.sum(y) < 4.0:
        y = y * 1.5 + 0.1
    return np.sum(np.sin(y))


@pytest.mark.parametrize("in_axes", [0, (None, 0, {"b": 0, "w": None})])
def test_per_example_gradients_of_unused_arguments_are_zeros(in_axes):
    # (fuzzed seed 1, jit_vmap_grad) the loop over examples returned None
    # for the gradient of an argument the function does not read: the
    # symbolic zero of the compiled example had no value
    xs, zs = np.linspace(-1.0, 1.0, 12).reshape(4, 3), np.linspace(0.1, 1.0, 12).reshape(4, 3)
    ps = {"w": np.ones((4, 3)), "b": np.linspace(0.5, 1.0, 4)}
    if in_axes != 0:
        xs, ps = xs[0], {"w": ps["w"][0], "b": ps["b"]}
    g = tx.grad(_uses_z_and_b_only, argnums=(0, 1, 2))
    jitted = tx.jit(tx.vmap(g, in_axes=in_axes))
    got = jitted(xs, zs, ps)
    assert jitted.strategy(xs, zs, ps) == "loop"
    want = tx.vmap(g, in_axes=in_axes)(xs, zs, ps)
    assert tx.tree_util.tree_structure(got) == tx.tree_util.tree_structure(want)
    for a, b in zip(tx.tree_util.tree_leaves(got), tx.tree_util.tree_leaves(want)):
        assert np.shape(a) == np.shape(b) and np.asarray(a).dtype == np.asarray(b).dtype
        np.testing.assert_allclose(a, b, rtol=1e-12)
    assert not np.any(got[0]) and not np.any(got[2]["w"])


def ragged(x):
    return x[x > 0]


def test_ragged_results_are_a_clear_error():
    X = np.array([[1.0, -1.0], [1.0, 1.0]])
    with pytest.raises(ValueError, match="different shapes"):
        tx.jit(tx.vmap(ragged, method="loop"))(X)


def inv_sum(a):
    return np.sum(np.linalg.inv(a))


@pytest.mark.parametrize("size, bad", [(6, 3), (64, 40), (64, 63)])
@pytest.mark.parametrize("method", ["loop", "vectorize"])
def test_an_example_raising_inside_the_parallel_loop_is_raised(size, bad, method):
    """Numba drops an exception raised inside prange (its worker's other
    examples are skipped, their results left unwritten, or the exception
    comes back as a SystemError): the loop's results must never be
    silently wrong, so the example raises as eagerly, with its index."""
    a = np.stack([np.eye(3) * (k + 1.0) + 0.1 * k for k in range(size)])
    jitted = tx.jit(tx.vmap(inv_sum, method=method))
    assert jitted.strategy(a) == "loop"        # (Numba has no batched inv)
    np.testing.assert_allclose(jitted(a), tx.vmap(inv_sum)(a), rtol=1e-12)
    a[bad] = 0.0
    with pytest.raises(np.linalg.LinAlgError):
        tx.vmap(inv_sum)(a)
    with pytest.raises(np.linalg.LinAlgError) as info:
        jitted(a)
    assert any(f"example {bad} of the batch" in note and "test_jit_vmap.py" in note
               for note in getattr(info.value, "__notes__", []))
    a[bad] = np.eye(3)
    np.testing.assert_allclose(jitted(a), tx.vmap(inv_sum)(a), rtol=1e-12)


def test_a_changed_function_gets_a_new_loop():
    import linecache
    import textwrap
    source = textwrap.dedent("""
        def g(x):
            n = 0.0
            while x < 10.0:
                x = x + {step}
                n = n + 1.0
            return n
    """)
    xs = np.array([1.0, 4.0, 9.5])
    results = []
    for step in (1.0, 3.0):
        text = source.format(step=step)
        filename = f"<jit_vmap_changed_{step}>"
        linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
        namespace = {"np": np}
        exec(compile(text, filename, "exec"), namespace)
        results.append(tx.jit(tx.vmap(namespace["g"], method="loop"))(xs))
    np.testing.assert_array_equal(results[0], [9.0, 6.0, 1.0])
    np.testing.assert_array_equal(results[1], [3.0, 2.0, 1.0])


# --- jit of jacfwd, jacrev, hessian ---------------------------------------------------------

def quartic(x):
    return np.sum(x ** 4 + np.sin(x) * x)


def two_args(x, y):
    return np.sin(x) * y[0] + np.cos(y[1]) * x ** 2


def tree_fn(params, x):
    return {"a": np.tanh(params["W"] @ x), "b": np.sum(params["b"] * x)}


@pytest.mark.parametrize("shape", [(3,), (1,), (2, 2)])
def test_jit_of_hessian_equals_hessian(shape):
    x = np.random.default_rng(4).normal(size=shape)
    jitted = tx.jit(tx.hessian(quartic))
    np.testing.assert_allclose(jitted(x), tx.hessian(quartic)(x), rtol=1e-12)
    with tx.disable_jit():
        np.testing.assert_allclose(jitted(x), tx.hessian(quartic)(x), rtol=1e-12)


@pytest.mark.parametrize("jac", ["jacfwd", "jacrev"])
def test_jit_of_jacobians_with_argnums_tuples_and_pytrees(jac):
    J = getattr(tx, jac)
    rng = np.random.default_rng(5)
    x, y = rng.normal(size=3), rng.normal(size=2)
    for argnums in (0, 1, (0, 1)):
        want = J(two_args, argnums=argnums)(x, y)
        got = tx.jit(J(two_args, argnums=argnums))(x, y)
        for g, w in zip(tx.tree_util.tree_leaves(got), tx.tree_util.tree_leaves(want)):
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-14)
        assert tx.tree_util.tree_structure(got) == tx.tree_util.tree_structure(want)
    params = {"W": rng.normal(size=(2, 3)), "b": rng.normal(size=3)}
    want = J(tree_fn)(params, x)
    got = tx.jit(J(tree_fn))(params, x)
    assert tx.tree_util.tree_structure(got) == tx.tree_util.tree_structure(want)
    for g, w in zip(tx.tree_util.tree_leaves(got), tx.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-14)


def test_jit_of_hessian_with_argnums_tuple():
    def f(x, y):
        return np.sum(x * x * y) + np.sum(np.sin(y)) * x[0]
    x, y = np.array([0.3, -0.7]), np.array([1.1, 0.4])
    got = tx.jit(tx.hessian(f, argnums=(0, 1)))(x, y)
    want = tx.hessian(f, argnums=(0, 1))(x, y)
    for g, w in zip(tx.tree_util.tree_leaves(got), tx.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-14)


def test_jit_of_a_jacobian_shows_its_compiled_pieces():
    x = np.array([0.5, -1.0, 2.0])
    jitted = tx.jit(tx.hessian(quartic))
    with pytest.raises(ValueError, match="has not been called"):
        jitted.numba_source()
    text = jitted.numba_source(x)
    assert "numba stage of jvp of grad_quartic" in text and "def jvp_grad_quartic(" in text
    with pytest.raises(TypeError, match="static arguments"):
        tx.jit(tx.jacfwd(quartic), static_argnums=0)


def test_cli_prints_the_compiled_pieces_of_a_hessian(capsys):
    from tangent_x import cli
    target = os.path.join(ROOT, "examples", "basics.py") + ":polynomial"
    assert cli.main(["jit", target, "--transform", "hessian"]) == 0
    generic = capsys.readouterr().out
    assert "numba stage of jvp of grad_polynomial" in generic
    assert cli.main(["jit", target, "--transform", "hessian", "--example-args",
                     "np.array([0.5, -1.0])"]) == 0
    out = capsys.readouterr().out
    assert "def vmap_jvp_grad_polynomial(" in out and "def jvp_grad_polynomial(" in out


def test_has_aux_of_a_jacobian_is_a_clear_error():
    def f(x):
        return np.sin(x), {"x": x}
    for J in (tx.jacfwd, tx.jacrev):
        with pytest.raises(NotImplementedError, match="has_aux=True"):
            J(f, has_aux=True)


def loop_with_branches(x):
    s = 0.0
    for i in range(3):
        if x[i] > 0:
            s = s + x[i] ** 3
        else:
            s = s + np.sin(x[i])
    return s


@pytest.mark.parametrize("x", [np.array([0.5, -1.0, 2.0]), np.array([-0.3, -1.0, 0.7])])
def test_eager_hessian_through_a_loop_with_branches(x):
    """Its vmapped jvp-of-gradient runs add_at per example (map_lanes) on a
    lane of a broadcast, read-only value: the lane is copied first."""
    want = np.diag(np.where(x > 0, 6.0 * x, -np.sin(x)))
    np.testing.assert_allclose(tx.hessian(loop_with_branches)(x), want, rtol=1e-12)


def test_jacfwd_of_dict_parameters_agrees_with_jacrev_and_finite_differences():
    """A jvp returning (shared dict, batched dict): vmap's result flags for a
    container that is shared as a whole (a bool standing for all its leaves)."""
    rng = np.random.default_rng(6)
    params = {"W": rng.normal(size=(2, 3)), "b": rng.normal(size=3)}
    x = rng.normal(size=3)
    fwd, rev = tx.jacfwd(tree_fn)(params, x), tx.jacrev(tree_fn)(params, x)
    for g, w in zip(tx.tree_util.tree_leaves(fwd), tx.tree_util.tree_leaves(rev)):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-14)
    eps = 1e-6
    bump = {"W": np.zeros((2, 3)), "b": np.zeros(3)}
    bump["b"][1] = eps
    up = tree_fn({k: params[k] + bump[k] for k in params}, x)
    down = tree_fn({k: params[k] - bump[k] for k in params}, x)
    np.testing.assert_allclose(fwd["b"]["b"][1], (up["b"] - down["b"]) / (2 * eps), rtol=1e-6)


def constant_and_steps(x, scale):
    n = 0.0
    while x < 10.0:
        x = x * scale
        n = n + 1.0
    return {"n": n, "one": 1.0}


def test_loop_with_constant_results_and_static_arguments():
    xs = np.array([1.0, 3.0, 9.0, 11.0])
    want = {s: np.array([constant_and_steps(x, s)["n"] for x in xs]) for s in (2.0, 3.0)}
    jitted = tx.jit(tx.vmap(constant_and_steps, in_axes=(0, None), method="loop"),
                    static_argnums=1)
    for s in (2.0, 3.0, 2.0):
        got = jitted(xs, s)
        np.testing.assert_array_equal(got["n"], want[s])
        np.testing.assert_array_equal(got["one"], np.ones(4))
        assert got["one"].flags.writeable
    text = jitted.numba_source()        # the static value folded into the example
    assert "def constant_and_steps(x):" in text and "* 2.0" in text
    eager = tx.vmap(constant_and_steps, in_axes=(0, None))(xs, 2.0)
    np.testing.assert_array_equal(eager["one"], np.ones(4))


def _dict_params(p, x):
    return np.sum(p["w"] @ x) + np.sum(p["b"] * 2.0) + len(p["b"])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_loop_strategy_with_a_dict_whose_keys_are_not_sorted(dtype):
    """The examples are made by tree_map (dicts in sorted key order) and
    their code compiled so; the driver passed the leaves in the dict's own
    order, "w" where "b" was expected (found through fuzz seed 219)."""
    p = {"w": np.arange(6.0, dtype=dtype).reshape(2, 3), "b": np.array([0.5, -1.0], dtype)}
    xs = np.linspace(-1, 1, 12, dtype=dtype).reshape(4, 3)
    want = np.stack([np.asarray(_dict_params(p, x)) for x in xs])
    jitted = tx.jit(tx.vmap(_dict_params, in_axes=(None, 0), method="loop"))
    got = jitted(p, xs)
    assert jitted.strategy(p, xs) == "loop"
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-6)


def _float32_loss(w, x):
    h = np.tanh(x * w)
    while np.sum(h) < 2.0:
        h = h * 1.5 + 0.25
    return np.sum(h * h)


def test_per_example_gradients_keep_the_arguments_dtypes():
    # (fuzzed seed 12, jit_vmap_grad) the loop over examples returned
    # float64 gradients for float32 arguments: eager grad gives each
    # gradient its argument's dtype, as JAX does
    w = np.linspace(0.5, 1.0, 3).astype(np.float32)
    xs = np.linspace(-1.0, 1.0, 12).reshape(4, 3).astype(np.float32)
    g = tx.grad(_float32_loss, argnums=(0, 1))
    jitted = tx.jit(tx.vmap(g, in_axes=(None, 0)))
    got = jitted(w, xs)
    assert jitted.strategy(w, xs) == "loop"
    rows = [g(w, x) for x in xs]
    for k in range(2):
        want = np.stack([r[k] for r in rows])
        assert got[k].dtype == want.dtype == np.float32
        np.testing.assert_allclose(got[k], want, rtol=1e-5)
