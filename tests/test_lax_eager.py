"""Eager (reference) semantics of tangent_x.lax, checked against JAX's.

Expected values are JAX's documented results for its standard examples
(recorded from jax.lax; JAX itself is never imported here).  Error cases
check the exception type and that the message names the problem: which
branch or carry component, and whether shapes, dtypes or structure differ.
"""
import collections
import warnings

import numpy as np
import pytest

from tangent_x import lax

Point = collections.namedtuple("Point", ["x", "y"])


# ---------------------------------------------------------------------------
# cond
# ---------------------------------------------------------------------------

def _center_if_spread(x):
    return lax.cond(x.max() - x.min() > 1,
                    lambda v: v - v.mean(),
                    lambda v: v,
                    x)


def test_cond_on_max_min_spread():
    wide = np.array([0.0, 0.5, 3.0])
    narrow = np.array([0.0, 0.5, 0.9])
    np.testing.assert_allclose(_center_if_spread(wide), wide - wide.mean())
    np.testing.assert_array_equal(_center_if_spread(narrow), narrow)


@pytest.mark.parametrize("pred, expected", [
    (True, "t"), (False, "f"), (np.bool_(True), "t"), (np.array(False), "f"),
    (2, "t"), (0, "f"), (np.int32(-1), "t"), (0.5, "t"), (0.0, "f"),
])
def test_cond_predicate_kinds(pred, expected):
    # JAX accepts bool and numbers; nonzero is true.
    assert lax.cond(pred, lambda: "t", lambda: "f") == expected


def test_cond_operands():
    assert lax.cond(False, lambda a, b: a + b, lambda a, b: a - b, 1.0, 2.0) == -1.0
    assert lax.cond(True, lambda: 1.0, lambda: 2.0) == 1.0
    assert lax.cond(True, lambda v: v * 2, lambda v: v, operand=3) == 6


def test_cond_pytree_outputs():
    x = np.arange(3.0)
    out = lax.cond(True,
                   lambda v: {"p": Point(v, v.sum()), "n": [None, v]},
                   lambda v: {"p": Point(-v, v.max()), "n": [None, v * 0]},
                   x)
    assert isinstance(out["p"], Point)
    np.testing.assert_array_equal(out["p"].x, x)
    assert out["p"].y == 3.0 and out["n"][0] is None


def test_cond_weak_float_matches_float32():
    # A Python float is weakly typed, as in JAX: it matches float32.
    assert lax.cond(True, lambda: 1.0, lambda: np.float32(2.0)) == 1.0


@pytest.mark.parametrize("pred", [True, False])
def test_cond_shape_mismatch_raises_whichever_branch_is_taken(pred):
    with pytest.raises(TypeError, match=r"true_fun.*float64\[3\].*false_fun.*"
                                        r"float64\[2\].*shapes do not match"):
        lax.cond(pred, lambda v: v, lambda v: v[:2], np.ones(3))


def test_cond_dtype_mismatch():
    with pytest.raises(TypeError, match=r"at \['w'\].*float32\[2\].*float64\[2\]"
                                        r".*dtypes do not match"):
        lax.cond(False, lambda: {"w": np.ones(2, np.float32)},
                 lambda: {"w": np.ones(2)})


def test_cond_weak_int_vs_float_mismatch():
    # JAX: int32[] vs float32[] -- weak types do not cross categories.
    with pytest.raises(TypeError, match="dtypes do not match"):
        lax.cond(True, lambda: 1, lambda: 1.0)


def test_cond_structure_mismatch():
    with pytest.raises(TypeError, match=r"pytree structure.*tuple of length 2.*"
                                        r"list of length 2.*Python types differ"):
        lax.cond(True, lambda v: (v, v), lambda v: [v, v], np.ones(3))
    with pytest.raises(TypeError, match=r"at \[1\].*keys \['a', 'b'\].*"
                                        r"keys \['a', 'c'\].*keys do not match"):
        lax.cond(True, lambda: (0.0, {"a": 1.0, "b": 2.0}),
                 lambda: (0.0, {"a": 1.0, "c": 2.0}))


@pytest.mark.parametrize("pred, message", [
    (np.array([True, False]), "Pred must be a scalar"),
    ([True], "Pred must be a scalar"),
    (None, "cond predicate is None"),
    (np.array("yes"), "Pred type must be either boolean or number"),
])
def test_cond_bad_predicate(pred, message):
    with pytest.raises(TypeError, match=message):
        lax.cond(pred, lambda: 1.0, lambda: 2.0)


def test_cond_branches_must_be_callable():
    with pytest.raises(TypeError, match="should be callable"):
        lax.cond(True, 1.0, 2.0)


def test_cond_untaken_branch_errors_and_warnings_are_not_reported():
    # The predicate guards the untaken branch: it may raise or warn when
    # evaluated only for type checking; the taken value is still returned.
    d = 0.0
    assert lax.cond(d != 0, lambda: 1.0 / d, lambda: 0.0) == 0.0
    a = np.arange(3.0)
    i = 3
    assert lax.cond(i < len(a), lambda: a[i], lambda: np.float64(0)) == 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x = np.float64(-1.0)
        assert lax.cond(x > 0, lambda: np.log(x), lambda: np.float64(0)) == 0.0


def test_cond_recursion_terminates():
    calls = []

    def fact(n):
        calls.append(n)
        return lax.cond(n <= 1, lambda: 1, lambda: n * fact(n - 1))

    assert fact(5) == 120
    assert len(calls) < 20   # untaken branches are not checked recursively


def test_cond_untaken_check_can_be_disabled(monkeypatch):
    monkeypatch.setattr(lax, "CHECK_UNTAKEN_BRANCHES", False)
    seen = []
    out = lax.cond(True, lambda: np.ones(3), lambda: seen.append(1) or np.ones(2))
    assert out.shape == (3,) and seen == []


# ---------------------------------------------------------------------------
# switch
# ---------------------------------------------------------------------------

BRANCHES = [lambda x: x + 1, lambda x: x + 2, lambda x: x + 3]


@pytest.mark.parametrize("index, expected", [
    (-5, 11), (-1, 11), (0, 11), (1, 12), (2, 13), (3, 13), (100, 13),
    (np.int32(1), 12), (np.array(2), 13), (np.uint8(200), 13),
])
def test_switch_clamps_index(index, expected):
    assert lax.switch(index, BRANCHES, 10) == expected


def test_switch_single_branch_and_pytrees():
    assert lax.switch(7, [lambda: (1.0, [2.0])]) == (1.0, [2.0])
    out = lax.switch(1, [lambda p: Point(p.y, p.x), lambda p: p], Point(1.0, 2.0))
    assert out == Point(1.0, 2.0)


def test_switch_mismatch_in_untaken_branch():
    branches = [lambda: np.ones(2), lambda: np.ones(2), lambda: np.ones(3)]
    with pytest.raises(TypeError, match=r"branch 0.*float64\[2\].*branch 2.*"
                                        r"float64\[3\].*shapes do not match"):
        lax.switch(0, branches)
    with pytest.raises(TypeError, match=r"branch 0 is a tuple of length 1 while"
                                        r".*branch 1 is a tuple of length 2.*lengths do "
                                        r"not match"):
        lax.switch(1, [lambda: (1.0,), lambda: (1.0, 2.0)])


@pytest.mark.parametrize("index, error, message", [
    (1.0, TypeError, "Index type must be an integer"),
    (True, TypeError, "Index type must be an integer"),
    (np.array([1]), TypeError, "Branch index must be a scalar"),
    (None, TypeError, "switch index is None"),
])
def test_switch_bad_index(index, error, message):
    with pytest.raises(error, match=message):
        lax.switch(index, BRANCHES, 0)


def test_switch_bad_branches():
    with pytest.raises(ValueError, match="Empty branch sequence"):
        lax.switch(0, [])
    with pytest.raises(TypeError, match="sequence of callables"):
        lax.switch(0, [1, 2])


# ---------------------------------------------------------------------------
# fori_loop
# ---------------------------------------------------------------------------

def test_fori_loop_1000_squarings():
    x = np.array([0.5, 1.0, -1.0, 0.0, 0.999])
    out = lax.fori_loop(0, 1000, lambda i, v: v * v, x)
    np.testing.assert_array_equal(out, [0.0, 1.0, 1.0, 0.0, 0.0])


def test_fori_loop_1000_steps_of_decay():
    expected = 1.0
    for _ in range(1000):
        expected = expected * 0.999
    assert lax.fori_loop(0, 1000, lambda i, v: v * 0.999, 1.0) == expected
    assert abs(expected - np.exp(1000 * np.log(0.999))) < 1e-12


def test_fori_loop_counting_and_index_type():
    total = lax.fori_loop(0, 1000, lambda i, s: s + i, 0)
    assert total == 499500 and type(total) is int
    seen = []
    lax.fori_loop(np.int32(2), np.int32(4), lambda i, s: seen.append(i) or s, 0)
    assert seen == [2, 3] and all(type(i) is np.int32 for i in seen)


def test_fori_loop_empty_range_returns_init():
    """Init's value, as a copy: the carry never shares the caller's array
    (JAX's arrays are values; transformed code takes the loop's result as
    a value of its own, so a later ``out += 1`` must not change ``init``)."""
    init = {"a": np.ones(2)}
    out = lax.fori_loop(5, 2, lambda i, c: None, init)
    np.testing.assert_array_equal(out["a"], init["a"])
    assert out["a"] is not init["a"]


def test_fori_loop_pytree_carry():
    def body(i, c):
        return {"acc": c["acc"] + i * np.ones(2), "n": (c["n"][0] + 1,)}

    out = lax.fori_loop(0, 4, body, {"acc": np.zeros(2), "n": (0,)})
    np.testing.assert_array_equal(out["acc"], [6.0, 6.0])
    assert out["n"] == (4,)


def test_fori_loop_weak_int_carry_promotes_like_jax():
    # JAX promotes the weakly typed init 0 and returns 1.5.
    assert lax.fori_loop(0, 3, lambda i, x: x + 0.5, 0) == 1.5


def test_fori_loop_float_bounds_like_jax():
    assert lax.fori_loop(0.0, 3.0, lambda i, x: x + i, 0.0) == 3.0


def test_fori_loop_carry_dtype_change():
    with pytest.raises(TypeError, match=r"input carry\[1\] has type float64\[2\]"
                                        r".*output carry\[1\] has type float32\[2\]"
                                        r".*dtypes do not match"):
        lax.fori_loop(0, 3, lambda i, c: (c[0], c[1].astype(np.float32)),
                      (0.0, np.zeros(2)))


def test_fori_loop_carry_shape_change():
    with pytest.raises(TypeError, match=r"float64\[2\].*float64\[4\].*shapes do "
                                        r"not match"):
        lax.fori_loop(0, 3, lambda i, x: np.concatenate([x, x]), np.ones(2))


def test_fori_loop_carry_structure_change():
    with pytest.raises(TypeError, match=r"pytree structure.*list of length 1.*"
                                        r"tuple of length 1"):
        lax.fori_loop(0, 3, lambda i, x: (x[0],), [np.ones(2)])


def test_fori_loop_bad_bounds():
    with pytest.raises(TypeError, match="must have equal types, got int32 and int16"):
        lax.fori_loop(np.int32(0), np.int16(3), lambda i, x: x, 0)
    with pytest.raises(TypeError, match="must be a scalar"):
        lax.fori_loop(0, np.arange(3), lambda i, x: x, 0)


# ---------------------------------------------------------------------------
# while_loop
# ---------------------------------------------------------------------------

def test_while_loop_counting():
    assert lax.while_loop(lambda x: x < 10, lambda x: x + 1, 0) == 10


def test_while_loop_newton_sqrt_with_tolerance():
    def body(c):
        x, n = c
        return 0.5 * (x + 2.0 / x), n + 1

    x, n = lax.while_loop(lambda c: abs(c[0] * c[0] - 2.0) > 1e-12, body, (1.0, 0))
    assert abs(x - np.sqrt(2.0)) < 1e-12 and 0 < n < 10


def test_while_loop_zero_iterations_and_bool_kinds():
    init = np.zeros(3)
    out = lax.while_loop(lambda x: False, lambda x: x + 1, init)
    np.testing.assert_array_equal(out, init)
    assert out is not init                  # a copy (see the fori_loop test above)
    out = lax.while_loop(lambda x: np.all(x < 3), lambda x: x + 1, np.zeros(2))
    np.testing.assert_array_equal(out, [3.0, 3.0])
    assert lax.while_loop(lambda x: np.array(x < 2), lambda x: x + 1, 0) == 2


def test_while_loop_weak_int_promotes_like_jax():
    assert lax.while_loop(lambda x: x < 3, lambda x: x + 1.5, 0) == 3.0


@pytest.mark.parametrize("cond_fun, got", [
    (lambda x: 1, r"int64\[\] \(a Python int\)"),
    (lambda x: np.ones(2) > 0, r"bool\[2\]"),
    (lambda x: np.float64(1.0), r"float64\[\]"),
])
def test_while_loop_cond_must_be_boolean_scalar(cond_fun, got):
    with pytest.raises(TypeError, match="cond_fun must return a boolean scalar, "
                                        "but got " + got):
        lax.while_loop(cond_fun, lambda x: x, 0)


def test_while_loop_body_dtype_change():
    with pytest.raises(TypeError, match=r"while_loop body_fun.*int32\[\].*"
                                        r"float32\[\].*dtypes do not match"):
        lax.while_loop(lambda x: x < 3,
                       lambda x: (x + 1.5).astype(np.float32), np.int32(0))


def test_while_loop_body_structure_change():
    with pytest.raises(TypeError, match=r"tuple of length 2.*tuple of length 3.*"
                                        r"lengths do not match"):
        lax.while_loop(lambda c: c[0] < 10, lambda c: (c[0] + 1, c[1], 3), (0, 1.0))


# ---------------------------------------------------------------------------
# scan
# ---------------------------------------------------------------------------

def _cumsum_step(c, x):
    return c + x, c + x


def test_scan_cumulative_sum():
    carry, ys = lax.scan(_cumsum_step, 0.0, np.arange(5.0))
    assert carry == 10.0
    np.testing.assert_array_equal(ys, [0.0, 1.0, 3.0, 6.0, 10.0])


def test_scan_reverse_keeps_ys_aligned_with_xs():
    carry, ys = lax.scan(_cumsum_step, 0.0, np.arange(5.0), reverse=True)
    assert carry == 10.0
    np.testing.assert_array_equal(ys, [10.0, 10.0, 9.0, 7.0, 4.0])


def test_scan_without_xs_needs_length():
    carry, ys = lax.scan(lambda c, x: (c + 1, x), 0, None, length=3)
    assert carry == 3 and ys is None
    carry, ys = lax.scan(lambda c, x: (c + 1, c), 0, length=3)
    np.testing.assert_array_equal(ys, [0, 1, 2])


def test_scan_pytrees_in_and_out():
    xs = {"a": np.arange(3.0), "b": np.ones((3, 2))}

    def step(c, x):
        c = Point(c.x + x["a"], c.y + x["b"])
        return c, {"p": x["a"], "q": (x["b"] * 2, None)}

    carry, ys = lax.scan(step, Point(0.0, np.zeros(2)), xs)
    assert isinstance(carry, Point) and carry.x == 3.0
    np.testing.assert_array_equal(carry.y, [3.0, 3.0])
    np.testing.assert_array_equal(ys["p"], [0.0, 1.0, 2.0])
    assert ys["q"][0].shape == (3, 2) and ys["q"][1] is None


def test_scan_rnn_matches_python_loop():
    rng = np.random.default_rng(0)
    W, xs, h0 = rng.normal(size=(4, 4)), rng.normal(size=(6, 4)), np.zeros(4)
    carry, hs = lax.scan(lambda h, x: (np.tanh(W @ h + x),) * 2, h0, xs)
    h, expected = h0, []
    for x in xs:
        h = np.tanh(W @ h + x)
        expected.append(h)
    np.testing.assert_allclose(hs, np.stack(expected))
    np.testing.assert_allclose(carry, h)


def test_scan_length_zero_traces_body_once_for_types():
    carry, ys = lax.scan(lambda c, x: (c + x.sum(), x * 2), 0.0, np.ones((0, 4)))
    assert carry == 0.0
    assert ys.shape == (0, 4) and ys.dtype == np.float64


def test_scan_ignores_unroll():
    _, ys = lax.scan(_cumsum_step, 0.0, np.ones(3), unroll=2)
    np.testing.assert_array_equal(ys, [1.0, 2.0, 3.0])


@pytest.mark.parametrize("kwargs, message", [
    (dict(xs=np.ones(4), length=3), r"`length` argument of 3 which disagrees with "
                                     r"leading axis sizes \[4\]"),
    (dict(xs=(np.ones(4), np.ones(3))), "different leading axis sizes: 4, 3"),
    (dict(xs=None), "no values to scan over and `length` not provided"),
    (dict(xs=1.0), "no leading axis to scan over"),
    (dict(xs=None, length=-1), "non-negative"),
])
def test_scan_length_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        lax.scan(lambda c, x: (c, x), 0, **kwargs)


def test_scan_body_must_return_pair():
    with pytest.raises(TypeError, match="must be a pair"):
        lax.scan(lambda c, x: c + 1, 0, np.ones(3))
    with pytest.raises(TypeError, match="must be a pair.*length 3"):
        lax.scan(lambda c, x: (c, x, x), 0.0, np.ones(3))


def test_scan_carry_type_change():
    with pytest.raises(TypeError, match=r"scan body function.*int32\[\].*"
                                        r"float32\[\].*dtypes do not match"):
        lax.scan(lambda c, x: (c.astype(np.float32), x), np.int32(0), np.ones(3))
    with pytest.raises(TypeError, match="shapes do not match"):
        lax.scan(lambda c, x: (np.ones(3), x), np.ones(2), np.ones(3))
    # A weak int carry may become float, as in JAX.
    assert lax.scan(lambda c, x: (c + 1.5, x), 0, np.ones(3))[0] == 4.5


def test_scan_ys_must_keep_one_type():
    with pytest.raises(TypeError, match=r"y has type float64\[1\] at the first "
                                        r"step and float64\[2\] at step 1"):
        lax.scan(lambda c, x: (c + 1, x[:c]), 1, np.ones((3, 4)))


# ---------------------------------------------------------------------------
# select, stop_gradient
# ---------------------------------------------------------------------------

def test_select():
    out = lax.select(np.array([True, False]), np.ones(2), np.zeros(2))
    np.testing.assert_array_equal(out, [1.0, 0.0])
    np.testing.assert_array_equal(lax.select(True, np.ones(2), np.zeros(2)), [1, 1])
    assert lax.select(False, 1.0, np.float32(2.0)) == 2.0


@pytest.mark.parametrize("args, message", [
    ((True, np.ones(2), np.zeros(2, np.int32)), "same dtypes"),
    ((True, 1, 2.0), "same dtypes"),
    ((True, np.ones(2), np.zeros(3)), "same shapes"),
    ((np.array([True, False, True]), np.ones(2), np.zeros(2)), "scalar or have the same shape"),
    ((np.array([0.5, 1.0]), np.ones(2), np.zeros(2)), "must be boolean"),
])
def test_select_is_strict(args, message):
    with pytest.raises(TypeError, match=message):
        lax.select(*args)


def test_stop_gradient_is_identity_on_values():
    a = np.arange(3.0)
    assert lax.stop_gradient(a) is a
    tree = {"w": [a, 2.0], "p": Point(1, None)}
    out = lax.stop_gradient(tree)
    assert out is not tree and out["w"][0] is a and isinstance(out["p"], Point)


# ---------------------------------------------------------------------------
# collectives
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda: lax.psum(1.0, "i"),
    lambda: lax.pmean(np.ones(2), "i"),
    lambda: lax.pmax(1.0, "i"),
    lambda: lax.pmin(1.0, "i"),
    lambda: lax.all_gather(np.ones(2), "i"),
    lambda: lax.axis_index("i"),
    lambda: lax.psum(1.0, ("i", "j")),
])
def test_collectives_outside_pmap_raise_name_error(call):
    with pytest.raises(NameError, match="unbound axis name: i"):
        call()


def test_collectives_dispatch_to_bound_axis():
    calls = []

    def handler(op, x, axis_name, **params):
        calls.append((op, axis_name))
        return x * 4 if op == "psum" else 0

    with lax._bind_axis("batch", handler):
        assert lax.psum(2.0, "batch") == 8.0
        assert lax.axis_index("batch") == 0
        with pytest.raises(NameError, match="unbound axis name: other"):
            lax.pmean(1.0, "other")
    assert calls == [("psum", "batch"), ("axis_index", "batch")]
    with pytest.raises(NameError):
        lax.psum(1.0, "batch")
