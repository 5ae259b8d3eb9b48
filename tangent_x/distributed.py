"""Joining the processes of an ``mpiexec`` launch, as ``jax.distributed``.

``initialize()`` detects an ``mpiexec`` launch (MPICH's Hydra and other
PMI launchers set ``PMI_RANK``/``PMI_SIZE``; Open MPI sets
``OMPI_COMM_WORLD_SIZE``; PMIx sets ``PMIX_RANK``), joins it through mpi4py
and keeps a communicator of its own for tangent_x's collectives (a
duplicate of ``MPI_COMM_WORLD``, so the user's own MPI calls never match
tangent_x's).  After it, ``process_index()``/``process_count()`` say where
this process stands and ``tangent_x.pmap``'s collectives span every process.

An exception that reaches the top of one process would leave the others
waiting in a collective for ever; ``initialize()`` therefore installs an
``sys.excepthook`` that prints the traceback (prefixed with the rank) and
calls ``MPI_Abort``, which stops every process of the launch.

mpi4py and an MPI library are an optional extra: ``pip install
"tangent_x[mpi]"`` brings the ``mpich`` and ``mpi4py`` wheels.
"""
import ctypes
import os
import sys
import time
import traceback

import numpy as np

INSTALL_HINT = ('pip install "tangent_x[mpi]" (it brings the mpich and mpi4py wheels: no system '
                'MPI needed), then launch with: mpiexec -n 2 python your_script.py')

# Environment variables a launcher sets in each process it starts.
LAUNCH_VARIABLES = ("PMI_RANK", "PMI_SIZE", "PMIX_RANK", "OMPI_COMM_WORLD_SIZE",
                    "HYDRA_CONTROL_FD", "MPI_LOCALNRANKS")

_state = {"comm": None, "local_device_ids": None, "hook": None}


def mpi():
    """The ``mpi4py.MPI`` module, or an ImportError saying how to install it."""
    try:
        from mpi4py import MPI  # local import: optional dependency (the [mpi] extra)
    except ImportError as exc:
        raise ImportError(f"tangent_x.distributed needs mpi4py and an MPI library: {INSTALL_HINT}") \
            from exc
    return MPI


def launched_by_mpiexec(environ=None):
    """Whether this process was started by ``mpiexec`` (a PMI launcher)."""
    environ = os.environ if environ is None else environ
    return any(name in environ for name in LAUNCH_VARIABLES)


def initialize(coordinator_address=None, num_processes=None, process_id=None,
               local_device_ids=None, initialization_timeout=None):
    """Join the processes of an ``mpiexec`` launch (``jax.distributed.initialize``).

    MPI does the coordination, so ``coordinator_address`` must stay None;
    ``num_processes`` and ``process_id``, when given, are checked against
    what the launch says.  Outside a launch, ``num_processes=1`` runs this
    process alone (an MPI singleton); anything else is an error.
    ``local_device_ids`` is kept for pmap (``local_device_ids()``).
    ``initialization_timeout`` is accepted for JAX's signature; mpiexec
    has its own.  Calling it twice is an error, as in JAX.
    """
    if _state["comm"] is not None:
        raise RuntimeError("tangent_x.distributed.initialize() should only be called once "
                           "(call shutdown() first to initialize again)")
    if coordinator_address is not None:
        raise ValueError("tangent_x.distributed.initialize: coordinator_address is not used: "
                         "processes are started and connected by mpiexec (e.g. "
                         "`mpiexec -hosts a,b -n 4 python train.py`); leave it None")
    loaded = sys.modules.get("mpi4py.MPI")   # importing it initialises MPI
    already = loaded is not None and loaded.Is_initialized()
    if not already and not launched_by_mpiexec() and num_processes != 1:
        raise RuntimeError("tangent_x.distributed.initialize: no mpiexec launch detected (none of "
                           f"{', '.join(LAUNCH_VARIABLES)} is set). Start the processes with "
                           "`mpiexec -n N python script.py`, or pass num_processes=1 to run this "
                           "process alone")
    MPI = mpi()
    if not MPI.Is_initialized():
        MPI.Init_thread(MPI.THREAD_MULTIPLE)
    if MPI.Query_thread() < MPI.THREAD_SERIALIZED:
        raise RuntimeError("tangent_x.distributed.initialize: the MPI library gives thread level "
                           f"{MPI.Query_thread()}; pmap's workers need MPI_THREAD_SERIALIZED or more")
    world = MPI.COMM_WORLD
    if num_processes is not None and num_processes != world.Get_size():
        raise ValueError(f"tangent_x.distributed.initialize: num_processes={num_processes}, but the "
                         f"launch has {world.Get_size()} processes")
    if process_id is not None and process_id != world.Get_rank():
        raise ValueError(f"tangent_x.distributed.initialize: process_id={process_id}, but mpiexec "
                         f"gave this process rank {world.Get_rank()}")
    _state["comm"] = world.Dup()
    keep_freed_memory()
    _state["local_device_ids"] = None if local_device_ids is None else list(local_device_ids)
    if world.Get_size() > 1 and _state["hook"] is None:
        _state["hook"] = sys.excepthook
        sys.excepthook = _abort_on_uncaught


def is_initialized():
    """Whether ``initialize()`` has run (and ``shutdown()`` has not)."""
    return _state["comm"] is not None


def communicator():
    """tangent_x's own communicator over every process (after ``initialize()``)."""
    if _state["comm"] is None:
        raise RuntimeError("tangent_x.distributed: call tangent_x.distributed.initialize() first "
                           "(under mpiexec)")
    return _state["comm"]


def process_index():
    """This process's rank; 0 when not initialised (as JAX with one process)."""
    return 0 if _state["comm"] is None else _state["comm"].Get_rank()


def process_count():
    """The number of processes; 1 when not initialised."""
    return 1 if _state["comm"] is None else _state["comm"].Get_size()


def local_device_ids():
    """The ``local_device_ids`` given to ``initialize()``, or None."""
    return _state["local_device_ids"]


def shutdown():
    """Leave the launch: frees tangent_x's communicator.  MPI itself stays
    initialised (mpi4py finalises it at exit), so ``initialize()`` may run again."""
    comm = _state["comm"]
    if comm is None:
        return
    _state["comm"] = None
    _state["local_device_ids"] = None
    if _state["hook"] is not None:
        sys.excepthook = _state["hook"]
        _state["hook"] = None
    comm.Free()


# How a process waits in a collective for the others (``wait`` here, and its
# compiled twin in ``numba_stage.mpi_calls``).  MPICH waits by polling, with
# a sched_yield now and then: a rank that arrives first keeps its core busy
# until the last one comes.  On a machine with more runnable processes than
# cores (other jobs, or ranks sharing cores) that spinning takes the CPU time
# the late rank needs to arrive.  So collectives are started non-blocking
# and tested: in a loop for ``spin`` seconds plus ``spin_per_byte`` for
# each byte the process sends (a partner already on its way is met at once,
# and a large transfer, which moves on only while the ranks poll, is not
# slowed by sleeps), then between sleeps of ``first_pause`` seconds,
# doubling up to ``longest_pause``, which leave the core to the others.
# Compiled code reads this array through its address.
#
# The default is MPI's own waiting (``spin`` infinite: ``MPI_Wait``), which
# measured best on an idle machine with a core per rank (session 14,
# tools/bench_mpi.py, 2 ranks: one float64 all-reduce from compiled code
# 2.8 us against 119 us with the sleeps -- a sleep is never shorter than
# the kernel's timer slack, ~50 us -- and the data-parallel step 1.63x
# against 1.59x).  Sleeping waits (``set_waiting(spin=50e-6)``) are for
# oversubscribed machines: a rank waiting 1 s for a late one then uses
# ~0.09 s of CPU instead of ~0.4 s (tests/mpi_programs/waiting.py).
SLEEPING = (50e-6, 10e-6, 100e-6, 1e-9)          # set_waiting(*SLEEPING): sleeping waits
WAITING = np.array([np.inf, 10e-6, 100e-6, 1e-9])   # spin, first/longest pause, spin_per_byte
_WAITING_NAMES = ("spin", "first_pause", "longest_pause", "spin_per_byte")


def set_waiting(spin=None, first_pause=None, longest_pause=None, spin_per_byte=None):
    """How long (seconds) a process polls a collective before it sleeps
    between polls, and the sleeps (see ``WAITING``); ``spin=float("inf")``
    leaves the waiting to MPI (``MPI_Wait``: MPICH polls throughout, with a
    sched_yield now and then).  Returns the previous setting (a tuple, to
    pass back)."""
    before = tuple(float(v) for v in WAITING)
    values = (spin, first_pause, longest_pause, spin_per_byte)
    for name, value in zip(_WAITING_NAMES, values):
        if value is not None and not value >= 0:
            raise ValueError(f"set_waiting: {name} must be >= 0 seconds, got {value!r}")
    for i, value in enumerate(values):
        if value is not None:
            WAITING[i] = value
    return before


def wait(request, nbytes=0):
    """Wait for an mpi4py request (of a non-blocking collective sending
    ``nbytes``) without holding a core: tested in a loop for ``spin +
    nbytes * spin_per_byte`` seconds, then between short sleeps (see
    ``WAITING``)."""
    spin, pause, longest, per_byte = WAITING
    if spin == float("inf"):
        request.Wait()
        return
    if request.Test():
        return
    spin += nbytes * per_byte
    start = time.perf_counter()
    while not request.Test():
        if time.perf_counter() - start > spin:
            time.sleep(pause)
            pause = min(2 * pause, longest)


def keep_freed_memory():
    """Have glibc keep the memory a training step frees for the next one.

    A step allocates its temporaries anew; by default glibc hands large
    blocks back to the kernel when they are freed (``munmap``, heap
    trimming), so every step page-faults them in again, zeroed.  With two
    ranks on one machine that cost doubles up on the memory bus: a 2-rank
    data-parallel step ran 1.40x faster than one process, 1.61x with the
    memory kept (``tools/bench_mpi.py``).  Blocks up to 32 MiB (glibc's
    largest mmap threshold) come from the heap, and the heap is trimmed only
    above 1 GiB free.  ``TANGENT_X_KEEP_HEAP=0`` leaves glibc's defaults;
    other C libraries are left alone."""
    if os.environ.get("TANGENT_X_KEEP_HEAP", "1") == "0":
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    M_TRIM_THRESHOLD, M_TOP_PAD, M_MMAP_THRESHOLD = -1, -2, -3
    return all(mallopt(option, value) == 1 for option, value in (
        (M_MMAP_THRESHOLD, 32 << 20), (M_TRIM_THRESHOLD, 1 << 30), (M_TOP_PAD, 64 << 20)))


def abort(message, code=1):
    """Print ``message`` (prefixed with the rank) and stop every process of the launch."""
    rank = process_index()
    text = "".join(f"[rank {rank}] {line}\n" for line in message.rstrip("\n").split("\n"))
    sys.stderr.write(text)
    sys.stderr.flush()
    # mpiexec forwards a rank's output through its proxy, and MPI_Abort has it
    # kill every process at once: text still in the proxy's pipe was lost
    # (CI saw a failing launch print nothing).  A moment lets it through.
    time.sleep(0.5)
    mpi().COMM_WORLD.Abort(code)
    os._exit(code)      # not reached: MPI_Abort ends the process


def _abort_on_uncaught(kind, value, tb):
    abort("".join(traceback.format_exception(kind, value, tb)))
