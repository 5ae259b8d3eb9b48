"""Reverse rules of shape ops, checked against central differences (float64).

Each function folds the op's result with a random-weighted sum (``w`` is an
argument, not differentiated), so every entry of the cotangent differs.
"""
import numpy as np
import pytest

import tangent_x as tx
from _fd import assert_tree_allclose, numerical_grad

RNG = np.random.RandomState(1)


def rand(*shape):
    return RNG.randn(*shape)


def check(f, *args, argnums=0):
    got = tx.grad(f, argnums=argnums)(*args)
    want = numerical_grad(f, args, argnums)
    assert_tree_allclose(got, want, rtol=1e-5, atol=1e-7)


def check_op(op, *arrays):
    """grad of sum(op(*arrays) * w) w.r.t. every array (``op`` is inlined)."""
    w = rand(*np.shape(op(*arrays))) + 2.0
    if len(arrays) == 1:
        f = lambda a, w: np.sum(op(a) * w)              # noqa: E731
    elif len(arrays) == 2:
        f = lambda a, b, w: np.sum(op(a, b) * w)        # noqa: E731
    else:
        f = lambda a, b, c, w: np.sum(op(a, b, c) * w)  # noqa: E731
    check(f, *arrays, w, argnums=0 if len(arrays) == 1 else tuple(range(len(arrays))))


CASES = [
    # (name, op, shapes of the operands)
    ("reshape", lambda a: np.reshape(a, (4, 3)), [(3, 4), (2, 6)]),
    ("reshape-1", lambda a: np.reshape(a, (-1,)), [(3, 4), (2, 1, 3)]),
    ("reshape-F", lambda a: np.reshape(a, (2, 6), order="F"), [(3, 4), (12,)]),
    ("method-reshape", lambda a: a.reshape(2, -1), [(3, 4), (2, 1, 3)]),
    ("ravel", lambda a: np.ravel(a), [(3, 4), (2, 1, 3)]),
    ("flatten", lambda a: a.flatten(), [(3, 4), (5,)]),
    ("transpose", lambda a: np.transpose(a), [(3, 4), (2, 3, 4)]),
    ("T", lambda a: a.T, [(3, 4), (2, 1, 3)]),
    ("transpose-axes", lambda a: np.transpose(a, (1, 2, 0)), [(2, 3, 4), (1, 3, 2)]),
    ("transpose-method", lambda a: a.transpose(2, 0, 1), [(2, 3, 4), (4, 1, 2)]),
    ("swapaxes", lambda a: np.swapaxes(a, 0, 2), [(2, 3, 4), (1, 2, 3)]),
    ("swapaxes-neg", lambda a: a.swapaxes(-1, 0), [(3, 4), (2, 3, 4)]),
    ("moveaxis", lambda a: np.moveaxis(a, 0, -1), [(2, 3, 4), (3, 4)]),
    ("moveaxis-tuple", lambda a: np.moveaxis(a, (0, 1), (2, 0)), [(2, 3, 4), (1, 2, 3)]),
    ("expand_dims", lambda a: np.expand_dims(a, 1), [(3, 4), (5,)]),
    ("expand_dims-neg", lambda a: np.expand_dims(a, -1), [(3, 4), (5,)]),
    ("expand_dims-tuple", lambda a: np.expand_dims(a, (0, 2)), [(3, 4), (5,)]),
    ("squeeze", lambda a: np.squeeze(a), [(3, 1, 4), (1, 5, 1)]),
    ("squeeze-int", lambda a: np.squeeze(a, 1), [(3, 1, 4), (2, 1)]),
    ("squeeze-tuple", lambda a: np.squeeze(a, axis=(0, 2)), [(1, 3, 1), (1, 5, 1, 2)]),
    ("squeeze-method", lambda a: a.squeeze(), [(3, 1), (1, 2, 1)]),
    ("flip", lambda a: np.flip(a), [(3, 4), (5,)]),
    ("flip-int", lambda a: np.flip(a, 1), [(3, 4), (2, 3, 4)]),
    ("flip-neg", lambda a: np.flip(a, axis=-1), [(3, 4), (5,)]),
    ("flip-tuple", lambda a: np.flip(a, axis=(0, 2)), [(2, 3, 4), (1, 2, 3)]),
    ("broadcast_to", lambda a: np.broadcast_to(a, (2, 3, 4)), [(3, 4), (3, 1), (1,), ()]),
    ("tile", lambda a: np.tile(a, 3), [(4,), (2, 3)]),
    ("tile-tuple", lambda a: np.tile(a, (2, 3)), [(4,), (2, 3), (2, 1, 3)]),
    ("tile-grow", lambda a: np.tile(a, (2, 1, 2)), [(3,), (2, 3)]),
    ("repeat", lambda a: np.repeat(a, 3), [(4,), (2, 3)]),
    ("repeat-axis", lambda a: np.repeat(a, 2, axis=0), [(3, 4), (2, 1, 3)]),
    ("repeat-neg", lambda a: np.repeat(a, 2, axis=-1), [(3, 4), (5,)]),
    ("repeat-array", lambda a: np.repeat(a, [1, 0, 3], axis=1), [(2, 3), (1, 3)]),
    ("repeat-array-flat", lambda a: np.repeat(a, np.array([2, 1, 0, 1])), [(4,), (2, 2)]),
    ("repeat-method", lambda a: a.repeat(2, 1), [(3, 4), (2, 1)]),
    ("diagonal", lambda a: np.diagonal(a), [(3, 3), (3, 5), (4, 2)]),
    ("diagonal-offset", lambda a: np.diagonal(a, 1), [(3, 3), (3, 5)]),
    ("diagonal-neg-offset", lambda a: np.diagonal(a, offset=-1), [(3, 3), (4, 2)]),
    ("diagonal-axes", lambda a: np.diagonal(a, 0, 2, 0), [(3, 2, 3), (4, 1, 2)]),
    ("diagonal-method", lambda a: a.diagonal(), [(3, 3), (2, 3, 4)]),
    ("concatenate", lambda a, b: np.concatenate([a, b]), [(2, 3), (4, 3)]),
    ("concatenate-axis", lambda a, b: np.concatenate([a, b], axis=1), [(2, 3), (2, 1)]),
    ("concatenate-neg", lambda a, b: np.concatenate((a, b), axis=-1), [(2, 3), (2, 4)]),
    ("concatenate-None", lambda a, b: np.concatenate([a, b], axis=None), [(2, 3), (4,)]),
    ("concatenate-3", lambda a, b, c: np.concatenate([a, b, c], 0), [(2,), (3,), (1,)]),
    ("concatenate-self", lambda a, b: np.concatenate([a, b, a]), [(2, 3), (1, 3)]),
    ("stack", lambda a, b: np.stack([a, b]), [(2, 3), (2, 3)]),
    ("stack-axis", lambda a, b: np.stack([a, b], axis=1), [(2, 3), (2, 3)]),
    ("stack-neg", lambda a, b, c: np.stack((a, b, c), axis=-1), [(4,), (4,), (4,)]),
    ("hstack-1d", lambda a, b: np.hstack([a, b]), [(2,), (3,)]),
    ("hstack-2d", lambda a, b: np.hstack([a, b]), [(2, 3), (2, 1)]),
    ("hstack-3d", lambda a, b: np.hstack((a, b)), [(2, 3, 2), (2, 1, 2)]),
    ("hstack-0d", lambda a, b: np.hstack([a, b]), [(), (3,)]),
    ("vstack-2d", lambda a, b: np.vstack([a, b]), [(2, 3), (1, 3)]),
    ("vstack-1d", lambda a, b: np.vstack([a, b]), [(3,), (3,)]),
    ("vstack-mixed", lambda a, b: np.vstack((a, b)), [(2, 3), (3,)]),
]


@pytest.mark.parametrize("name,op,shapes", CASES, ids=[c[0] for c in CASES])
def test_shape_op(name, op, shapes):
    if len(shapes) > 1 and name in {"reshape", "reshape-1", "reshape-F", "method-reshape",
                                    "ravel", "flatten", "transpose", "T", "transpose-axes",
                                    "transpose-method", "swapaxes", "swapaxes-neg",
                                    "moveaxis", "moveaxis-tuple", "expand_dims",
                                    "expand_dims-neg", "expand_dims-tuple", "squeeze",
                                    "squeeze-int", "squeeze-tuple", "squeeze-method", "flip",
                                    "flip-int", "flip-neg", "flip-tuple", "broadcast_to",
                                    "tile", "tile-tuple", "tile-grow", "repeat",
                                    "repeat-axis", "repeat-neg", "repeat-array",
                                    "repeat-array-flat", "repeat-method", "diagonal",
                                    "diagonal-offset", "diagonal-neg-offset",
                                    "diagonal-axes", "diagonal-method"}:
        for shape in shapes:              # one operand, several shapes
            check_op(op, rand(*shape))
    else:
        check_op(op, *[rand(*s) for s in shapes])


@pytest.mark.parametrize("shapes", [[(2, 3), (4, 3)], [(1, 2), (3, 2)]])
def test_concatenate_more_shapes(shapes):
    check_op(lambda a, b: np.concatenate([a, b]), *[rand(*s) for s in shapes])
    check_op(lambda a, b: np.vstack([a, b]), *[rand(*s) for s in shapes])


@pytest.mark.parametrize("shape", [(3,), (2, 3), (2, 1, 3)])
def test_stack_shapes(shape):
    check_op(lambda a, b: np.stack([a, b], axis=-1), rand(*shape), rand(*shape))
    check_op(lambda a, b: np.hstack([a, b]), rand(*shape), rand(*shape))


def test_sequence_with_computed_items():
    x = rand(3)
    w = rand(2, 3)
    check(lambda x, w: np.sum(np.stack([np.sin(x), x * x]) * w), x, w)
    check(lambda x, w: np.sum(np.concatenate([np.sin(x), x * x]) * np.ravel(w)), x, w)


def test_axis_passed_as_data():
    a, b = rand(2, 3), rand(2, 3)
    w = rand(4, 3)
    check(lambda a, b, axis, w: np.sum(np.concatenate([a, b], axis) * w), a, b, 0, w,
          argnums=(0, 1))
    w = rand(3, 2)
    check(lambda a, axes, w: np.sum(np.transpose(a, axes) * w), a, (1, 0), w)
    w = rand(2, 6)
    check(lambda a, reps, w: np.sum(np.tile(a, reps) * w), a, (1, 2), w)
    w = rand(12)
    check(lambda a, axis, w: np.sum(np.repeat(a, 2, axis) * w), a, None, w)


def test_broadcast_to_from_operand():
    check(lambda a, b: np.sum(np.broadcast_to(a, np.shape(b)) * b), rand(3, 1), rand(2, 3, 4))


def test_generated_code_is_readable():
    src = tx.source(tx.grad(lambda a: np.sum(np.sin(np.transpose(a)))))
    assert "np.transpose(" in src and "argsort" not in src
    src = tx.source(tx.grad(lambda a, b: np.sum(np.concatenate([a, b], axis=1)),
                            argnums=(0, 1)))
    assert "unconcatenate(" in src


# --- the helpers that rules emit are primitives with their own (linear) rules --

def test_helper_adjoints():
    from tangent_x.runtime import unbroadcast, undiagonal, unreduce, unrepeat, unstack, untile
    x = rand(3, 4)
    cases = [
        (lambda g, w: np.sum(unreduce(g, x, axis=1) * w), rand(3), x.shape),
        (lambda g, w: np.sum(unreduce(g, x, axis=(0, 1), keepdims=True) * w),
         rand(1, 1), x.shape),
        (lambda g, w: np.sum(unreduce(g, x) * w), rand(), x.shape),
        (lambda g, w: np.sum(unbroadcast(g, x[:, :1]) * w), rand(3, 4), (3, 1)),
        (lambda g, w: np.sum(unbroadcast(g, x) * w), rand(2, 3, 4), (3, 4)),
        (lambda g, w: np.sum(unstack(g, axis=1)[1] * w), rand(3, 2), (3,)),
        (lambda g, w: np.sum(untile(g, x, (2, 1)) * w), rand(6, 4), x.shape),
        (lambda g, w: np.sum(unrepeat(g, x, 2, axis=0) * w), rand(6, 4), x.shape),
        (lambda g, w: np.sum(unrepeat(g, x, 3) * w), rand(36), x.shape),
        (lambda g, w: np.sum(undiagonal(g, x, 1) * w), rand(3), x.shape),
    ]
    for f, g, out_shape in cases:
        check(f, g, rand(*out_shape))


def test_structural_helper_adjoints():
    from tangent_x.runtime import index_zero, tree_add, unindex
    x = rand(4, 3)
    w = rand(4, 3)
    check(lambda g, w: np.sum(unindex(x, (slice(1, 3), 0), g) * w), rand(2), w)
    check(lambda g, w: np.sum(unindex(x, np.array([0, 2, 0]), g) * w), rand(3, 3), w)
    check(lambda g, w: np.sum(index_zero(g, 1) * w), rand(4, 3), w)
    check(lambda a, b, w: np.sum(tree_add(a, b) * w), rand(4, 3), rand(4, 3), w,
          argnums=(0, 1))
