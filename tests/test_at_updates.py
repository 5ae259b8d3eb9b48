"""``x.at[idx].min(v)``, ``.max(v)`` and ``.multiply(v)``: every update at a
repeated index combines (JAX's scatter-min/max/mul, NumPy's
``np.minimum.at`` / ``np.maximum.at`` / ``np.multiply.at``), not the last
write.  Values against ``np.<ufunc>.at`` on a copy; derivatives against
central finite differences of that reference at points without ties;
vmap against a loop over examples; jit against eager.

Compiling every variant takes minutes (Numba), so this file runs in CI's
slow step; ``test_at_updates_eager.py`` checks the same updates eagerly in
the default run."""
import numpy as np
import pytest

import tangent_x as tx
from tangent_x.errors import TransformError
from _fd import assert_tree_allclose, numerical_grad

UFUNC = {"min": np.minimum, "max": np.maximum, "multiply": np.multiply}
IDX = np.array([0, 0, 2, 0, 2])
IDX_NEG = np.array([-1, 0, -1, 2])


def reference(op, x, idx, v):
    y = np.array(x, dtype=np.result_type(x, v))
    UFUNC[op].at(y, idx, v)
    return y


# the functions under test, one per op (the op is part of the source)
def upd_min(x, idx, v):
    return x.at[idx].min(v)


def upd_max(x, idx, v):
    return x.at[idx].max(v)


def upd_multiply(x, idx, v):
    return x.at[idx].multiply(v)


UPDATE = {"min": upd_min, "max": upd_max, "multiply": upd_multiply}


def loss_min(x, v):
    return np.sum(np.sin(x.at[IDX].min(v)) * np.cos(x))


def loss_max(x, v):
    return np.sum(np.sin(x.at[IDX].max(v)) * np.cos(x))


def loss_multiply(x, v):
    return np.sum(np.sin(x.at[IDX].multiply(v)) * np.cos(x))


LOSS = {"min": loss_min, "max": loss_max, "multiply": loss_multiply}


def loss_reference(op):
    def f(x, v):
        return np.sum(np.sin(reference(op, x, IDX, v)) * np.cos(x))
    return f


OPS = ["min", "max", "multiply"]

pytestmark = pytest.mark.slow


def _untied(rng, shape_x, shape_v):
    """Distinct values everywhere: no ties between x and the updates."""
    values = rng.permutation(np.arange(1, 1 + int(np.prod(shape_x)) + int(np.prod(shape_v))))
    values = values * 0.37 - 3.0
    values[values == 0] = 0.123
    n = int(np.prod(shape_x))
    return values[:n].reshape(shape_x), values[n:].reshape(shape_v)


# --- values ------------------------------------------------------------------

@pytest.mark.parametrize("op", OPS)
def test_repeated_indices_combine_example_from_report(op):
    x = np.array([5.0, 1.0, 2.0])
    v = np.array([1.0, 3.0, 4.0]) if op != "multiply" else np.array([2.0, 3.0, 4.0])
    idx = np.array([0, 0, 2])
    with tx.disable_jit():
        got = tx.jit(UPDATE[op])(x, idx, v)
    np.testing.assert_allclose(got, reference(op, x, idx, v))
    np.testing.assert_allclose(tx.jit(UPDATE[op])(x, idx, v), reference(op, x, idx, v))


def test_report_values_exactly():
    x = np.array([5.0, 1.0, 2.0])
    idx = np.array([0, 0, 2])
    np.testing.assert_array_equal(tx.jit(upd_min)(x, idx, np.array([1.0, 3.0, 4.0])),
                                  [1.0, 1.0, 2.0])
    np.testing.assert_array_equal(tx.jit(upd_multiply)(x, idx, np.array([2.0, 3.0, 4.0])),
                                  [30.0, 1.0, 8.0])


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("case", ["1d", "1d_negative", "1d_scalar_v", "2d_rows",
                                  "2d_row_broadcast", "2d_scalar_v", "int_index", "slice"])
def test_values(op, case):
    rng = np.random.default_rng(1)
    x2 = rng.normal(size=(4, 3))
    cases = {
        "1d": (rng.normal(size=5), IDX, rng.normal(size=5)),
        "1d_negative": (rng.normal(size=3), IDX_NEG, rng.normal(size=4)),
        "1d_scalar_v": (rng.normal(size=3), IDX, 0.25),
        "2d_rows": (x2, IDX, rng.normal(size=(5, 3))),
        "2d_row_broadcast": (x2, IDX, rng.normal(size=3)),
        "2d_scalar_v": (x2, IDX, -0.5),
        "int_index": (x2, 2, rng.normal(size=3)),
        "slice": (x2, slice(1, 3), rng.normal(size=3)),
    }
    x, idx, v = cases[case]
    want = reference(op, x, idx, v)
    with tx.disable_jit():
        np.testing.assert_allclose(tx.jit(UPDATE[op])(x, idx, v), want)
    if isinstance(idx, slice):
        return                          # a slice is not a jit argument
    np.testing.assert_allclose(tx.jit(UPDATE[op])(x, idx, v), want)


@pytest.mark.parametrize("op", OPS)
def test_tuple_index_eager(op):
    rng = np.random.default_rng(2)
    x = rng.normal(size=(4, 3))
    v = rng.normal(size=5)

    def f(x, v):
        if op == "min":
            return x.at[IDX, 1].min(v)
        if op == "max":
            return x.at[IDX, 1].max(v)
        return x.at[IDX, 1].multiply(v)
    with tx.disable_jit():
        np.testing.assert_allclose(tx.jit(f)(x, v), reference(op, x, (IDX, 1), v))


MASK = np.array([[True, False, True], [False, False, True], [True, True, False],
                 [False, True, True]])


def mask_rows_add(x, v):
    return x.at[np.array([True, False, True, True])].add(v)


def idx_rows_add(x, v):
    return x.at[IDX].add(v)


def mask_2d_min(x, v):
    return x.at[MASK].min(v)


def mask_2d_add(x, v):
    return x.at[MASK].add(v)


def test_jit_broadcasts_v_over_selected_rows():
    """The compiled scatter (np.<ufunc>.at, and np.add.at's) broadcasts v to
    the selected rows: v of shape (rows, 1) used to be read flat, modulo its
    size -- wrong numbers under jit only."""
    rng = np.random.default_rng(11)
    x = rng.normal(size=(4, 3))
    for f, idx, v in ((idx_rows_add, IDX, rng.normal(size=(5, 1))),
                      (mask_rows_add, np.array([True, False, True, True]),
                       rng.normal(size=(3, 1))),
                      (mask_2d_add, MASK, rng.normal(size=int(MASK.sum()))),
                      (mask_2d_add, MASK, 0.5)):
        np.testing.assert_allclose(tx.jit(f)(x, v), reference_add(x, idx, v))
    for op in OPS:
        v = rng.normal(size=(5, 1))
        np.testing.assert_allclose(tx.jit(UPDATE[op])(x, IDX, v), reference(op, x, IDX, v))
    v = rng.normal(size=int(MASK.sum()))
    np.testing.assert_allclose(tx.jit(mask_2d_min)(x, v), reference("min", x, MASK, v))


def reference_add(x, idx, v):
    y = np.array(x)
    np.add.at(y, idx, v)
    return y


def test_input_not_modified():
    x = np.array([5.0, 1.0, 2.0])
    x0 = x.copy()
    tx.jit(upd_min)(x, np.array([0, 0, 2]), np.array([1.0, 3.0, 4.0]))
    with tx.disable_jit():
        tx.jit(upd_min)(x, np.array([0, 0, 2]), np.array([1.0, 3.0, 4.0]))
    np.testing.assert_array_equal(x, x0)


# --- derivatives -------------------------------------------------------------

@pytest.mark.parametrize("op", OPS)
def test_grad_against_finite_differences(op):
    rng = np.random.default_rng(3)
    x, v = _untied(rng, (3,), (5,))
    want = numerical_grad(loss_reference(op), (x, v), argnum=(0, 1))
    with tx.disable_jit():
        got = tx.grad(LOSS[op], argnums=(0, 1))(x, v)
    assert_tree_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert_tree_allclose(tx.jit(tx.grad(LOSS[op], argnums=(0, 1)))(x, v), got)


@pytest.mark.parametrize("op", OPS)
def test_jvp_against_finite_differences(op):
    rng = np.random.default_rng(4)
    x, v = _untied(rng, (3,), (5,))
    tx_, tv = rng.normal(size=3), rng.normal(size=5)
    ref = loss_reference(op)
    eps = 1e-6
    want = (ref(x + eps * tx_, v + eps * tv) - ref(x - eps * tx_, v - eps * tv)) / (2 * eps)
    with tx.disable_jit():
        primal, got = tx.jvp(LOSS[op], (x, v), (tx_, tv))
    np.testing.assert_allclose(primal, ref(x, v))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    from tangent_x.api.transformed import cached   # jvp's generated code, compiled (as test_jit does)
    jvp_fn = cached(LOSS[op], "jvp", (0, 1), lambda out, a: out)
    _, jitted = tx.jit(jvp_fn)(x, v, tx_, tv)
    np.testing.assert_allclose(jitted, got, rtol=1e-10)


def rows_min(x, v):
    return np.sum(np.tanh(x.at[IDX].min(v)) * np.arange(1.0, 4.0))


def rows_max(x, v):
    return np.sum(np.tanh(x.at[IDX].max(v)) * np.arange(1.0, 4.0))


def rows_multiply(x, v):
    return np.sum(np.tanh(x.at[IDX].multiply(v)) * np.arange(1.0, 4.0))


ROWS = {"min": rows_min, "max": rows_max, "multiply": rows_multiply}


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("shape_v", [(5, 3), (3,), (5, 1)])
def test_grad_2d_rows_broadcast_v(op, shape_v):
    """x of shape (4, 3) updated at rows IDX; v per row, one row for all, or
    one number per row (broadcast)."""
    rng = np.random.default_rng(5)
    x, v = _untied(rng, (4, 3), shape_v)
    x, v = x * 0.3, v * 0.3

    def ref(x, v):
        return np.sum(np.tanh(reference(op, x, IDX, v)) * np.arange(1.0, 4.0))
    want = numerical_grad(ref, (x, v), argnum=(0, 1))
    with tx.disable_jit():
        got = tx.grad(ROWS[op], argnums=(0, 1))(x, v)
    assert_tree_allclose(got, want, rtol=1e-5, atol=1e-6)
    tx_, tv = rng.normal(size=x.shape), rng.normal(size=v.shape)
    eps = 1e-6
    fd = (ref(x + eps * tx_, v + eps * tv) - ref(x - eps * tx_, v - eps * tv)) / (2 * eps)
    with tx.disable_jit():
        _, t = tx.jvp(ROWS[op], (x, v), (tx_, tv))
    np.testing.assert_allclose(t, fd, rtol=1e-5, atol=1e-6)
    assert_tree_allclose(tx.jit(tx.grad(ROWS[op], argnums=(0, 1)))(x, v), got)


def basic_min(x, v, i):
    return np.sum(np.sin(x.at[i].min(v)) * np.cos(x)) + np.sum(np.sin(x.at[1:3].min(v)))


def basic_max(x, v, i):
    return np.sum(np.sin(x.at[i].max(v)) * np.cos(x)) + np.sum(np.sin(x.at[1:3].max(v)))


def basic_multiply(x, v, i):
    return np.sum(np.sin(x.at[i].multiply(v)) * np.cos(x)) + \
        np.sum(np.sin(x.at[1:3].multiply(v)))


BASIC = {"min": basic_min, "max": basic_max, "multiply": basic_multiply}


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("i", [2, -1, 0])
def test_grad_basic_indices(op, i):
    """An int or a slice (which cannot repeat): same rules, eager and jit."""
    rng = np.random.default_rng(12)
    x, v = _untied(rng, (4, 3), (3,))
    x, v = x * 0.3, v * 0.3

    def ref(x, v):
        return np.sum(np.sin(reference(op, x, i, v)) * np.cos(x)) + \
            np.sum(np.sin(reference(op, x, slice(1, 3), v)))
    want = numerical_grad(ref, (x, v), argnum=(0, 1))
    with tx.disable_jit():
        got = tx.grad(BASIC[op], argnums=(0, 1))(x, v, i)
    assert_tree_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert_tree_allclose(tx.jit(tx.grad(BASIC[op], argnums=(0, 1)))(x, v, i), got)


def test_multiply_with_zero_updates():
    """Zeros among the updates (one, and two at the same slot): the product
    rule counts them apart, no 0/0."""
    x = np.array([1.5, -2.0, 0.7])
    v = np.array([0.0, 3.0, 2.0, 0.5, 0.0])     # slot 0: 0, 3, 0.5 ; slot 2: 2, 0
    want = numerical_grad(loss_reference("multiply"), (x, v), argnum=(0, 1))
    with tx.disable_jit():
        got = tx.grad(loss_multiply, argnums=(0, 1))(x, v)
    assert_tree_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert np.all(np.isfinite(got[1]))
    v2 = np.array([0.0, 3.0, 2.0, 0.0, 0.0])    # slot 0 has two zeros: all derivatives 0
    want2 = numerical_grad(loss_reference("multiply"), (x, v2), argnum=(0, 1))
    with tx.disable_jit():
        got2 = tx.grad(loss_multiply, argnums=(0, 1))(x, v2)
    assert_tree_allclose(got2, want2, rtol=1e-5, atol=1e-6)
    assert_tree_allclose(tx.jit(tx.grad(loss_multiply, argnums=(0, 1)))(x, v2), got2)


def test_min_ties_split_evenly():
    """The documented tie rule: x and the updates equal to the result share
    its derivative evenly (as JAX's scatter-min rule and np.minimum's)."""
    x = np.array([1.0, 5.0, 2.0])
    v = np.array([1.0, 1.0, 4.0])           # x[0] ties with both updates at slot 0
    idx = np.array([0, 0, 2])

    def f(x, v):
        return np.sum(x.at[idx].min(v) * np.array([3.0, 1.0, 1.0]))
    with tx.disable_jit():
        gx, gv = tx.grad(f, argnums=(0, 1))(x, v)
    np.testing.assert_allclose(gx, [1.0, 1.0, 1.0])
    np.testing.assert_allclose(gv, [1.0, 1.0, 0.0])
    _, t = tx.jvp(f, (x, v), (np.array([1.0, 0, 0]), np.array([1.0, 1.0, 0])))
    np.testing.assert_allclose(t, 3.0)      # a common shift moves the min by as much


@pytest.mark.parametrize("op", ["min", "max"])
def test_second_derivative_min_max(op):
    """Derivative code of min/max is transformed again (jvp of grad): the
    winners are constants, so the Hessian is that of the smooth part."""
    rng = np.random.default_rng(6)
    x, v = _untied(rng, (3,), (5,))
    t = rng.normal(size=3)
    gradf = tx.grad(LOSS[op], argnums=0)
    with tx.disable_jit():
        _, hvp = tx.jvp(lambda x: gradf(x, v), (x,), (t,))
    eps = 1e-5
    want = (gradf(x + eps * t, v) - gradf(x - eps * t, v)) / (2 * eps)
    np.testing.assert_allclose(hvp, want, rtol=1e-5, atol=1e-6)


def test_second_derivative_multiply_raises():
    rng = np.random.default_rng(7)
    x, v = _untied(rng, (3,), (5,))
    gradf = tx.grad(loss_multiply, argnums=1)
    with tx.disable_jit(), pytest.raises(TransformError, match="multiply"):
        tx.jvp(lambda v: gradf(x, v), (v,), (np.ones(5),))


# --- vmap --------------------------------------------------------------------

def _loop(op, X, I, V):
    return np.stack([reference(op, x, i, v) for x, i, v in zip(X, I, V)])


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("jit", [False, True])
def test_vmap_shared_and_per_example_indices(op, jit):
    rng = np.random.default_rng(8)
    X, V = rng.normal(size=(4, 3)), rng.normal(size=(4, 5))
    I = rng.integers(0, 3, size=(4, 5))
    wrap = tx.jit if jit else (lambda f: f)
    with tx.disable_jit() if not jit else _null():
        shared = wrap(tx.vmap(UPDATE[op], in_axes=(0, None, 0)))(X, IDX, V)
        own = wrap(tx.vmap(UPDATE[op]))(X, I, V)
        shared_x = wrap(tx.vmap(UPDATE[op], in_axes=(None, 0, 0)))(X[0], I, V)
    np.testing.assert_allclose(shared, _loop(op, X, [IDX] * 4, V))
    np.testing.assert_allclose(own, _loop(op, X, I, V))
    np.testing.assert_allclose(shared_x, _loop(op, [X[0]] * 4, I, V))


@pytest.mark.parametrize("op", OPS)
def test_vmap_2d_rows(op):
    rng = np.random.default_rng(9)
    X, V = rng.normal(size=(3, 4, 2)), rng.normal(size=(3, 2))   # v: one row, broadcast
    I = rng.integers(0, 4, size=(3, 6))
    with tx.disable_jit():
        got = tx.vmap(UPDATE[op])(X, I, V)
    np.testing.assert_allclose(got, _loop(op, X, I, V))
    np.testing.assert_allclose(tx.jit(tx.vmap(UPDATE[op]))(X, I, V), got)


class _null:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def own_min(x, i, v):
    return np.sum(np.sin(x.at[i].min(v * x[0])) * np.cos(x))


def own_max(x, i, v):
    return np.sum(np.sin(x.at[i].max(v * x[0])) * np.cos(x))


def own_multiply(x, i, v):
    return np.sum(np.sin(x.at[i].multiply(v * x[0])) * np.cos(x))


OWN = {"min": own_min, "max": own_max, "multiply": own_multiply}


@pytest.mark.parametrize("op", OPS)
def test_grad_of_vmap_and_vmap_of_grad(op):
    """Per-example indices: gradients of the vmapped sum and vmapped
    gradients against a loop over examples of the (finite-difference
    checked) gradient."""
    rng = np.random.default_rng(10)
    X, V = _untied(rng, (4, 3), (4, 5))
    X, V = X * 0.3, V * 0.3
    I = np.array([[0, 0, 2, 1, 0], [1, 1, 1, 2, 2], [2, 0, 2, 2, 0], [0, 1, 2, 0, 1]])
    f = OWN[op]

    def ref(x, i, v):
        return np.sum(np.sin(reference(op, x, i, v * x[0])) * np.cos(x))
    per = [numerical_grad(lambda x, v: ref(x, i, v), (x, v), argnum=(0, 1))
           for x, i, v in zip(X, I, V)]
    want = (np.stack([p[0] for p in per]), np.stack([p[1] for p in per]))
    with tx.disable_jit():
        vg = tx.vmap(tx.grad(f, argnums=(0, 2)))(X, I, V)
        gv = tx.grad(lambda X, V: np.sum(tx.vmap(f)(X, I, V)), argnums=(0, 1))(X, V)
    assert_tree_allclose(tuple(vg), want, rtol=1e-5, atol=1e-6)
    assert_tree_allclose(tuple(gv), want, rtol=1e-5, atol=1e-6)
    jitted = tx.jit(tx.grad(lambda X, V: np.sum(tx.vmap(f)(X, I, V)), argnums=(0, 1)))(X, V)
    assert_tree_allclose(tuple(jitted), want, rtol=1e-5, atol=1e-6)
    jitted = tx.jit(tx.vmap(tx.grad(f, argnums=(0, 2))))(X, I, V)
    assert_tree_allclose(tuple(jitted), want, rtol=1e-5, atol=1e-6)
