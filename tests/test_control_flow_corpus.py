"""Reverse mode through Python control flow, checked against finite differences.

The corpus lives in ``tests/cf_corpus/`` (one module per theme; see
``tests/cf_corpus/__init__.py``): if/elif/else, nested ifs, conditional
expressions, and/or/not, loops over range/rows/zip/enumerate/containers,
while loops with tolerance-based stopping, break/continue/early return,
for-else, subscript updates in loops, RNN recurrences, loops calling
helpers, and ``tx.lax`` primitives called inside differentiated functions.
Two parametrized tests run over every case and every input variant, exactly
as ``tests/test_corpus.py`` does:

* ``test_grad_matches_finite_differences``: ``tx.grad`` equals central
  differences in float64, with the structure of the argument(s), and the
  caller's arguments are left unmodified;
* ``test_primal_matches_original``: the value returned by
  ``tx.value_and_grad`` equals what the original function returns.

Both also run compiled (``tx.jit`` of the transform, ids ending in
``-jit``; the first case of each theme; all of them, outside CI's time
budget: ``python tools/jit_corpus.py``).

Then come explicit tests: Newton's sqrt (d/da at a=2 is 1/(2 sqrt 2)), the
lax primitives against closed-form derivatives, and the bad inputs of the
issue's Acceptance list.  Several of those are Python-legal code that a
rewrite into structured control flow may not be able to express (branches
binding different shapes, a carry changing dtype, a variable bound in only
one branch, unusual ``break`` placements); for them a test accepts EITHER the
right values and gradients OR a ``tangent_x.TransformError``/``TypeError``
whose message (``str(err)`` itself, not only a traceback note) names this
file and a line inside the offending function (and the variable, where one
variable is to blame): a crash deep in generated code is not a clear error.  ``while True:`` with no way
out must raise a located ``TransformError`` (under a timeout, so a hang fails
instead of blocking the suite).

The last tests check the corpus itself, independently of tangent_x: every
function runs as plain Python and leaves its arguments alone, every statement
of every function is executed by some variant (so both sides of each branch
are exercised), no input sits within ~1e-3 of a branch threshold or kink
(finite differences with steps 1e-6 and 1e-3 agree), and the finite
differences agree with hand-derived gradients on a handful of cases.

The whole module carries the ``control_flow`` mark so it can be deselected
(``-m "not control_flow"``) until the lead enables it in the default run.

A failing case is a bug in tangent_x (or a missing rule): fix the library,
never weaken or skip the case.
"""
import ast
import contextlib
import copy
import inspect
import os
import re
import signal
import sys
import textwrap

import numpy as np
import pytest

import tangent_x as tx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # _fd, cf_corpus

import _fd  # noqa: E402
from _fd import assert_tree_allclose, assert_tree_equal, numerical_grad  # noqa: E402
from cf_corpus import all_cases  # noqa: E402
from corpus import check_grad, check_primal, jit_params  # noqa: E402
from cf_corpus import jumps, lax_calls, loops_range, loops_while, mixed  # noqa: E402

pytestmark = pytest.mark.control_flow

CASES = all_cases()
THIS_FILE = os.path.basename(__file__)


def _scalar_reference(case):
    reference = case.reference
    return (lambda *a: reference(*a)[0]) if case.has_aux else reference


# ---------------------------------------------------------------------------
# The corpus: grad against finite differences, primal against the original
# ---------------------------------------------------------------------------

def test_corpus_is_large_enough():
    assert len(CASES) >= 90
    assert all(len(c.variants) >= 2 for c in CASES)
    names = {c.name for c in CASES}
    for required in ("logsumexp_loop_tangent_failure",
                     "aug_subscript_under_if_in_loop_tangent_failure",
                     "newton_sqrt", "recurrence_1000_steps", "rnn_tanh_weights",
                     "for_layer_in_param_dicts"):
        assert required in names


# Control-flow cases jit cannot compile yet, with the reason (each would raise
# a located JitError naming the line; strict xfails, see corpus.jit_params).
# None at present.
JIT_KNOWN_FAILURES = {}


@pytest.mark.parametrize("case, jit", jit_params(CASES, JIT_KNOWN_FAILURES, rest="env"))
def test_grad_matches_finite_differences(case, jit):
    check_grad(case, jit)


@pytest.mark.parametrize("case, jit", jit_params(CASES, JIT_KNOWN_FAILURES, rest="env"))
def test_primal_matches_original(case, jit):
    check_primal(case, jit)


# ---------------------------------------------------------------------------
# Newton's square root: reverse mode through a data-dependent trip count
# ---------------------------------------------------------------------------

def test_newton_sqrt_derivative_at_two():
    value, g = tx.value_and_grad(loops_while.newton_sqrt)(2.0)
    assert value == pytest.approx(np.sqrt(2.0), rel=1e-12)
    assert g == pytest.approx(1.0 / (2.0 * np.sqrt(2.0)), rel=1e-9)
    assert tx.grad(loops_while.newton_sqrt)(2.0) == pytest.approx(0.3535533905932738, rel=1e-9)


def test_newton_sqrt_derivative_at_several_points():
    for a in (0.3, 2.0, 4.5, 9.0, 50.0):     # not 1.0: there y = a stops at once
        assert tx.grad(loops_while.newton_sqrt)(a) == \
            pytest.approx(0.5 / np.sqrt(a), rel=1e-9), a


def test_newton_sqrt_by_lax_while_loop_derivative_at_two():
    assert tx.grad(lax_calls.while_loop_newton_sqrt)(2.0) == \
        pytest.approx(1.0 / (2.0 * np.sqrt(2.0)), rel=1e-9)


def test_recurrence_1000_steps_gradient():
    def forward_derivative(x):
        d = 1.0
        for _ in range(1000):
            d = d * np.cos(x) * 0.99
            x = np.sin(x) * 0.99 + 0.01
        return d
    for x in (0.3, -1.2, 2.0):
        assert tx.grad(loops_range.recurrence_1000_steps)(x) == \
            pytest.approx(forward_derivative(x), rel=1e-9, abs=1e-12)


# ---------------------------------------------------------------------------
# tx.lax primitives inside differentiated functions, closed-form derivatives
# ---------------------------------------------------------------------------

def _fd_check(fn, args, argnums=0):
    g = tx.grad(fn, argnums=argnums)(*args)
    assert_tree_allclose(g, numerical_grad(fn, args, argnums), rtol=1e-5, atol=1e-6)
    return g


def test_lax_fori_loop_repeated_squaring():
    def f(x):
        return tx.lax.fori_loop(0, 3, lambda i, c: c * c, x)      # x ** 8
    for x in (0.9, -1.1):
        assert _fd_check(f, (x,)) == pytest.approx(8.0 * x ** 7, rel=1e-10)


def test_lax_fori_loop_gradient_into_closed_over_value():
    def f(x, w):
        def body(i, c):
            return c * w + i
        return tx.lax.fori_loop(0, 4, body, x)     # x w^4 + w^2 + 2 w + 3
    x, w = 0.7, 1.3
    gx, gw = tx.grad(f, argnums=(0, 1))(x, w)
    assert gx == pytest.approx(w ** 4, rel=1e-10)
    assert gw == pytest.approx(4 * x * w ** 3 + 2 * w + 2.0, rel=1e-10)
    _fd_check(f, (x, w), (0, 1))


def test_lax_while_loop_gradient_into_closure_and_carry():
    def f(x, y0):
        _, y = tx.lax.while_loop(lambda c: c[0] < 4, lambda c: (c[0] + 1, c[1] * x), (0, y0))
        return y                                    # y0 x^4
    gx, gy = tx.grad(f, argnums=(0, 1))(1.5, 0.5)
    assert gx == pytest.approx(4 * 0.5 * 1.5 ** 3, rel=1e-10)
    assert gy == pytest.approx(1.5 ** 4, rel=1e-10)


def test_lax_while_loop_data_dependent_trip_count():
    def f(x):
        return tx.lax.while_loop(lambda v: v < 100.0, lambda v: v * 3.0, x)
    # x=2: 2, 6, 18, 54, 162 (4 steps, x*81); x=5: 5, 15, 45, 135 (3 steps, x*27)
    assert tx.grad(f)(2.0) == pytest.approx(81.0)
    assert tx.grad(f)(5.0) == pytest.approx(27.0)


def test_lax_cond_gradient_of_taken_branch():
    def f(x):
        return tx.lax.cond(x > 0, lambda v: np.sin(v) * v, lambda v: v ** 3, x)
    assert _fd_check(f, (0.8,)) == pytest.approx(np.cos(0.8) * 0.8 + np.sin(0.8), rel=1e-10)
    assert _fd_check(f, (-0.8,)) == pytest.approx(3 * 0.64, rel=1e-10)


def test_lax_cond_with_nested_defs_and_no_operands():
    def f(x, y):
        def yes():
            return x * y * y

        def no():
            return x + y
        return tx.lax.cond(x > y, yes, no)
    assert tx.grad(f, argnums=(0, 1))(2.0, 1.5) == (pytest.approx(2.25), pytest.approx(6.0))
    assert tx.grad(f, argnums=(0, 1))(1.0, 1.5) == (pytest.approx(1.0), pytest.approx(1.0))


def test_lax_switch_each_branch_and_clamped_index():
    def f(x, k):
        return tx.lax.switch(k, [lambda v: v * 2.0, lambda v: v * v, lambda v: np.exp(v)], x)
    x = 0.7
    expected = {-1: 2.0, 0: 2.0, 1: 2 * x, 2: np.exp(x), 5: np.exp(x)}
    for k, d in expected.items():
        assert tx.grad(f)(x, k) == pytest.approx(d, rel=1e-10), k


def test_lax_scan_product_and_stacked_outputs():
    def f(xs):
        carry, ys = tx.lax.scan(lambda c, x: (c * x, c), 1.0, xs)
        return carry + np.sum(ys)       # prod(xs) + sum of prefix products
    xs = np.array([0.5, 1.5, -2.0, 0.8])
    g = _fd_check(f, (xs,))
    # d prod/dx_i = prod/x_i;  ys = (1, x0, x0 x1, x0 x1 x2)
    x0, x1, x2, _ = xs
    d_ys = np.array([1.0 + x1 + x1 * x2, x0 + x0 * x2, x0 * x1, 0.0])
    np.testing.assert_allclose(g, np.prod(xs) / xs + d_ys, rtol=1e-10)


def test_lax_scan_nested_def_rnn_weights():
    def f(W, xs):
        def cell(h, x):
            h = np.tanh(W @ h + x)
            return h, h[0]
        h, ys = tx.lax.scan(cell, np.zeros(2), xs)
        return np.sum(h) + np.sum(ys)
    rng = np.random.default_rng(7)
    _fd_check(f, (rng.standard_normal((2, 2)) * 0.5, rng.standard_normal((4, 2))), (0, 1))


# ---------------------------------------------------------------------------
# Bad inputs from the Acceptance list: right answers or a clear, located error
# ---------------------------------------------------------------------------

class _Hung(Exception):
    pass


@contextlib.contextmanager
def _deadline(seconds):
    """Fail instead of hanging (SIGALRM; pytest runs tests in the main thread)."""
    def on_alarm(signum, frame):
        raise _Hung(f"still running after {seconds} s: expected a TransformError")
    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def _span(fn):
    lines, start = inspect.getsourcelines(fn)
    return start, start + len(lines) - 1


def _assert_located(err, fn, variable=None, line=None):
    """``err`` names this file and a line of ``fn`` (exactly ``line`` if given),
    and ``variable`` if given."""
    msg = str(err)
    first, last = _span(fn)
    found = [int(n) for n in re.findall(re.escape(THIS_FILE) + r":(\d+)", msg)]
    assert found, f"error does not name {THIS_FILE}:LINE: {type(err).__name__}: {msg}"
    if line is not None:
        assert line in found, f"error should name line {line}: {msg}"
    else:
        assert any(first <= n <= last for n in found), \
            f"error names no line of {fn.__name__} ({first}-{last}): {msg}"
    if variable is not None:
        assert re.search(r"\b" + re.escape(variable) + r"\b", msg), \
            f"error should name the variable {variable!r}: {msg}"


def _works_or_located_error(fn, args, argnums=0, variable=None):
    """Either value and gradient are right, or a located TransformError/TypeError."""
    try:
        with _deadline(60):
            value, g = tx.value_and_grad(fn, argnums=argnums)(*copy.deepcopy(args))
    except TypeError as err:          # tangent_x.TransformError is a TypeError
        _assert_located(err, fn, variable)
        if fn in _REFUSED:
            assert _REFUSED[fn] in str(err), f"{fn.__name__}: {err}"
        return "error"
    assert_tree_allclose(value, fn(*copy.deepcopy(args)), rtol=1e-10, atol=1e-12,
                         err_msg=f"{fn.__name__}: primal value")
    assert_tree_allclose(g, numerical_grad(fn, args, argnums), rtol=1e-5, atol=1e-6,
                         err_msg=f"{fn.__name__}: gradient")
    return "works"


def _expect_outcome(fn, args, argnums=0, variable=None):
    """What tangent_x does with ``fn`` today, kept: a case that works must
    keep working (right value and gradient); a refused one (``_REFUSED``)
    gives its located error naming the construct, until it is supported
    and moved out of ``_REFUSED``."""
    expected = "error" if fn in _REFUSED else "works"
    outcome = _works_or_located_error(fn, args, argnums, variable)
    assert outcome == expected, f"{fn.__name__}{args}: expected it {expected}, it {outcome}"


def _branches_bind_different_shapes(x):
    if np.sum(x) > 0:
        shaped = np.zeros(3) + x[0]
    else:
        shaped = np.zeros(4) + x[1]
    return np.sum(shaped * shaped)


@pytest.mark.parametrize("x", [np.array([1.0, -0.5]), np.array([-1.0, 0.5])])
def test_branches_with_different_shapes(x):
    _expect_outcome(_branches_bind_different_shapes, (x,), variable="shaped")


def _branches_return_different_shapes(x):
    if x > 0:
        return np.sum(np.ones(2) * x)
    return np.sum(np.ones((3, 3)) * x * x)


@pytest.mark.parametrize("x", [0.7, -0.7])
def test_branches_returning_from_different_shapes(x):
    _expect_outcome(_branches_return_different_shapes, (x,))


def _for_carry_changes_dtype(x):
    total = 0
    for i in range(x.shape[0]):
        total = total + x[i] * x[i]
    return total


def _while_carry_changes_dtype(x):
    count = 0
    k = 0
    while k < 3:
        count = count + np.sin(x * k)
        k += 1
    return count


@pytest.mark.parametrize("fn, x", [(_for_carry_changes_dtype, np.array([0.5, -1.0, 2.0])),
                                   (_while_carry_changes_dtype, 0.8)],
                         ids=["for", "while"])
def test_loop_carry_changing_dtype(fn, x):
    variable = "total" if fn is _for_carry_changes_dtype else "count"
    _expect_outcome(fn, (x,), variable=variable)


def _while_true_without_break(x):
    while True:
        x = x * 0.5
    return x


def _while_true_only_continue(x):
    while True:
        if x > 0:
            continue
        x = x + 1.0
    return x


@pytest.mark.parametrize("fn", [_while_true_without_break, _while_true_only_continue])
def test_while_true_without_exit_is_a_located_error(fn):
    line = _span(fn)[0] + 1          # the `while True:` line
    with _deadline(20):
        with pytest.raises(tx.TransformError) as info:
            tx.grad(fn)(1.0)
    _assert_located(info.value, fn, line=line)
    with _deadline(20):
        with pytest.raises(tx.TransformError):
            tx.source(tx.grad(fn))


# Python-legal jumps the rewrite might not be able to place: each must give
# the right answer or a located error.

def _break_three_ifs_deep(x):
    s = 0.0
    for v in x:
        if v > 0:
            if v > 1.0:
                if s > 0.5:
                    break
                s = s + v
            s = s + v * v
    return s * x[0]


def _break_out_of_nested_loops_idiom(x):
    s = 0.0
    for row in x:
        for v in row:
            s = s + v * v
            if v > 1.5:
                break
        else:
            continue
        break
    return s


def _break_in_else_of_if_in_while_in_if(x):
    s = x * 1.0
    if x > 0:
        k = 0
        while k < 10:
            if s < 3.0:
                s = s * 1.5 + 0.1
            else:
                break
            k += 1
    return s * x


def _break_inside_with_block(x):
    s = 0.0
    for v in x:
        with np.errstate(divide="ignore"):
            s = s + np.log(v * v)
            if s > 0.5:
                break
    return s


def _continue_and_break_in_for_else(x):
    s = 0.0
    for v in x:
        if v < 0:
            continue
        s += v
    else:
        for w in x:
            if w > 1.0:
                break
            s = s * w
    return s


def _loop_variable_reassigned_in_body(x):
    s = 0.0
    for i in range(3):
        s = s + x[i] * i
        i = i * 10
        s = s + i * 0.01 * x[0]
    return s


def _reversed_range(x):
    s = 0.0
    for i in reversed(range(len(x))):
        s = s * 0.5 + x[i] * x[i]
    return s


def _list_append_in_loop(x):
    hs = []
    h = 0.0
    for v in x:
        h = np.tanh(h + v)
        hs.append(h)
    return np.sum(np.array(hs) ** 2)


_AWKWARD = [
    (_break_three_ifs_deep, [np.array([0.3, 1.2, 2.0, 0.5]), np.array([1.3, 0.4, 1.1, -0.5]),
                             np.array([-0.3, 0.2])]),
    (_break_out_of_nested_loops_idiom, [np.array([[0.5, 2.0], [1.0, 0.1]]),
                                        np.array([[0.5, 0.2], [1.0, 1.7]]),
                                        np.array([[0.5, 0.2], [1.0, 0.7]])]),
    (_break_in_else_of_if_in_while_in_if, [0.5, 2.0, -0.5]),
    (_break_inside_with_block, [np.array([0.5, 2.5, 3.0]), np.array([0.5, 0.8])]),
    (_continue_and_break_in_for_else, [np.array([0.5, -0.2, 0.9]),
                                       np.array([0.5, 0.7, 1.4, 0.6])]),
    (_loop_variable_reassigned_in_body, [np.array([0.5, -0.2, 0.9]), np.array([1.5, 0.7, 1.4])]),
    (_reversed_range, [np.array([0.5, -0.2, 0.9]), np.array([1.5, 0.7])]),
    (_list_append_in_loop, [np.array([0.5, -0.2, 0.9]), np.array([1.5, 0.7])]),
]


# refused today, with the construct their located error names
_REFUSED = {_break_out_of_nested_loops_idiom: "Continue", _break_inside_with_block: "with"}


@pytest.mark.parametrize("fn, inputs", _AWKWARD, ids=[f.__name__.lstrip("_") for f, _ in _AWKWARD])
def test_awkward_placements_work_or_give_located_error(fn, inputs):
    for x in inputs:
        _expect_outcome(fn, (x,))


def _bound_in_one_branch_used_under_same_condition(x):
    if x > 0:
        only_here = np.sin(x) * 2.0
    y = x * x
    if x > 0:
        y = y + only_here
    return y


@pytest.mark.parametrize("x", [0.8, -0.8])
def test_variable_bound_in_one_branch_used_under_same_condition(x):
    _expect_outcome(_bound_in_one_branch_used_under_same_condition, (x,),
                    variable="only_here")


def _unbound_when_branch_not_taken(x):
    if x > 0:
        late = x * 2.0
    return late * x


def test_variable_unbound_on_the_path_taken_names_the_variable():
    """Python raises UnboundLocalError at x = -1: so must the transformed
    function (or any error that names ``late``); at x = 1 it works or a
    located error names ``late``."""
    with pytest.raises(Exception) as info:
        tx.grad(_unbound_when_branch_not_taken)(-1.0)
    assert "late" in str(info.value), f"{type(info.value).__name__}: {info.value}"
    _expect_outcome(_unbound_when_branch_not_taken, (1.0,), variable="late")


# ---------------------------------------------------------------------------
# The corpus itself (independent of tangent_x)
# ---------------------------------------------------------------------------

CF_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cf_corpus")


def _statement_lines(fn):
    """Absolute line numbers of the statements in ``fn``'s body (nested defs included)."""
    lines, start = inspect.getsourcelines(fn)
    tree = ast.parse(textwrap.dedent("".join(lines)))
    fdef = next(n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))
    return {node.lineno + start - 1 for node in ast.walk(fdef)
            if isinstance(node, ast.stmt) and node is not fdef}


def _executed_lines(fn, calls, where=CF_DIR):
    """Lines of files under ``where`` executed while running ``fn`` on each of ``calls``."""
    hits = set()

    def tracer(frame, event, arg):
        if not frame.f_code.co_filename.startswith(where):
            return None
        if event == "line":
            hits.add(frame.f_lineno)
        return tracer

    old = sys.gettrace()
    sys.settrace(tracer)
    try:
        for args in calls:
            fn(*args)
    finally:
        sys.settrace(old)
    return hits


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_case_runs_as_plain_python_and_covers_every_statement(case):
    calls = []
    for i in range(len(case.variants)):
        args = case.args(i)
        before = copy.deepcopy(args)
        out = case.reference(*args)
        assert_tree_equal(args, before, f"{case.describe(i)}: mutates its arguments")
        value = out[0] if case.has_aux else out
        assert np.ndim(value) == 0 and np.isfinite(value), case.describe(i)
        calls.append(case.args(i))
    missed = _statement_lines(case.fn) - _executed_lines(case.fn, calls)
    assert not missed, f"{case.name}: no variant executes line(s) {sorted(missed)}"


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_inputs_are_away_from_kinks(case, monkeypatch):
    """Central differences with step 1e-6 and with step 1e-3 agree: no branch
    threshold, trip-count change or kink lies within ~1e-3 of any input."""
    if case.expected:
        return
    scalar = _scalar_reference(case)
    for i in range(len(case.variants)):
        args = case.args(i)
        fine = numerical_grad(scalar, args, case.argnums)
        monkeypatch.setattr(_fd, "EPS", 1e-3)
        coarse = numerical_grad(scalar, args, case.argnums)
        monkeypatch.setattr(_fd, "EPS", 1e-6)
        assert_tree_allclose(fine, coarse, rtol=2e-3, atol=2e-4, err_msg=case.describe(i))


_ACCEPT_EITHER = [(fn, [(x,) for x in inputs]) for fn, inputs in _AWKWARD] + [
    (_branches_bind_different_shapes, [(np.array([1.0, -0.5]),), (np.array([-1.0, 0.5]),)]),
    (_branches_return_different_shapes, [(0.7,), (-0.7,)]),
    (_for_carry_changes_dtype, [(np.array([0.5, -1.0, 2.0]),)]),
    (_while_carry_changes_dtype, [(0.8,)]),
    (_bound_in_one_branch_used_under_same_condition, [(0.8,), (-0.8,)]),
]


@pytest.mark.parametrize("fn, calls", _ACCEPT_EITHER,
                         ids=[f.__name__.lstrip("_") for f, _ in _ACCEPT_EITHER])
def test_accept_either_inputs_cover_every_statement_away_from_kinks(fn, calls, monkeypatch):
    missed = _statement_lines(fn) - _executed_lines(fn, calls, os.path.abspath(__file__))
    assert not missed, f"{fn.__name__}: no input executes line(s) {sorted(missed)}"
    for args in calls:
        fine = numerical_grad(fn, args)
        monkeypatch.setattr(_fd, "EPS", 1e-3)
        coarse = numerical_grad(fn, args)
        monkeypatch.setattr(_fd, "EPS", 1e-6)
        assert_tree_allclose(fine, coarse, rtol=2e-3, atol=2e-4, err_msg=f"{fn.__name__}{args}")


def test_finite_differences_agree_with_hand_derived_gradients():
    a = 2.0
    np.testing.assert_allclose(numerical_grad(loops_while.newton_sqrt, (a,)),
                               0.5 / np.sqrt(a), rtol=1e-7)

    c, x = np.array([0.5, -1.0, 2.0, 0.3, 1.1]), 0.7
    gc, gx = numerical_grad(loops_range.horner_negative_step, (c, x), (0, 1))
    np.testing.assert_allclose(gc, x ** np.arange(5.0), rtol=1e-7)
    np.testing.assert_allclose(gx, sum(i * c[i] * x ** (i - 1) for i in range(1, 5)), rtol=1e-7)

    v = np.array([0.3, -1.0, 2.0, 0.5])
    softmax = np.exp(v) / np.sum(np.exp(v))
    np.testing.assert_allclose(numerical_grad(mixed.logsumexp_loop_tangent_failure, (v,)),
                               softmax, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(numerical_grad(mixed.logsumexp_loop_np_maximum, (v,)),
                               softmax, rtol=1e-6, atol=1e-9)

    # sum over x_i > 0 of x_i^3
    np.testing.assert_allclose(
        numerical_grad(mixed.aug_subscript_under_if_in_loop_tangent_failure, (v,)),
        np.where(v > 0, 3 * v * v, 0.0), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(numerical_grad(mixed.if_inside_loop_on_elements, (v,)),
                               np.where(v > 0, 2 * v, -np.cos(v)), rtol=1e-6, atol=1e-9)

    w = np.arange(1.0, 5.0)
    np.testing.assert_allclose(numerical_grad(mixed.relu_by_loop, (v,)),
                               np.where(v > 0, 2 * v * w, 0.0), rtol=1e-6, atol=1e-9)

    # first element > 1 is x[1] = 1.5: x[1] * sum(x^2) + 1
    y = np.array([0.5, 1.5, -0.3])
    expected = 2 * y * y[1]
    expected[1] += np.sum(y * y)
    np.testing.assert_allclose(numerical_grad(jumps.return_inside_loop, (y,)),
                               expected, rtol=1e-6)

    def forward_derivative(x):
        d = 1.0
        for _ in range(1000):
            d = d * np.cos(x) * 0.99
            x = np.sin(x) * 0.99 + 0.01
        return d
    np.testing.assert_allclose(numerical_grad(loops_range.recurrence_1000_steps, (0.3,)),
                               forward_derivative(0.3), rtol=1e-6, atol=1e-12)

    # 1000 steps reach the fixed point x* = a sin(x*) + 0.01, where
    # dx*/da = sin(x*) / (1 - a cos(x*)) and dx*/dx0 = 0
    x0, a = 0.3, 0.99
    g0, ga = numerical_grad(loops_range.recurrence_1000_steps_with_parameter, (x0, a), (0, 1))
    fixed = loops_range.recurrence_1000_steps_with_parameter(x0, a)
    np.testing.assert_allclose(ga, np.sin(fixed) / (1.0 - a * np.cos(fixed)), rtol=1e-6)
    assert abs(g0) < 1e-9
