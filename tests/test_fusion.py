"""Elementwise fusion under jit (numba_stage.fusion writes the kernels,
numba_stage.fused compiles them): a fused kernel gives the result of the
statements it replaces (same dtype, same shape, NaN and infinities as
NumPy), for arrays of several shapes with broadcasting and size-1 axes,
float32, float64 and integers; where fusing could change the result
(narrow integers, booleans, tuples) the statements run as written; fused
sums agree with NumPy's to a tolerance (their summation order differs,
see fused); gradients under jit of functions with such chains agree with
eager mode and with finite differences.

The statements are compared twice: compiled as written (Numba's own array
expressions: what the numba stage ran before fusion) and eagerly (NumPy)."""
import numba
import numpy as np
import pytest
from numba import types

import tangent_x as tx
from tangent_x.numba_stage.fused import _Fused, elementwise, elementwise_sum


def chain(x, b):
    y = x * x
    z = y + b * x
    return z - y * 0.5


def chain_with_division(x, b):
    y = x / b
    return y * y - x


fused_chain = elementwise(chain)
fused_division = elementwise(chain_with_division)
summed_chain = elementwise_sum(chain)
as_written = numba.njit(chain)
as_written_division = numba.njit(chain_with_division)


@numba.njit
def run_fused(x, b):
    return fused_chain(x, b)


@numba.njit
def run_division(x, b):
    return fused_division(x, b)


@numba.njit
def run_summed(x, b):
    return summed_chain(x, b)


def _arrays(dtype):
    rng = np.random.default_rng(0)

    def make(shape):
        if np.dtype(dtype).kind == "f":
            return rng.normal(size=shape).astype(dtype)
        return rng.integers(-50, 50, size=shape).astype(dtype)
    return make


SHAPES = [((7,), (7,)), ((3, 4), (4,)), ((3, 4), (3, 1)), ((1, 5), (4, 1)),
          ((2, 1, 3), (1, 4, 1)), ((3, 4), ()), ((0, 3), (3,)), ((6,), (1,))]


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_fused_map_is_the_statements_result(dtype, shapes):
    make = _arrays(dtype)
    x = make(shapes[0])
    b = make(shapes[1]) if shapes[1] else dtype(3)
    got = run_fused(x, b)
    compiled = as_written(x, b)
    assert got.dtype == compiled.dtype and got.shape == compiled.shape
    np.testing.assert_array_equal(got, compiled)
    eager = chain(x, b)
    assert got.shape == np.shape(eager)
    np.testing.assert_allclose(got, eager, rtol=1e-6 if dtype == np.float32 else 1e-15)


def test_which_types_fuse():
    f = _Fused(chain, False)
    a64, a32 = types.Array(types.float64, 2, "C"), types.Array(types.float32, 1, "A")
    i64, i32 = types.Array(types.int64, 2, "C"), types.Array(types.int32, 2, "C")
    assert f.fusable((a64, types.float64)) == types.float64
    assert f.fusable((a32, a32)) == types.float64              # * 0.5: a float64
    assert _Fused(chain_with_division, False).fusable((a32, a32)) == types.float32
    assert f.fusable((i64, types.int64)) == types.float64       # * 0.5
    # int32 * int32 is an int32 array but an int64 number; bool + bool a
    # bool array but an int: as written.  So are numbers alone, 0-d arrays,
    # tuples (shape arithmetic spelled with +) and complex numbers.
    assert f.fusable((i32, i32)) is None
    assert f.fusable((types.Array(types.boolean, 1, "C"), types.boolean)) is None
    assert f.fusable((types.float64, types.float64)) is None
    assert f.fusable((types.Array(types.float64, 0, "C"), types.float64)) is None
    assert f.fusable((types.UniTuple(types.intp, 2), types.UniTuple(types.intp, 2))) is None
    assert f.fusable((types.Array(types.complex128, 1, "C"), types.float64)) is None

    def power(x, n):
        y = x ** n
        return y + x
    p = _Fused(power, False)
    assert p.fusable((i64, types.int64)) is None                 # NumPy refuses n < 0
    assert p.fusable((a64, types.int64)) == types.float64


@pytest.mark.parametrize("dtype", [np.int32, np.int16, np.bool_])
def test_narrow_integers_and_booleans_run_as_written(dtype):
    x = (np.arange(12).reshape(3, 4) % 3).astype(dtype)
    b = (np.arange(4) % 2).astype(dtype)
    got, compiled = run_fused(x, b), as_written(x, b)
    assert got.dtype == compiled.dtype
    np.testing.assert_array_equal(got, compiled)


def test_tuples_run_as_written():
    def shapes(a, b):
        c = a + b
        return c + a
    f = elementwise(shapes)

    @numba.njit
    def run(x):
        return f(x.shape, (1,))
    assert run(np.ones((2, 3))) == (2, 3, 1, 2, 3)


def test_nan_and_infinities_as_numpy():
    x = np.array([1.0, 0.0, -1.0, np.inf, np.nan, -0.0])
    b = np.array([0.0, 0.0, 0.0, np.inf, 1.0, -0.0])
    with np.errstate(all="ignore"):
        eager = chain_with_division(x, b)
    got = run_division(x, b)
    np.testing.assert_array_equal(got, eager)           # nan == nan here
    np.testing.assert_array_equal(np.signbit(got), np.signbit(eager))


def test_shapes_that_do_not_broadcast_raise():
    with pytest.raises(ValueError, match="broadcast"):
        run_fused(np.ones((3, 4)), np.ones(3))
    with pytest.raises(ValueError, match="broadcast"):
        run_summed(np.ones((3, 4)), np.ones((2, 1)))


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
@pytest.mark.parametrize("shapes", SHAPES + [((1000, 1000), (1000,))], ids=str)
def test_fused_sum_is_numpys_sum(dtype, shapes):
    make = _arrays(dtype)
    x = make(shapes[0])
    b = make(shapes[1]) if shapes[1] else dtype(3)
    got = run_summed(x, b)
    want = np.sum(chain(x, b))
    # the dtype of the statements compiled as written (Numba types ``* 0.5``
    # as float64 next to float32; under tx.jit the weak_scalars pass makes
    # it NumPy's, see test_jit_fuses_and_agrees_with_eager)
    want_dtype = np.sum(as_written(x, b)).dtype
    assert _return_type(run_summed, x, b) == numba.from_dtype(want_dtype)
    # float sums are added in another order than NumPy's pairwise one
    scale = np.sum(np.abs(chain(x, b)).astype(np.float64))
    tol = (1e-6 if dtype == np.float32 else 1e-13) * max(scale, 1.0)
    assert abs(float(got) - float(want)) <= tol


def _return_type(dispatcher, *args):
    key = tuple(numba.typeof(a) for a in args)
    return next(s.return_type for s in dispatcher.nopython_signatures if s.args == key)


summed_division = elementwise_sum(chain_with_division)


@numba.njit
def run_summed_division(x, b):
    return summed_division(x, b)


def test_fused_sum_of_large_float32_is_accumulated_in_float64():
    x = np.full(3_000_000, 0.1, np.float32)
    got = run_summed_division(x, np.float32(0.5))
    exact = float(np.sum(chain_with_division(x, np.float32(0.5)).astype(np.float64)))
    assert _return_type(run_summed_division, x, np.float32(0.5)) == types.float32
    assert abs(float(got) - exact) <= 1e-6 * abs(exact)


# -- through tx.jit ------------------------------------------------------------

def poly(x):
    return x * x + x * 2.0


def scaled_rows(x, w, c):
    y = x * w - c
    return y * y + y / (1.0 + w * w)


def squared_norm(x, w):
    return np.sum((x - w) * (x - w) * 0.5)


def mixed_chain(x, w):
    h = np.tanh(x * w + 1.0)
    return np.sum(h * h + h * x)


@pytest.mark.parametrize("f, args", [
    (poly, (np.linspace(-2.0, 2.0, 12).reshape(3, 4),)),
    (scaled_rows, (np.linspace(-1.0, 1.0, 15).reshape(5, 3), np.linspace(0.5, 1.5, 3), 0.25)),
    (scaled_rows, (np.linspace(-1.0, 1.0, 15).reshape(5, 3).astype(np.float32),
                   np.linspace(0.5, 1.5, 3).astype(np.float32), np.float32(0.25))),
    (scaled_rows, (np.arange(6).reshape(2, 3), np.arange(1, 4), 2)),
    (squared_norm, (np.linspace(-1.0, 1.0, 8).reshape(4, 2), np.ones((1, 2)))),
])
def test_jit_fuses_and_agrees_with_eager(f, args):
    compiled = tx.jit(f)
    got, want = compiled(*args), f(*args)
    assert np.asarray(got).dtype == np.asarray(want).dtype
    assert np.shape(got) == np.shape(want)
    np.testing.assert_allclose(got, want, rtol=1e-6 if np.asarray(want).dtype == np.float32
                               else 1e-13)
    assert "@elementwise" in compiled.numba_source(*args)


@pytest.mark.parametrize("f, args, fused", [
    # squared_norm's backward chains are two operations each: not worth a kernel
    (squared_norm, (np.linspace(-1.0, 1.0, 8).reshape(4, 2), np.linspace(0.0, 1.0, 2)), False),
    (mixed_chain, (np.linspace(-1.0, 1.0, 12).reshape(3, 4), np.linspace(0.5, 1.5, 4)), True),
    (mixed_chain, (np.linspace(-1.0, 1.0, 4).reshape(4, 1), np.linspace(0.5, 1.5, 3)), True),
])
def test_gradients_of_chains_under_jit(f, args, fused):
    g = tx.jit(tx.grad(f, argnums=(0, 1)))
    got, want = g(*args), tx.grad(f, argnums=(0, 1))(*args)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    tx.test_util.check_grads(tx.jit(f), args, order=1, modes=("rev",))
    assert ("@elementwise" in g.numba_source(*args)) == fused


def thread_chain(x, w):
    y = x * w
    z = y + y * x
    return np.sum(x * z), z


def test_code_for_a_gpu_thread_keeps_the_statements_as_written():
    """The CUDA stage compiles one example's function alone, with
    ``fuse=False``: no fused kernels, the chain's statements as written
    (the CPU's jit of the same function fuses them)."""
    import tangent_x as tx
    x, w = np.linspace(0.1, 1.0, 8), np.linspace(1.0, 2.0, 8)
    fused = tx.jit(thread_chain)
    plain = tx.jit(thread_chain)
    plain.fuse = False
    assert "elementwise" in fused.numba_source(x, w)
    text = plain.numba_source(x, w)
    assert "elementwise" not in text and "x * w" in text
    np.testing.assert_allclose(plain(x, w)[0], thread_chain(x, w)[0], rtol=1e-14)


def named_like_the_implementation(out, shape, dtype, v, fn):
    y = out * shape + dtype
    return y * v - fn


fused_names = elementwise(named_like_the_implementation)
summed_names = elementwise_sum(named_like_the_implementation)


@numba.njit
def run_names(out, shape, dtype, v, n):
    return fused_names(out, shape, dtype, v, n), summed_names(out, shape, dtype, v, n)


def test_parameters_named_like_the_implementations_locals():
    """A kernel's parameters are the numba stage's names (``out`` was
    shadowed by the result array once: a wrong number)."""
    rng = np.random.default_rng(3)
    args = (rng.normal(size=(3, 4)), rng.normal(size=4), 0.5, rng.normal(size=(3, 1)), 2.0)
    got, total = run_names(*args)
    want = named_like_the_implementation(*args)
    np.testing.assert_allclose(got, want, rtol=1e-15)
    np.testing.assert_allclose(total, np.sum(want), rtol=1e-12)


def test_a_fused_chain_of_python_numbers_stays_weak():
    """A fused map of Python numbers (``1.0 / (size(a) / size(b))``, mean's
    seed) is a Python number to the weak-scalar pass, as the statements
    were: ``unreduce(over, y)`` of a float32 ``y`` stays float32 (it became
    float64 once fusion hid the number in a kernel's call)."""
    import ast
    import textwrap
    from tangent_x.numba_stage import fusion, weak_scalars
    body = ast.parse(textwrap.dedent("""
        n = size(y)
        m = size(s)
        count = n / m
        over = 1.0 / count
        g = unreduce(over, y)
        return g
    """)).body
    code, kernels, _ = fusion.fuse(body, ["y", "s"], None, {"np"}, {"f"})
    # sizes are numbers: no kernel (test_chains_of_numbers_get_no_kernel)
    assert kernels == [] and ast.unparse(code[3]) == "over = 1.0 / count"
    weak_scalars.weaken(list(code) + list(kernels), "weak_scalar", {"np"})
    assert ast.unparse(code[4]) == "g = unreduce(weak_scalar(over, y), y)"


def test_chains_of_numbers_get_no_kernel():
    """Ranks follow from the signature's: a chain of numbers (sizes, a
    scalar parameter, a loop's tape items) is left as written (a kernel
    there only costs compile time); one that may hold an array is fused."""
    import ast
    import textwrap
    from tangent_x.numba_stage import fusion
    body = ast.parse(textwrap.dedent("""
        n = size(y)
        count = n / a
        over = 1.0 / count
        t = None
        t = grown(t, a)
        t[0] = a
        b = t[0]
        c = b * b
        d = c - a
        e = y * over
        f = e * e + 1.0
        return f + d
    """)).body
    code, kernels, _ = fusion.fuse(body, ["y", "a"], None, {"np"}, {"f"}, {"y": 2, "a": 0})
    assert [k.name for k in kernels] == ["elementwise_f"]
    code, kernels, _ = fusion.fuse(ast.parse(textwrap.dedent("""
        c = b * b
        d = c - b * a
        return d
    """)).body, ["b", "a"], None, {"np"}, {"f"}, {"a": 0})
    assert [k.name for k in kernels] == ["elementwise_d"]     # b's rank unknown


def test_two_operations_on_arrays_are_left_as_written():
    """Fusing pays from two temporaries (three operations) or a closing
    sum: ``tanh(x @ w + b)``, one temporary, stays the array kernel."""
    import ast
    import textwrap
    from tangent_x.numba_stage import fusion
    code, kernels, _ = fusion.fuse(ast.parse(textwrap.dedent("""
        at = matmul(x, w)
        s = at + b
        h = vmath.tanh(s)
        e = h * h
        t = np.sum(e)
        return h, t
    """)).body, ["x", "w", "b"], "vmath", {"np"}, {"f"}, {"x": 2, "w": 2, "b": 1})
    assert [k.name for k in kernels] == ["elementwise_sum_t"]
    assert [ast.unparse(s) for s in code][1:3] == ["s = at + b", "h = vmath.tanh(s)"]


def in_place_chain(x, w):
    y = x
    z = x * x + w * 2.0 - x / w
    x *= z * z + 1.0
    y += z - x * w
    return np.sum(y * y), x, y, z


def test_in_place_updates_and_special_values_agree_with_eager():
    """An in-place update of an operand (``x *= ...``; ``y`` aliases ``x``)
    never joins a kernel, and the chains around it see the updated arrays;
    NaN, inf and a division by zero propagate as in NumPy (inf, NaN: no
    ZeroDivisionError inside the fused loop)."""
    x = np.array([[1.0, -2.0, np.nan], [0.0, np.inf, 3.0]])
    w = np.array([0.5, 0.0, -1.0])
    compiled = tx.jit(in_place_chain)
    with np.errstate(all="ignore"):
        got, want = compiled(x.copy(), w), in_place_chain(x.copy(), w)
    assert "@elementwise" in compiled.numba_source(x, w)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)


def three_transcendentals_broadcast(x, a):
    w = 1.0 + a * (x * (a * 0.98))
    return np.exp(np.tanh(np.log(w)))


def test_a_kernel_holds_at_most_two_vmath_calls():
    """exp(tanh(log(...))) of operands of two ranks, fused into one
    broadcasting kernel, kept LLVM's optimiser busy for minutes (fuzz seed
    300108); the chain is cut so that a kernel holds at most MAX_VMATH
    calls (the value: the test below)."""
    from tangent_x.numba_stage.fusion import MAX_VMATH
    x, a = np.linspace(0.1, 0.9, 3), np.ones((2, 3)) * 0.5
    code = tx.jit(three_transcendentals_broadcast).numba_source(x, a)
    kernels = code.split("@elementwise")[1:]
    assert kernels, code
    for kernel in kernels:
        body = kernel.split("\ndef ")[1].split("\n\n")[0]
        assert body.count("vmath.") <= MAX_VMATH, body
    assert code.count("vmath.") == 3


def test_a_chain_cut_between_kernels_is_eagers():
    x, a = np.linspace(0.1, 0.9, 3), np.ones((2, 3)) * 0.5
    np.testing.assert_allclose(tx.jit(three_transcendentals_broadcast)(x, a),
                               three_transcendentals_broadcast(x, a), rtol=1e-14)


def scaled(x, c):
    return x * c


summed_scaled = elementwise_sum(scaled)


@numba.njit
def run_summed_scaled(x, c):
    return summed_scaled(x, c)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
@pytest.mark.parametrize("shape", [(2, 3), (3, 2), (7,), (1, 7), (6, 1), ()], ids=str)
def test_a_sum_of_fewer_than_8_elements_is_numpys_bit_for_bit(dtype, shape):
    # NumPy adds them one by one from 0: a comparison at a tie decides as it
    # does there (np.sum(np.ones((2, 3)) * -0.04) < -0.24 is true; row
    # partial sums made it false: fuzz seed 620121)
    if shape == ():
        shape = (1,)
    c = dtype(-0.04) if np.dtype(dtype).kind == "f" else dtype(-3)
    for x in (np.ones(shape, dtype), np.arange(1, np.prod(shape) + 1, dtype=dtype).reshape(shape)
              * dtype(3) / (dtype(7) if np.dtype(dtype).kind == "f" else dtype(1))):
        x = x.astype(dtype)
        got = run_summed_scaled(x, c)
        want = np.sum(x * c)
        assert _return_type(run_summed_scaled, x, c) == numba.from_dtype(want.dtype)
        assert want.dtype.type(got) == want, (got, want)     # (a float32 boxes as a float)
    assert (run_summed_scaled(np.ones((2, 3)), -0.04) < -0.24) == (np.sum(np.ones((2, 3)) * -0.04) < -0.24)


def test_a_branch_on_a_sum_at_a_tie_goes_numpys_way_under_jit():
    import tangent_x as tx

    def f(x):
        if np.sum(np.ones((2, 3)) * (-0.04)) < (-0.24):       # -0.24000000000000002 < -0.24
            return x * 2.0
        return x * 3.0
    assert tx.jit(f)(1.5) == f(1.5) == 3.0
