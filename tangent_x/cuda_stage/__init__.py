"""The CUDA backend: ``jit(vmap(f), target="cuda")`` as a Numba CUDA kernel.

One thread per example: the per-example numba stage that ``jit(vmap(f))``
already builds for its ``prange`` loop (``numba_stage.lane_loop``) is
rewritten into a device function inlined into a kernel with a grid-stride
loop over the batch (``kernel_text``), compiled by ``numba-cuda``
(``pip install "tangent_x[cuda]"``) and driven from the host
(``launch``).  ``available`` says whether the extra is installed;
``device_runtime`` holds what the kernels call that allocates nothing
(Threefry keys as pairs of words, fixed-capacity tapes); ``local_arrays``
turns per-example arrays of a fixed shape into a thread's local arrays
(``local_products``: small matrix products and their gradients as loops);
``reduction`` finds a sum over the batch a function asks for
(``np.sum(vf(P, X), axis=0)``, or ``grad`` of one), which the kernel adds
up with ``cuda.atomic.add``.
"""
