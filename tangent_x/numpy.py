"""``import tangent_x.numpy as jnp`` is NumPy itself.

Ported JAX code then computes with plain NumPy, so transformed code stays
plain NumPy; there is no separate array type.
"""
from numpy import *  # noqa: F401,F403
from numpy import linalg, fft  # noqa: F401
