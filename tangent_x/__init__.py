"""tangent_x: JAX's function transformations for plain NumPy code.

Transforms read a function's Python source and emit new, readable Python
source for its derivative; ``tx.source(f)`` shows it.  See README.md,
section "How it works", for the pipeline.
"""
from .version import __version__  # noqa: E402,F401

from .errors import TransformError  # noqa: E402
from .api.derivatives import grad, value_and_grad, vjp, jvp, source  # noqa: E402
from .api.jacobians import jacfwd, jacrev, hessian  # noqa: E402
from .api.vmap import vmap  # noqa: E402
from .api.jit import jit, disable_jit  # noqa: E402
from .api.pmap import pmap  # noqa: E402
from .parallel.devices import (  # noqa: E402
    device_count, devices, local_device_count, local_devices, process_count, process_index)
from .runtime import stop_gradient  # noqa: E402
from .core.custom import (
    _decorator as _custom_decorator,
    custom_jvp as _cj,
    custom_vjp as _cv,
)  # noqa: E402

custom_jvp = _custom_decorator(_cj)
custom_vjp = _custom_decorator(_cv)
from . import tree_util, tree, test_util, lax, nn  # noqa: E402
from . import random, config as _config_module  # noqa: E402
from .config import config  # noqa: E402
from . import numpy  # noqa: E402
from . import distributed  # noqa: E402  (mpi4py is imported by initialize(), not here)
from .core.primitives import alias as _alias  # noqa: E402

_alias(lax.stop_gradient, "stop_gradient")
_alias(lax.select, "where")
from .core.primitives import register_random as _register_random  # noqa: E402

_register_random(random)


def block_until_ready(x):
    """NumPy is synchronous: returns ``x`` (API parity with JAX)."""
    return x


__all__ = ["grad", "value_and_grad", "vjp", "jvp", "jacfwd", "jacrev", "hessian", "vmap",
           "source", "stop_gradient", "jit", "disable_jit",
           "custom_jvp", "custom_vjp",
           "TransformError", "tree_util", "tree", "test_util", "lax", "nn",
           "random", "config", "numpy", "distributed", "block_until_ready", "pmap", "devices",
           "local_devices", "device_count", "local_device_count", "process_index",
           "process_count"]
