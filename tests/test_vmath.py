"""The numba stage's vectorisable math (``tangent_x.numba_stage.vmath``) and
the elementwise fusion around it (``numba_stage.fusion``).

Accuracy is measured in float64 ulps of the exactly rounded result, using
NumPy's ``longdouble`` functions (x87 80-bit on x86-64: 11 more bits) as the
reference; where ``longdouble`` is no wider than float64 the reference is
NumPy's float64 result and the bound one ulp looser.  Special values
(NaN, +-inf, +-0.0, overflow and underflow thresholds) must equal NumPy's
result exactly, sign of zero included.
"""
import ast
import os
import sys
import textwrap

import numba
import numpy as np
import pytest

import tangent_x as tx
from tangent_x.numba_stage import fusion, vmath

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "examples"))

import basics  # noqa: E402

WIDE = np.finfo(np.longdouble).nmant > np.finfo(np.float64).nmant
MAX_ULP = {"exp": 1.0, "expm1": 1.3, "log": 1.0, "log1p": 1.3, "tanh": 1.1}
NAMES = sorted(MAX_ULP)


def _compiled(name):
    kernel = getattr(vmath, name)
    return numba.njit(lambda x: kernel(x))


_COMPILED = {}


def compiled(name):
    if name not in _COMPILED:
        _COMPILED[name] = _compiled(name)
    return _COMPILED[name]


def _grid(rng, lo, hi, n):
    """``n`` magnitudes log-uniform in [lo, hi], with both signs."""
    m = np.exp(rng.uniform(np.log(lo), np.log(hi), n))
    return np.concatenate([m, -m])


def _inputs(name):
    rng = np.random.default_rng(7)
    x = np.concatenate([_grid(rng, 5e-324, 1e-300, 2000), _grid(rng, 1e-300, 1e-20, 20000),
                        _grid(rng, 1e-20, 1e-5, 20000), _grid(rng, 1e-5, 1.0, 60000),
                        _grid(rng, 1.0, 30.0, 60000), _grid(rng, 30.0, 1e3, 20000),
                        rng.uniform(-2.0, 2.0, 60000), np.linspace(-1.0, 1.0, 20001)])
    if name == "log":
        x = np.concatenate([np.abs(x), _grid(rng, 1e3, 1e308, 20000)[:20000],
                            1.0 + np.linspace(-1e-6, 1e-6, 2001)])
    if name == "log1p":
        x = x[x > -1.0]
    if name in ("exp", "expm1"):
        x = x[x < 709.7]
    return x


def _ulps(got, x, name):
    """|got - f(x)| in ulps of the correctly rounded float64 result."""
    if WIDE:
        ref = getattr(np, name)(x.astype(np.longdouble))
        r64 = ref.astype(np.float64)
        err = np.abs(got.astype(np.longdouble) - ref)
    else:
        r64 = getattr(np, name)(x)
        err = np.abs(got - r64)
    keep = np.isfinite(r64) & (r64 != 0)
    return (err[keep] / np.spacing(np.abs(r64[keep]))).astype(np.float64), x[keep]


@pytest.mark.parametrize("name", NAMES)
def test_float64_accuracy_against_a_wider_reference(name):
    x = _inputs(name)
    got = compiled(name)(x)
    assert got.dtype == np.float64 and got.shape == x.shape
    ulps, where = _ulps(got, x, name)
    bound = MAX_ULP[name] + (0.0 if WIDE else 1.0)
    worst = int(np.argmax(ulps))
    assert ulps[worst] <= bound, f"{name}({where[worst]!r}) is off by {ulps[worst]:.2f} ulp"
    # and mostly exactly NumPy's result
    assert np.mean(got == getattr(np, name)(x)) > 0.75


SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 5e-324, -5e-324,
           2.2250738585072014e-308, -2.2250738585072014e-308, 1e-310, -1e-310,
           2.0 ** -54, -(2.0 ** -54), 2.0 ** -53, 1.0, -1.0, 0.5, -0.5,
           np.log(2) / 2, -np.log(2) / 2, 709.782712893384, 709.7827128933841, 710.0,
           -708.3964185322641, -708.4, -745.1332191019411, -745.1332191019412, -746.0,
           -36.7, -37.5, -38.0, -40.0, -1e300, 1e300, 19.0, 20.0, 22.0, 23.0, 44.0, -22.0,
           np.finfo(np.float64).max, -np.finfo(np.float64).max, 1.0 - 2.0 ** -53,
           1.0 + 2.0 ** -52, -1.0 + 2.0 ** -53, -1.0 - 2.0 ** -52, -0.9999999999999999]


@pytest.mark.parametrize("name", NAMES)
def test_special_values_like_numpy(name):
    x = np.array(SPECIAL)
    with np.errstate(all="ignore"):
        want = getattr(np, name)(x)
    got = compiled(name)(x)
    assert np.array_equal(np.isnan(got), np.isnan(want)), x[np.isnan(got) != np.isnan(want)]
    exact = ~np.isnan(want) & (np.isinf(want) | (want == 0) | (np.abs(want) == 1))
    if WIDE:
        # NumPy's tanh(19.0) is 1.0, but the correctly rounded result is
        # 1 - 2**-53 (tanh(x) rounds to 1 only from x = 19.06): that one is
        # as good, wherever it is the correctly rounded value
        with np.errstate(all="ignore"):
            rounded = getattr(np, name)(x.astype(np.longdouble)).astype(np.float64)
        want = np.where(exact & (got == rounded), rounded, want)
    assert np.array_equal(got[exact], want[exact]), x[exact][got[exact] != want[exact]]
    assert np.array_equal(np.signbit(got[exact]), np.signbit(want[exact]))
    finite = np.isfinite(want) & ~exact
    ulps = np.abs(got[finite] - want[finite]) / np.spacing(np.abs(want[finite]))
    assert np.all(ulps <= MAX_ULP[name] + 1.0), x[finite][ulps > MAX_ULP[name] + 1.0]


def test_tanh_across_the_switch_between_its_branches():
    """tanh64 computes a rational approximation below |x| = 0.8 and
    1 - 2/(exp(2|x|) + 1) from there: both sides of the switch, and of the
    saturation at 22, are as accurate as anywhere else, and tanh is
    monotone across them."""
    split = vmath._TANH_SPLIT
    x = np.concatenate([split + np.arange(-2000, 2001) * np.spacing(split),
                        np.linspace(split - 1e-3, split + 1e-3, 20001),
                        np.linspace(21.9, 22.1, 2001)])
    x = np.concatenate([x, -x])
    got = compiled("tanh")(x)
    ulps, where = _ulps(got, x, "tanh")
    bound = MAX_ULP["tanh"] + (0.0 if WIDE else 1.0)
    assert ulps.max() <= bound, f"tanh({where[int(np.argmax(ulps))]!r}) is off by {ulps.max():.2f} ulp"
    order = np.argsort(x, kind="stable")
    assert np.all(np.diff(got[order]) >= 0.0)


@pytest.mark.parametrize("name", NAMES)
def test_float32_is_rounded_once_from_float64(name):
    x = _inputs(name)
    x = x[np.abs(x) < 80.0].astype(np.float32)
    got = compiled(name)(x)
    assert got.dtype == np.float32
    ref = getattr(np, name)(x.astype(np.float64))
    want = ref.astype(np.float32)
    keep = np.isfinite(want) & (want != 0)
    ulps = np.abs(got[keep].astype(np.float64) - want[keep]) / np.spacing(np.abs(want[keep]))
    assert ulps.max() <= 1.0
    assert compiled(name)(np.float32(0.5)) == np.float32(getattr(np, name)(np.float64(0.5)))


@pytest.mark.parametrize("name", NAMES)
def test_shapes_layouts_and_dtypes(name):
    rng = np.random.default_rng(3)
    a = rng.uniform(0.1, 2.0, (6, 5))
    f = compiled(name)
    npf = getattr(np, name)
    for value in (a, a.T, a[::2, 1:], a[:, 0], np.asarray(a[0, 0])):
        got = f(value)
        assert got.shape == np.shape(value)
        np.testing.assert_allclose(got, npf(value), rtol=4e-16 * MAX_ULP[name] * 2, atol=0)
    ints = np.arange(1, 7)
    np.testing.assert_allclose(f(ints), npf(ints), rtol=1e-15)
    assert f(ints).dtype == np.float64
    assert f(0.75) == pytest.approx(npf(0.75), rel=1e-15, abs=0)
    assert f(2) == pytest.approx(npf(2), rel=1e-15, abs=0)
    z = np.array([0.5 + 0.25j, 1.5 - 1.0j])           # not ours: Numba's own
    np.testing.assert_allclose(f(z), npf(z), rtol=1e-14)
    np.testing.assert_allclose(f(z[0]), npf(z[0]), rtol=1e-14)


def test_python_calls_are_numpy():
    x = np.linspace(-3, 3, 7)
    for name in NAMES:
        y = getattr(vmath, name)(np.abs(x) if name.startswith("log") else x)
        assert np.array_equal(y, getattr(np, name)(np.abs(x) if name.startswith("log") else x))


@pytest.mark.parametrize("name", NAMES)
def test_compiled_loop_is_vectorised(name, monkeypatch):
    """The array loop's optimised LLVM IR works on vectors of doubles and
    calls no scalar libm function (what Numba's own ``np.tanh`` does).  On
    float64 arrays the loop is a C callable compiled beside the caller
    (numba_stage/beside.py), which the caller calls through its slot: its
    generated module is compiled again here (not loaded from Numba's disk
    cache, which keeps no LLVM IR).  Optimised as users' code is: at
    Numba's default level, not the test run's 0 (conftest.py; Numba reads
    the level at each optimisation)."""
    monkeypatch.setattr(numba.config, "OPT", type(numba.config.OPT)(3))
    f = _compiled(name)
    x = np.linspace(0.1, 2.0, 7)
    np.testing.assert_allclose(f(x), getattr(np, name)(x), rtol=1e-15)
    (caller,) = f.inspect_llvm().values()
    kernel = vmath.ARRAY_KERNELS[getattr(vmath, name)]
    assert kernel.symbol in caller and "x double>" not in caller
    llvm = numba.cfunc(kernel.signature)(kernel.module().entry).inspect_llvm()
    assert "x double>" in llvm
    assert f"@{name}(" not in llvm and "@numba_" + name not in llvm


# -- the numba stage ---------------------------------------------------------

def test_per_example_gradient_is_one_fused_kernel():
    g = tx.jit(tx.vmap(tx.grad(basics.tanh)))
    x = np.random.default_rng(0).normal(size=1001) * 4
    np.testing.assert_allclose(g(x), 1.0 - np.tanh(x) ** 2, rtol=1e-12, atol=1e-15)
    source = g.numba_source()
    assert source.count("@elementwise") == 1 and "vmath.tanh(x)" in source
    body = source[source.index("def vmap_grad_tanh"):].splitlines()[1:]
    statements = [line.strip() for line in body if not line.strip().startswith("#")]
    assert statements == ["x_bar = elementwise_x_bar(x)", "return x_bar"]


def test_mlp_hidden_layer_calls_the_array_kernel():
    # two operations (``tanh(x @ w + b)``) are not fused (numba_stage/fusion.py,
    # _PAYS): tanh stays vmath's array kernel, compiled beside the caller
    from mlp import loss, init_params
    rng = np.random.default_rng(1)
    params = init_params([6, 4, 2])
    x, y = rng.normal(size=(5, 6)), rng.normal(size=(5, 2))
    g = tx.jit(tx.grad(loss))
    got = g(params, x, y)
    want = tx.grad(loss)(params, x, y)
    for a, b in zip(tx.tree_util.tree_leaves(got), tx.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    source = g.numba_source()
    assert "hidden = vmath.tanh(at_x_plus_params_0_b)" in source
    assert "@elementwise" not in source


def softplus_chain(x):
    e = np.exp(x)
    s = np.log1p(e)
    return np.sum(s * s + e)


def logistic_like(x, w):
    z = x * w
    t = np.tanh(0.5 * z)
    p = 0.5 * t + 0.5
    return np.sum(p * (1.0 - p) + np.expm1(z) * 1e-3 + np.log(p))


@pytest.mark.parametrize("f, args", [
    (softplus_chain, (np.linspace(-3.0, 3.0, 7),)),
    (logistic_like, (np.linspace(-2.0, 2.0, 12).reshape(3, 4), np.linspace(0.5, 1.5, 4))),
    (logistic_like, (np.linspace(-2.0, 2.0, 4).reshape(4, 1), np.linspace(0.5, 1.5, 3))),
    (logistic_like, (np.float64(0.3), np.float64(1.2))),
])
def test_fused_gradients_under_jit(f, args):
    """Gradients whose numba stage uses the kernels (fused or not) agree
    with finite differences, and with eager mode, on several shapes
    including broadcasting and size-1 axes."""
    tx.test_util.check_grads(tx.jit(f), args, order=1, modes=("rev",))
    grads = tx.jit(tx.grad(f, argnums=tuple(range(len(args)))))(*args)
    eager = tx.grad(f, argnums=tuple(range(len(args))))(*args)
    for a, b in zip(grads, eager):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


# -- fusion.fuse on statements -------------------------------------------------

def _fuse(source, params=("x", "w")):
    body = ast.parse(textwrap.dedent(source)).body
    code, kernels, _ = fusion.fuse(body, list(params), "vmath", {"np"}, {"f"})
    return [ast.unparse(s) for s in code], [ast.unparse(k) for k in kernels]


def test_shared_intermediate_becomes_a_kernel():
    code, kernels = _fuse("""
        y = vmath.tanh(x)
        y2 = y * y
        g = 1.0 - y2
        return g
    """)
    assert code == ["g = elementwise_g(x)", "return g"]
    assert kernels == ["@elementwise\ndef elementwise_g(x):\n    y = vmath.tanh(x)\n"
                       "    y2 = y * y\n    return 1.0 - y2"]


def test_tree_becomes_a_kernel_too():
    """A tree is one expression Numba would fuse, but into a result it
    allocates itself (see fused: huge pages), so it is a kernel as well
    from three operations on; two stay as written (fusion: a kernel's
    compile pays only from two temporaries, as ``tanh(x @ w + b)``)."""
    code, kernels = _fuse("""
        z = x + w
        u = z * w
        h = vmath.tanh(u)
        return h
    """)
    assert code == ["h = elementwise_h(x, w)", "return h"]
    assert kernels == ["@elementwise\ndef elementwise_h(x, w):\n    z = x + w\n"
                       "    u = z * w\n    return vmath.tanh(u)"]
    code, kernels = _fuse("""
        z = x + w
        h = vmath.tanh(z)
        return h
    """)
    assert code == ["z = x + w", "h = vmath.tanh(z)", "return h"] and kernels == []


def test_values_used_later_are_not_fused():
    code, kernels = _fuse("""
        y = vmath.exp(x)
        z = y * w
        return (z, y)
    """)
    assert code == ["y = vmath.exp(x)", "z = y * w", "return (z, y)"] and kernels == []


@pytest.mark.parametrize("between", ["x = x + 1.0", "mask_assign(x, x > 0.0, 0.0)",
                                     "w = np.sum(x)"])
def test_statements_in_between_are_never_reordered(between):
    code, kernels = _fuse(f"""
        y = vmath.exp(x)
        {between}
        z = y * y
        return z
    """, params=("x",))
    assert code == ["y = vmath.exp(x)", between, "z = y * y", "return z"] and kernels == []


def test_plain_arithmetic_is_fused_with_multiple_uses():
    code, kernels = _fuse("""
        y = x * w
        z = y + y * x
        return z
    """)
    assert code == ["z = elementwise_z(x, w)", "return z"]
    assert kernels == ["@elementwise\ndef elementwise_z(x, w):\n    y = x * w\n"
                       "    return y + y * x"]


def test_one_statement_is_left_to_numba():
    code, kernels = _fuse("""
        z = x * w + 1.0
        return z
    """)
    assert code == ["z = x * w + 1.0", "return z"] and kernels == []


def test_a_closing_sum_joins_the_group():
    code, kernels = _fuse("""
        y = x * x
        s = np.sum(y)
        t = np.sum(x * w)
        return (s, t)
    """)
    assert code == ["s = elementwise_sum_s(x)", "t = np.sum(x * w)", "return (s, t)"]
    assert kernels == ["@elementwise_sum\ndef elementwise_sum_s(x):\n    return x * x"]


@pytest.mark.parametrize("call", ["np.sum(y, axis=0)", "np.sum(y, 0)", "np.mean(y)"])
def test_only_a_whole_sum_joins(call):
    code, kernels = _fuse(f"""
        y = x * x
        s = {call}
        return s
    """)
    assert code == ["y = x * x", f"s = {call}", "return s"] and kernels == []


def test_a_summed_value_read_again_is_not_fused():
    code, kernels = _fuse("""
        y = x * x
        s = np.sum(y)
        return (s, y)
    """)
    assert code == ["y = x * x", "s = np.sum(y)", "return (s, y)"] and kernels == []


def test_loop_bodies_are_fused_too():
    code, kernels = _fuse("""
        for i in range(3):
            y = vmath.tanh(x)
            x = 1.0 - y * y
        return x
    """, params=("x",))
    assert code[0] == "for i in range(3):\n    x = elementwise_x(x)"
    assert kernels == ["@elementwise\ndef elementwise_x(x):\n    y = vmath.tanh(x)\n"
                       "    return 1.0 - y * y"]


def test_a_parameter_redefined_by_the_group_stays_its_input():
    code, kernels = _fuse("""
        y = vmath.tanh(x)
        y2 = y * y
        x = y2 - y
        z = x + 1.0
        return z
    """, params=("x",))
    assert code == ["x = elementwise_x(x)", "z = x + 1.0", "return z"]
    assert kernels == ["@elementwise\ndef elementwise_x(x):\n    y = vmath.tanh(x)\n"
                       "    y2 = y * y\n    return y2 - y"]


def _tanh_fit_error(p, q):
    """Worst absolute error of ``tanh(a)/a - 1 ~ g P(g) / Q(g)`` (``g = a*a``)
    over ``0 < a < SPLIT`` on an even grid (not the fit's Chebyshev nodes),
    evaluated in longdouble."""
    ld = np.longdouble
    a = np.linspace(0.0, vmath._TANH_SPLIT, 20001).astype(ld)[1:]
    g = a * a
    exact = np.tanh(a) / a - 1
    approx = g * np.polyval(np.array(p, ld)[::-1], g) / np.polyval(np.array(q, ld)[::-1], g)
    return float(np.max(np.abs(approx - exact)))


def _exp_fit_error(c):
    """Worst absolute error of ``(exp(r) - 1 - r) / r**2 ~ C(r)`` over
    ``|r| <= ln2/2`` on an even grid, the reference by its series in
    longdouble."""
    import math
    ld = np.longdouble
    r = np.linspace(-math.log(2) / 2, math.log(2) / 2, 20001).astype(ld)
    exact = sum(r ** k / ld(math.factorial(k + 2)) for k in range(30))
    return float(np.max(np.abs(np.polyval(np.array(c, ld)[::-1], r) - exact)))


def test_tanh_fitting_script_fits_as_accurately_as_the_shipped_constants():
    """vmath's tanh constants come from tools/fit_vmath_tanh.py.  Rerunning
    the script gives fits as accurate as the shipped ones, with the same
    split and degrees (so a changed split or degree can be refitted); the
    coefficients themselves are not compared: least squares is not
    bit-reproducible across BLAS/LAPACK builds."""
    sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tools"))
    try:
        import fit_vmath_tanh
    finally:
        sys.path.pop(0)
    p, q, _ = fit_vmath_tanh.fit_tanh_rational()
    c, _ = fit_vmath_tanh.fit_exp_poly()
    assert fit_vmath_tanh.SPLIT == vmath._TANH_SPLIT
    assert len(p) == len(vmath._TANH_P) and len(q) == len(vmath._TANH_Q) and \
        len(c) == len(vmath._EXP_F)
    assert q[0] == 1.0
    # a float64 ulp of the result near 1 is 2.2e-16: both fits sit far below
    # it where longdouble can measure them, near it where it cannot
    tanh_bound, exp_bound = (3e-17, 2e-16) if WIDE else (3e-16, 6e-16)
    for fit_p, fit_q, fit_c in ((p, q, c),
                                (vmath._TANH_P, vmath._TANH_Q, vmath._EXP_F)):
        assert _tanh_fit_error(fit_p, fit_q) < tanh_bound
        assert _exp_fit_error(fit_c) < exp_bound
