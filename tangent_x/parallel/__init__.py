"""The workers of ``pmap`` and the collectives between them.

``group``: the ``Group`` interface a collective sees (size, this worker's
index, all-reduce, all-gather, permute, barrier, abort) and ``ThreadGroup``,
one thread per local device of one process.  ``ops``: JAX's collectives
(``psum``, ``all_gather(tiled=...)``, ``psum_scatter``, ``ppermute``...) in
terms of a Group.  An MPI group spanning processes (``mpi``, see
``tangent_x.distributed``) implements the same interface.

Bottom layer: imports NumPy and ``tangent_x.errors``/``config`` only.
"""
from .group import CollectiveMismatch, Group, SoloGroup, ThreadGroup, WorkerAborted  # noqa: F401
from .ops import perform  # noqa: F401
