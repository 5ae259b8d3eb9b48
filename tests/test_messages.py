"""Each refusal's message fits its cause (issue 17, item 12): it names the
user's file and line and gives the advice that helps for *that* cause, never
advice written for another (an async function is not "a file that changed",
a string method is not "a NumPy function", an array is never "an argument
to mark static")."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tangent_x as tx
from tangent_x import lax

HERE = os.path.basename(__file__)


def _line_of(marker):
    with open(__file__) as f:
        for i, line in enumerate(f, 1):
            if marker in line and "_line_of" not in line:
                return i
    raise AssertionError(marker)


def _at(marker):
    return f"{HERE}:{_line_of(marker)}"


# --- async functions ---------------------------------------------------------

async def _async_square(x):  # ASYNC-DEF
    return x * x


def test_async_function_is_refused_as_async():
    with pytest.raises(tx.TransformError) as info:
        tx.grad(_async_square)(1.0)
    message = str(info.value)
    assert _at("ASYNC-DEF") in message
    assert "async" in message and "plain def" in message
    assert "changed" not in message and "reload" not in message


# --- lambdas sharing a line --------------------------------------------------

_make_scaled = lambda c: (lambda x: x * x * c)  # NESTED-LAMBDAS  # noqa: E731
_double, _triple = (lambda x: x * 2.0), (lambda x: x * 3.0)  # noqa: E731


def test_nested_lambdas_on_one_line_are_told_apart():
    inner = _make_scaled(3.0)
    assert tx.grad(inner)(2.0) == pytest.approx(12.0)          # d(3 x^2) = 6 x
    # an inner lambda on the line of an outer one (as in a test's thunk)
    thunk = lambda: tx.grad(lambda x: x * x * 3.0)(2.0)  # noqa: E731
    assert thunk() == pytest.approx(12.0)


def test_two_lambdas_with_different_code_on_one_line():
    assert (tx.grad(_double)(1.0), tx.grad(_triple)(1.0)) == (2.0, 3.0)


def test_lambdas_python_cannot_tell_apart_get_an_accurate_message(tmp_path):
    """Without column positions (``-X no_debug_ranges``) two lambdas with the
    same arguments whose bytecode differs only in which closure cell they
    read cannot be matched to their source: the message says so (it used to
    claim they had 'the same code'); identical lambdas are simply either."""
    script = tmp_path / "two_lambdas.py"
    script.write_text(textwrap.dedent("""
        import tangent_x as tx

        def make():
            a, b = 2.0, 3.0
            return (lambda x: x * a), (lambda x: x * b)  # TWO

        same, also = (lambda x: x * 5.0), (lambda x: x * 5.0)
        assert tx.grad(same)(1.0) == 5.0 and tx.grad(also)(1.0) == 5.0
        f, g = make()
        try:
            tx.grad(f)(1.0)
        except TypeError as exc:
            print(exc)
    """))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run([sys.executable, "-X", "no_debug_ranges", str(script)],
                         capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "two_lambdas.py:6" in out.stdout
    assert "cannot tell which" in out.stdout and "own line" in out.stdout
    assert "same code" not in out.stdout


# --- methods -----------------------------------------------------------------

def _by_mode(x, mode):
    if mode.upper() == "DOUBLE":  # STR-METHOD
        return x * 2.0
    return x


_MODE = "double"


def _by_global_mode(x):
    if _MODE.upper() == "DOUBLE":  # GLOBAL-STR-METHOD
        return x * 2.0
    return x


def _cumulative(x):
    return np.sum(x.cumprod())  # ARRAY-METHOD


def test_string_method_on_an_argument_does_not_suggest_numpy():
    with pytest.raises(tx.TransformError) as info:
        tx.grad(_by_mode)(1.0, "double")
    message = str(info.value)
    assert _at("STR-METHOD") in message
    assert "mode.upper()" in message and "arrays have no method" in message
    assert "outside the transformed function" in message
    assert "NumPy function" not in message


def test_string_method_on_a_global_names_its_type():
    with pytest.raises(tx.TransformError) as info:
        tx.grad(_by_global_mode)(1.0)
    message = str(info.value)
    assert _at("GLOBAL-STR-METHOD") in message
    assert "str" in message and "outside the transformed function" in message
    assert "NumPy function" not in message


def test_unsupported_array_method_names_the_numpy_function():
    with pytest.raises(tx.TransformError) as info:
        tx.grad(_cumulative)(np.ones(3))
    message = str(info.value)
    assert _at("ARRAY-METHOD") in message
    assert "np.cumprod(x, ...)" in message


# --- jit: static argument names and numbers ------------------------------------

def _square_sum(x, scale=1.0):
    return np.sum(x * x) * scale


def test_static_argnames_naming_no_parameter_is_a_value_error():
    with pytest.raises(ValueError) as info:
        tx.jit(_square_sum, static_argnames="sacle")  # BAD-ARGNAME
    message = str(info.value)
    assert _at("BAD-ARGNAME") in message
    assert "'sacle'" in message and "_square_sum(x, scale=1.0)" in message


def test_static_argnums_out_of_range_is_a_value_error():
    with pytest.raises(ValueError) as info:
        tx.jit(_square_sum, static_argnums=2)  # BAD-ARGNUM
    message = str(info.value)
    assert _at("BAD-ARGNUM") in message
    assert "static_argnums=(2,)" in message and "from -2 to 1" in message


def test_valid_static_arguments_are_accepted_without_compiling():
    def takes_any(x, *args, **kwargs):
        return x

    # accepted at jit() time (nothing compiles until a call)
    tx.jit(_square_sum, static_argnums=-1)
    tx.jit(_square_sum, static_argnames=("scale",))
    tx.jit(takes_any, static_argnums=5, static_argnames="anything")


# --- jit: advice to mark an argument static only when it would help -------------

def _mean_along(x, axis):
    return np.sum(np.mean(x, axis=axis) ** 2)  # AXIS-ARGUMENT


def _median_rows(x):
    return np.sum(np.median(x, axis=0))  # MEDIAN-ROWS


@tx.custom_vjp
def _clipped(x):
    return x


_clipped.defvjp(lambda x: (x, None), lambda res, g: (np.clip(g, -1.0, 1.0),))


def _uses_custom(x):
    return np.sum(_clipped(x) * 3.0)  # CUSTOM-CALL


def test_static_advice_names_the_number_argument_it_depends_on():
    x = np.arange(6.0).reshape(2, 3)
    with pytest.raises(tx.TransformError) as info:
        tx.jit(_mean_along)(x, 1)
    assert _at("AXIS-ARGUMENT") in str(info.value)
    assert "'axis'" in info.value.hint and "static" in info.value.hint
    # and the advice works
    expected = np.sum(np.mean(x, axis=1) ** 2)
    assert tx.jit(_mean_along, static_argnums=1)(x, 1) == pytest.approx(expected)


def test_no_static_advice_for_an_array_argument():
    with pytest.raises(tx.TransformError) as info:
        tx.jit(_median_rows)(np.arange(6.0).reshape(2, 3))
    assert _at("MEDIAN-ROWS") in str(info.value)
    assert "static" not in info.value.hint and "disable_jit" in info.value.hint


def test_custom_vjp_compiles_under_jit_and_what_numba_cannot_compile_is_named():
    """A custom_vjp used to be an object Numba could not call (named, with
    no static advice); since #19 its primal and rules compile as Numba
    functions of their own, so jit runs it.  A primal Numba cannot compile
    is named at its own line, without advice to mark anything static."""
    x = np.array([1.0, 2.0])
    assert tx.jit(_uses_custom)(x) == pytest.approx(9.0)
    np.testing.assert_allclose(tx.jit(tx.grad(_uses_custom))(x), [1.0, 1.0])
    with pytest.raises(tx.TransformError) as info:
        tx.jit(_uses_spectral)(x)
    message = str(info.value)
    assert "fft" in message and _at("# SPECTRAL" + "-PRIMAL") in message
    assert "static" not in (info.value.hint or "")
    with tx.disable_jit():       # eagerly it runs
        np.testing.assert_allclose(tx.jit(_uses_spectral)(x),
                                   np.sum(np.real(np.fft.fft(x))))


@tx.custom_vjp
def _spectral(x):
    return np.real(np.fft.fft(x))  # SPECTRAL-PRIMAL


_spectral.defvjp(lambda x: (_spectral(x), None), lambda res, g: (g,))


def _uses_spectral(x):
    return np.sum(_spectral(x))


def _scaled_if(x, flag):  # SCALED-IF
    if flag:
        y = x * 2.0
    return np.sum(x * y)  # READS-Y


def test_unassigned_variable_under_jit_is_named_without_static_advice():
    """Python raises UnboundLocalError for flag=False; under jit with flag
    static the error names the variable and its line (it used to print the
    placeholder, ``<unbound y>``, and advise marking an argument static)."""
    with pytest.raises(UnboundLocalError):
        _scaled_if(np.ones(2), False)
    for fun in (_scaled_if, tx.grad(_scaled_if)):
        with pytest.raises(tx.TransformError) as info:
            tx.jit(fun, static_argnums=1)(np.ones(2), False)
        message = str(info.value)
        assert _at("READS-Y") in message
        assert "'y'" in message and "UnboundLocalError" in message
        assert "<unbound" not in message and "static" not in message
    np.testing.assert_allclose(tx.jit(_scaled_if, static_argnums=1)(np.ones(2), True), 4.0)


def test_names_tangent_x_made_up_never_reach_a_message():
    from tangent_x.errors import Origin
    from tangent_x.numba_stage.specialize.hints import describe_unassigned
    function = Origin(__file__, _line_of("SCALED-IF"))
    line = Origin(__file__, _line_of("READS-Y"), "return np.sum(x * y)  # READS-Y")
    assert describe_unassigned("y", line, function) == "the variable 'y'"
    made_up = describe_unassigned("pow_x_i", line, function)
    assert "pow_x_i" not in made_up and "assigned only on some paths" in made_up


def test_static_arguments_of_a_hessian_point_at_what_works():
    with pytest.raises(TypeError) as info:
        tx.jit(tx.hessian(_square_sum), static_argnums=1)
    assert "lambda" in str(info.value) and "functools.partial" not in str(info.value)
    x = np.array([1.0, 2.0])
    np.testing.assert_allclose(tx.jit(tx.hessian(lambda x: _square_sum(x, 3.0)))(x),
                               6.0 * np.eye(2))


def test_functools_partial_works_where_its_hint_pointed():
    # functools.partial was refused with a hint to use a lambda; it is now
    # transformed as the function it stands for (test_partials.py)
    import functools
    x = np.array([1.0, 2.0])
    np.testing.assert_allclose(tx.grad(functools.partial(_square_sum, scale=3.0))(x), 6.0 * x)
    np.testing.assert_allclose(tx.grad(lambda x: _square_sum(x, scale=3.0))(x), 6.0 * x)


# --- lax calls with keyword arguments --------------------------------------------

def _step(i, v):
    return v + i * v


def _fori_keywords(x, n):
    return lax.fori_loop(lower=0, upper=n, body_fun=_step, init_val=x)


def _fori_misspelled(x):
    return lax.fori_loop(low=0, upper=3, body_fun=_step, init_val=x)  # MISSPELLED


def _cond_keywords(x):
    return lax.cond(x > 0, true_fun=lambda v: v * v, false_fun=lambda v: -v, operand=x)


def _python_loop(x, n):
    for i in range(n):
        x = x + i * x
    return x


def test_fori_loop_with_keyword_arguments_under_jit():
    # value: (1 + 0)(1 + 1)(1 + 2) x = 6 x; derivative 6
    assert tx.jit(_fori_keywords)(1.5, 3) == pytest.approx(_python_loop(1.5, 3))
    assert tx.jit(tx.grad(_fori_keywords))(1.5, 3) == pytest.approx(6.0)


def test_lax_call_with_an_unknown_keyword_is_located():
    with pytest.raises(tx.TransformError) as info:
        tx.grad(_fori_misspelled)(1.5)
    message = str(info.value)
    assert _at("MISSPELLED") in message
    assert "'low'" in message and "fori_loop(lower, upper, body_fun, init_val" in message


def test_cond_with_keyword_arguments():
    assert tx.grad(_cond_keywords)(1.5) == pytest.approx(3.0)
    assert tx.grad(_cond_keywords)(-1.5) == pytest.approx(-1.0)


# --- vmap(grad(f)) of a non-scalar output ------------------------------------------

def _doubled(x):
    return x * 2.0


def _sin_sum(x):
    return np.sum(np.sin(x))


def test_vmap_of_grad_of_a_vector_output_says_what_grad_requires():
    xs = np.ones((4, 3))
    with pytest.raises(TypeError,
                       match=r"Gradient only defined for scalar-output functions\. "
                             r"Output had shape: \(3,\)"):
        tx.vmap(tx.grad(_doubled))(xs)
    with pytest.raises(TypeError, match="Gradient only defined for scalar-output"):
        tx.jit(tx.vmap(tx.grad(_doubled)))(xs)
    # a scalar per example is fine: each row's gradient is cos(row)
    np.testing.assert_allclose(tx.vmap(tx.grad(_sin_sum))(xs), np.cos(xs))


# --- an array written into one element, on a path the examples do not take ----------

def _array_into_element(x, y):
    c = y * 1.0
    if np.sum(x) > 0.0:
        return np.sum(c)
    c[-1] = c[1::2] * 2.0  # ARRAY INTO ELEMENT
    return np.sum(c)


def test_array_written_into_one_element_is_located_under_jit():
    # eagerly the path taken is fine and the other one is NumPy's own error
    y = np.array([1.0, 2.0, 3.0])
    assert _array_into_element(1.0, y) == 6.0
    with pytest.raises(ValueError, match="setting an array element with a sequence"):
        _array_into_element(-1.0, y)
    # compiled code types both paths: a located refusal whose hint fits
    from tangent_x.numba_stage.compile_errors import JitError
    with pytest.raises(JitError) as info:
        tx.jit(_array_into_element)(1.0, y)
    message = str(info.value)
    assert _at("ARRAY INTO ELEMENT") in message
    assert "1-d array into a place" in message and "v[0] or v.item()" in message


def _doubles(q):
    q += q                                  # changes its caller's array
    return np.sin(q[0])


def impure_cond(x, z):
    l = lax.cond(np.sum(x) > 0, lambda a: _doubles(z), lambda a: a[0], x)  # impure-cond
    return np.sum(z * l)


def impure_switch(x, z):
    s = np.sum(x)
    l = lax.switch(0 if s < -0.5 else (1 if s < 0.5 else 2),   # impure-switch
                   [lambda a: z[-1], lambda a: a[0], lambda a: _doubles(z)], x)
    return np.sum(z * l) + z[0]


def pure_copy(x, z):
    l = lax.cond(np.sum(x) > 0, lambda a: _doubles(z.copy()), lambda a: a[0], x)
    return np.sum(z * l)


def _impure_refused(fn, marker, transform):
    """The TransformError ``transform`` of ``fn(x, z)`` raises, located at
    the line marked ``marker``."""
    x, z = np.array([0.7, 0.2]), np.array([0.3, 0.5])
    wrapped = {"grad": lambda f: tx.grad(f, argnums=1),
               "vmap": lambda f: tx.vmap(f, in_axes=(0, None)),
               "jit": tx.jit}[transform](fn)
    args = (np.stack([x, -x]), z) if transform == "vmap" else (x, z)
    with pytest.raises(tx.TransformError) as error:
        wrapped(*args)
    assert f"{HERE}:{_line_of(marker)}" in str(error.value)
    return error.value


@pytest.mark.parametrize("fn, marker", [(impure_cond, "impure-cond"),
                                        (impure_switch, "impure-switch")],
                         ids=["cond", "switch"])
@pytest.mark.parametrize("transform", ["grad", "vmap", "jit"])
def test_a_lax_branch_that_changes_an_array_around_it_is_refused(fn, marker, transform):
    """A ``lax.cond``/``lax.switch`` branch must be pure, as in JAX: one that
    changes in place an array of the code around it (through a helper) is
    refused at the call's line, saying so (fuzz seed 640190: it left the
    array's name bound to a value made inside the branch only, an
    UnboundLocalError in generated code).  The same branch on a copy runs."""
    error = _impure_refused(fn, marker, transform)
    message = str(error)
    assert "branches must be pure" in message and "'z'" in message
    assert "a = a.copy()" in error.hint


def impure_fori(x, z):
    l = lax.fori_loop(0, 3, lambda i, a: a + _doubles(z), 0.0)  # impure-fori
    return l * np.sum(x)


def impure_scan(x, z):
    c, ys = lax.scan(lambda a, xi: (a + _doubles(z) * xi, a), 0.0, x)  # impure-scan
    return c + np.sum(ys)


def impure_while(x, z):
    def body(carry):
        z[0] += 1.0                         # a closure's array, changed at every step
        return carry + np.sum(z * x)
    return lax.while_loop(lambda c: c < 5.0, body, 0.0)  # impure-while


@pytest.mark.parametrize("fn, marker", [(impure_fori, "impure-fori"), (impure_scan, "impure-scan"),
                                        (impure_while, "impure-while")],
                         ids=["fori_loop", "scan", "while_loop"])
@pytest.mark.parametrize("transform", ["grad", "vmap", "jit"])
def test_a_lax_loop_body_that_changes_an_array_around_it_is_refused(fn, marker, transform):
    """A lax loop's body must be pure, as in JAX: one that changes in place
    an array of the code around it (through a helper, or its closure's
    array) is refused at the call's line.  The loop runs the body every
    step, so NumPy sees the change every step; the transforms followed it
    as if the body ran once (fuzz seed 721728: a silently wrong value in
    every mode), whether or not the array is read after the loop."""
    error = _impure_refused(fn, marker, transform)
    message = str(error)
    assert "loop bodies must be pure" in message and "'z'" in message
    assert "loop's carry" in error.hint


def _bumps(a):
    a += 1.0                                # changes the array it is given
    return a * 1.0


def carry_changed_in_place(x):
    return lax.fori_loop(0, 3, lambda i, a: _bumps(a), x) + x


def scan_x_changed_in_place(x):
    def body(a, xi):
        a += xi
        xi *= 2.0
        return a * 1.0, np.sum(xi)
    c, ys = lax.scan(body, x[0], x)
    return c + x[0] + np.sum(ys)


def result_changed_in_place_after_the_loop(x):
    y = lax.fori_loop(0, 2, lambda i, a: a, x)          # the body gives its carry back
    y += 1.0
    z = lax.while_loop(lambda c: False, lambda c: c * 2.0, x)     # no turn
    z *= 3.0
    return x * 2.0 + y + z


@pytest.mark.parametrize("fn", [carry_changed_in_place, scan_x_changed_in_place,
                                result_changed_in_place_after_the_loop],
                         ids=lambda f: f.__name__)
def test_a_lax_loop_gives_its_body_copies_as_jax_gives_values(fn):
    """``fori_loop(0, 3, body, x)`` with a body changing its carry in place:
    eager ``tx.lax`` gives the body a copy of ``x`` (and ``scan`` each ``x``
    as a row of a copy), so the caller's array is unchanged as in JAX, and
    the untransformed function, grad (against central differences), jit and
    jit(grad) agree.  Before, eager changed ``x`` at the first step and
    every transform disagreed with it."""
    x = np.array([[0.3, -0.2, 0.5], [0.1, 0.2, 0.3]]) if fn is scan_x_changed_in_place \
        else np.array([0.3, -0.2, 0.5])
    before = x.copy()

    def loss(x):
        return np.sum(np.sin(fn(x)))

    value = loss(x)
    np.testing.assert_array_equal(x, before)       # the caller's array is unchanged
    h = 1e-6
    fd = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = h
        fd[i] = (loss(x + e) - loss(x - e)) / (2 * h)
    v, g = tx.value_and_grad(loss)(x)
    np.testing.assert_allclose(v, value, rtol=1e-13)
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(tx.jit(loss)(x), value, rtol=1e-13)
    np.testing.assert_allclose(tx.jit(tx.grad(loss))(x), fd, rtol=1e-6, atol=1e-9)


def test_a_lax_branch_that_changes_a_copy_runs():
    x, z = np.array([0.7, 0.2]), np.array([0.3, 0.5])
    np.testing.assert_allclose(tx.jit(pure_copy)(x, z), pure_copy(x, z), rtol=1e-14)
    g = tx.grad(pure_copy, argnums=1)(x, z)
    h = 1e-6
    fd = [(pure_copy(x, z + h * e) - pure_copy(x, z - h * e)) / (2 * h) for e in np.eye(2)]
    np.testing.assert_allclose(g, fd, rtol=1e-6)
