"""tools/bench.py's output: markdown tables, and the machine they were
measured on."""
import os
import platform

import numpy as np


def table(rows, keys, headers=None):
    lines = ["| " + " | ".join(headers or keys) + " |", "|" + "---|" * len(keys)]
    lines += ["| " + " | ".join(str(row.get(k, "")) for k in keys) + " |" for row in rows]
    return "\n".join(lines)


def machine(pinned=None):
    """The CPU, core count, pinning (``pinned``: the CPU the run is bound
    to, or None) and versions."""
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    import numba
    where = f"pinned to CPU {pinned}" if pinned is not None else "not pinned"
    return (f"{model}, {os.cpu_count()} cores (one thread per implementation, {where}), "
            f"Python {platform.python_version()}, NumPy {np.__version__}, "
            f"Numba {numba.__version__}")
