"""Whether the CUDA target can be used: the ``[cuda]`` extra (numba-cuda).

Numba itself still ships a deprecated ``numba.cuda``; tangent_x compiles
only with NVIDIA's ``numba-cuda`` package (the extra also brings NVVM and
NVRTC of one CUDA minor version), so its absence is an error that says
what to install, not a silent use of the old target.
"""
import importlib.util
import os

__all__ = ["require_cuda", "has_cuda_extra", "simulated", "INSTALL"]

INSTALL = 'pip install "tangent_x[cuda]"'


def has_cuda_extra():
    """Whether numba-cuda is importable."""
    return importlib.util.find_spec("numba_cuda") is not None


def simulated():
    """Whether Numba's CUDA simulator is on (``NUMBA_ENABLE_CUDASIM=1``,
    read when ``numba.cuda`` is first imported)."""
    return os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0")


def require_cuda(what="jit(..., target='cuda')"):
    """``numba.cuda`` (numba-cuda's), or an ImportError saying what to install."""
    if not has_cuda_extra():
        raise ImportError(
            f"{what} needs NVIDIA's numba-cuda package and the CUDA compiler libraries "
            f"(NVVM, NVRTC): install them with {INSTALL}, or use target='cpu'")
    from numba import cuda   # local import: the optional CUDA target loads on first use
    return cuda
