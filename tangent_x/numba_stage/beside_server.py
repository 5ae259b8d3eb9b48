"""The second process of ``beside``: compile each kernel named on stdin into
Numba's disk cache, reporting ``built NAME`` (or ``failed NAME``) on stdout.

Run as ``python -m tangent_x.numba_stage.beside_server``; it sits above the
modules that define the kernels (it imports them all), which ``beside``
itself cannot, since they register their kernels with it.
"""
import sys

from . import numba_runtime, vmath  # noqa: F401 (they define the kernels)
from .beside import KERNELS


def serve():
    for line in sys.stdin:
        name = line.strip()
        try:
            KERNELS[name].load()
            print("built", name, flush=True)
        except Exception:                       # the asking process compiles it itself
            print("failed", name, flush=True)


if __name__ == "__main__":
    serve()
