"""Bit-exact replicas of the transcendental functions JAX's CPU backend uses.

``normal`` is ``sqrt(2) * erfinv(u)`` and ``choice(p=..., replace=False)``
adds Gumbel noise ``-log(-log(u))``.  Their bits depend on exactly how XLA
evaluates ``erf_inv``, ``log1p`` and ``log``, which is *not* what NumPy or
the C library computes: XLA's float32 ``log`` is a Cephes-style polynomial
(as vectorised by Eigen) that differs from glibc's ``logf`` in about a third
of all inputs, NumPy's SIMD ``log`` differs from both, and XLA's compiled
kernels contract every ``a*b + c`` whose product has no other use into one
fused multiply-add.  So this module spells out XLA's formulas with IEEE
operations in the same order, with the same FMAs:

* float32 ``log``: frexp-style reduction to a mantissa in [sqrt(1/2),
  sqrt(2)) and Cephes' degree-8 ``logf`` polynomial;
* ``log1p``: Cephes' rational approximation for ``|x| < sqrt(2) - 1``, else
  ``log(1 + x)``;
* ``erf_inv``: M. Giles, "Approximating the erfinv function" (GPU Computing
  Gems, 2011) -- single precision (two branches) and double precision (three
  branches) polynomials in ``w = -log1p(-x*x)``;
* float64 ``log`` is the C library's ``log`` (XLA calls it).

NumPy has no fused multiply-add and no access to libm's ``log``, so these
are scalar functions compiled with Numba (``llvm.fma`` is emitted through a
small intrinsic).  They serve both the eager samplers (through the array
wrappers at the bottom) and the fused jit kernels in ``_numba.py``.  The
float32 ``normal`` pipeline is checked against JAX on all 2**23 inputs it
can see.
"""
from __future__ import annotations

import math

import numba
import numpy as np
from llvmlite import ir as llvm_ir
from numba.core import cgutils, types
from numba.extending import intrinsic

F32 = np.float32
F64 = np.float64


@intrinsic
def fma(typingctx, a, b, c):
    """``a * b + c`` with a single rounding (LLVM's ``llvm.fma``)."""
    if not (isinstance(a, types.Float) and a == b == c):
        return None

    def codegen(context, builder, sig, args):
        ty = args[0].type
        fnty = llvm_ir.FunctionType(ty, [ty, ty, ty])
        name = "llvm.fma.f32" if ty == llvm_ir.FloatType() else "llvm.fma.f64"
        fn = cgutils.get_or_insert_function(builder.module, fnty, name)
        return builder.call(fn, args)

    return a(a, b, c), codegen


def _f32(bits: int) -> np.float32:
    return np.array(bits, np.uint32).view(F32)[()]


_jit = numba.njit(cache=True, nogil=True, inline="always", error_model="numpy")

# ----------------------------------------------------------------- float32 log
_P = np.array([_f32(b) for b in (0x3D9021BB, 0xBDEBD1B8, 0x3DEF251A, 0xBDFE5D4F,
                                 0x3E11E9BF, 0xBE2AAE50, 0x3E4CCEAC, 0xBE7FFFFC,
                                 0x3EAAAAAA)], F32)
_Q1 = _f32(0xB95E8083)        # log(2) = Q2 + Q1, Q2 exact in few bits
_Q2 = _f32(0x3F318000)
_SQRT_HALF = _f32(0x3F3504F3)
_MIN_NORMAL = _f32(0x00800000)
_ONE32 = F32(1.0)
_ZERO32 = F32(0.0)
_HALF32 = F32(0.5)
_INF32 = F32(np.inf)
_NAN32 = F32(np.nan)


@intrinsic
def _f32_bits(typingctx, x):
    """The IEEE bits of a float32 as uint32 (a bit cast; Numba has none for scalars)."""
    if x != types.float32:
        return None

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], llvm_ir.IntType(32))

    return types.uint32(x), codegen


@intrinsic
def _bits_f32(typingctx, x):
    """The float32 whose IEEE bits are the uint32 ``x``."""
    if x != types.uint32:
        return None

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], llvm_ir.FloatType())

    return types.float32(x), codegen


@_jit
def log_f32(z):
    """Natural log of a float32, bit-identical to XLA CPU's inlined ``log``.

    Written without branches (selects only) so that loops over it vectorise.
    """
    zc = z if z > _MIN_NORMAL else _MIN_NORMAL      # denormals are flushed
    bits = np.int64(_f32_bits(zc))
    # z = m * 2**e with the mantissa m in [0.5, 1).
    e = np.float32((bits >> 23) - 126)
    m = _bits_f32(np.uint32((bits & 0x807FFFFF) | 0x3F000000))
    small = m < _SQRT_HALF                           # use 2m - 1 and e - 1
    x = (m - _ONE32) + (m if small else _ZERO32)
    e = e - (_ONE32 if small else _ZERO32)
    x2 = x * x
    x3 = x2 * x
    y = fma(x, _P[0], _P[1])
    y1 = fma(x, _P[3], _P[4])
    y2 = fma(x, _P[6], _P[7])
    y = fma(y, x, _P[2])
    y1 = fma(y1, x, _P[5])
    y2 = fma(y2, x, _P[8])
    y = fma(y, x3, y1)
    y = fma(y, x3, y2)
    y = fma(y, x3, e * _Q1)                   # e*q1 is rounded on its own
    r = fma(e, _Q2, (x - x2 * _HALF32) + y)   # x2/2 is exact
    r = _INF32 if z == _INF32 else r
    r = -_INF32 if z == _ZERO32 else r
    return r if z >= _ZERO32 else _NAN32      # negative or NaN


@_jit
def log_f64(z):
    """Natural log of a float64: the C library's, as XLA calls it."""
    return math.log(z)


# ---------------------------------------------------------------------- log1p
_LOG1P_NUM = (4.5270000862445199635215E-5, 4.9854102823193375972212E-1,
              6.5787325942061044846969E0, 2.9911919328553073277375E1,
              6.0949667980987787057556E1, 5.7112963590585538103336E1,
              2.0039553499201281259648E1)
_LOG1P_DEN = (1., 1.5062909083469192043167E1, 8.3047565967967209469434E1,
              2.2176239823732856465394E2, 3.0909872225312059774938E2,
              2.1642788614495947685003E2, 6.0118660497603843919306E1)
_NUM32, _DEN32 = np.array(_LOG1P_NUM, F32), np.array(_LOG1P_DEN, F32)
_NUM64, _DEN64 = np.array(_LOG1P_NUM, F64), np.array(_LOG1P_DEN, F64)
_T32 = F32(0.41421356237309504880)           # sqrt(2) - 1
_T64 = F64(0.41421356237309504880)


@_jit
def _log1p_small(x, num, den, neg_half):
    # Horner; XLA starts from 0*x + c0, which is c0 for the finite x here.
    n = num[0]
    d = den[0]
    for i in range(1, num.shape[0]):
        n = fma(n, x, num[i])
        d = fma(d, x, den[i])
    x2 = x * x
    t = (x * x2) * (n / d)
    return x + fma(x2, neg_half, t)             # x2 * -0.5 is exact


@_jit
def log1p_f32(x):
    # Both branches are evaluated (as XLA does) so loops stay branch-free.
    small = _log1p_small(x, _NUM32, _DEN32, F32(-0.5))
    large = log_f32(x + _ONE32)
    return small if abs(x) < _T32 else large


@_jit
def log1p_f64(x):
    if abs(x) < _T64:
        return _log1p_small(x, _NUM64, _DEN64, -0.5)
    return math.log(x + 1.0)


# --------------------------------------------------------------------- erfinv
_E32_LT5 = np.array((2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                     0.00021858087, -0.00125372503, -0.00417768164, 0.246640727,
                     1.50140941), F32)
_E32_GE5 = np.array((-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                     0.00573950773, -0.0076224613, 0.00943887047, 1.00167406,
                     2.83297682), F32)

_E64_LT6 = np.array((
    -3.6444120640178196996e-21, -1.685059138182016589e-19,
    1.2858480715256400167e-18, 1.115787767802518096e-17,
    -1.333171662854620906e-16, 2.0972767875968561637e-17,
    6.6376381343583238325e-15, -4.0545662729752068639e-14,
    -8.1519341976054721522e-14, 2.6335093153082322977e-12,
    -1.2975133253453532498e-11, -5.4154120542946279317e-11,
    1.051212273321532285e-09, -4.1126339803469836976e-09,
    -2.9070369957882005086e-08, 4.2347877827932403518e-07,
    -1.3654692000834678645e-06, -1.3882523362786468719e-05,
    0.0001867342080340571352, -0.00074070253416626697512,
    -0.0060336708714301490533, 0.24015818242558961693,
    1.6536545626831027356), F64)
_E64_LT16 = np.array((
    2.2137376921775787049e-09, 9.0756561938885390979e-08,
    -2.7517406297064545428e-07, 1.8239629214389227755e-08,
    1.5027403968909827627e-06, -4.013867526981545969e-06,
    2.9234449089955446044e-06, 1.2475304481671778723e-05,
    -4.7318229009055733981e-05, 6.8284851459573175448e-05,
    2.4031110387097893999e-05, -0.0003550375203628474796,
    0.00095328937973738049703, -0.0016882755560235047313,
    0.0024914420961078508066, -0.0037512085075692412107,
    0.005370914553590063617, 1.0052589676941592334,
    3.0838856104922207635), F64)
_E64_GE16 = np.array((
    -2.7109920616438573243e-11, -2.5556418169965252055e-10,
    1.5076572693500548083e-09, -3.7894654401267369937e-09,
    7.6157012080783393804e-09, -1.4960026627149240478e-08,
    2.9147953450901080826e-08, -6.7711997758452339498e-08,
    2.2900482228026654717e-07, -9.9298272942317002539e-07,
    4.5260625972231537039e-06, -1.9681778105531670567e-05,
    7.5995277030017761139e-05, -0.00021503011930044477347,
    -0.00013871931833623122026, 1.0103004648645343977,
    4.8499064014085844221), F64)


@_jit
def erfinv_f32(x):
    w = -log1p_f32(x * -x)
    lt = w < F32(5.0)
    s = (w - F32(2.5)) if lt else (F32(math.sqrt(w)) - F32(3.0))
    p = _E32_LT5[0] if lt else _E32_GE5[0]
    for i in range(1, 9):
        p = fma(p, s, _E32_LT5[i] if lt else _E32_GE5[i])
    return x * _INF32 if abs(x) == _ONE32 else p * x


@_jit
def erfinv_f64(x):
    if abs(x) == 1.0:
        return x * np.inf
    w = -log1p_f64(x * -x)
    # Giles' three polynomials; each is a prefix-aligned Horner evaluation.
    if w < 6.25:
        c = _E64_LT6
        s = w - 3.125
    elif w < 16.0:
        c = _E64_LT16
        s = math.sqrt(w) - 3.25
    else:
        c = _E64_GE16
        s = math.sqrt(w) - 5.0
    p = c[0]
    for i in range(1, c.shape[0]):
        p = fma(p, s, c[i])
    return p * x


# ------------------------------------------------------------ array wrappers
def _elementwise(scalar):
    """A compiled loop ``out[i] = scalar(a[i])`` over flat arrays."""
    @numba.njit(cache=True, nogil=True, error_model="numpy")
    def apply(a, out):
        for i in range(a.size):
            out[i] = scalar(a[i])
    return apply


def _mapper(f32, f64):
    """The array function applying the scalar ``f32`` or ``f64`` by dtype."""
    loops = {F32: _elementwise(f32), F64: _elementwise(f64)}

    def apply(x):
        x = np.asarray(x)
        if x.dtype not in (F32, F64):
            raise TypeError(f"expected float32 or float64, got {x.dtype}")
        flat = np.ascontiguousarray(x).reshape(-1)    # (ascontiguousarray makes 0-d 1-d)
        out = np.empty_like(flat)
        loops[x.dtype.type](flat, out)
        return out.reshape(x.shape)
    return apply


erfinv = _mapper(erfinv_f32, erfinv_f64)
log = _mapper(log_f32, log_f64)
log1p = _mapper(log1p_f32, log1p_f64)
erfinv.__doc__ = "Elementwise XLA-exact erf_inv of a float32/float64 array."
log.__doc__ = "Elementwise XLA-exact log of a float32/float64 array."
log1p.__doc__ = "Elementwise XLA-exact log1p of a float32/float64 array."


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _map_fma(a, b, c, out):
    for i in range(a.size):
        out[i] = fma(a[i], b[i], c[i])


def fma_array(a, b, c):
    """Elementwise ``a * b + c`` as XLA computes it: one rounding (XLA's CPU
    backend contracts these into FMAs) for float32/float64, but two for
    float16, whose operations XLA rounds back to half precision one by one.
    """
    a, b, c = np.broadcast_arrays(np.asarray(a), np.asarray(b), np.asarray(c))
    if a.dtype == np.float16:
        return a * b + c
    dt, shape = a.dtype, a.shape
    a, b, c = (np.ascontiguousarray(v, dt).reshape(-1) for v in (a, b, c))
    out = np.empty(a.shape, dt)
    _map_fma(a, b, c, out)
    return out.reshape(shape)
