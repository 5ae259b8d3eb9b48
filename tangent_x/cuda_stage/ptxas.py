"""Checking PTX with ``ptxas``, the assembler of the ``nvidia-cuda-nvcc`` wheel.

``compile_ptx`` needs no GPU, and neither does ``ptxas``: assembling the
PTX for an architecture (``sm_80``, ``sm_90``) is the check that a real
driver would accept the kernel.  The ``[cuda]`` extra pins nvcc to NVVM's
CUDA minor version (a ptxas older than the PTX it is given rejects it).
"""
import glob
import os
import shutil
import subprocess
import tempfile

__all__ = ["find_ptxas", "assemble", "with_target"]


def find_ptxas():
    """The path of ``ptxas`` from the nvidia-cuda-nvcc wheel (else on PATH), or None."""
    try:
        import nvidia   # local import: the optional CUDA wheels' namespace package
        roots = list(nvidia.__path__)
    except ImportError:
        roots = []
    for root in roots:
        found = sorted(glob.glob(os.path.join(root, "*", "bin", "ptxas")))
        if found:
            return found[0]
    return shutil.which("ptxas")


def with_target(ptx, cc):
    """``ptx`` retargeted to ``sm_XY`` (its ``.target`` line)."""
    lines = ptx.splitlines()
    return "\n".join(f".target sm_{cc[0]}{cc[1]}" if ln.startswith(".target ") else ln
                     for ln in lines) + "\n"


def assemble(ptx, cc, ptxas=None):
    """``(ok, message)``: whether ``ptxas -arch=sm_XY`` accepts ``ptx``."""
    ptxas = ptxas or find_ptxas()
    if ptxas is None:
        raise FileNotFoundError("ptxas not found: install tangent_x[cuda] (nvidia-cuda-nvcc)")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "kernel.ptx")
        with open(path, "w") as f:
            f.write(ptx)
        run = subprocess.run([ptxas, f"-arch=sm_{cc[0]}{cc[1]}", path, "-o",
                              os.path.join(tmp, "kernel.cubin")],
                             capture_output=True, text=True, timeout=300)
    return run.returncode == 0, (run.stderr or run.stdout).strip()
