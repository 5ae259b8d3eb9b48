"""Writes through an alias or a view of an argument (issue #17, item 2).

Inside the function a write is seen through every alias and view, as
Python does it: ``y = x``, ``v = x[1:]``, and the views NumPy functions
return (``x.T``, ``x.reshape(-1)``, ``x.ravel()``, ``np.swapaxes``,
``np.real``/``x.real`` ...), in
both directions (write the view, read the array; write the array, read the
view).  ``reshape``/``ravel`` copy where the layout does not allow a view,
and then NumPy's write is not seen: the same here.  The caller's arrays are
never changed, and an argument is the function's own array: the same array
passed twice is two arrays, eagerly and under jit alike.  Each case: the
value against NumPy, grad against central differences, jvp, vmap and
vmap(grad) against a loop over examples."""
import numpy as np
import pytest

import tangent_x as tx
from _fd import numerical_grad

A = np.array([[1.0, 2.0], [3.0, 5.0]])


def alias(x):
    y = x
    y[0, 0] = 5.0 * x[1, 0]
    return np.sum(x * A * x)


def slice_view(x):
    v = x[1:]
    v[0, 0] = 3.0 * x[0, 0] * x[1, 1]
    return np.sum(np.sin(x) * A)


def reshape_method(x):
    r = x.reshape(-1)
    r[0] = 5.0 * x[1, 0]
    return np.sum(x * A * x)


def reshape_function(x):
    r = np.reshape(x, (4,))
    r[3] = 5.0 * x[1, 0]
    return np.sum(x * A * x)


def ravel_method(x):
    r = x.ravel()
    r[1] = 2.0 * x[1, 1] * x[0, 0]
    return np.sum(x * A * x)


def ravel_function(x):
    r = np.ravel(x)
    r[2] = 2.0 * x[1, 1] * x[0, 0]
    return np.sum(x * A * x)


def transpose_attribute(x):
    t = x.T
    t[0, 1] = 3.0 * x[0, 0]
    return np.sum(x * A * x)


def transpose_function(x):
    t = np.transpose(x)
    t[0, 1] = 3.0 * x[1, 1]
    return np.sum(x * A * x)


def transpose_axes(x):
    t = x.transpose(1, 0)
    t[1, 0] = 3.0 * x[1, 1]
    return np.sum(x * A * x)


def swapaxes(x):
    t = np.swapaxes(x, 0, 1)
    t[0, 1] = 3.0 * x[0, 0]
    return np.sum(x * A * x)


def moveaxis(x):
    t = np.moveaxis(x, 0, 1)
    t[0, 1] = 3.0 * x[0, 0]
    return np.sum(x * A * x)


def flip(x):
    f = np.flip(x, 0)
    f[0, 0] = 2.0 * x[0, 1]
    return np.sum(x * A * x)


def squeeze(x):
    s = np.squeeze(x[None])
    s[0, 1] = 2.0 * x[1, 1]
    return np.sum(x * A * x)


def stepped(x):
    s = x[::2]
    s[0, 1] = 4.0 * x[1, 1]
    return np.sum(x * A * x)


def ellipsis(x):
    c = x[..., 0]
    c[1] = 7.0 * x[0, 1]
    return np.sum(x * A * x)


def view_of_view(x):
    r = x.reshape(-1)[1:]
    r[0] = 9.0 * x[0, 0]
    return np.sum(x * A * x)


def augmented_through_view(x):
    r = x.reshape(-1)
    r *= x[0, 1]
    return np.sum(x * A * x)


def augmented_through_transpose(x):
    t = x.T
    t[0] += x[1]
    return np.sum(x * A * x)


def write_array_read_reshape(x):
    r = x.reshape(-1)
    x[1, 0] = 5.0 * x[0, 0]
    return np.sum(r * np.arange(4.0) * r)


def write_array_read_transpose(x):
    t = x.T
    x[1, 0] = 5.0 * x[0, 0]
    return np.sum(t * A * t)


def asarray_alias(x):
    y = np.asarray(x)
    y[0, 0] = 5.0 * x[1, 0]
    return np.sum(x * A * x)


def two_views(x):
    r = x.ravel()
    t = x.T
    r[1] = 7.0 * x[0, 0]
    t[1, 1] *= 2.0
    return np.sum(r * np.arange(4.0)) + np.sum(x * A)


def flatten_copies(x):
    r = x.flatten()
    r[0] = 5.0 * x[1, 0]
    return np.sum(x * A * x) + np.sum(r * r)


def astype_copies(x):
    r = x.astype(np.float64)
    r[0, 0] = 5.0 * x[1, 0]
    return np.sum(x * A * x) + np.sum(r * r)


def in_a_loop(x):
    t = x.T
    for i in range(2):
        t[i, 0] = t[i, 0] * x[1, 1]
    return np.sum(x * A * x)


def real_view(x):
    r = np.real(x)          # a real array's np.real is the array itself
    r[0, 1] = 3.0 * x[1, 1]
    return np.sum(x * A * x)


def real_attribute_both_ways(x):
    r = x.real
    r[1] *= 2.0
    x[0, 0] = x[0, 1] * x[1, 0]       # and r sees the write into x
    return np.sum(r * A * r)


def augmented_through_a_view_of_a_temporary_view(x):
    b = x[::-1][-1]                     # x's first row, through a view no name holds
    b += 1.5 * x[1]                     # writes into x (it did not: session 22)
    return np.sum(x * A * x)


def view_of_a_temporary_view_after_its_array_changed(x):
    m = x * 1.0
    b = m[::-1][-1]
    m *= x                              # b sees it
    b += 1.0                            # and m sees this (it did not: session 22)
    return np.sum(m * A * m) + np.sum(b * b)


VIEWS_OF_TEMPORARIES = [augmented_through_a_view_of_a_temporary_view,
                        view_of_a_temporary_view_after_its_array_changed]
CASES = [*VIEWS_OF_TEMPORARIES, alias, slice_view, reshape_method, reshape_function,
         ravel_method, ravel_function,
         transpose_attribute, transpose_function, transpose_axes, swapaxes, moveaxis, flip,
         squeeze, stepped, ellipsis, view_of_view, augmented_through_view,
         augmented_through_transpose, write_array_read_reshape, write_array_read_transpose,
         asarray_alias, two_views, flatten_copies, astype_copies, in_a_loop, real_view,
         real_attribute_both_ways]


def numpy_of(f):
    return lambda x: f(np.copy(x))      # np.copy keeps the layout (order 'K')


def central_differences(f, x, eps=1e-6):
    """Like ``_fd.numerical_grad``, keeping ``x``'s memory layout (a reshape
    of a Fortran-ordered array copies, of a C-ordered one is a view)."""
    out = np.zeros(x.shape)
    for i in np.ndindex(*x.shape):
        up, down = np.copy(x), np.copy(x)
        up[i] += eps
        down[i] -= eps
        out[i] = (f(up) - f(down)) / (2 * eps)
    return out


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_value_grad_jvp(f):
    x = np.random.default_rng(0).uniform(0.5, 1.5, (2, 2))
    before = x.copy()
    ref = numpy_of(f)
    with tx.disable_jit():
        assert tx.jit(f)(x) == pytest.approx(ref(x), rel=1e-12)
    expected = numerical_grad(ref, (x,))
    np.testing.assert_allclose(tx.grad(f)(x), expected, rtol=1e-6, atol=1e-6)
    t = np.random.default_rng(1).normal(size=(2, 2))
    _, out_dot = tx.jvp(f, (x,), (t,))
    assert out_dot == pytest.approx(np.sum(expected * t), rel=1e-6)
    np.testing.assert_array_equal(x, before)        # the caller's array is never changed


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_vmap_and_vmap_of_grad_against_a_loop(f):
    X = np.random.default_rng(2).uniform(0.5, 1.5, (3, 2, 2))
    ref = numpy_of(f)
    np.testing.assert_allclose(tx.vmap(f)(X), [ref(X[b]) for b in range(3)], rtol=1e-12)
    np.testing.assert_allclose(tx.vmap(tx.grad(f))(X),
                               [numerical_grad(ref, (X[b],)) for b in range(3)],
                               rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("f", [reshape_method, ravel_function, two_views,
                               write_array_read_reshape], ids=lambda f: f.__name__)
def test_where_numpy_copies_the_write_is_not_seen(f):
    """A Fortran-ordered array: ``reshape(-1)``/``ravel`` copy, so the write
    does not reach ``x`` (nor a write into ``x`` the copy)."""
    x = np.asfortranarray(np.random.default_rng(3).uniform(0.5, 1.5, (2, 2)))
    ref = numpy_of(f)
    with tx.disable_jit():
        assert tx.jit(f)(x) == pytest.approx(ref(x), rel=1e-12)
    c = np.ascontiguousarray(x)
    assert ref(x) != pytest.approx(ref(c), rel=1e-6)      # the layout matters here
    np.testing.assert_allclose(tx.grad(f)(x), central_differences(ref, x), rtol=1e-6,
                               atol=1e-6)
    np.testing.assert_allclose(tx.grad(f)(c), central_differences(ref, c), rtol=1e-6,
                               atol=1e-6)


def test_a_write_into_a_read_only_view_is_refused_where_it_is():
    def f(x):
        d = np.diagonal(x)
        d[0] = 1.0
        return np.sum(x)
    with pytest.raises(ValueError):             # what NumPy does
        f(np.ones((2, 2)))
    with pytest.raises(tx.TransformError) as err:
        tx.grad(f)(np.ones((2, 2)))
    line = f.__code__.co_firstlineno + 2
    message = str(err.value)
    assert f"test_alias_views.py:{line}" in message
    assert "read-only" in message and "np.diagonal(...).copy()" in message


def written_twice(a, b):
    a[0] = 5.0 * b[1]
    a *= b
    return np.sum(a * b)


def test_the_same_array_passed_twice_is_two_arrays():
    """An argument is the function's own array (the caller's is never
    changed): passing one array twice gives what passing two copies gives,
    eagerly, compiled, under grad and vmap."""
    x = np.array([1.0, 2.0, 3.0])
    before = x.copy()
    expected = written_twice(x.copy(), x.copy())
    with tx.disable_jit():
        assert tx.jit(written_twice)(x, x) == pytest.approx(expected, rel=1e-12)
    assert tx.jit(written_twice)(x, x) == pytest.approx(expected, rel=1e-12)
    np.testing.assert_array_equal(x, before)
    got = tx.grad(written_twice, argnums=(0, 1))(x, x)
    expected_grad = numerical_grad(lambda a, b: written_twice(np.copy(a), np.copy(b)),
                                   (x, x), argnum=(0, 1))
    for g, e in zip(got, expected_grad):
        np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-6)
    X = np.random.default_rng(4).uniform(0.5, 1.5, (3, 3))
    np.testing.assert_allclose(tx.vmap(written_twice)(X, X),
                               [written_twice(X[b].copy(), X[b].copy()) for b in range(3)])
    np.testing.assert_array_equal(x, before)


@pytest.mark.slow        # Numba compiles: CI's slow step
def test_jit_follows_writes_through_views():
    x = np.random.default_rng(5).uniform(0.5, 1.5, (2, 2))
    for f in (reshape_method, transpose_attribute, real_attribute_both_ways,
              *VIEWS_OF_TEMPORARIES):
        assert tx.jit(f)(x) == pytest.approx(numpy_of(f)(x), rel=1e-12)
        np.testing.assert_allclose(tx.jit(tx.grad(f))(x), numerical_grad(numpy_of(f), (x,)),
                                   rtol=1e-6, atol=1e-6)


def test_a_write_into_the_real_part_of_a_complex_array():
    """``np.real`` of a complex array is a view of its real parts: a write
    into it changes the array, its imaginary parts kept (vmap and jit take
    complex values; derivatives refuse them)."""
    def f(z, v):
        w = z * 1.0
        r = np.real(w)
        r[0] = v
        return w
    z = np.array([1.0 + 2.0j, -0.5 + 0.25j, 3.0 - 1.0j])
    np.testing.assert_array_equal(f(z.copy(), 7.0), [7.0 + 2.0j, -0.5 + 0.25j, 3.0 - 1.0j])
    with tx.disable_jit():
        np.testing.assert_array_equal(tx.jit(f)(z, 7.0), f(z.copy(), 7.0))
    Z, V = np.stack([z, 2.0 * z]), np.array([7.0, -1.0])
    for in_axes in ((0, 0), (None, 0), (0, None)):
        batched = [Z[b] if in_axes[0] == 0 else z for b in range(2)]
        vs = [V[b] if in_axes[1] == 0 else 7.0 for b in range(2)]
        np.testing.assert_array_equal(
            tx.vmap(f, in_axes)(Z if in_axes[0] == 0 else z, V if in_axes[1] == 0 else 7.0),
            [f(batched[b].copy(), vs[b]) for b in range(2)])


@pytest.mark.slow        # Numba compiles: CI's slow step
def test_jit_writes_into_the_real_part_of_a_complex_array():
    def f(z, v):
        w = z * 1.0
        r = w.real
        r[1:] = v
        return w
    z = np.array([1.0 + 2.0j, -0.5 + 0.25j, 3.0 - 1.0j])
    out = tx.jit(f)(z, 7.0)
    np.testing.assert_array_equal(out, f(z.copy(), 7.0))
    assert out.dtype == np.complex128
    z64 = z.astype(np.complex64)
    assert tx.jit(f)(z64, 7.0).dtype == np.complex64


def test_vmap_of_grad_of_a_write_at_a_loop_counter():
    """vmap's rule for an index held in a tuple (``(i, 0)``) read the value
    the probe saw in its last step as a constant: every step wrote there."""
    def f(x):
        t = x * 1.0
        for i in range(2):
            t[i, 0] = t[i, 0] * x[1, 1]
        return np.sum(t * A * t)
    X = np.random.default_rng(6).uniform(0.5, 1.5, (3, 2, 2))
    np.testing.assert_allclose(tx.vmap(tx.grad(f))(X),
                               [numerical_grad(numpy_of(f), (X[b],)) for b in range(3)],
                               rtol=1e-6, atol=1e-6)


def test_the_issue_example():
    def f(x):
        y = x
        y[0] = 5.0 * x[1]
        return np.sum(x * x)
    x = np.array([1.2, 1.3, 0.9])
    assert tx.jit(f)(x) == pytest.approx(f(x.copy()), rel=1e-12)
    np.testing.assert_allclose(tx.grad(f)(x), [0.0, 52.0 * x[1], 2.0 * x[2]], rtol=1e-12)


def test_a_write_back_through_axes_known_only_at_run_time_is_refused_where_it_is():
    def f(x, axes):
        t = np.transpose(x, axes)
        t[0, 1] = 2.0
        return np.sum(x * A * x)
    with pytest.raises(tx.TransformError) as err:
        tx.grad(f)(np.ones((2, 2)), (1, 0))
    assert f"test_alias_views.py:{f.__code__.co_firstlineno + 2}" in str(err.value)
    assert "np.transpose(...).copy()" in str(err.value)


def _scales_in_place(x, y):
    y *= x                      # the caller's array
    return np.sum(y * y)


def _caller_of_the_same_name(x, y):
    s = _scales_in_place(x, y)
    return s + np.sum(y)        # the caller's 'y', changed by the helper


def _scales_then_rebinds(x, y):
    y *= x
    y = 0.7 * y + 0.3 * x       # the helper's 'y' rebound: the caller's stays changed
    return np.sum(y * y)


def _caller_of_a_helper_that_rebinds(x, y):
    s = _scales_then_rebinds(x, y)
    return s + np.sum(y)


@pytest.mark.parametrize("f", [_caller_of_the_same_name, _caller_of_a_helper_that_rebinds])
def test_a_helpers_augmented_change_reaches_a_caller_variable_of_the_same_name(f):
    """``y *= x`` in a helper whose parameter has the caller's variable's
    name: the check for other names sharing the array skipped every name
    'y', the caller's too, so every transform left the caller's 'y' as it
    was (a wrong value, found while testing rejoins)."""
    x, y = np.array([0.1, 0.2, 0.3]), np.array([1.0, 2.0, 0.5])
    want = f(x.copy(), y.copy())
    for run in (tx.jit(f), lambda a, b: tx.jvp(f, (a, b), (a, b))[0],
                lambda a, b: tx.vmap(f)(a[None], b[None])[0]):
        np.testing.assert_allclose(run(x.copy(), y.copy()), want, rtol=1e-14)
    g = tx.grad(f, argnums=(0, 1))(x.copy(), y.copy())
    for i in (0, 1):
        np.testing.assert_allclose(
            g[i], numerical_grad(lambda a, b: f(a.copy(), b.copy()), (x, y), i),
            rtol=1e-6, atol=1e-9)


def _shrinks_in_place(q):
    q -= 1.23 * q                       # the caller's array
    return q


def _calls_it_in_a_loop(y, z):
    c = y * 1.0
    for i in range(1, 3):
        c[i] = c[i] * _shrinks_in_place(z)[0] + np.sin(c[i - 1])
    return c + z                        # z: changed by both calls


def test_a_helper_called_in_a_loop_changes_its_argument_for_the_caller():
    """Fuzz seed 440845: the loop's body changed ``z`` through the helper,
    but the loop carried only what its own code assigns, so after the loop
    ``z`` was the array from before it, in every transform.  Such a name is
    now carried too."""
    y, z = np.array([0.37, -0.5, -0.43]), np.array([-0.32, 0.53, 0.35])
    want = _calls_it_in_a_loop(y.copy(), z.copy())
    np.testing.assert_allclose(tx.jit(_calls_it_in_a_loop)(y.copy(), z.copy()), want,
                               rtol=1e-14)
    np.testing.assert_allclose(tx.vmap(_calls_it_in_a_loop)(y[None].copy(), z[None].copy())[0],
                               want, rtol=1e-14)
    g = tx.grad(lambda a, b: np.sum(np.sin(_calls_it_in_a_loop(a, b))), argnums=(0, 1))(
        y.copy(), z.copy())
    for i in (0, 1):
        np.testing.assert_allclose(g[i], numerical_grad(
            lambda a, b: np.sum(np.sin(_calls_it_in_a_loop(a.copy(), b.copy()))), (y, z), i),
            rtol=1e-6, atol=1e-9)


# --- views of views through temporaries, changed in every order --------------
# b = m<chain>: a view of a view no name holds; then changes of b and of m in
# each order.  Each program is written to a file (tangent_x reads source) and
# checked against NumPy: value, jvp, grad against central differences, vmap.
# Before session 22 a change of b did not reach m (check_shared looked one
# base up), and after a change the chain was forgotten (update_if_array's
# choice gave out no unnamed view between).
CHAINS = ["[::-1][-1]", "[::-1][:, ::-1][0]", "[1:][0]", "[:, ::2][::-1]", ".T[::-1].T"]
ORDERS = [["b"], ["m", "b"], ["b", "m"], ["b", "m", "b"], ["m", "b", "m"]]
_CHANGES = {"b": "    b *= 1.5 + x[1, :b.shape[-1]] * 0.0\n    b += 0.25\n",
            "m": "    m *= x\n"}


def _chain_program(chain, order):
    body = "".join(_CHANGES[k] for k in order)
    return ("import numpy as np\n\n\ndef f(x):\n"
            "    m = np.stack([x[0], 2.0 * x[1]]) * 1.0\n"
            f"    b = m{chain}\n{body}"
            "    return np.sum(m * m * np.arange(1.0, 4.0)) + np.sum(b * b)\n")


@pytest.mark.parametrize("order", ORDERS, ids=lambda o: "-".join(o))
@pytest.mark.parametrize("chain", CHAINS)
def test_views_of_temporary_views_follow_numpy(chain, order, tmp_path):
    import importlib.util
    path = tmp_path / "chain_program.py"
    path.write_text(_chain_program(chain, order))
    spec = importlib.util.spec_from_file_location(f"chain_{abs(hash((chain, *order)))}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    f = module.f
    x = np.random.default_rng(3).uniform(0.5, 1.5, (2, 3))
    ref = numpy_of(f)
    assert tx.jvp(f, (x,), (np.ones((2, 3)),))[0] == pytest.approx(ref(x), rel=1e-12)
    np.testing.assert_allclose(tx.grad(f)(x), central_differences(ref, x), rtol=1e-6, atol=1e-6)
    X = np.stack([x, 2.0 - x])
    np.testing.assert_allclose(tx.vmap(f)(X), [ref(X[0]), ref(X[1])], rtol=1e-12)
