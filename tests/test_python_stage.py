"""The python-stage passes over generated code (tangent_x/python_stage/passes/: peephole,
dce, inplace, coalesce; run by pipeline.optimize): each on small hand-written inputs,
then on derivative code, whose values the rest of the suite checks.

Every rewrite must leave what the code computes unchanged; the tests run the
code before and after where it matters."""
import ast
import sys
import os

import gast
import numpy as np

import tangent_x as tx
from tangent_x.core import lower
from tangent_x.python_stage import emit
from tangent_x.python_stage.pipeline import optimize

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _fd import numerical_grad  # noqa: E402


def _passes(source, live):
    """Run the python-stage pipeline on a function body; return its text."""
    tree = gast.parse(source)
    blocks = [lower.Block(tree.body)]
    optimize(blocks, live)
    module = gast.Module(body=blocks[0].stmts, type_ignores=[])
    return ast.unparse(ast.fix_missing_locations(gast.gast_to_ast(module)))


def _run(source, names, **env):
    scope = dict(env, np=np)
    from tangent_x import runtime
    scope.update({n: getattr(runtime, n) for n in runtime.__all__})
    exec(source, scope)
    return [scope[n] for n in names]


def test_dead_code_inside_loops_goes():
    src = "s = 0.0\nt = 0.0\nfor i in range(3):\n    u = t * 2.0\n    t = u + 1.0\n" \
          "    s = s + i\n"
    out = _passes(src, {"s"})
    assert "t" not in out and "u" not in out
    assert _run(out, ["s"]) == _run(src, ["s"])


def test_value_read_in_the_next_iteration_stays():
    src = "a = 1.0\nb = 0.0\nfor i in range(3):\n    b = a * 2.0\n    a = b + 1.0\n"
    out = _passes(src, {"a"})
    assert _run(out, ["a"]) == _run(src, ["a"]) == [15.0]


def test_list_appended_in_place_when_the_old_list_is_dead():
    src = "xs = []\nfor i in range(4):\n    ys = appended(xs, i)\n    xs = ys\nn = len(xs)\n"
    out = _passes(src, {"xs", "n"})
    assert "appended" not in out and ".append(" in out
    assert _run(out, ["xs"]) == [[0, 1, 2, 3]]


def test_no_in_place_update_while_the_old_list_is_read():
    src = "xs = []\nys = appended(xs, 1)\nn = len(xs)\n"
    out = _passes(src, {"ys", "n"})
    assert "appended" in out
    assert _run(out, ["ys", "n"]) == [[1], 0]


def test_no_in_place_update_of_a_list_the_function_did_not_create():
    src = "ys = appended(xs, 1)\n"
    out = _passes(src, {"ys"})
    assert "appended" in out
    caller = [0]
    assert _run(out, ["ys"], xs=caller) == [[0, 1]] and caller == [0]


def test_no_in_place_update_of_a_list_stored_elsewhere():
    src = ("tape = []\nkeep = []\nfor i in range(3):\n    keep = appended(keep, tape)\n"
           "    tape = appended(tape, i)\n")
    out = _passes(src, {"keep"})
    assert "tape = appended(tape, i)" in out or "appended(tape" in out
    assert _run(out, ["keep"]) == _run(src, ["keep"]) == [[[], [0], [0, 1]]]


def test_copies_coalesce_into_the_carried_name():
    src = "s_1 = 0.0\nfor i in range(3):\n    s_2 = s_1 + i\n    s_1 = s_2\n"
    out = _passes(src, {"s_1"})
    assert "s_2" not in out and "s_1 = s_1 + i" in out
    assert _run(out, ["s_1"]) == [3.0]


def test_peephole_drops_same_shape_unbroadcast_and_signs():
    src = "y = np.tanh(x)\nt = -1.0 * y\ng = unbroadcast(t, y)\nh = g + -y\n"
    out = _passes(src, {"h"})
    assert "unbroadcast" not in out and "-1.0" not in out and "+ -" not in out
    x = np.linspace(-1, 1, 5)
    np.testing.assert_allclose(_run(out, ["h"], x=x)[0], _run(src, ["h"], x=x)[0])


def test_peephole_keeps_unbroadcast_where_shapes_may_differ():
    src = "z = x + y\ng = unbroadcast(z, y)\n"
    out = _passes(src, {"g"})
    assert "unbroadcast" in out


def test_third_derivative_of_tanh_reads_as_code():
    def f(x):
        return np.tanh(x)
    g3 = tx.grad(tx.grad(tx.grad(f)))
    src = tx.source(g3)
    assert "unbroadcast" not in src and "-1.0 *" not in src and "zeros_like" not in src
    np.testing.assert_allclose(g3(0.5), -0.5652091, atol=1e-6)


def _recurrence(x):
    for _ in range(50):
        x = np.sin(x) * 0.99 + 0.01
    return x


def test_second_order_tapes_are_updated_in_place():
    """Forward over reverse (a Hessian-vector product) pushes on the
    re-parsed tapes in place: O(n) in the number of steps, not O(n^2).
    (Reverse over reverse keeps its functional updates: its backward loop
    checkpoints every version of the first pass's tapes.)"""
    from tangent_x.api.transformed import cached
    grad = tx.grad(_recurrence)
    hvp = cached(grad, "jvp", (0,), lambda out, args: out)
    assert "appended(" not in tx.source(hvp)
    value, tangent = tx.jvp(grad, (0.3,), (1.0,))
    np.testing.assert_allclose(value, grad(0.3))
    np.testing.assert_allclose(tangent, numerical_grad(grad, (0.3,), 0), rtol=1e-5)


# --- cotangent accumulators summed in place (inplace.accumulate_in_place) --------

def test_owned_accumulator_is_summed_in_place():
    src = ("acc = zeros_like(x)\nfor i in range(3):\n    acc_1 = acc + x * i\n"
           "    acc = acc_1\n")
    out = _passes(src, {"acc"})
    assert "acc += x * i" in out
    x = np.arange(3.0)
    (got,) = _run(out, ["acc"], x=x)
    np.testing.assert_allclose(got, 3.0 * x)
    np.testing.assert_allclose(x, np.arange(3.0))      # the argument is untouched


def test_no_in_place_sum_while_the_old_accumulator_is_read():
    src = "acc = zeros_like(x)\nacc_1 = acc + x\ny = acc * 2.0\n"
    out = _passes(src, {"acc_1", "y"})
    assert "+=" not in out
    got = _run(out, ["acc_1", "y"], x=np.ones(2))
    np.testing.assert_allclose(got[0], np.ones(2))
    np.testing.assert_allclose(got[1], np.zeros(2))


def test_no_in_place_sum_of_an_accumulator_that_escapes():
    src = ("acc = zeros_like(x)\nkeep = []\nfor i in range(2):\n"
           "    keep = appended(keep, acc)\n    acc = acc + x\n")
    out = _passes(src, {"keep", "acc"})
    assert "+=" not in out
    keep, acc = _run(out, ["keep", "acc"], x=np.ones(2))
    np.testing.assert_allclose(keep[1], np.ones(2))
    np.testing.assert_allclose(acc, 2.0 * np.ones(2))


def test_no_in_place_sum_onto_an_argument():
    src = "acc = g + x\nacc_1 = acc + x\nout = g + acc_1\n"
    g = np.ones(2)
    out = _passes(src, {"out"})
    (got,) = _run(out, ["out"], g=g, x=np.ones(2))
    np.testing.assert_allclose(got, 4.0 * np.ones(2))
    np.testing.assert_allclose(g, np.ones(2))


# --- backward loops: carried results and shapes are not recomputed ------------

def _rnn(W, U, xs):
    h = np.zeros(W.shape[0])
    for x in xs:
        h = np.tanh(W @ h + U @ x)
    return np.sum(h)


def test_backward_loop_reads_the_carry_and_taped_shapes():
    """The backward step of a tanh RNN evaluates neither tanh (the new state
    is the carry) nor the products (only their shapes are read)."""
    src = tx.source(tx.grad(_rnn, argnums=(0, 1)))
    backward = src[src.index("reversed("):]
    assert "np.tanh" not in backward and " @ " not in backward
    assert "shaped(" in backward
    rng = np.random.default_rng(0)
    W, U, xs = rng.normal(size=(4, 4)) / 2, rng.normal(size=(4, 3)), rng.normal(size=(5, 3))
    tx.test_util.check_grads(_rnn, (W, U, xs), order=2, modes=("rev",))


def _growing(x):
    """A body value whose shape changes per iteration, read only for its
    shape (sin's adjoint reads cos), plus a scalar one (``x[0]``)."""
    total = 0.0
    for i in range(3):
        part = np.sin(x[: i + 1] * 2.0)
        total = total + np.sum(part + x[0]) * (i + 1.0)
    return total


def test_taped_shapes_follow_each_iteration():
    src = tx.source(tx.grad(_growing))
    assert "shape_tape" in src
    x = np.array([0.3, -0.7, 1.1])
    tx.test_util.check_grads(_growing, (x,), order=2)
    np.testing.assert_allclose(tx.jit(tx.grad(_growing))(x), tx.grad(_growing)(x), rtol=1e-12)
