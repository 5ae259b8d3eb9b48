"""Elementwise math that LLVM vectorises: ``exp``, ``expm1``, ``log``,
``log1p`` and ``tanh`` for the numba stage.

Why: Numba lowers ``np.tanh``/``np.exp`` on arrays to one scalar libm call
per element (the PyPI llvmlite has no SVML), about 10x slower than NumPy's
SIMD loops on large arrays.  The kernels here are branch-free straight-line
float and integer arithmetic, so a loop calling them (LLVM inlines them)
becomes AVX2/AVX-512 code, as XLA does with its own math.

The numba stage spells ``np.tanh(x)`` ... as ``vmath.tanh(x)``
(``specialize.registry.REWRITES``).  Called from Python these are NumPy's functions;
compiled, a number is one kernel call and an array one flat loop (see
``_compiled_like``), and ``fusion`` puts a chain such as
``1.0 - tanh(x)**2`` in one loop.  Kernels are ordinary ``register_jitable``
functions, not IR-inlined ones: Numba's IR inlining made the first compile
of ``tanh`` ~2 s; as separate functions it is ~0.4 s and the loop is still
vectorised (LLVM inlines them when it optimises the caller).

Accuracy (float64, measured in ``tests/test_vmath.py`` against NumPy's
``longdouble`` functions over dense grids of several magnitudes): exp and
log within 1.0 ulp of the exact result, expm1 and log1p within 1.3, tanh
within 1.1 (NumPy's own: 0.6-1.2 ulp); NaN, +-inf, +-0.0
and subnormals behave like NumPy (NaN in, NaN out; ``tanh(-0.0) = -0.0``;
``exp`` overflows to inf and underflows through the subnormals to 0).
float32 inputs are computed in float64 and rounded once (<= 1 ulp).

Methods (textbook facts): ``exp``/``expm1`` reduce ``x = k ln2 + r`` with a
two-part ln2 (Cody-Waite) so ``|r| <= ln2/2``, sum the Taylor series of
``exp(r) - 1`` to degree 13 (truncation below 0.1 ulp there; polynomials
are evaluated by Estrin's scheme, whose short dependency chains keep a
vectorised loop busy where Horner's 12 chained multiply-adds would stall it
on FMA latency: 13% faster tanh), and build
``2^k`` from the exponent bits; ``k`` comes from the 1.5*2^52 shifter (the
addition rounds ``x/ln2`` to an integer held in the low mantissa bits), so
there is no float-to-int conversion.  ``tanh`` selects between a
rational approximation below ``|x| = 0.8`` and ``1 - 2/(exp(2|x|) + 1)``
above, both computed, with one division (``tanh64``; coefficients fitted by
``tools/fit_vmath_tanh.py``), saturating at ``|x| >= 22``.  ``log`` splits
``x = 2^k m`` with ``m`` in [sqrt(2)/2, sqrt(2)) by integer arithmetic on the
bits, then ``log(1+f) = 2 atanh(f / (2 + f))`` (odd series).  ``log1p(x)``
is ``log(1 + x)`` plus the rounding error of ``1 + x`` divided by ``1 + x``.
Special values are fixed by selects at the end, never by branches in the
arithmetic, which is what keeps the loop vectorisable; divisions are bare
``fdiv`` (Numba's default error model would add a zero check, a branch).
No fastmath: it would let LLVM drop the NaN and infinity handling and
reassociate the range reduction, whose exactness the accuracy rests on;
the one contraction that matters is written as ``llvm.fma`` explicitly
(one instruction on the FMA hardware Numba compiles for; a libm call, so
correct but slow, on a CPU without it).
"""
import math

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic, overload, register_jitable
from numba.np.arrayobj import make_array

from . import beside
from .kernels.allocation import empty


# -- single LLVM instructions: bit casts, fma, bare division, select ------------

@intrinsic
def _bits(typingctx, x):
    """The IEEE bits of a float64 as an int64 (an LLVM bitcast: free, and
    vectorisable, unlike a round trip through memory)."""
    if x != types.float64:
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(64))
    return types.int64(types.float64), codegen


@intrinsic
def _from_bits(typingctx, n):
    """The float64 whose IEEE bits are the int64 ``n``."""
    if not isinstance(n, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        value = context.cast(builder, args[0], signature.args[0], types.int64)
        return builder.bitcast(value, ir.DoubleType())
    return types.float64(n), codegen


@intrinsic
def _fma(typingctx, a, b, c):
    """``a*b + c`` rounded once (``llvm.fma``: one instruction with FMA
    hardware); used where the single rounding is what makes the result
    accurate, not left to the optimiser's choice."""
    if not (a == b == c == types.float64):
        return None

    def codegen(context, builder, signature, args):
        return builder.fma(*args)
    return types.float64(types.float64, types.float64, types.float64), codegen


@intrinsic
def _div(typingctx, a, b):
    """``a / b`` as a bare IEEE division: no zero check (the division by
    zero Numba's default error model raises on is a branch in the loop,
    which stops vectorisation; here it gives inf or NaN, as in NumPy)."""
    if not (a == b == types.float64):
        return None

    def codegen(context, builder, signature, args):
        return builder.fdiv(*args)
    return types.float64(types.float64, types.float64), codegen


@intrinsic
def _select(typingctx, c, a, b):
    """``a if c else b`` as an LLVM ``select``: both sides are computed and
    one is kept, so a loop of these stays straight-line code."""
    if not (c == types.boolean and a == b == types.float64):
        return None

    def codegen(context, builder, signature, args):
        return builder.select(*args)
    return types.float64(types.boolean, types.float64, types.float64), codegen


# -- float64 kernels ------------------------------------------------------------

_LN2_HI = 6.93147180369123816490e-01     # ln2's leading 32 bits: k*_LN2_HI is exact
_LN2_LO = 1.90821492927058770002e-10     # ln2 - _LN2_HI
_INV_LN2 = 1.44269504088896338700e+00
_SHIFTER = 6755399441055744.0            # 1.5 * 2**52
_SHIFTER_BITS = 0x4338000000000000       # its IEEE bits
_TINY = 2.0 ** -54                       # below this, expm1(x) rounds to x


@register_jitable
def _expm1_reduced(x):
    """(r, c, k) with x = k ln2 + r' and exp(r') - 1 = r + c to well below an
    ulp (|r| <= ln2/2, |c| < r*r), for finite x with |x/ln2| < 2**51.  r'
    is carried as r plus its rounding error, which goes into c."""
    t = x * _INV_LN2 + _SHIFTER
    k = t - _SHIFTER
    rh = _fma(-k, _LN2_HI, x)                # exact
    r = _fma(-k, _LN2_LO, rh)
    rl = _fma(-k, _LN2_LO, rh - r)           # r + rl = rh - k*_LN2_LO
    # exp(r) - 1 - r = r^2 (1/2! + r/3! + ... + r^11/13!), by Estrin's
    # scheme: the same operations as Horner's but a dependency chain of 4
    # multiply-adds instead of 12, so the vectorised loop is not waiting on
    # FMA latency (measured 13% faster for tanh)
    r2 = r * r
    r4 = r2 * r2
    p01 = _fma(1.0 / 6.0, r, 0.5)
    p23 = _fma(1.0 / 120.0, r, 1.0 / 24.0)
    p45 = _fma(1.0 / 5040.0, r, 1.0 / 720.0)
    p67 = _fma(1.0 / 362880.0, r, 1.0 / 40320.0)
    p89 = _fma(1.0 / 39916800.0, r, 1.0 / 3628800.0)
    p1011 = _fma(1.0 / 6227020800.0, r, 1.0 / 479001600.0)
    p03 = _fma(p23, r2, p01)
    p47 = _fma(p67, r2, p45)
    p811 = _fma(p1011, r2, p89)
    q = _fma(_fma(p811, r4, p47), r4, p03)
    return r, _fma(r2, q, rl), _bits(t) - _SHIFTER_BITS


@register_jitable
def exp64(x):
    # clamp so 2^k stays a product of two normal powers of two; exp(-746)
    # underflows to 0 and exp(710) overflows to inf through the arithmetic
    xc = _select(x > -746.0, x, -746.0)
    xc = _select(xc < 710.0, xc, 710.0)
    r, c, k = _expm1_reduced(xc)
    k1 = k >> 1
    s1 = _from_bits((k1 + 1023) << 52)           # 2^k = s1 * s2, both normal
    s2 = _from_bits((k - k1 + 1023) << 52)
    y = _fma(r + c, s1, s1) * s2
    return _select(x == x, y, x)


@register_jitable
def expm1_64(x):
    # below -40 the result rounds to -1; above 710 it is inf
    xc = _select(x > -40.0, x, -40.0)
    xc = _select(xc < 710.0, xc, 710.0)
    r, c, k = _expm1_reduced(xc)
    s = _from_bits((k - 1 + 1023) << 52)     # 2^(k-1), k - 1 in [-59, 1023]
    # 2^k (1 + r + c) - 1 = 2 (s r + (s - 1/2) + s c): for k = 0 and 1 the
    # first fma is exact, so one rounding in all
    y = 2.0 * _fma(s, c, _fma(s, r, s - 0.5))
    y = _select(abs(x) < _TINY, x, y)    # also keeps -0.0 and subnormals
    return _select(x == x, y, x)


# tanh: coefficients fitted by tools/fit_vmath_tanh.py (see tanh64)
_TANH_SPLIT = 0.8
_TANH_P = (-0.3333333333333314, -0.020486522016678502, -0.00019863501718621365)
_TANH_Q = (1.0, 0.46145956604985683, 0.02327496956862851, 0.0002059522565581948)
_EXP_F = (0.5000000000000001, 0.1666666666666667, 0.04166666666662412,
          0.008333333333326145, 0.0013888888917215987, 0.00019841269874783279,
          2.480152129291218e-05, 2.7557255447041885e-06, 2.762008970805154e-07,
          2.510519809464366e-08)


@register_jitable
def tanh64(x):
    """Two branches, both computed and one selected, sharing one division
    (why: the vectorised loop of ``1 - tanh(x)**2`` is 38 arithmetic
    instructions per vector of elements, where the previous form,
    ``expm1(2|x|) / (expm1(2|x|) + 2)`` with a double-double quotient, was
    58; per_example_grad is bound by them, not by memory).

    Below ``|x| = 0.8``: ``a + a * g P(g) / Q(g)``, ``g = a*a``, a rational
    fit of ``tanh(a)/a - 1`` (absolute error 2e-17, and |g P/Q| < 0.2, so
    its rounding errors are damped).  From 0.8: ``1 - 2 / (exp(2a) + 1)``,
    where ``2 / (exp(2a) + 1) <= 0.34``, so the errors of exp and of the
    division are scaled down by that much next to the result; exp's
    polynomial (degree 11 in r, |r| <= ln2/2) needs no more than that.
    Measured: at most 1.08 ulp over 4e6 random inputs around the switch
    (tests/test_vmath.py bounds it by 1.1)."""
    a = abs(x)
    g = a * a
    p0, p1, p2 = _TANH_P
    q0, q1, q2, q3 = _TANH_Q
    num_small = g * _fma(_fma(p2, g, p1), g, p0)
    den_small = _fma(_fma(_fma(q3, g, q2), g, q1), g, q0)
    # exp(z), z = 2a <= 44 (tanh(22) rounds to 1; keeps NaN): z = k ln2 + r
    z = 2.0 * _select(a > 22.0, 22.0, a)
    t = z * _INV_LN2 + _SHIFTER
    k = t - _SHIFTER
    r = _fma(-k, _LN2_LO, _fma(-k, _LN2_HI, z))
    c0, c1, c2, c3, c4, c5, c6, c7, c8, c9 = _EXP_F
    r2 = r * r
    r4 = r2 * r2
    f = _fma(_fma(_fma(c9, r, c8), r4, _fma(_fma(c7, r, c6), r2, _fma(c5, r, c4))), r4,
             _fma(_fma(c3, r, c2), r2, _fma(c1, r, c0)))
    p = 1.0 + _fma(r2, f, r)                 # exp(r), in [0.7, 1.42]
    e = _from_bits(_bits(p) + ((_bits(t) - _SHIFTER_BITS) << 52))   # p 2^k, k <= 64
    big = a >= _TANH_SPLIT                   # False for NaN: the small branch keeps it
    y = _fma(_select(big, -2.0, a),
             _div(_select(big, 1.0, num_small), _select(big, e + 1.0, den_small)),
             _select(big, 1.0, a))
    return math.copysign(y, x)


_SQRT_HALF_BITS = 0x3fe6a09e667f3bcd     # bits of sqrt(2)/2
_MANTISSA = 0x000fffffffffffff
_SMALLEST_NORMAL = 2.2250738585072014e-308


@register_jitable
def log64(x):
    sub = x < _SMALLEST_NORMAL
    xs = _select(sub, x * 18014398509481984.0, x)  # subnormals scaled by 2**54
    ix = _bits(xs) - _SQRT_HALF_BITS
    k = (ix >> 52) - 54 * np.int64(sub)
    m = _from_bits((ix & _MANTISSA) + _SQRT_HALF_BITS)   # in [sqrt(2)/2, sqrt(2))
    f = m - 1.0
    s = _div(f, 2.0 + f)
    z = s * s
    # sum of 2 z^j / (2j + 3), j = 0..10, by Estrin's scheme (see
    # _expm1_reduced)
    z2 = z * z
    z4 = z2 * z2
    p01 = _fma(2.0 / 5.0, z, 2.0 / 3.0)
    p23 = _fma(2.0 / 9.0, z, 2.0 / 7.0)
    p45 = _fma(2.0 / 13.0, z, 2.0 / 11.0)
    p67 = _fma(2.0 / 17.0, z, 2.0 / 15.0)
    p89 = _fma(2.0 / 21.0, z, 2.0 / 19.0)
    p03 = _fma(p23, z2, p01)
    p47 = _fma(p67, z2, p45)
    p810 = _fma(2.0 / 23.0, z2, p89)
    r = _fma(_fma(p810, z4, p47), z4, p03)
    r = r * z
    hfsq = 0.5 * f * f
    kf = float(k)
    y = kf * _LN2_HI + (f - (hfsq - (s * (hfsq + r) + kf * _LN2_LO)))
    y = _select(x == math.inf, x, y)
    y = _select(x == 0.0, -math.inf, y)
    y = _select(x < 0.0, math.nan, y)
    return _select(x == x, y, x)


@register_jitable
def log1p64(x):
    u = 1.0 + x
    y = log64(u) - _div((u - 1.0) - x, u)
    # near 0, where 1 + x keeps few of x's bits, the series to x^3 (error
    # below x^4/4); it also keeps -0.0 and subnormals
    small = _fma(x * x, _fma(x, 1.0 / 3.0, -0.5), x)
    y = _select(abs(x) < 2.0 ** -20, small, y)
    y = _select(x == math.inf, x, y)
    return _select(x == -1.0, -math.inf, y)


# -- the functions the numba stage calls ----------------------------------------

def _array_kernel(numpy_fn, kernel64):
    """``numpy_fn`` over a C-ordered float64 array as a C callable
    ``entry(x, out, n)``, compiled beside the caller (see beside.py: the
    loop is a vectorised copy of the kernel, ~0.4 s of compiling that does
    not depend on the user's code), and the intrinsic calling it."""
    name = numpy_fn.__name__

    def text():
        return (f"# Generated by tangent_x: np.{name} over a float64 array (see\n"
                "# tangent_x/numba_stage/vmath.py). Do not edit.\n"
                "from numba import carray\n"
                f"from tangent_x.numba_stage.vmath import {kernel64.__name__}\n\n\n"
                "def entry(x, out, n):\n"
                "    xs = carray(x, (n,))\n"
                "    outs = carray(out, (n,))\n"
                "    for i in range(n):\n"
                f"        outs[i] = {kernel64.__name__}(xs[i])\n")
    f64p = types.CPointer(types.float64)
    kernel = beside.Kernel(f"vmath_{name}", text, "entry", types.void(f64p, f64p, types.intp))

    @intrinsic
    def call(typingctx, x, out):
        def codegen(context, builder, sig, args):
            xs, outs = (make_array(t)(context, builder, v) for t, v in zip(sig.args, args))
            kernel.call(context, builder, [xs.data, outs.data, outs.nitems])
            return context.get_dummy_value()
        return types.void(x, out), codegen
    return kernel, call


def _compiled_like(numpy_fn, kernel64):
    """``numpy_fn`` when called from Python; compiled by Numba, the kernel:
    on a number, one call; on an array, one loop over a fresh C-ordered
    result (the loop LLVM vectorises; for float64, a C callable compiled
    beside the caller, see ``_array_kernel``).  float32 is computed in
    float64 and rounded once; integers and booleans give float64, as in
    NumPy; other types (complex) are left to Numba's own ``numpy_fn``."""
    def fn(x):
        return numpy_fn(x)
    fn.__name__ = fn.__qualname__ = numpy_fn.__name__
    fn.__doc__ = f"np.{numpy_fn.__name__}, compiled as a loop over a vectorisable kernel."
    fn.numpy_fn = numpy_fn          # (what it computes, dtypes included: joins reads it)
    kernel, call = _array_kernel(numpy_fn, kernel64)
    ARRAY_KERNELS[fn] = kernel

    @overload(fn)
    def _impl(x):
        if isinstance(x, types.Array):
            dtype = x.dtype
            single = dtype == types.float32
            if dtype not in (types.float32, types.float64) and \
                    not isinstance(dtype, (types.Integer, types.Boolean)):
                return lambda x: numpy_fn(x)          # complex ...: Numba's own
            contiguous = x.layout == "C"
            if dtype == types.float64 and x.aligned:
                beside.request(kernel)
                if contiguous:
                    def by_kernel(x):
                        out = empty(x.shape, np.float64)
                        call(x, out)
                        return out
                else:
                    def by_kernel(x):
                        c = np.ascontiguousarray(x)
                        out = empty(c.shape, np.float64)
                        call(c, out)
                        return out
                return by_kernel
            result = np.float32 if single else np.float64

            def loop(x):
                flat = (x if contiguous else np.ascontiguousarray(x)).reshape(-1)
                out = empty(flat.size, result)
                for i in range(flat.size):
                    out[i] = kernel64(np.float64(flat[i]))
                return out.reshape(x.shape)
            return loop
        if x == types.float32:
            return lambda x: np.float32(kernel64(np.float64(x)))
        if x == types.float64 or isinstance(x, (types.Integer, types.Boolean)):
            return lambda x: kernel64(np.float64(x))
        return lambda x: numpy_fn(x)
    return fn


# the function the numba stage calls -> its float64 array kernel (beside.py)
ARRAY_KERNELS = {}
exp = _compiled_like(np.exp, exp64)
expm1 = _compiled_like(np.expm1, expm1_64)
log = _compiled_like(np.log, log64)
log1p = _compiled_like(np.log1p, log1p64)
tanh = _compiled_like(np.tanh, tanh64)

# NumPy's function -> the function the numba stage calls instead
KERNELS = {np.exp: exp, np.expm1: expm1, np.log: log, np.log1p: log1p, np.tanh: tanh}
