"""Forward-mode (jvp) rules, checked against central differences along the
tangent in float64: ``(f(x + eps t) - f(x - eps t)) / (2 eps)``.

Every primitive with a reverse rule has a forward rule (checked from the
registries); every rule is exercised here on several shapes, broadcast
pairs and size-1 axes, with every argument differentiated and with one
argument held constant (so terms of arguments without a tangent drop out),
and ``tx.jvp``'s primal output must equal ``f(x)``.  The function lists are
the reverse-rule tests' own (``tests/test_rules_*.py``), applied without the
weighted sum: jvp sees the op's whole (non-scalar) result.

The last test runs forward mode over the foundation and control-flow
corpora: ``tx.jvp`` along a random tangent equals ``<tx.grad(f)(x), t>``.

A failing case is a bug in tangent_x (or a missing rule): fix the library,
never weaken or skip the case.
"""
import copy
import linecache
import os
import sys

import numpy as np
import pytest

import tangent_x as tx
from tangent_x import rules, tree_util
from tangent_x.api.transformed import cached

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # _fd, corpora, rule tests

import test_rules_linalg as L  # noqa: E402
import test_rules_math as M  # noqa: E402
import test_rules_reductions as R  # noqa: E402
import test_rules_shapes as S  # noqa: E402
from _fd import _leaves, assert_tree_equal  # noqa: E402

RNG = np.random.RandomState(7)
EPS = 1e-6


def rand(*shape):
    return RNG.randn(*shape)


def tangent_like(x):
    """A random tangent with the structure and shapes of ``x``."""
    if isinstance(x, float):
        return float(RNG.randn())
    if isinstance(x, np.ndarray) and np.issubdtype(x.dtype, np.floating):
        return np.asarray(RNG.randn(*x.shape), dtype=x.dtype)
    if isinstance(x, (list, tuple)) and not hasattr(x, "_fields"):
        return type(x)(tangent_like(v) for v in x)
    raise TypeError(f"no tangent for {type(x).__name__}")


def _move(args, tangents, step):
    return [a + step * t for a, t in zip(args, tangents)]


def _combine(plus, minus):
    if isinstance(plus, tuple):
        return tuple(_combine(p, m) for p, m in zip(plus, minus))
    if isinstance(plus, list):
        return [_combine(p, m) for p, m in zip(plus, minus)]
    return (np.asarray(plus, dtype=np.float64) - np.asarray(minus, dtype=np.float64)) / (2 * EPS)


def fd_jvp(f, args, tangents):
    """Central differences of ``f`` at ``args`` along ``tangents``."""
    plus = f(*_move(copy.deepcopy(args), tangents, EPS))
    minus = f(*_move(copy.deepcopy(args), tangents, -EPS))
    return _combine(plus, minus)


def assert_close(got, want, rtol, atol, what):
    if isinstance(want, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(want), what
        for g, w in zip(got, want):
            assert_close(g, w, rtol, atol, what)
        return
    assert np.shape(got) == np.shape(want), f"{what}: shape {np.shape(got)} != {np.shape(want)}"
    np.testing.assert_allclose(np.asarray(got, dtype=np.float64), want, rtol=rtol, atol=atol,
                               err_msg=what)


def check(f, *args, rtol=1e-5, atol=1e-7, tangents=None):
    """jvp of ``f`` at ``args`` (each differentiated) along random tangents:
    the primal equals ``f(*args)``, the tangent equals central differences."""
    args = tuple(args)
    tangents = tuple(tangent_like(a) for a in args) if tangents is None else tuple(tangents)
    before = copy.deepcopy(args)
    out, out_dot = tx.jvp(f, args, tangents)
    assert_tree_equal(args, before, "jvp mutated its arguments")
    assert_close(out, f(*copy.deepcopy(args)), 1e-12, 1e-12, "primal output")
    assert_close(out_dot, fd_jvp(f, args, tangents), rtol, atol, "tangent output")
    return out_dot


def check_each(op, *arrays, **tol):
    """jvp of ``op`` w.r.t. all its arguments, then w.r.t. each alone (the
    others held constant, so only that argument's term of the rule remains)."""
    check(op, *arrays, **tol)
    if len(arrays) == 2:
        a, b = arrays
        check(lambda a: op(a, b), a, **tol)
        check(lambda b: op(a, b), b, **tol)
    elif len(arrays) == 3:
        a, b, c = arrays
        check(lambda a: op(a, b, c), a, **tol)
        check(lambda b: op(a, b, c), b, **tol)
        check(lambda c: op(a, b, c), c, **tol)


# ---------------------------------------------------------------------------
# Coverage: a forward rule for every primitive with a reverse rule
# ---------------------------------------------------------------------------

def test_every_reverse_rule_has_a_forward_rule():
    rules.load_all()
    assert sorted(set(rules.ADJOINT) - set(rules.TANGENT)) == []


# ---------------------------------------------------------------------------
# Operators and elementwise math
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(), (5,), (3, 4), (2, 1, 3)])
@pytest.mark.parametrize("name,op,make", M.UNARY, ids=[u[0] for u in M.UNARY])
def test_unary(name, op, make, shape):
    check(op, np.asarray(make(*shape), dtype=np.float64))


@pytest.mark.parametrize("name,op,make", M.UNARY, ids=[u[0] for u in M.UNARY])
def test_unary_python_float(name, op, make):
    if name == "clip-method":
        return                      # a Python float has no .clip method
    check(op, float(make()))


@pytest.mark.parametrize("shapes", M.PAIRS, ids=[str(p) for p in M.PAIRS])
@pytest.mark.parametrize("name,op,make_a,make_b", M.BINARY, ids=[b[0] for b in M.BINARY])
def test_binary(name, op, make_a, make_b, shapes):
    a, b = np.asarray(make_a(*shapes[0])), np.asarray(make_b(*shapes[1]))
    if name == "mod":
        a = a + 0.3 * (np.abs(a % b - b / 2) < 0.05)    # away from the jumps
    check_each(op, a, b)


def test_binary_python_floats():
    check(lambda x, y: x * y + x / y - x ** y + np.arctan2(x, y), 1.3, 0.7)
    check(lambda x, y: np.hypot(x, y) + np.logaddexp(x, y) + np.maximum(x, y), 1.3, -0.4)


def test_clip_bounds_take_their_tangents():
    x = np.array([-2.0, -0.2, 0.3, 2.0])
    lo, hi = -np.ones(4), np.ones(4)
    t = np.array([1.0, 2.0, 3.0, 4.0])
    f = lambda x, lo, hi: np.clip(x, lo, hi)                  # noqa: E731
    _, dot = tx.jvp(f, (x, lo, hi), (t, 10 * t, 100 * t))
    np.testing.assert_allclose(dot, [10.0, 2.0, 3.0, 400.0])
    _, dot = tx.jvp(lambda x, lo: np.clip(x, min=lo), (x, lo), (t, 10 * t))
    np.testing.assert_allclose(dot, [10.0, 2.0, 3.0, 4.0])
    check(lambda x, lo: np.clip(x, lo, 0.5) ** 2, rand(3, 4), -0.25)
    lo, hi = -0.1 - np.abs(rand(4)), 0.1 + np.abs(rand(3, 1))
    check(lambda x, lo, hi: np.clip(x, lo, hi), rand(3, 4), lo, hi)


def test_maximum_minimum_ties_split():
    x, y = np.array([1.0, 2.0, 3.0]), np.array([1.0, 1.0, 4.0])
    tx_, ty = np.array([2.0, 2.0, 2.0]), np.array([4.0, 4.0, 4.0])
    _, dot = tx.jvp(lambda x, y: np.maximum(x, y), (x, y), (tx_, ty))
    np.testing.assert_allclose(dot, [3.0, 2.0, 4.0])
    _, dot = tx.jvp(lambda x, y: np.minimum(x, y), (x, y), (tx_, ty))
    np.testing.assert_allclose(dot, [3.0, 4.0, 2.0])


def test_where_broadcast_condition():
    x, y = rand(3, 1), rand(4)
    c = rand(3, 4) > 0
    check_each(lambda x, y: np.where(c, x, y), x, y)
    check(lambda x: np.where(c, x, 0.0), x)
    check(lambda x: np.where(c, 1.0, x), x)


def test_pow_edge_cases():
    x = np.array([-2.0, -0.5, 0.7, 1.5])
    check(lambda x: x ** 3, x)
    check(lambda x: np.power(x, 2), x)
    check(lambda x: x ** 2.5, 1.3)


def test_linear_elementwise_ops():
    x = rand(3, 4)
    check(lambda x: np.real(x) + np.conj(x), x)
    check(lambda x: np.copy(x) * np.asarray(x) + np.array(x), x)
    check(lambda x: np.asarray(x, dtype=np.float64), x)
    check(lambda x: float(x) * 2.0, 0.3)
    check(lambda x: np.array([x, x * 2.0, 1.0]), 0.3)
    check(lambda x: np.array([x, np.sin(x)]), rand(3))


def test_full_and_full_like():
    x = rand(3, 4)
    check(lambda v: np.full((2, 3), v), 0.7)
    check(lambda v: np.full(3, v) * np.arange(3.0), rand(3))
    check(lambda v: np.full_like(x, v), 0.7)
    check(lambda x, v: np.full_like(x, v) * x, x, 0.7)
    check(lambda x: np.full_like(x, 2.0) * x, x)      # a constant fill: no tangent from it


def test_matmul_operator():
    check_each(lambda a, b: np.tanh(a @ b), rand(2, 3), rand(3, 4))
    check_each(lambda a, b: a @ b, rand(3), rand(3, 4))
    check_each(lambda a, b: a @ b, rand(2, 2, 3), rand(3))


# ---------------------------------------------------------------------------
# Reductions
# ---------------------------------------------------------------------------

NUMPY = R.NUMPY          # name -> np.sum, np.mean, ...


def reduction(name, axis, keepdims):
    """``lambda x: np.<name>(x, axis=axis, keepdims=keepdims)`` (``fn`` is
    resolved to its NumPy function, so it is the same primitive)."""
    fn = NUMPY[name]

    def reduce(x):
        return fn(x, axis=axis, keepdims=keepdims)
    return reduce


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("shape,axis", R.AXES)
@pytest.mark.parametrize("op", sorted(NUMPY))
def test_reduction(op, shape, axis, keepdims):
    x = rand(*shape)
    if op == "std" and np.size(x) == np.size(np.std(x, axis=axis)):
        with np.errstate(invalid="ignore", divide="ignore"):   # std over size-1 axes
            _, dot = tx.jvp(reduction(op, axis, keepdims), (x,), (rand(*shape),))
        assert np.all(np.isnan(dot))           # is sqrt(0): no derivative (nan, as JAX)
        return
    check(reduction(op, axis, keepdims), x)


def test_reduction_axis_passed_as_data():
    x = rand(3, 4)
    check(lambda x: np.sum(x, 1) + np.mean(x, -1) + np.max(x, 1, None, True)[:, 0], x)
    check(lambda x: np.sum(x, 0, None, None, True), x)


@pytest.mark.parametrize("ddof", [0, 1])
@pytest.mark.parametrize("shape,axis", [((6,), None), ((3, 4), 0), ((3, 4), -1),
                                        ((2, 3, 4), (0, 2))])
def test_var_std_ddof(shape, axis, ddof):
    x = rand(*shape)
    check(lambda x: np.var(x, axis=axis, ddof=ddof), x)
    check(lambda x: np.std(x, axis=axis, ddof=ddof), x)


@pytest.mark.parametrize("shape", [(3, 4), (2, 5), (1, 3)])
@pytest.mark.parametrize("k", range(len(R.LITERAL)))
def test_literal_forms(k, shape):
    x = rand(*shape)
    if shape == (1, 3) and k == 13:         # var with ddof=1 over one row divides by 0
        x = rand(2, 3)
    check(R.LITERAL[k], x)


def test_sum_of_broadcast_operands():
    x, y = rand(3, 1), rand(4)
    check_each(lambda x, y: np.sum(x * y, axis=0) ** 2, x, y)


def test_sum_initial_offsets_only_the_value():
    x = rand(3, 4)
    check(lambda x: np.sum(x ** 2, initial=1.0), x)
    check(lambda x: np.sum(x, 1, None, None, False, 2.0), x)


@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1)])
@pytest.mark.parametrize("zeros", [1, 2])
def test_prod_with_zeros(zeros, axis):
    x = rand(3, 4)
    x[0, :zeros] = 0.0
    dot = check(lambda x: np.prod(x, axis=axis), x)
    assert np.all(np.isfinite(dot))


def test_max_min_ties_share():
    x = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]])
    t = np.array([[5.0, 1.0, 3.0], [1.0, 2.0, 6.0]])
    _, dot = tx.jvp(lambda x: np.max(x, axis=1), (x,), (t,))
    np.testing.assert_allclose(dot, [2.0, 3.0])
    _, dot = tx.jvp(lambda x: np.min(x), (np.array([1.0, -1.0, -1.0, 4.0]),),
                    (np.array([1.0, 2.0, 4.0, 8.0]),))
    np.testing.assert_allclose(dot, 3.0)


@pytest.mark.parametrize("shape,axis", [((5,), None), ((5,), 0), ((3, 4), None),
                                        ((3, 4), 0), ((3, 4), 1), ((3, 4), -1),
                                        ((2, 1, 3), -2)])
def test_cumsum(shape, axis):
    check(lambda x: np.cumsum(x, axis=axis), rand(*shape))
    check(lambda x: np.cumsum(x, axis), rand(*shape))


def test_cumsum_literal_forms():
    x = rand(3, 4)
    check(lambda x: np.cumsum(x, axis=1), x)
    check(lambda x: x.cumsum(0), x)
    check(lambda x: np.cumsum(x) ** 2, x)


def test_refused_forms_are_refused_in_forward_mode_too():
    x = rand(3, 4)
    with pytest.raises(tx.TransformError, match="initial="):
        tx.jvp(lambda x: np.max(x, initial=0.0), (x,), (x,))
    with pytest.raises(tx.TransformError, match="where="):
        tx.jvp(lambda x: np.sum(x, where=x > 0), (x,), (x,))
    with pytest.raises(tx.TransformError, match="correction="):
        tx.jvp(lambda x: np.var(x, correction=1), (x,), (x,))


def test_generated_tangent_code_reads_like_the_math():
    src = tx.source(cached(lambda x: np.sum(np.sin(x), axis=1), "jvp", (0,),
                                   lambda out, a: out))
    assert "np.cos(x)" in src and "np.sum(" in src and "zeros_like" not in src
    src = tx.source(cached(lambda x: np.reshape(x, (4, 3)), "jvp", (0,),
                                   lambda out, a: out))
    assert "np.reshape(x_dot, " in src and "zeros_like" not in src


# ---------------------------------------------------------------------------
# Shape ops
# ---------------------------------------------------------------------------

_ONE_OPERAND = {name for name, op, shapes in S.CASES if op.__code__.co_argcount == 1}


@pytest.mark.parametrize("name,op,shapes", S.CASES, ids=[c[0] for c in S.CASES])
def test_shape_op(name, op, shapes):
    if name in _ONE_OPERAND:
        for shape in shapes:              # one operand, several shapes
            check(op, rand(*shape))
    else:
        check_each(op, *[rand(*s) for s in shapes])


@pytest.mark.parametrize("shapes", [[(2, 3), (4, 3)], [(1, 2), (3, 2)]])
def test_concatenate_more_shapes(shapes):
    check_each(lambda a, b: np.concatenate([a, b]), *[rand(*s) for s in shapes])
    check_each(lambda a, b: np.vstack([a, b]), *[rand(*s) for s in shapes])


@pytest.mark.parametrize("shape", [(3,), (2, 3), (2, 1, 3)])
def test_stack_shapes(shape):
    check_each(lambda a, b: np.stack([a, b], axis=-1), rand(*shape), rand(*shape))
    check_each(lambda a, b: np.hstack([a, b]), rand(*shape), rand(*shape))


def test_sequence_with_computed_and_constant_items():
    x = rand(3)
    c = rand(3)
    check(lambda x: np.stack([np.sin(x), x * x, c]), x)
    check(lambda x: np.concatenate([c, np.sin(x), x * x]), x)


def test_axis_passed_as_data():
    a = rand(2, 3)
    axis, axes, reps = 0, (1, 0), (1, 2)
    check(lambda a, b: np.concatenate([a, b], axis), a, rand(2, 3))
    check(lambda a: np.transpose(a, axes), a)
    check(lambda a: np.tile(a, reps), a)
    check(lambda a: np.repeat(a, 2, None), a)


def test_broadcast_to_from_operand():
    b = rand(2, 3, 4)
    check(lambda a: np.broadcast_to(a, np.shape(b)) * b, rand(3, 1))


# ---------------------------------------------------------------------------
# Products and linear algebra
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("name,op,shape_pairs", L.BINARY, ids=[c[0] for c in L.BINARY])
def test_products(name, op, shape_pairs):
    for shapes in shape_pairs:
        check_each(op, *[rand(*s) for s in shapes])


def test_same_operand_twice():
    x = rand(3, 3)
    check(lambda x: np.dot(x, x), x)
    check(lambda x: np.einsum("ij,jk->ik", x, x), x)
    check(lambda x: np.tensordot(x, x, 1) + np.inner(x, x) + np.outer(x, x)[:3, :3], x)


@pytest.mark.parametrize("spec,shapes", L.EINSUM, ids=[e[0] for e in L.EINSUM])
def test_einsum(spec, shapes):
    arrays = [rand(*s) for s in shapes]
    check_each(L.einsum_of(spec, len(arrays)), *arrays)


@pytest.mark.parametrize("name,op,shapes", L.TRACE, ids=[c[0] for c in L.TRACE])
def test_trace(name, op, shapes):
    for shape in shapes:
        check(op, rand(*shape))


@pytest.mark.parametrize("a_shape,b_shape", [((3, 3), (3,)), ((3, 3), (3, 2)),
                                             ((4, 3, 3), (4, 3, 2)), ((2, 3, 3), (3,)),
                                             ((1, 1), (1,)), ((3, 3), (2, 3, 2))])
def test_solve(a_shape, b_shape):
    check_each(lambda a, b: np.linalg.solve(a, b), L.well_conditioned(*a_shape),
               rand(*b_shape), atol=1e-6)


@pytest.mark.parametrize("shape", [(3, 3), (1, 1), (2, 4, 4)])
def test_inv_det(shape):
    check(lambda a: np.linalg.inv(a), L.well_conditioned(*shape), atol=1e-6)
    check(lambda a: np.linalg.det(a), L.well_conditioned(*shape), atol=1e-6)


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4)])
def test_slogdet(shape):
    a = L.well_conditioned(*shape)
    a[..., 0, :] *= -1.0                 # a negative determinant too
    check(lambda a: np.linalg.slogdet(a)[1], a)
    check(lambda a: np.linalg.slogdet(a), a)
    check(lambda a: np.linalg.slogdet(a).logabsdet * np.linalg.slogdet(a).sign, a)

    def unpacked(a):
        sign, logdet = np.linalg.slogdet(a)
        return sign * logdet
    check(unpacked, a)


@pytest.mark.parametrize("name,op,shapes", L.NORMS, ids=[c[0] for c in L.NORMS])
def test_norm(name, op, shapes):
    for shape in shapes:
        check(op, rand(*shape), atol=1e-6)


def test_norm_ord_as_data():
    x = rand(3, 4)
    for ord_ in (None, "nuc", 1, np.inf):
        check(lambda x: np.linalg.norm(x, ord_), x, atol=1e-6)


# ---------------------------------------------------------------------------
# The runtime helpers that reverse rules emit (for forward-over-reverse)
# ---------------------------------------------------------------------------

def test_shape_helpers():
    from tangent_x.runtime import (dense, unbroadcast, unconcatenate, undiagonal, unhstack,
                                   unreduce, unrepeat, unstack, untile)
    x = rand(3, 4)
    parts = [rand(2, 3), rand(1, 3)]
    cases = [
        (lambda g: unreduce(g, x, axis=1), rand(3)),
        (lambda g: unreduce(g, x, axis=(0, 1), keepdims=True), rand(1, 1)),
        (lambda g: unreduce(g, x), rand()),
        (lambda g: unbroadcast(g, x[:, :1]), rand(3, 4)),
        (lambda g: unbroadcast(g, x), rand(2, 3, 4)),
        (lambda g: unstack(g, axis=1)[1], rand(3, 2)),
        (lambda g: unstack(g), rand(2, 3)),
        (lambda g: untile(g, x, (2, 1)), rand(6, 4)),
        (lambda g: unrepeat(g, x, 2, axis=0), rand(6, 4)),
        (lambda g: unrepeat(g, x, 3), rand(36)),
        (lambda g: undiagonal(g, x, 1), rand(3)),
        (lambda g: unconcatenate(g, parts), rand(3, 3)),
        (lambda g: unhstack(g, [x, x[:, :1]]), rand(3, 5)),
        (lambda g: dense([g, None], [x, x]), rand(3, 4)),
    ]
    for f, g in cases:
        check(f, g)


def test_structural_helpers():
    from tangent_x.runtime import (add_at, appended, cotangent_item, index_zero, scan_slice,
                                   scan_unslice, stack_steps, tree_add, unindex,
                                   unstack_steps, with_item)
    x = rand(4, 3)
    check(lambda g: unindex(x, (slice(1, 3), 0), g), rand(2))
    check(lambda g: unindex(x, np.array([0, 2, 0]), g), rand(3, 3))
    check(lambda g: unindex([x, x], 1, g)[1], rand(4, 3))
    check(lambda g: index_zero(g, 1), rand(4, 3))
    check_each(lambda a, b: tree_add(a, b), rand(4, 3), rand(4, 3))
    check(lambda a, b: tree_add([a, None], [b, a]), rand(3), rand(3))
    check(lambda g: cotangent_item(g, 0, x) + cotangent_item([None, g], 0, x), rand(4, 3))
    check(lambda xs: scan_slice(xs, 2), rand(4, 3))
    check(lambda xs, g: scan_unslice(xs, 1, g), rand(4, 3), rand(3))
    check_each(lambda a, b: stack_steps(appended([a], b)), rand(3), rand(3))
    check(lambda a, b: stack_steps(appended([a, b], b), True), rand(3), rand(3))
    check(lambda g: unstack_steps(g, [x, x], True)[0], rand(2, 4, 3))
    check_each(lambda a, v: with_item([a, a * a], 0, v)[0] * with_item([a, v], 0, a)[1],
               rand(3), rand(3))

    def accumulate(acc0, g):
        acc = np.copy(acc0)            # add_at updates accumulators code owns
        acc = add_at(acc, 1, g)
        acc = add_at(acc, (slice(0, 2), 0), g[0])
        return acc
    check_each(accumulate, rand(4, 3), rand(3))
    check(lambda g: add_at(np.zeros((4, 3)), np.array([0, 2, 0]), g), rand(3, 3))

    def accumulate_in_loop(g, h):
        acc = np.zeros((4, 3))         # as loop adjoints allocate their accumulators
        for i in range(3):
            acc = add_at(acc, i + 1, g[i] * h)
        return acc * 2.0
    check_each(accumulate_in_loop, rand(3, 3), rand(3))


def test_product_helpers():
    from tangent_x.runtime import (dot_adjoint_lhs, dot_adjoint_rhs, einsum_adjoint,
                                   inner_adjoint_lhs, inner_adjoint_rhs, matmul_adjoint_lhs,
                                   matmul_adjoint_rhs, tensordot_adjoint_lhs,
                                   tensordot_adjoint_rhs)
    a, b = rand(2, 3), rand(3, 4)
    a3, b3 = rand(5, 2, 3), rand(3,)
    t1, t2 = rand(2, 3, 4), rand(4, 3, 5)
    cases = [
        (lambda g, b, a: dot_adjoint_lhs(g, a, b), rand(2, 4), b, a),
        (lambda g, a, b: dot_adjoint_rhs(g, a, b), rand(2, 4), a, b),
        (lambda g, b, a: dot_adjoint_lhs(g, a, b), rand(3, 4), b, 2.0),
        (lambda g, b, a: inner_adjoint_lhs(g, a, b), rand(2, 4), rand(4, 3), a),
        (lambda g, a, b: inner_adjoint_rhs(g, a, b), rand(2, 3), a, b[:, :3].T),
        (lambda g, b, a: tensordot_adjoint_lhs(g, a, b, axes=([1, 2], [1, 0])),
         rand(2, 5), t2, t1),
        (lambda g, a, b: tensordot_adjoint_rhs(g, a, b, axes=([1, 2], [1, 0])),
         rand(2, 5), t1, t2),
        (lambda g, b, a: matmul_adjoint_lhs(g, a, b), rand(5, 2), b3, a3),
        (lambda g, a, b: matmul_adjoint_rhs(g, a, b), rand(5, 2), a3, b3),
        (lambda g, b, a: matmul_adjoint_lhs(g, a, b), rand(2, 4), b, a),
        (lambda g, a, b: einsum_adjoint(g, "ij,jk->ik", 1, a, b), rand(2, 4), a, b),
        (lambda g, b, a: einsum_adjoint(g, "ij,jk->ik", 0, a, b), rand(2, 4), b, a),
        (lambda g, b, a: einsum_adjoint(g, "ii->i", 0, a), rand(3), None, rand(3, 3)),
    ]
    for f, g, other, fixed in cases:
        if other is None:
            check(lambda g: f(g, None, fixed), g)
        else:
            check_each(lambda g, other: f(g, other, fixed), g, other)


def test_solve_helpers():
    from tangent_x.runtime import solve_adjoint_lhs, solve_matvec, solve_transposed
    for a_shape, b_shape in [((3, 3), (3,)), ((3, 3), (3, 2)), ((2, 3, 3), (3,)),
                             ((4, 3, 3), (4, 3, 2))]:
        a, b = L.well_conditioned(*a_shape), rand(*b_shape)
        x = np.linalg.solve(a, b)
        check_each(lambda m, x: solve_matvec(m, x, a, b), rand(*a_shape), rand(*x.shape))
        check_each(lambda a, g: solve_transposed(a, g, b), a, rand(*x.shape), atol=1e-6)
        check_each(lambda y, x: solve_adjoint_lhs(y, a, b, x), rand(*x.shape), x)


def test_solve_matvec_reverse_rule():
    from tangent_x.runtime import solve_matvec
    for a_shape, b_shape in [((3, 3), (3,)), ((2, 3, 3), (3,)), ((4, 3, 3), (4, 3, 2))]:
        a, b = L.well_conditioned(*a_shape), rand(*b_shape)
        x = np.linalg.solve(a, b)
        w = rand(*x.shape)
        L.check(lambda m, x, w: np.sum(solve_matvec(m, x, a, b) * w), rand(*a_shape),
                rand(*x.shape), w, argnums=(0, 1))


def test_reverse_rules_of_helpers():
    """The adjoint helpers differentiate again in reverse mode (grad of grad)."""
    from tangent_x.runtime import (dense, einsum_adjoint, item_cotangent, rejoin,
                                   solve_adjoint_lhs, solve_transposed, with_item)
    for a_shape, b_shape in [((3, 3), (3,)), ((3, 3), (3, 2)), ((2, 3, 3), (3,))]:
        a, b = L.well_conditioned(*a_shape), rand(*b_shape)
        x = np.linalg.solve(a, b)
        w, wa = rand(*x.shape), rand(*a_shape)
        L.check(lambda a, g, w: np.sum(solve_transposed(a, g, b) * w), a, rand(*x.shape), w,
                argnums=(0, 1), atol=1e-6)
        L.check(lambda y, x, wa: np.sum(solve_adjoint_lhs(y, a, b, x) * wa), rand(*x.shape),
                x, wa, argnums=(0, 1))
    a, b = rand(2, 3), rand(3, 4)
    for spec in ("ij,jk->ik", "ij,jk->"):
        g = rand(*np.shape(np.einsum(spec, a, b)))
        wa, wb = rand(2, 3), rand(3, 4)
        L.check(lambda g, b, wa: np.sum(einsum_adjoint(g, spec, 0, a, b) * wa), g, b, wa,
                argnums=(0, 1))
        L.check(lambda g, a, wb: np.sum(einsum_adjoint(g, spec, 1, a, b) * wb), g, a, wb,
                argnums=(0, 1))
    L.check(lambda g, w: np.sum(einsum_adjoint(g, "ii->i", 0, w) * w), rand(3), rand(3, 3))
    x = rand(4, 3)
    parts = [rand(2, 3), rand(1, 3)]
    L.check(lambda c0, c1, g: np.sum(rejoin([c0, c1], g, parts) ** 2), rand(2, 3), rand(1, 3),
            rand(3, 3), argnums=(0, 1))
    L.check(lambda g: np.sum(item_cotangent([x, None], 1, g)[1] ** 2), rand(4, 3))
    L.check(lambda g: np.sum(dense([g, None], [x, x])[0] ** 2), rand(4, 3))
    L.check(lambda a, v: np.sum(with_item([a, a], 1, v)[1] * with_item({"a": a}, "a", v)["a"]
                                + with_item([a, v], 0, v)[1] * a), rand(3), rand(3),
            argnums=(0, 1))


def test_prod_others_and_its_derivatives():
    from tangent_x.runtime import prod_others
    for shape, axis in [((5,), None), ((3, 4), 1), ((3, 4), (0, 1)), ((2, 3, 2), 0)]:
        a = rand(*shape)
        a[0] = 0.0                      # zeros are exact (no division)
        check_each(lambda a, t: prod_others(a, t, axis=axis), a, rand(*shape))
        check_each(lambda a, t, u: prod_others(a, t, u, axis=axis), a, rand(*shape),
                   rand(*shape))
        w = rand(*shape)
        L.check(lambda a, t, w: np.sum(prod_others(a, t, axis=axis) * w), a, rand(*shape),
                w, argnums=(0, 1))
        L.check(lambda a, w: np.sum(prod_others(a, axis=axis) * w), a, w)


# ---------------------------------------------------------------------------
# Forward over reverse: jvp of grad runs the helpers' forward rules
# ---------------------------------------------------------------------------

def _hvp_prod_max(x):
    return np.sum(np.tanh(x) ** 2) + np.max(x) * np.prod(x) + np.sum(np.prod(x.reshape(3, 4), 1))


def _hvp_shapes(x):
    a = np.reshape(x, (3, 4))
    return np.sum(a.T @ np.sin(a)) + np.var(x) + np.std(x) + np.linalg.norm(a) \
        + np.sum(np.cumsum(a, axis=1) ** 2) + np.sum(np.concatenate([a, a * a]) ** 3)


def _hvp_products(x):
    a = np.reshape(x, (2, 6))
    return np.sum(np.einsum("ij,kj->ik", a, a) ** 2) + np.sum(np.dot(a, a.T) ** 2) \
        + np.sum(np.tensordot(a, a, ([1], [1])) ** 2) + np.sum(np.inner(a, a) * np.outer(a, a)[:2, :2])


def _hvp_loop(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + np.sin(x[i]) * x[i - 1]
    return s


def _hvp_linalg(x):
    a = np.reshape(x[:9], (3, 3)) + 3.0 * np.eye(3)
    return np.sum(np.linalg.solve(a, x[9:]) ** 2) + np.linalg.det(a) \
        + np.sum(np.linalg.inv(a) ** 2) + np.linalg.slogdet(a)[1]


def _hvp_updates(x):
    y = x.copy()
    y[2] = y[1] * y[0]
    return np.sum(y ** 2) + np.sum(np.stack([x, y]) ** 3) + np.sum(np.maximum(x, 0.1) ** 2) \
        + np.sum(np.where(x > 0, x ** 3, x)) + np.sum(np.clip(x, -0.5, 0.5) ** 2)


@pytest.mark.parametrize("f", [_hvp_prod_max, _hvp_shapes, _hvp_products, _hvp_loop,
                               _hvp_linalg, _hvp_updates], ids=lambda f: f.__name__)
def test_jvp_of_grad(f):
    x, t = rand(12), rand(12)
    grad = tx.grad(f)
    _, hvp = tx.jvp(grad, (x,), (t,))
    eps = 1e-5
    want = (grad(x + eps * t) - grad(x - eps * t)) / (2 * eps)
    np.testing.assert_allclose(hvp, want, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------------
# The corpora: jvp along a random tangent equals <grad, tangent>
# ---------------------------------------------------------------------------

from corpus import all_cases as _corpus_cases  # noqa: E402
from cf_corpus import all_cases as _cf_cases  # noqa: E402

CORPUS = [("corpus", c) for c in _corpus_cases()] + [("cf", c) for c in _cf_cases()]


def _random_tangent(tree, rng):
    def leaf(x):
        if isinstance(x, float):
            return float(rng.standard_normal())
        return rng.standard_normal(np.shape(x))
    return tree_util.tree_map(leaf, tree)


def _partial(case, i, args, diff):
    """``case.fn`` as a function of the arguments ``diff`` only, the others
    (integers, flags, strings...) bound as constants: written as source, as a
    user would, so tangent_x reads it and transforms ``case.fn`` inside it."""
    names = [f"arg{k}" for k in range(len(args))]
    source = (f"def partial_{case.fn.__name__}({', '.join(names[k] for k in diff)}):\n"
              f"    return fn({', '.join(names)})\n")
    filename = f"<jvp corpus wrapper {case.name} {i}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"fn": case.fn, "np": np}
    namespace.update({names[k]: args[k] for k in range(len(args)) if k not in diff})
    exec(compile(source, filename, "exec"), namespace)
    return namespace[f"partial_{case.fn.__name__}"]


@pytest.mark.parametrize("suite,case", CORPUS, ids=[f"{s}-{c.name}" for s, c in CORPUS])
def test_jvp_matches_grad_on_corpus(suite, case):
    """``tx.jvp`` along a random tangent of the differentiated arguments equals
    ``<tx.grad(f)(x), t>`` (and its primal equals ``f(x)``)."""
    argnums = (case.argnums,) if isinstance(case.argnums, int) else tuple(case.argnums)
    for i in range(len(case.variants)):
        args = case.args(i)
        diff = sorted({k % len(args) for k in argnums})
        f = _partial(case, i, args, diff) if diff != list(range(len(args))) else case.fn
        rng = np.random.default_rng(1000 + i)
        primals = tuple(args[k] for k in diff)
        tangents = tuple(_random_tangent(a, rng) for a in primals)
        before = copy.deepcopy(args)
        out, out_dot = tx.jvp(f, primals, tangents)
        assert_tree_equal(args, before, f"{case.describe(i)}: jvp mutated its arguments")
        expected_out = case.reference(*case.args(i))
        value, value_dot = (out[0], out_dot[0]) if case.has_aux else (out, out_dot)
        expected_value = expected_out[0] if case.has_aux else expected_out
        np.testing.assert_allclose(value, expected_value, rtol=1e-10, atol=1e-12,
                                   err_msg=f"{case.describe(i)}: primal value")
        grads = tx.grad(case.fn, argnums=case.argnums, has_aux=case.has_aux)(*args)
        grads = grads[0] if case.has_aux else grads
        grads = (grads,) if isinstance(case.argnums, int) else grads
        expected = sum(float(np.vdot(np.asarray(g, dtype=np.float64),
                                     np.asarray(t, dtype=np.float64)))
                       for k, grad in zip(argnums, grads)
                       for g, t in zip(_leaves(grad),
                                       _leaves(tangents[diff.index(k % len(args))])))
        assert np.shape(value_dot) == np.shape(value), case.describe(i)
        np.testing.assert_allclose(value_dot, expected, rtol=1e-6, atol=1e-8,
                                   err_msg=f"{case.describe(i)}: jvp != <grad, t>")
