"""Numba implementations of the helpers generated code calls, one module per
family (``numba_runtime`` imports them all, which registers them).

The numba stage is the python stage's own source (see ``specialize``), so it
calls the very functions eager code calls: ``tangent_x.runtime.unbroadcast``,
``np.tanh`` ...  For the runtime helpers, ``numba.extending.overload``
registers a compiled implementation *for the same function object*: one
source, two executions.  NumPy calls whose options Numba's NumPy lacks
(``np.sum(x, axis=(0, 2), keepdims=True)``, ``np.squeeze``) are spelled by
the specialiser as helpers defined here (``sum_axes`` ...), which are plain
NumPy when run eagerly and overloaded for Numba.

Rank-dependent kernels (sum-to-shape, reductions over several axes) are
generated as source per (rank, rank) pair and compiled on first use (see
``kernels.loops``).  Loops write elements one at a time: no slice
assignment (whose first use in a process costs ~2 s of compile), no
``objmode`` (but for formatting the message of a failing check, in
``checks``)."""
