"""pmap's devices, as JAX lists them: ``devices()``, ``local_devices()``,
their counts, and this process's place among the processes.

A device is a worker slot of pmap on the CPU.  A process has as many local
devices as CPUs, or ``TANGENT_X_NUM_DEVICES`` (read at every call, so a test
can set it), like XLA's ``--xla_force_host_platform_device_count``.  Across
processes (after ``tangent_x.distributed.initialize()``) device ids are
global: process ``p`` holds ids ``p * local_count ... (p + 1) * local_count - 1``.
"""
import importlib
import os

ENV_VAR = "TANGENT_X_NUM_DEVICES"


class CpuDevice:
    """One pmap device (JAX's ``CpuDevice``): ``id``, ``process_index``,
    ``platform`` and ``device_kind``."""

    platform = "cpu"
    device_kind = "cpu"

    def __init__(self, id, process_index=0):
        self.id = id
        self.process_index = process_index

    def __repr__(self):
        return f"CpuDevice(id={self.id})"

    def __eq__(self, other):
        return isinstance(other, CpuDevice) and other.id == self.id

    def __hash__(self):
        return hash(("cpu", self.id))


def _distributed():
    """``tangent_x.distributed``'s process queries when it exists and is
    initialised (a ``(process_index, process_count)`` pair of functions),
    else None."""
    try:
        # by name: tangent_x.distributed (the MPI front end, a bottom-layer
        # peer) is optional, and this module works with and without it
        distributed = importlib.import_module("tangent_x.distributed")
    except ImportError:
        return None
    if not distributed.is_initialized():
        return None
    return distributed.process_index, distributed.process_count


def local_device_count():
    """Devices of this process: ``TANGENT_X_NUM_DEVICES``, else the CPU count."""
    value = os.environ.get(ENV_VAR)
    if value:
        try:
            count = int(value)
        except ValueError:
            count = 0
        if count < 1:
            raise ValueError(f"{ENV_VAR} must be a positive integer, got {value!r}")
        return count
    return os.cpu_count() or 1


def process_index():
    dist = _distributed()
    return dist[0]() if dist is not None else 0


def process_count():
    dist = _distributed()
    return dist[1]() if dist is not None else 1


def device_count():
    """Devices of every process."""
    return local_device_count() * process_count()


def local_devices(process_index=None):
    """This process's devices (or process ``process_index``'s)."""
    p = globals()["process_index"]() if process_index is None else process_index
    n = local_device_count()
    return [CpuDevice(p * n + i, p) for i in range(n)]


def devices():
    """Every device of every process, in id order."""
    return [d for p in range(process_count()) for d in local_devices(p)]
