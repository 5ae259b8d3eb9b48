"""The stable facade of the numba stage's runtime: importing it registers
every Numba implementation of the helpers generated code calls, and it
exports every name generated code imports (``from
tangent_x.numba_stage.numba_runtime import grown, matmul ...``: modules in
users' caches import these names, so they stay here).

The implementations live by family in ``overloads/`` (see there for how a
helper gets its compiled form), built on ``kernels/`` (type tests, the
in-place ``empty``, generated loop nests, the BLAS binding and the float64
matrix product kernel); ``contractions`` and ``shape_ops`` add more.  The
order of the imports below is the order in which implementations register,
which decides which of two overloads of one function answers first
(``shape_ops`` and ``contractions`` add implementations after those of
``overloads``).  Every name imported here is exported."""
from .bounds import check_integer, checked, position  # noqa: F401
from .kernels.allocation import empty  # noqa: F401
from .kernels.blas import BLAS_WORK as _BLAS_WORK  # noqa: F401
# the names the matrix product kernel's generated module imports (gemm._kernel_text)
from .kernels.blas import data_pointer as _data, dgemm_call as _dgemm_call  # noqa: F401
from .kernels.gemm import MATMUL  # noqa: F401
from .overloads import broadcasting  # noqa: F401
from .overloads.reductions import (  # noqa: F401
    max_axes, max_axes_keepdims, mean_axes, mean_axes_keepdims, min_axes, min_axes_keepdims,
    prod_axes, prod_axes_keepdims, std_all, std_axes, std_axes_keepdims, sum_axes,
    sum_axes_keepdims, var_all, var_axes, var_axes_keepdims)
from .overloads.shapes import (  # noqa: F401
    broadcast_to, cumsum, diagonal, expand_dims, flip, moveaxis, repeat, reshape, squeeze, tile,
    transpose, whole)
from .overloads.arrays import array, clip, full_like, ndim, size  # noqa: F401
from .overloads.products import (  # noqa: F401
    ACCUMULATING, add_matmul_adjoint_lhs, add_matmul_adjoint_rhs, dot, inner, matmul,
    may_call_kernel)
from .overloads.assigned import TAKES_OPTIONAL, assigned  # noqa: F401
from .overloads.tapes import NumberTape, grown  # noqa: F401
from .overloads.lanes import WeakLanes  # noqa: F401
from .overloads.promotion import (  # noqa: F401
    WeakNumber, division_operand, dtype_code, float_operand, promoted, weak_lanes_of, weak_number,
    weak_scalar, widen_dtype)
from .overloads import cotangents  # noqa: F401
from .overloads.indexing import mask_assign, mask_select  # noqa: F401
from .overloads.ufunc_at import add_at, maximum_at, minimum_at, multiply_at  # noqa: F401
from .overloads.stacking import stack_items  # noqa: F401
from .overloads import array_lists  # noqa: F401
from .overloads import checks  # noqa: F401
from .overloads import special  # noqa: F401
from .contractions import einsum, tensordot  # noqa: F401
from . import shape_ops  # noqa: F401
from .overloads import collectives as _collectives  # noqa: F401
from .fused import elementwise, elementwise_sum  # noqa: F401

__all__ = ["sum_axes", "mean_axes", "max_axes", "min_axes", "prod_axes", "var_axes",
           "std_axes", "var_all", "std_all", "sum_axes_keepdims", "mean_axes_keepdims", "max_axes_keepdims",
           "min_axes_keepdims", "prod_axes_keepdims", "var_axes_keepdims",
           "std_axes_keepdims", "transpose", "squeeze", "expand_dims",
           "moveaxis", "broadcast_to", "cumsum", "flip", "dot", "matmul", "inner", "reshape",
           "clip", "full_like", "ndim", "size", "array", "add_at", "minimum_at", "maximum_at",
           "multiply_at", "whole", "mask_select", "mask_assign",
           "add_matmul_adjoint_lhs", "add_matmul_adjoint_rhs", "grown", "checked", "position",
           "elementwise", "elementwise_sum"]
