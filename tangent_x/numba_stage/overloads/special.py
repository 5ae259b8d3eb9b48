"""``erf`` and ``erfc`` (``tangent_x.runtime.special``: SciPy's ufuncs,
which Numba does not know) compiled as ``math.erf``/``math.erfc`` of each
element; a float32 array stays float32, integers give float64, as SciPy's
ufuncs do."""
import math

import numpy as np
from numba import types
from numba.extending import overload

from ... import runtime
from ..kernels.common import CACHED, is_array


def _elementwise(scalar_fn):
    def typer(x):
        if is_array(x):
            out_dtype = np.float32 if x.dtype == types.float32 else np.float64

            def array_impl(x):
                out = np.empty(x.shape, out_dtype)
                flat_in = x.ravel()
                flat_out = out.reshape(-1)
                for i in range(flat_in.size):
                    flat_out[i] = scalar_fn(flat_in[i])
                return out
            return array_impl
        if x == types.float32:
            return lambda x: np.float32(scalar_fn(x))
        if isinstance(x, (types.Float, types.Integer, types.Boolean)):
            return lambda x: scalar_fn(float(x))
        return None
    return typer


overload(runtime.erf, jit_options=CACHED)(_elementwise(math.erf))
overload(runtime.erfc, jit_options=CACHED)(_elementwise(math.erfc))
