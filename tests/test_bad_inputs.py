"""The bad-input catalogue (#17): syntax, arguments, Python semantics and
concurrency.  Each case asserts the right value (finite differences, NumPy,
Python) or an error that names this file and line (a TransformError) or is
the exception Python or JAX raises there.  Edited sources and caches have
their own file (test_stale_and_caches.py), messages too (test_messages.py).

Categories (the README's "Semantics and errors" lists them):
syntax · arguments · python semantics · control flow · indexing · concurrency
"""
import os
import threading

import numpy as np
import pytest

import tangent_x as tx
from tangent_x import lax

from _fd import assert_tree_allclose, numerical_grad
# the first syntax cases are test_errors.py's own functions (one home each)
from test_errors import uses_global, uses_try, uses_yield



# --- syntax ------------------------------------------------------------------
def s_nonlocal(x):
    a = 1.0

    def inner(y):
        nonlocal a
        a = 2.0
        return y * a
    return inner(x)


def s_with(x):
    with open(__file__) as f:
        f.read()
    return x * 2.0


def s_class(x):
    class A:
        pass
    return x * 2.0


def s_del(x):
    y = x * 2.0
    del y
    return x


def s_walrus(x):
    if (y := x * 2.0) > 1.0:
        return y
    return x


def s_match(x):
    match 1:
        case 1:
            return x * 2.0
    return x


def s_setcomp(x):
    s = {i for i in range(3)}
    return x * len(s)


def s_genexp(x):
    return sum(x * i for i in range(3))


def s_import(x):
    import math
    return x * math.pi


def s_star(*xs):
    return xs[0] * 2.0


def s_kwargs(x, **kw):
    return x * 2.0


def s_raise(x):
    if x > 100.0:
        raise ValueError("too big")
    return x * 2.0


def s_while_true(x):
    while True:
        x = x * 2.0
    return x


def s_for_else(x):
    for i in range(3):
        x = x * 2.0
    else:
        x = x + 1.0
    return x


def s_lambda_default(x):
    f = lambda v, k=2.0: v * k  # noqa: E731
    return f(x)


def s_nested_def(x):
    def sq(v):
        return v * v
    return sq(x) + sq(2.0 * x)


def s_recursion(x):
    return s_recursion(x - 1.0) if x > 0.0 else x


def s_string_format(x):
    name = "x" + str(1)
    return x * len(name)


def s_print(x):
    print("", end="")
    return x * 2.0


def s_isinstance(x):
    if isinstance(x, float):
        return x * 2.0
    return x * 3.0


def s_chained_compare(x):
    return x * 2.0 if 0.0 < x < 10.0 else x


def s_ifexp_nested(x):
    return (x if x > 0 else -x) if abs(x) < 5 else 0.0 * x


def s_tuple_unpack(x):
    a, (b, c) = x, (2.0 * x, 3.0 * x)
    return a + b * c


def s_star_unpack(x):
    a, *rest = (x, 2.0 * x, 3.0 * x)
    return a * rest[1]


def s_augmented_attr(x):
    class_like = {"v": x}
    class_like["v"] += 1.0
    return class_like["v"] * x


def s_dict_method(x):
    d = {"a": x, "b": 2.0 * x}
    return sum(d.values())


def s_list_append(x):
    out = []
    for i in range(3):
        out.append(x * i)
    return out[2]


def s_slice_assign_bool(x):
    y = x * 1.0
    y[y > 0.5] = 0.0
    return np.sum(y * y)


def s_int_arg(x, n):
    return x ** n


def s_bool_and(x):
    return x * 2.0 if (x > 0 and x < 3) or x < -3 else x


def s_string_compare(x, mode):
    if mode == "double":
        return 2.0 * x
    return x


def s_none_default(x, scale=None):
    if scale is None:
        scale = 2.0
    return x * scale


def s_empty_return(x):
    return


def s_returns_string(x):
    return "x"


def s_returns_int(x):
    return 3


def s_ellipsis(x):
    return np.sum(x[..., 0] * 2.0)


def s_newaxis(x):
    return np.sum(x[:, None] * x[None, :])


def s_negative_step(x):
    return np.sum(x[::-1] * x)


def s_fancy(x):
    return np.sum(x[np.array([0, 2])] ** 2)


def s_bool_mask_read(x):
    return np.sum(x[x > 0.5] ** 2)


def s_np_where_one_arg(x):
    return np.sum(x[np.where(x > 0.5)] ** 2)


def s_unbound(x, flag):
    if flag:
        y = x * 2.0
    return y


def s_lax_cond_tuple(x):
    a, b = lax.cond(x > 0, lambda v: (v, 2.0 * v), lambda v: (-v, v), x)
    return a * b


def s_scan(x):
    c, ys = lax.scan(lambda c, xi: (c + xi, c * xi), 0.0, x)
    return c + np.sum(ys)


def s_while_loop(x):
    i, v = lax.while_loop(lambda s: s[0] < 3, lambda s: (s[0] + 1, s[1] * 1.5), (0, x))
    return v


def s_integer_input(x):
    return x * 2.0


def s_method_call_array(x):
    return x.sum() + x.mean() * x.max()


def s_dtype_astype(x):
    return np.sum(x.astype(np.float32) * 2.0)


X1 = np.array([0.2, 0.7, 1.1])
X2 = np.linspace(0.1, 0.9, 6).reshape(2, 3)

# (function, arguments, expected): "value" is checked against finite
# differences; ("refused", words): a located TransformError; (Exception, words)
SYNTAX = [
    (uses_try, (0.7,), ("refused", "`try` statement")),
    (uses_yield, (0.7,), ("refused", "generator")),
    (uses_global, (0.7,), ("refused", "`global` statement")),
    (s_nonlocal, (0.7,), ("refused", "`nonlocal` statement")),
    (s_with, (0.7,), ("refused", "`with` statement")),
    (s_class, (0.7,), ("refused", "class definition")),
    (s_del, (0.7,), ("refused", "`del` statement")),
    (s_walrus, (0.7,), ("refused", "walrus")),
    (s_match, (0.7,), ("refused", "Match statement")),
    (s_setcomp, (0.7,), ("refused", "set comprehension")),
    (s_import, (0.7,), ("refused", "`import` inside")),
    (s_star, (0.7,), ("refused", r"\*args")),
    (s_kwargs, (0.7,), ("refused", r"\*\*kwargs")),
    (s_while_true, (0.7,), ("refused", "never ends")),
    (s_recursion, (0.7,), ("refused", "recursive call")),
    (s_dict_method, (0.7,), "value"),      # sum(d.values()): the loop over the values
    (s_genexp, (0.7,), "value"),
    (s_raise, (0.7,), "value"),
    (s_for_else, (0.7,), "value"),
    (s_lambda_default, (0.7,), "value"),
    (s_nested_def, (0.7,), "value"),
    (s_string_format, (0.7,), "value"),
    (s_print, (0.7,), "value"),
    (s_chained_compare, (0.7,), "value"),
    (s_ifexp_nested, (0.7,), "value"),
    (s_tuple_unpack, (0.7,), "value"),
    (s_star_unpack, (0.7,), "value"),
    (s_bool_and, (0.7,), "value"),
]

SEMANTICS = [
    (s_augmented_attr, (0.7,), "value"),
    (s_list_append, (0.7,), "value"),
    (s_int_arg, (0.7, 3), "value"),
    (s_string_compare, (0.7, "double"), "value"),
    (s_string_compare, (0.7, "other"), "value"),
    (s_none_default, (0.7,), "value"),
    (s_isinstance, (0.7,), "value"),
    (s_integer_input, (0.7,), "value"),
    (s_method_call_array, (X1,), "value"),
    # float32 inside: differences are too rough; d/dx of 2 * float32(x) is 2
    (s_dtype_astype, (X1,), ("exactly", np.full(3, 2.0))),
    (s_unbound, (0.7, True), "value"),
    (s_unbound, (0.7, False), (UnboundLocalError, "'y'")),
    (s_returns_string, (0.7,), (TypeError, "real-valued outputs")),
    (s_empty_return, (0.7,), (TypeError, "real-valued outputs")),
]

CONTROL_AND_INDEXING = [
    (s_lax_cond_tuple, (0.7,), "value"),
    (s_lax_cond_tuple, (-0.7,), "value"),
    (s_scan, (X1,), "value"),
    (s_while_loop, (0.7,), "value"),
    (s_slice_assign_bool, (X1,), "value"),
    (s_ellipsis, (X2,), "value"),
    (s_newaxis, (X2,), "value"),
    (s_negative_step, (X1,), "value"),
    (s_fancy, (X1,), "value"),
    (s_bool_mask_read, (X1,), "value"),
    (s_np_where_one_arg, (X1,), "value"),
]


def _check(fn, args, expected):
    grad = tx.grad(fn)
    if expected == "value":
        assert_tree_allclose(grad(*args), numerical_grad(fn, args, 0), rtol=1e-6, atol=1e-9)
        return
    kind, words = expected
    if kind == "exactly":
        assert_tree_allclose(grad(*args), words, rtol=1e-7)
        return
    if kind == "refused":
        with pytest.raises(tx.TransformError, match=words) as info:
            grad(*args)
        assert f"{os.path.basename(fn.__code__.co_filename)}:" in str(info.value), \
            str(info.value)
        return
    with pytest.raises(kind, match=words):
        grad(*args)


@pytest.mark.parametrize("fn, args, expected", SYNTAX,
                         ids=[f"{c[0].__name__}" for c in SYNTAX])
def test_syntax(fn, args, expected):
    _check(fn, args, expected)


@pytest.mark.parametrize("fn, args, expected", SEMANTICS,
                         ids=[f"{c[0].__name__}-{c[1][-1]!r}" for c in SEMANTICS])
def test_python_semantics(fn, args, expected):
    _check(fn, args, expected)


@pytest.mark.parametrize("fn, args, expected", CONTROL_AND_INDEXING,
                         ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(CONTROL_AND_INDEXING)])
def test_control_flow_and_indexing(fn, args, expected):
    _check(fn, args, expected)


# --- arguments ------------------------------------------------------------------
def sum_sq(x):
    return np.sum(x * x)


def pair(x, y):
    return np.sum(x * y)


def vector_out(x):
    return x * 2.0


ARGUMENTS = [
    ("grad of a vector output", lambda: tx.grad(vector_out)(X1),
     TypeError, "scalar-output"),
    ("argnums out of range", lambda: tx.grad(pair, argnums=2)(X1, X1),
     Exception, "argnums"),
    ("masked array", lambda: tx.grad(sum_sq)(np.ma.array(X1, mask=[0, 1, 0])),
     ValueError, "masked arrays are not supported"),
    ("complex argument", lambda: tx.grad(sum_sq)(X1 + 1j),
     tx.TransformError, "complex"),
    ("vmap in_axes longer than the arguments", lambda: tx.vmap(sum_sq, in_axes=(0, 0))(X2),
     ValueError, "in_axes"),
    ("vmap of sizes that differ", lambda: tx.vmap(pair)(X2, np.ones((3, 3))),
     ValueError, "size"),
    ("vmap axis out of range", lambda: tx.vmap(sum_sq, in_axes=2)(X2),
     ValueError, "axis"),
    ("has_aux without a pair", lambda: tx.grad(lambda x: (np.sum(x), 1, 2), has_aux=True)(X1),
     TypeError, "two-element tuple"),
    ("jit static_argnames naming no parameter", lambda: tx.jit(pair, static_argnames="z"),
     ValueError, "z"),
    ("jit static_argnums out of range", lambda: tx.jit(pair, static_argnums=5),
     ValueError, "static_argnums"),
    ("a string where an array is expected", lambda: tx.grad(sum_sq)("abc"),
     TypeError, ""),
    ("jvp with tangents of another structure", lambda: tx.jvp(pair, (X1, X1), (X1,)),
     Exception, ""),
]


@pytest.mark.parametrize("call, error, words", [a[1:] for a in ARGUMENTS],
                         ids=[a[0] for a in ARGUMENTS])
def test_arguments(call, error, words):
    with pytest.raises(error, match=words):
        call()


def test_an_integer_argument_is_refused_by_grad_as_in_jax():
    with pytest.raises(TypeError, match="float"):
        tx.grad(sum_sq)(np.array([1, 2, 3]))


def test_the_callers_arrays_are_never_changed():
    x = X1.copy()
    tx.grad(s_slice_assign_bool)(x)
    tx.vmap(s_slice_assign_bool)(np.stack([x, x]))
    np.testing.assert_array_equal(x, X1)


# --- concurrency ---------------------------------------------------------------
def _threaded(fn, args_list):
    results, errors = [None] * len(args_list), []

    def run(i, args):
        try:
            results[i] = fn(*args)
        except Exception as exc:        # noqa: BLE001 - reported below
            errors.append(exc)
    threads = [threading.Thread(target=run, args=(i, a)) for i, a in enumerate(args_list)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    return results


def test_one_transform_called_from_many_threads_at_its_first_call():
    g = tx.grad(s_method_call_array)
    args = [(X1 * (1.0 + 0.1 * i),) for i in range(8)]
    got = _threaded(g, args)
    for (x,), r in zip(args, got):
        assert_tree_allclose(r, numerical_grad(s_method_call_array, (x,), 0), rtol=1e-6)


def test_many_transforms_of_one_function_built_from_many_threads():
    makers = [lambda: tx.grad(s_scan)(X1), lambda: tx.vmap(tx.grad(s_scan))(np.stack([X1] * 3)),
              lambda: tx.jvp(s_scan, (X1,), (np.ones(3),))[1],
              lambda: tx.value_and_grad(s_scan)(X1)[1]] * 2
    got = _threaded(lambda k: makers[k](), [(k,) for k in range(len(makers))])
    want = numerical_grad(s_scan, (X1,), 0)
    for k in (0, 3, 4, 7):
        assert_tree_allclose(got[k], want, rtol=1e-6)
    assert_tree_allclose(got[1], np.stack([want] * 3), rtol=1e-6)
    assert_tree_allclose(got[2], np.sum(want), rtol=1e-6)


def test_jit_called_from_many_threads_at_its_first_call():
    f = tx.jit(tx.grad(s_scan))
    args = [(X1 + 0.1 * i,) for i in range(4)]
    got = _threaded(f, args)
    for (x,), r in zip(args, got):
        assert_tree_allclose(r, tx.grad(s_scan)(x), rtol=1e-12)


# --- grad of an integer output: JAX's TypeError, eager and compiled alike ---

def _int_output(x):
    return int(x > 0.0) + 2


def _int_sum(x):
    return np.sum(x > 0.0)


@pytest.mark.parametrize("fn, arg", [(_int_output, 0.5), (_int_sum, np.array([0.5, -1.0]))],
                         ids=["python int", "numpy int"])
def test_grad_of_an_integer_output_is_jax_type_error(fn, arg):
    """grad of an int-valued function is not 0.0 (a silently wrong number):
    JAX raises TypeError naming the dtype, and so does tangent_x."""
    with pytest.raises(TypeError, match="real-valued outputs.*but got (int|bool)"):
        tx.grad(fn)(arg)


def test_jit_grad_of_an_integer_output_is_the_same_type_error():
    with pytest.raises(TypeError, match="real-valued outputs.*but got int"):
        tx.jit(tx.grad(_int_sum))(np.array([0.5, -1.0]))


def _sum_over_range(x, n):
    s = 0                     # Python's int until the loop adds a float
    for i in range(n):
        s = s + x * x
    return s


def _sum_in_while(x, n):
    s = 0
    i = 0
    while i < n:
        s = s + x * x
        i += 1
    return s


def _sum_over_items(x, n):
    s = 0
    for v in x[:n]:
        s = s + v * v
    return s


@pytest.mark.parametrize("fn, x", [(_sum_over_range, 1.5), (_sum_in_while, 1.5),
                                   (_sum_over_items, np.array([0.5, -1.0]))],
                         ids=["for range", "while", "for items"])
def test_an_int_started_loop_that_never_runs_is_an_int_output_compiled_too(fn, x):
    """Python's ``s`` is still the int 0 when the loop never runs: grad
    raises JAX's TypeError.  Numba holds ``s`` as a float (one type per
    variable), and jit(grad) returned a zero gradient; it now follows a
    flag saying the loop never assigned ``s``."""
    compiled = tx.jit(tx.grad(fn))
    for run in (tx.grad(fn), compiled):
        with pytest.raises(TypeError, match="real-valued outputs.*but got int"):
            run(x, 0)
    want = numerical_grad(lambda a: fn(a, 2), (x,))
    assert_tree_allclose(tx.grad(fn)(x, 2), want, rtol=1e-6)
    assert_tree_allclose(compiled(x, 2), tx.grad(fn)(x, 2), rtol=1e-12)
