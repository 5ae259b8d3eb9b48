"""Reverse rules of products and linear algebra, checked against central
differences (float64).  Non-scalar results are folded by a random-weighted
sum (``w`` is an argument, not differentiated)."""
import numpy as np
import pytest

import tangent_x as tx
from _fd import assert_tree_allclose, numerical_grad

RNG = np.random.RandomState(2)


def rand(*shape):
    return RNG.randn(*shape)


def well_conditioned(*shape):
    """Random square matrices (or stacks of them) far from singular."""
    n = shape[-1]
    return rand(*shape) + 3.0 * np.eye(n)


def check(f, *args, argnums=0, rtol=1e-5, atol=1e-7):
    got = tx.grad(f, argnums=argnums)(*args)
    want = numerical_grad(f, args, argnums)
    assert_tree_allclose(got, want, rtol=rtol, atol=atol)


def check_op(op, *arrays, **tol):
    """grad of sum(op(*arrays) * w) w.r.t. every array (``op`` is inlined)."""
    w = rand(*np.shape(op(*arrays))) + 2.0
    if len(arrays) == 1:
        f = lambda a, w: np.sum(op(a) * w)              # noqa: E731
        check(f, *arrays, w, **tol)
    elif len(arrays) == 2:
        f = lambda a, b, w: np.sum(op(a, b) * w)        # noqa: E731
        check(f, *arrays, w, argnums=(0, 1), **tol)
    else:
        f = lambda a, b, c, w: np.sum(op(a, b, c) * w)  # noqa: E731
        check(f, *arrays, w, argnums=(0, 1, 2), **tol)


BINARY = [
    ("dot", lambda a, b: np.dot(a, b),
     [[(3,), (3,)], [(2, 3), (3,)], [(3,), (3, 4)], [(2, 3), (3, 4)], [(2, 2, 3), (3, 4)],
      [(2, 3), (4, 3, 5)], [(), (2, 3)], [(2, 3), ()], [(1, 3), (3, 1)]]),
    ("dot-method", lambda a, b: a.dot(b), [[(2, 3), (3, 4)], [(3,), (3,)]]),
    ("matmul", lambda a, b: a @ b,
     [[(3,), (3,)], [(2, 3), (3,)], [(3,), (3, 4)], [(2, 3), (3, 4)], [(5, 2, 3), (3, 4)],
      [(5, 2, 3), (1, 3, 4)], [(3,), (2, 3, 4)]]),
    ("np.matmul", lambda a, b: np.matmul(a, b), [[(2, 3), (3, 4)], [(2, 2, 3), (2, 3, 1)]]),
    ("outer", lambda a, b: np.outer(a, b), [[(3,), (4,)], [(2, 3), (2,)], [(1,), (3, 1)]]),
    ("inner", lambda a, b: np.inner(a, b),
     [[(3,), (3,)], [(2, 3), (4, 3)], [(2, 2, 3), (3,)], [(), (2, 3)], [(2, 3), ()]]),
    ("tensordot", lambda a, b: np.tensordot(a, b),
     [[(2, 3, 4), (3, 4, 5)], [(3, 4), (3, 4)]]),
    ("tensordot-0", lambda a, b: np.tensordot(a, b, 0), [[(2, 3), (4,)], [(3,), (2,)]]),
    ("tensordot-1", lambda a, b: np.tensordot(a, b, axes=1),
     [[(2, 3), (3, 4)], [(2, 3, 4), (4, 2)]]),
    ("tensordot-pair", lambda a, b: np.tensordot(a, b, axes=([1, 0], [0, 1])),
     [[(2, 3, 4), (3, 2, 5)], [(3, 2), (2, 3)]]),
    ("tensordot-ints", lambda a, b: np.tensordot(a, b, axes=(2, 0)),
     [[(2, 3, 4), (4, 5)], [(1, 2, 3), (3,)]]),
    ("tensordot-neg", lambda a, b: np.tensordot(a, b, axes=([-1], [-2])),
     [[(2, 3), (4, 3, 5)], [(2, 2), (2, 2)]]),
]


@pytest.mark.parametrize("name,op,shape_pairs", BINARY, ids=[c[0] for c in BINARY])
def test_products(name, op, shape_pairs):
    for shapes in shape_pairs:
        check_op(op, *[rand(*s) for s in shapes])


def test_same_operand_twice():
    x = rand(3)
    check(lambda x: np.dot(x, x), x)
    m = rand(3, 3)
    check(lambda m: np.sum(np.sin(m @ m)), m)


# --- einsum ------------------------------------------------------------------------

EINSUM = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,ij->", [(2, 3), (2, 3)]),
    ("ij,ij->ij", [(2, 3), (2, 3)]),
    ("i,i", [(4,), (4,)]),
    ("i,i->", [(4,), (4,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("ji", [(2, 3)]),
    ("ij->ji", [(2, 3)]),
    ("bij,bjk->bik", [(5, 2, 3), (5, 3, 4)]),
    ("bij,jk->bik", [(5, 2, 3), (3, 4)]),
    ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("ii->", [(3, 3)]),
    ("ij->i", [(2, 3)]),
    ("ij->", [(2, 3)]),
    ("ij,j->i", [(2, 3), (3,)]),
    ("ij,kj->ik", [(2, 3), (4, 3)]),
    ("i,ij,j->", [(2,), (2, 3), (3,)]),
    ("ijk,ik->j", [(2, 3, 4), (2, 4)]),
    ("ijk->kji", [(2, 3, 4)]),
    ("iij->ij", [(3, 3, 2)]),
    ("bii->b", [(2, 3, 3)]),
    ("...ij,...jk->...ik", [(5, 2, 3), (5, 3, 4)]),
    ("...ij,jk->...ik", [(5, 2, 3), (3, 4)]),
    ("...ij,...jk", [(2, 3), (3, 4)]),
    ("i...->...", [(2, 3, 4)]),
    ("...i,...i->...", [(2, 3), (1, 3)]),
    ("ij, jk -> ik", [(2, 3), (3, 4)]),
]


def einsum_of(spec, n):
    """``np.einsum(spec, ...)`` as a function of its ``n`` operands (one to
    three), each a named argument; test_jvp_rules.py uses it too."""
    if n == 1:
        return lambda a: np.einsum(spec, a)
    if n == 2:
        return lambda a, b: np.einsum(spec, a, b)
    return lambda a, b, c: np.einsum(spec, a, b, c)


@pytest.mark.parametrize("spec,shapes", EINSUM, ids=[e[0] for e in EINSUM])
def test_einsum(spec, shapes):
    arrays = [rand(*s) for s in shapes]
    check_op(einsum_of(spec, len(arrays)), *arrays)


def test_einsum_literal_reads_like_backprop():
    f = lambda x, w: np.sum(np.tanh(np.einsum("ij,jk->ik", x, w)))  # noqa: E731
    src = tx.source(tx.grad(f, argnums=(0, 1)))
    assert "np.einsum('ik,jk->ij'" in src and "np.einsum('ik,ij->jk'" in src
    check(f, rand(2, 3), rand(3, 4), argnums=(0, 1))


def test_einsum_literal_all_forms():
    x, y = rand(3, 4), rand(3, 4)
    check(lambda x, y: np.einsum("ij,ij->", x, y), x, y, argnums=(0, 1))
    check(lambda x: np.einsum("ii->", x[:, :3]), x)
    check(lambda x: np.sum(np.einsum("ij->i", x) ** 2), x)


# --- trace -----------------------------------------------------------------------

TRACE = [
    ("trace", lambda a: np.trace(a), [(3, 3), (3, 5), (4, 2)]),
    ("trace-offset", lambda a: np.trace(a, 1), [(3, 3), (2, 4)]),
    ("trace-neg-offset", lambda a: np.trace(a, offset=-1), [(3, 3), (4, 2)]),
    ("trace-3d", lambda a: np.trace(a), [(3, 3, 2), (2, 4, 1)]),
    ("trace-axes", lambda a: np.trace(a, 0, 1, 2), [(2, 3, 3), (4, 2, 3)]),
    ("trace-method", lambda a: a.trace(), [(3, 3), (2, 2, 3)]),
]


@pytest.mark.parametrize("name,op,shapes", TRACE, ids=[c[0] for c in TRACE])
def test_trace(name, op, shapes):
    for shape in shapes:
        check_op(op, rand(*shape))


# --- np.linalg ---------------------------------------------------------------------

@pytest.mark.parametrize("a_shape,b_shape", [((3, 3), (3,)), ((3, 3), (3, 2)),
                                             ((4, 3, 3), (4, 3, 2)), ((2, 3, 3), (3,)),
                                             ((1, 1), (1,))])
def test_solve(a_shape, b_shape):
    check_op(lambda a, b: np.linalg.solve(a, b), well_conditioned(*a_shape), rand(*b_shape),
             rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shape", [(3, 3), (1, 1), (2, 4, 4)])
def test_inv(shape):
    check_op(lambda a: np.linalg.inv(a), well_conditioned(*shape), atol=1e-6)


@pytest.mark.parametrize("shape", [(3, 3), (1, 1), (2, 4, 4)])
def test_det(shape):
    check_op(lambda a: np.linalg.det(a), well_conditioned(*shape), atol=1e-6)


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4)])
def test_slogdet(shape):
    a = well_conditioned(*shape)
    a[..., 0, :] *= -1.0                 # a negative determinant too
    w = rand(*shape[:-2]) + 2.0
    check(lambda a, w: np.sum(np.linalg.slogdet(a)[1] * w), a, w)

    def unpacked(a, w):
        sign, logdet = np.linalg.slogdet(a)
        return np.sum(sign * logdet * w)
    check(unpacked, a, w)


NORMS = [
    ("norm", lambda x: np.linalg.norm(x), [(5,), (3, 4), (2, 3, 2)]),
    ("norm-axis", lambda x: np.linalg.norm(x, axis=1), [(3, 4), (2, 3, 2)]),
    ("norm-neg-axis-keepdims", lambda x: np.linalg.norm(x, axis=-1, keepdims=True),
     [(3, 4), (5,)]),
    ("norm-tuple-axis", lambda x: np.linalg.norm(x, axis=(0, 2)), [(2, 3, 2), (3, 1, 2)]),
    ("norm-fro", lambda x: np.linalg.norm(x, "fro"), [(3, 4), (2, 2)]),
    ("norm-2-vector", lambda x: np.linalg.norm(x, 2), [(5,), (1,)]),
    ("norm-2-axis", lambda x: np.linalg.norm(x, ord=2, axis=0), [(3, 4), (5,)]),
    ("norm-1", lambda x: np.linalg.norm(x, 1), [(5,), (3, 4)]),
    ("norm-inf", lambda x: np.linalg.norm(x, np.inf), [(5,), (3, 4)]),
    ("norm--inf", lambda x: np.linalg.norm(x, -np.inf, axis=1), [(3, 4), (2, 5)]),
    ("norm-3", lambda x: np.linalg.norm(x, 3, axis=-1), [(5,), (3, 4)]),
    ("norm-nuc", lambda x: np.linalg.norm(x, "nuc"), [(3, 4), (2, 2)]),
    ("norm-spectral", lambda x: np.linalg.norm(x, 2), [(3, 4), (4, 2)]),
    ("norm-spectral-min", lambda x: np.linalg.norm(x, -2), [(3, 4), (3, 3)]),
    ("norm-matrix-axes", lambda x: np.linalg.norm(x, "fro", axis=(1, 2)), [(2, 3, 4)]),
    ("norm-nuc-axes", lambda x: np.linalg.norm(x, "nuc", axis=(2, 0)), [(3, 2, 4)]),
]


@pytest.mark.parametrize("name,op,shapes", NORMS, ids=[c[0] for c in NORMS])
def test_norm(name, op, shapes):
    for shape in shapes:
        check_op(op, rand(*shape), atol=1e-6)


def test_norm_ord_as_data():
    x = rand(3, 4)
    check(lambda x, ord: np.linalg.norm(x, ord), x, None)
    check(lambda x, ord: np.linalg.norm(x, ord), x, "nuc", atol=1e-6)


def test_generated_code_is_readable():
    src = tx.source(tx.grad(lambda a, b: np.sum(np.linalg.solve(a, b)), argnums=(0, 1)))
    assert "solve_transposed(a, " in src
    src = tx.source(tx.grad(lambda x: np.linalg.norm(x)))
    assert "norm_adjoint" not in src


# --- the helpers that product rules emit are primitives with their own rules -----

def test_helper_adjoints():
    from tangent_x.runtime import (dot_adjoint_lhs, dot_adjoint_rhs, inner_adjoint_lhs,
                                   inner_adjoint_rhs, matmul_adjoint_lhs,
                                   matmul_adjoint_rhs, tensordot_adjoint_lhs,
                                   tensordot_adjoint_rhs)
    a, b = rand(2, 3), rand(3, 4)
    a3, b3 = rand(5, 2, 3), rand(3,)
    t1, t2 = rand(2, 3, 4), rand(4, 3, 5)
    cases = [
        (lambda g, b, w: np.sum(dot_adjoint_lhs(g, a, b) * w), rand(2, 4), b, a.shape),
        (lambda g, a, w: np.sum(dot_adjoint_rhs(g, a, b) * w), rand(2, 4), a, b.shape),
        (lambda g, b, w: np.sum(dot_adjoint_lhs(g, 2.0, b) * w), rand(3, 4), b, ()),
        (lambda g, b, w: np.sum(inner_adjoint_lhs(g, a, b) * w), rand(2, 4), rand(4, 3),
         a.shape),
        (lambda g, a, w: np.sum(inner_adjoint_rhs(g, a, b) * w), rand(2, 3), a, (3, 3)),
        (lambda g, b, w: np.sum(tensordot_adjoint_lhs(g, t1, b, axes=([1, 2], [1, 0])) * w),
         rand(2, 5), t2, t1.shape),
        (lambda g, a, w: np.sum(tensordot_adjoint_rhs(g, a, t2, axes=([1, 2], [1, 0])) * w),
         rand(2, 5), t1, t2.shape),
        (lambda g, b, w: np.sum(matmul_adjoint_lhs(g, a3, b) * w), rand(5, 2), b3, a3.shape),
        (lambda g, a, w: np.sum(matmul_adjoint_rhs(g, a, b3) * w), rand(5, 2), a3, b3.shape),
        (lambda g, b, w: np.sum(matmul_adjoint_lhs(g, a, b) * w), rand(2, 4), b, a.shape),
    ]
    for f, g, other, out_shape in cases:
        check(f, g, other, rand(*out_shape), argnums=(0, 1))
