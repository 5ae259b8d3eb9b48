"""The BLAS binding: scipy's ``dgemm`` (the BLAS Numba binds), called by
symbol name from compiled code, and the layouts in which it reads a matrix
in place."""
import llvmlite.binding as llvm_binding
import llvmlite.ir as llvm_ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic
from numba.np.arrayobj import make_array


# Large products and other layouts go to BLAS (see ``gemm``).  The kernel
# has no cache blocking: every block of C streams a whole row
# panel of both operands.  Measured single-threaded against this machine's
# OpenBLAS: 256^3 0.51 vs 0.65 ms, 512^3 4.6 vs 5.1 ms, 1024^3 43 vs 41 ms,
# 2048^3 812 vs 326 ms.  The threshold is set low (256^3), not at the
# single-thread crossover (~1024^3): BLAS runs on every core, the kernel on
# one, so on a many-core machine BLAS wins much earlier, and a product
# under jit must not be slower than NumPy's.  Past BLAS_WORK multiply-adds
# the kernel hands the product to BLAS dgemm (scipy's, the one Numba
# binds), called from inside the kernel so that callers compile nothing
# more.  dgemm is called by symbol name: its address changes from process
# to process and must never be baked into cached code, so the kernel's
# ``prepare`` (``register_dgemm``, see ``MATMUL``) registers it under
# _DGEMM_SYMBOL before the kernel is compiled or loaded from cache.

_DGEMM_SYMBOL = "tangent_x_dgemm"
BLAS_WORK = 1 << 24
INT32_MAX = 2 ** 31 - 1
FLOAT64_POINTER = types.CPointer(types.float64)


def register_dgemm():
    """Register scipy's dgemm under _DGEMM_SYMBOL (in every process that
    compiles or loads the kernel)."""
    from numba.extending import get_cython_function_address
    llvm_binding.add_symbol(_DGEMM_SYMBOL,
                            get_cython_function_address("scipy.linalg.cython_blas", "dgemm"))


@intrinsic
def dgemm_call(typingctx, transx, transy, m, n, k, x, ldx, y, ldy, c, ldc, keep1, keep2):
    """Fortran ``dgemm``: ``c = op(x) @ op(y)`` column-major, ``op`` the
    transpose when ``transx`` / ``transy`` is true; every argument passed by
    reference, integers as 32-bit ``int`` (scipy's BLAS interface).  ``keep1``,
    ``keep2`` are unused: arrays that must stay alive until the call returns."""
    def codegen(context, builder, sig, args):
        i8, i32, f64 = llvm_ir.IntType(8), llvm_ir.IntType(32), llvm_ir.DoubleType()
        ptr = context.get_value_type(FLOAT64_POINTER)
        fnty = llvm_ir.FunctionType(llvm_ir.VoidType(), [
            i8.as_pointer(), i8.as_pointer(), i32.as_pointer(), i32.as_pointer(),
            i32.as_pointer(), f64.as_pointer(), ptr, i32.as_pointer(), ptr, i32.as_pointer(),
            f64.as_pointer(), ptr, i32.as_pointer()])
        fn = cgutils.get_or_insert_function(builder.module, fnty, _DGEMM_SYMBOL)
        tx_, ty_, m_, n_, k_, x_, ldx_, y_, ldy_, c_, ldc_ = args[:11]

        def ref(value):
            return cgutils.alloca_once_value(builder, value)

        def trans(flag):
            return ref(builder.select(flag, i8(ord("T")), i8(ord("N"))))

        def int32(value):
            return ref(builder.trunc(value, i32))
        builder.call(fn, [trans(tx_), trans(ty_), int32(m_), int32(n_), int32(k_),
                          ref(f64(1.0)), x_, int32(ldx_), y_, int32(ldy_), ref(f64(0.0)),
                          c_, int32(ldc_)])
        return context.get_dummy_value()
    f64p = FLOAT64_POINTER
    sig = types.void(types.boolean, types.boolean, types.intp, types.intp, types.intp,
                     f64p, types.intp, f64p, types.intp, f64p, types.intp, keep1, keep2)
    return sig, codegen


@intrinsic
def data_pointer(typingctx, arr):
    """The data pointer of the float64 array ``arr``."""
    def codegen(context, builder, sig, args):
        return make_array(sig.args[0])(context, builder, args[0]).data
    return FLOAT64_POINTER(arr), codegen


def blas_layout_lines(name, s_inner, s_outer, rows, cols):
    """Lines setting ``t<name>, ld<name>``: how BLAS reads a column-major
    ``rows`` x ``cols`` matrix whose element (r, c) is at ``r * s_inner + c *
    s_outer``: (transposed, leading dimension), or (False, 0) when it
    cannot and the matrix is copied C-ordered into ``<name><name>``."""
    return [
        f"if {s_inner} == 1 and {s_outer} >= max({rows}, 1) and {s_outer} <= INT32_MAX:",
        f"    t{name}, ld{name} = False, {s_outer}",
        f"elif {s_outer} == 1 and {s_inner} >= max({cols}, 1) and {s_inner} <= INT32_MAX:",
        f"    t{name}, ld{name} = True, {s_inner}",
        "else:",
        f"    t{name}, ld{name} = False, 0"]
