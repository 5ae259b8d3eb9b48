"""The float64 matrix product kernel: ``C = A @ B.T`` generated in register
blocks, compiled beside the caller (``beside.Kernel``), handing large
products and other layouts to BLAS; and the implementations of products
that call it."""
import numpy as np
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic
from numba.np.arrayobj import make_array

from .. import beside
from .allocation import empty
from .blas import BLAS_WORK, FLOAT64_POINTER, INT32_MAX, blas_layout_lines, register_dgemm
from .common import is_array


# Products of two float64 matrices laid out as x @ W.T (see _ENTRY_SOURCE
# for which; the others go to BLAS: see ``blas``) run in a kernel of ours rather than in the
# BLAS Numba binds (scipy's OpenBLAS).  Measured on the benchmark machine (an
# AVX-512 AMD EPYC that OpenBLAS drives with its AVX2 "Haswell" kernels):
# (128, 784) @ (784, 64) took ~160 us in the kernel below and ~255 us in
# BLAS in session 3 (237 against 288 us in session 4), because LLVM
# compiles the kernel for the host CPU (AVX-512 fused multiply-adds).
#
# The kernel computes C = A @ B.T for A (M, K) and B (N, K), both
# C-contiguous: every entry is a dot product of two contiguous rows, which
# LLVM vectorises along K ("reassoc" lets it split the sum into vector
# lanes; "contract" makes fused multiply-adds).  Entries are computed in
# blocks of _MR x _NR: each pass over K loads _MR + _NR rows' elements and
# does _MR * _NR multiply-adds, kept in registers.
#
# The kernel is compiled once per process, as a C callable (``numba.cfunc``,
# cached on disk), and called through a pointer (see "the kernel compiled
# beside the caller" below), the way Numba calls BLAS: a compiled function
# that calls a Numba function gets a copy of its LLVM code and optimises it
# again, which for the vectorised kernel cost ~0.5 s per calling function;
# a call through a pointer costs nothing to compile.  It is *one*
# generated function, with no calls to other Numba functions: every Numba
# function a compiled function calls is a library of its own, optimised and
# turned into machine code on its own and then again inside each caller, so
# helpers nested three deep were compiled three times (measured: 1.4 s for
# the kernel written as six helpers, 0.9 s as one; see
# tools/cold_compile.py).  It is paid only by processes that compile a
# product, and not at all when Numba's disk cache has it.

_MR, _NR = 4, 4


def _gemm_nt_lines(mr, nr):
    """Lines computing ``C = A @ B.T`` in blocks of ``mr`` x ``nr``
    accumulators, for C-contiguous A (M, K), B (N, K) and C (M, N)."""
    acc = [[f"s{r}{c}" for c in range(nr)] for r in range(mr)]
    lines = [
        f"Mb = M - M % {mr}",
        f"Nb = N - N % {nr}",
        f"for i in range(0, Mb, {mr}):",
        f"    for j in range(0, Nb, {nr}):",
        "        " + "; ".join(f"a{r} = A[i + {r}]" for r in range(mr)),
        "        " + "; ".join(f"b{c} = B[j + {c}]" for c in range(nr)),
        "        " + " = ".join(sum(acc, [])) + " = 0.0",
        "        for k in range(K):",
        "            " + "; ".join(f"x{r} = a{r}[k]" for r in range(mr)),
        "            " + "; ".join(f"y{c} = b{c}[k]" for c in range(nr))]
    for r in range(mr):
        lines.append("            " + "; ".join(f"{acc[r][c]} += x{r} * y{c}"
                                                for c in range(nr)))
    for r in range(mr):
        lines.append("        " + "; ".join(f"C[i + {r}, j + {c}] = {acc[r][c]}"
                                            for c in range(nr)))
    lines += [
        "# the entries outside whole blocks",
        "for i in range(M):",
        "    for j in range(Nb if i < Mb else 0, N):",
        "        s = 0.0",
        "        for k in range(K):",
        "            s += A[i, k] * B[j, k]",
        "        C[i, j] = s"]
    return lines


_f64p = FLOAT64_POINTER
_GEMM_SIGNATURE = types.void(_f64p, types.intp, types.intp, _f64p, types.intp, types.intp,
                             _f64p, types.intp, types.intp, types.intp)


def _entry_source():
    """``entry(a, as0, as1, b, bs0, bs1, c, M, N, K)``: ``c = a @ b`` for
    float64 matrices given by pointer and strides (in elements): a (M, K),
    b (K, N), c (M, N) C-contiguous.

    Only a product whose operands are read in place by the kernel (``a``
    C-ordered, ``b`` F-ordered, as ``W.T`` is: ``x @ W.T``, the forward
    product of a dense layer) runs in the kernel: measured single-threaded
    on the benchmark machine (session 4, quiet), (128, 784) @ (784, 64).T
    took 237 us there and 288 us in BLAS, but every case that needed
    packing lost to BLAS, which reads transposed operands in place:
    (128, 784).T @ (128, 64) 318 against 285 us, (64, 128) @ (128, 784) 319
    against 260, 256^3 796 against 659, (128, 10) @ (10, 64) 13 against 4.
    So those, and large products (see BLAS_WORK), go to dgemm.  Past BLAS's
    32-bit dimensions the kernel takes everything, operands in another
    layout first copied whole."""
    body = [
        "pack_a = not (as1 == 1 and as0 == K)",
        "pack_b = not (bs0 == 1 and bs1 == K)",
        "if (pack_a or pack_b or M * N * K > BLAS_WORK) and max(M, N, K) <= INT32_MAX:",
        "    # dgemm is column-major: it computes c.T = b.T @ a.T, the C-ordered c",
        "    # being the column-major c.T; b.T is (N, K), its (j, k) at j*bs1 + k*bs0",
        *["    " + line for line in blas_layout_lines("b", "bs1", "bs0", "N", "K")],
        "    # a.T is (K, M), its (k, i) at k*as1 + i*as0",
        *["    " + line for line in blas_layout_lines("a", "as1", "as0", "K", "M")],
        "    bb = empty(K * N if ldb == 0 else 0, np.float64)",
        "    aa = empty(M * K if lda == 0 else 0, np.float64)",
        "    if ldb == 0:",
        "        for k in range(K):",
        "            for j in range(N):",
        "                bb[k * N + j] = b[k * bs0 + j * bs1]",
        "        b, ldb = _data(bb), N",
        "    if lda == 0:",
        "        for i in range(M):",
        "            for k in range(K):",
        "                aa[i * K + k] = a[i * as0 + k * as1]",
        "        a, lda = _data(aa), K",
        "    # the copies are arguments too: alive until dgemm returns",
        "    _dgemm_call(tb, ta, N, M, K, b, ldb, a, lda, c, N, bb, aa)",
        "    return",
        "C = carray(c, (M, N))",
        "A = carray(a, (M, K)) if not pack_a else empty((M, K), np.float64)",
        "B = carray(b, (N, K)) if not pack_b else empty((N, K), np.float64)",
        "if pack_a:",
        "    for i in range(M):",
        "        for k in range(K):",
        "            A[i, k] = a[i * as0 + k * as1]",
        "if pack_b:",
        "    for j in range(N):",
        "        for k in range(K):",
        "            B[j, k] = b[k * bs0 + j * bs1]",
        *_gemm_nt_lines(_MR, _NR)]
    return "\n".join(["def entry(a, as0, as1, b, bs0, bs1, c, M, N, K):"] +
                     ["    " + line for line in body])


_ENTRY_SOURCE = _entry_source()


# The kernel is compiled by a second process while this one compiles its
# caller, and called through a slot (see beside.py).  Its text is kept as it
# was when this code lived in numba_runtime (which still exports the names
# it imports): the kernel module is named after its text, so kernels already
# in Numba's disk cache stay valid.

def _kernel_text():
    return ("# Generated by tangent_x: the float64 matrix product kernel (see\n"
            "# tangent_x/numba_stage/numba_runtime.py). Do not edit.\n"
            "import numpy as np\n"
            "from numba import carray\n"
            "from tangent_x.numba_stage.numba_runtime import _data, _dgemm_call, empty\n\n"
            f"BLAS_WORK = {BLAS_WORK}\nINT32_MAX = {INT32_MAX}\n\n\n"
            f"{_ENTRY_SOURCE}\n")


MATMUL = beside.Kernel("matmul_f64", _kernel_text, "entry", _GEMM_SIGNATURE,
                       fastmath={"reassoc", "contract"}, prepare=register_dgemm)


@intrinsic
def _matmul_call(typingctx, a, b, out):
    """``out = a @ b`` by the kernel in its slot (``out`` C-contiguous)."""
    def codegen(context, builder, sig, args):
        intp = context.get_value_type(types.intp)
        arr_a, arr_b, arr_c = (make_array(t)(context, builder, v)
                               for t, v in zip(sig.args, args))
        M, K = cgutils.unpack_tuple(builder, arr_a.shape, 2)
        N = cgutils.unpack_tuple(builder, arr_b.shape, 2)[1]
        eight = intp(8)
        strides = [builder.sdiv(s, eight) for arr in (arr_a, arr_b)
                   for s in cgutils.unpack_tuple(builder, arr.strides, 2)]
        MATMUL.call(context, builder, [arr_a.data, strides[0], strides[1], arr_b.data,
                                       strides[2], strides[3], arr_c.data, M, N, K])
        return context.get_dummy_value()
    return types.void(a, b, out), codegen


def product(a, b):
    """``a @ b`` for float64 matrices, by the kernel.  A plain function,
    handed to Numba as an overload's implementation: one compiled function
    per call site's types, not a wrapper calling it (see "one generated
    function" above: each level of calls is compiled again)."""
    if b.shape[0] != a.shape[1]:
        raise ValueError("matmul: the operands' inner dimensions differ")
    out = empty((a.shape[0], b.shape[1]), np.float64)
    if out.size:
        _matmul_call(a, b, out)
    return out


def product_lhs(g, a, b):
    """``g @ b.T`` (the cotangent of ``a`` in ``a @ b``) by the kernel,
    written out for the same reason."""
    bt = b.T
    out = empty((g.shape[0], bt.shape[1]), np.float64)
    if out.size:
        _matmul_call(g, bt, out)
    return out


def product_rhs(g, a, b):
    """``a.T @ g`` (the cotangent of ``b`` in ``a @ b``) by the kernel."""
    at = a.T
    out = empty((at.shape[0], g.shape[1]), np.float64)
    if out.size:
        _matmul_call(at, g, out)
    return out


def kernel_product(a, b):
    """Whether ``a @ b`` runs in the kernel: two (aligned) float64 matrices
    (and if so, the kernel is made ready)."""
    if (is_array(a) and is_array(b) and a.ndim == 2 and b.ndim == 2 and
            a.dtype == types.float64 and b.dtype == types.float64 and a.aligned and b.aligned):
        beside.request(MATMUL)
        return True
    return False
