"""break/continue the exits rewrite used to miss (fuzz seeds 27, 37, 56,
64, 81, 94, 121): grad, Hessian-vector products and vmap(grad), each
against finite differences or a per-example loop of finite differences."""
import numpy as np
import pytest

import tangent_x as tx
from fuzzing import oracles as O

import exits_found_programs as P

X = np.array([0.1, -0.3, 0.7])
Y = np.array([0.2, 0.4, -0.5])
V = np.array([0.3, -0.2, 0.5])
XS = np.array([[0.1, -0.3, 0.7], [0.6, 0.2, -0.1], [-0.4, 0.9, 0.3]])

TWO_ARGS = [P.break_in_for_under_if, P.continue_in_for_under_if, P.while_under_if,
            P.while_break_under_else]


def fd(fn, args):
    return tuple(O.stable_fd(lambda eps: tuple(O.fd_grad(fn, list(args), eps))))


@pytest.mark.parametrize("fn", TWO_ARGS, ids=lambda f: f.__name__)
def test_grad(fn):
    got = tx.grad(fn, argnums=(0, 1))(X, Y)
    O.compare(tuple(got), fd(fn, (X, Y)), 1e-5, 1.0, "grad")


@pytest.mark.parametrize("fn", TWO_ARGS, ids=lambda f: f.__name__)
def test_hvp(fn):
    # hvp = jvp of grad: the second transform reads grad's generated code
    g = tx.grad(fn, argnums=0)
    _, hv = tx.jvp(g, (X, Y), (V, np.zeros(3)))

    # differences of the gradient (itself checked against differences in
    # test_grad), as oracles.check_hvp does
    O.compare_fd(hv, lambda eps: (g(X + eps * V, Y) - g(X - eps * V, Y)) / (2 * eps),
                 1e-4, 1.0, "hvp", steps=(1e-4, 1e-3))


@pytest.mark.parametrize("fn", TWO_ARGS, ids=lambda f: f.__name__)
def test_vmap_grad(fn):
    got = tx.vmap(tx.grad(fn, argnums=(0, 1)), in_axes=(0, None))(XS, Y)
    expected = O.stack_tree([fd(fn, (x, Y)) for x in XS])
    O.compare(tuple(got), expected, 1e-5, 1.0, "vmap(grad)")


def test_function_after_continue():
    fn = P.function_after_continue
    O.compare(tx.grad(fn)(X), fd(fn, (X,))[0], 1e-5, 1.0, "grad")
    got = tx.vmap(tx.grad(fn))(XS)
    O.compare(got, O.stack_tree([fd(fn, (x,))[0] for x in XS]), 1e-5, 1.0, "vmap(grad)")
    _, hv = tx.jvp(tx.grad(fn), (X,), (V,))

    g = tx.grad(fn)
    O.compare_fd(hv, lambda eps: (g(X + eps * V) - g(X - eps * V)) / (2 * eps),
                 1e-4, 1.0, "hvp", steps=(1e-4, 1e-3))


def test_values_unchanged():
    for fn in TWO_ARGS:
        O.compare(tx.value_and_grad(fn)(X, Y)[0], fn(X, Y), 1e-12, 1.0, "value")
