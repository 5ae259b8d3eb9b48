"""Tests for tangent_x.test_util: numerical_jvp and check_grads.

check_grads is tested without the real transforms: ``tangent_x.jvp`` and
``tangent_x.vjp`` are monkeypatched with hand-written derivatives (correct
ones must pass, wrong ones must fail), and with an independent high-accuracy
finite-difference implementation to exercise the higher-order recursion.
"""
import math

import numpy as np
import pytest

import tangent_x
from tangent_x import tree_util as tu
from tangent_x.test_util import check_grads, numerical_jvp


# ---------------------------------------------------------------------------
# numerical_jvp against analytic derivatives
# ---------------------------------------------------------------------------

def test_numerical_jvp_sin_scalar():
    got = numerical_jvp(math.sin, (0.3,), (1.0,))
    assert type(got) is float
    assert got == pytest.approx(math.cos(0.3), rel=1e-7)


def test_numerical_jvp_direction_scales_linearly():
    got = numerical_jvp(lambda x: x ** 3, (2.0,), (0.5,))
    assert got == pytest.approx(3 * 2.0 ** 2 * 0.5, rel=1e-7)


def test_numerical_jvp_multiple_args_and_arrays():
    x, y = np.array([0.1, 0.2, 0.3]), np.array([1.0, 2.0, 3.0])
    tx, ty = np.array([1.0, 0.0, -1.0]), np.array([0.5, 0.5, 0.5])

    def f(x, y):
        return np.sin(x) * y

    expected = np.cos(x) * tx * y + np.sin(x) * ty  # product rule
    np.testing.assert_allclose(numerical_jvp(f, (x, y), (tx, ty)), expected,
                               rtol=1e-7)


def test_numerical_jvp_matmul_is_exact_for_linear_maps():
    rng = np.random.RandomState(3)
    a, b = rng.randn(3, 4), rng.randn(4, 2)
    ta, tb = rng.randn(3, 4), rng.randn(4, 2)
    got = numerical_jvp(np.matmul, (a, b), (ta, tb))
    np.testing.assert_allclose(got, ta @ b + a @ tb, rtol=1e-6, atol=1e-9)


def test_numerical_jvp_pytree_in_and_out():
    params = {"w": np.array([1.0, 2.0]), "b": 0.5}
    tangent = {"w": np.array([1.0, 1.0]), "b": 2.0}

    def f(p):
        return {"sum": np.sum(p["w"] ** 2) + p["b"], "pair": (p["b"] * 3.0,)}

    got = numerical_jvp(f, (params,), (tangent,))
    assert tu.tree_structure(got) == tu.tree_structure(
        {"sum": 0.0, "pair": (0.0,)})
    assert got["sum"] == pytest.approx(2 * 1.0 + 2 * 2.0 + 2.0, rel=1e-7)
    assert got["pair"][0] == pytest.approx(6.0, rel=1e-7)


def test_numerical_jvp_keeps_float32():
    x = np.array([0.5, 1.0], np.float32)
    got = numerical_jvp(np.exp, (x,), (np.ones(2, np.float32),))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, np.exp([0.5, 1.0]), rtol=1e-3)


def test_numerical_jvp_inf_minus_inf_is_zero():
    def f(x):
        return np.array([np.inf, x])

    with np.errstate(all="raise"):
        got = numerical_jvp(f, (1.0,), (1.0,))
    np.testing.assert_allclose(got, [0.0, 1.0])


def test_numerical_jvp_explicit_eps():
    # x**2 has exact central differences for any step.
    assert numerical_jvp(lambda x: x * x, (3.0,), (1.0,), eps=0.5) == 6.0


# ---------------------------------------------------------------------------
# Hand-written transforms for known functions
# ---------------------------------------------------------------------------

def sin_fn(x):
    return np.sin(x)


def matmul_fn(a, b):
    return a @ b


def sin_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return np.sin(x), np.cos(x) * t


def sin_vjp(x):
    return np.sin(x), lambda ct: (np.cos(x) * ct,)


def matmul_jvp(primals, tangents):
    (a, b), (ta, tb) = primals, tangents
    return a @ b, ta @ b + a @ tb


def matmul_vjp(a, b):
    return a @ b, lambda ct: (ct @ b.T, a.T @ ct)


def wrong_matmul_vjp(a, b):
    # Classic bug: forgets the transpose scaling of one input.
    return a @ b, lambda ct: (ct @ b.T, 1.01 * (a.T @ ct))


def make_transforms(jvp_rules, vjp_rules):
    """``jvp``/``vjp`` that dispatch on the function being differentiated."""

    def jvp(f, primals, tangents):
        return jvp_rules[f](tuple(primals), tuple(tangents))

    def vjp(f, *primals):
        return vjp_rules[f](*primals)

    return jvp, vjp


@pytest.fixture
def hand_written(monkeypatch):
    jvp, vjp = make_transforms({sin_fn: sin_jvp, matmul_fn: matmul_jvp},
                               {sin_fn: sin_vjp, matmul_fn: matmul_vjp})
    monkeypatch.setattr(tangent_x, "jvp", jvp, raising=False)
    monkeypatch.setattr(tangent_x, "vjp", vjp, raising=False)


def matmul_args(dtype=np.float64):
    rng = np.random.RandomState(0)
    return (rng.randn(3, 4).astype(dtype), rng.randn(4, 2).astype(dtype))


def test_check_grads_passes_for_correct_sin(hand_written):
    check_grads(sin_fn, (0.3,), order=1)
    check_grads(sin_fn, (np.linspace(-2.0, 2.0, 7),), order=1)


def test_check_grads_passes_for_correct_matmul(hand_written):
    check_grads(matmul_fn, matmul_args(), order=1)
    check_grads(matmul_fn, matmul_args(), order=1, modes=("rev",))


def test_check_grads_float32(hand_written):
    check_grads(matmul_fn, matmul_args(np.float32), order=1)
    check_grads(sin_fn, (np.linspace(-2.0, 2.0, 7).astype(np.float32),), 1)


def test_check_grads_catches_wrong_vjp(monkeypatch):
    jvp, vjp = make_transforms({matmul_fn: matmul_jvp},
                               {matmul_fn: wrong_matmul_vjp})
    monkeypatch.setattr(tangent_x, "jvp", jvp, raising=False)
    monkeypatch.setattr(tangent_x, "vjp", vjp, raising=False)
    check_grads(matmul_fn, matmul_args(), order=1, modes=("fwd",))
    with pytest.raises(AssertionError) as info:
        check_grads(matmul_fn, matmul_args(), order=1, modes=("rev",))
    message = str(info.value)
    assert "order 1" in message and "reverse" in message
    assert "max abs error" in message and "max rel error" in message
    assert "expected" in message and "got" in message


def test_check_grads_catches_wrong_jvp(monkeypatch):
    def wrong_sin_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return np.sin(x), -np.cos(x) * t  # sign error

    jvp, vjp = make_transforms({sin_fn: wrong_sin_jvp}, {sin_fn: sin_vjp})
    monkeypatch.setattr(tangent_x, "jvp", jvp, raising=False)
    monkeypatch.setattr(tangent_x, "vjp", vjp, raising=False)
    check_grads(sin_fn, (0.3,), order=1, modes=("rev",))
    with pytest.raises(AssertionError, match="forward"):
        check_grads(sin_fn, (0.3,), order=1, modes=("fwd",))


def test_check_grads_catches_wrong_primal_output(monkeypatch):
    def off_primal_vjp(x):
        return np.sin(x) + 1e-3, lambda ct: (np.cos(x) * ct,)

    jvp, vjp = make_transforms({}, {sin_fn: off_primal_vjp})
    monkeypatch.setattr(tangent_x, "vjp", vjp, raising=False)
    with pytest.raises(AssertionError, match="primal output"):
        check_grads(sin_fn, (0.3,), order=1, modes=("rev",))


def test_check_grads_catches_dtype_promotion(monkeypatch):
    def promoting_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return np.sin(x), np.cos(x).astype(np.float64) * t.astype(np.float64)

    jvp, _ = make_transforms({sin_fn: promoting_jvp}, {})
    monkeypatch.setattr(tangent_x, "jvp", jvp, raising=False)
    with pytest.raises(AssertionError, match="dtype"):
        check_grads(sin_fn, (np.ones(3, np.float32),), 1, modes=("fwd",))


def test_tolerances(monkeypatch):
    def slightly_off_vjp(scale):
        def vjp(f, a, b):
            return a @ b, lambda ct: (scale * (ct @ b.T), scale * (a.T @ ct))
        return vjp

    for scale, passes in [(1 + 1e-9, True), (1 + 1e-3, False)]:
        monkeypatch.setattr(tangent_x, "vjp", slightly_off_vjp(scale),
                            raising=False)
        if passes:
            check_grads(matmul_fn, matmul_args(), 1, modes=("rev",))
        else:
            with pytest.raises(AssertionError):
                check_grads(matmul_fn, matmul_args(), 1, modes=("rev",))
            # A looser user tolerance accepts it, as a number or per dtype.
            check_grads(matmul_fn, matmul_args(), 1, modes=("rev",),
                        atol=1e-2, rtol=1e-2)
            check_grads(matmul_fn, matmul_args(), 1, modes=("rev",),
                        atol={np.float64: 1e-2}, rtol={np.float64: 1e-2})


def test_pytree_arguments_and_outputs(monkeypatch):
    def f(p):
        return {"y": np.sin(p["w"]) * p["s"]}

    def f_jvp(primals, tangents):
        (p,), (t,) = primals, tangents
        y = np.sin(p["w"]) * p["s"]
        return {"y": y}, {"y": np.cos(p["w"]) * t["w"] * p["s"]
                          + np.sin(p["w"]) * t["s"]}

    def f_vjp(p):
        def pullback(ct):
            return ({"w": np.cos(p["w"]) * p["s"] * ct["y"],
                     "s": float(np.sum(np.sin(p["w"]) * ct["y"]))},)
        return {"y": np.sin(p["w"]) * p["s"]}, pullback

    jvp, vjp = make_transforms({f: f_jvp}, {f: f_vjp})
    monkeypatch.setattr(tangent_x, "jvp", jvp, raising=False)
    monkeypatch.setattr(tangent_x, "vjp", vjp, raising=False)
    check_grads(f, ({"w": np.array([0.1, 0.7]), "s": 1.5},), order=1)


def test_vjp_must_return_one_cotangent_per_primal(monkeypatch):
    def bad_vjp(f, a, b):
        return a @ b, lambda ct: ct @ b.T  # not a tuple

    monkeypatch.setattr(tangent_x, "vjp", bad_vjp, raising=False)
    with pytest.raises(AssertionError, match="one cotangent per primal"):
        check_grads(matmul_fn, matmul_args(), 1, modes=("rev",))


# ---------------------------------------------------------------------------
# Missing transforms
# ---------------------------------------------------------------------------

def test_not_implemented_jvp_is_reported(monkeypatch):
    def jvp(f, primals, tangents):
        raise NotImplementedError("no forward mode")

    monkeypatch.setattr(tangent_x, "jvp", jvp, raising=False)
    monkeypatch.setattr(tangent_x, "vjp", sin_vjp_dispatch, raising=False)
    with pytest.raises(NotImplementedError,
                       match="forward mode is not available yet"):
        check_grads(sin_fn, (0.3,), order=1)
    check_grads(sin_fn, (0.3,), order=1, modes=("rev",))


def sin_vjp_dispatch(f, *primals):
    return sin_vjp(*primals)


def test_missing_jvp_attribute_is_reported(monkeypatch):
    monkeypatch.delattr(tangent_x, "jvp", raising=False)
    with pytest.raises(NotImplementedError,
                       match="forward mode is not available yet"):
        check_grads(sin_fn, (0.3,), order=1, modes=("fwd",))


def test_bad_arguments():
    with pytest.raises(ValueError, match="unknown modes"):
        check_grads(sin_fn, (0.3,), 1, modes=("lin",))
    with pytest.raises(TypeError, match="floating-point"):
        check_grads(sin_fn, (np.arange(3),), 1)


# ---------------------------------------------------------------------------
# Higher orders, with an independent finite-difference "AD"
# ---------------------------------------------------------------------------
#
# The recursion differentiates closures built inside check_grads, which no
# hand-written rule can know about.  A generic Richardson-extrapolated
# central difference (error O(h^4)) is accurate enough to stand in for exact
# derivatives of smooth functions up to second order.

def _axpy(a, xs, ys):
    return tu.tree_map(lambda x, y: y + a * np.asarray(x), xs, ys)


def richardson_jvp(f, primals, tangents, h=1e-2):
    primals, tangents = tuple(primals), tuple(tangents)

    def central(step):
        plus, minus = f(*_axpy(step, tangents, primals)), f(
            *_axpy(-step, tangents, primals))
        return tu.tree_map(lambda p, m: (np.asarray(p) - m) / (2 * step),
                           plus, minus)

    coarse, fine = central(h), central(h / 2)
    tangent = tu.tree_map(lambda c, fi: (4 * fi - c) / 3, coarse, fine)
    return f(*primals), tangent


def richardson_vjp(f, *primals):
    """Pullback from the Jacobian, built one input direction at a time."""
    leaves, treedef = tu.tree_flatten(primals)
    out = f(*primals)

    def pullback(ct):
        ct_leaves = tu.tree_leaves(ct)
        grads = []
        for i, leaf in enumerate(leaves):
            g = np.zeros(np.shape(leaf))
            for idx in np.ndindex(*np.shape(leaf)):
                basis = [np.zeros(np.shape(x)) for x in leaves]
                basis[i][idx] = 1.0
                _, col = richardson_jvp(f, primals,
                                        tu.tree_unflatten(treedef, basis))
                g[idx] = sum(np.vdot(c, d) for c, d in
                             zip(ct_leaves, tu.tree_leaves(col)))
            grads.append(g if np.ndim(leaf) else float(g))
        return tuple(tu.tree_unflatten(treedef, grads))

    return out, pullback


def test_order_two_recursion_both_modes(monkeypatch):
    calls = []

    def jvp(f, primals, tangents):
        calls.append(("jvp", f))
        return richardson_jvp(f, primals, tangents)

    def vjp(f, *primals):
        calls.append(("vjp", f))
        return richardson_vjp(f, *primals)

    monkeypatch.setattr(tangent_x, "jvp", jvp, raising=False)
    monkeypatch.setattr(tangent_x, "vjp", vjp, raising=False)

    def f(x, y):
        return np.sin(x) * y + x ** 2

    check_grads(f, (np.array([0.3, -0.4]), 1.5), order=2)
    differentiated = {fn for _, fn in calls}
    # Besides f itself, derivative functions of f were differentiated.
    assert f in differentiated and len(differentiated) > 1


def test_second_order_bug_is_reported_with_its_order(monkeypatch):
    """A jvp that is right for f but wrong for f's derivative function."""

    def f(x):
        return np.sin(x)

    def jvp(fn, primals, tangents):
        out, t = richardson_jvp(fn, primals, tangents)
        if fn is not f:
            t = tu.tree_map(lambda v: 1.05 * v, t)
        return out, t

    monkeypatch.setattr(tangent_x, "jvp", jvp, raising=False)
    check_grads(f, (0.4,), order=1, modes=("fwd",))
    with pytest.raises(AssertionError, match="order 2.*JVP of JVP"):
        check_grads(f, (0.4,), order=2, modes=("fwd",))


def test_vjp_cotangent_shape_mismatch(monkeypatch):
    def bad_vjp(f, x):
        return np.sin(x), lambda ct: ((np.cos(x) * ct).reshape(1, -1),)

    monkeypatch.setattr(tangent_x, "vjp", bad_vjp, raising=False)
    with pytest.raises(AssertionError, match="shape mismatch"):
        check_grads(sin_fn, (np.array([0.1, 0.2, 0.3]),), 1, modes=("rev",))
