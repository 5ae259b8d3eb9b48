"""JAX's collectives in terms of a ``Group``: what a pmap worker runs for
``psum``, ``pmean``, ``pmax``, ``pmin``, ``all_gather``, ``psum_scatter``,
``ppermute`` and ``axis_index`` over one mapped axis."""
import numpy as np


def perform(group, op, x, params):
    """Collective ``op`` of one array (or scalar) ``x`` over ``group``."""
    if op == "axis_index":
        return group.index
    if op == "psum":
        return group.allreduce(x, "sum")
    if op == "pmean":
        total = group.allreduce(x, "sum")
        return total / group.size
    if op in ("pmax", "pmin"):
        return group.allreduce(x, op[1:])
    if op == "all_gather":
        stacked = group.allgather(np.asarray(x))
        return arrange_gathered(stacked, params.get("axis", 0), params.get("tiled", False))
    if op == "psum_scatter":
        total = np.asarray(group.allreduce(np.asarray(x), "sum"))
        return scatter_slice(total, group.size, group.index,
                             params.get("scatter_dimension", 0), params.get("tiled", False))
    if op == "ppermute":
        return group.permute(x, params["perm"])
    raise ValueError(f"unknown collective {op!r}")


def arrange_gathered(stacked, axis, tiled):
    """``all_gather``'s result from the devices' values stacked on axis 0:
    the new axis moved to ``axis``, or (``tiled``) merged into it."""
    ndim = stacked.ndim - 1
    if not tiled:
        return np.moveaxis(stacked, 0, axis % (ndim + 1))
    if ndim == 0:
        raise ValueError("all_gather(..., tiled=True) needs an array of rank >= 1 "
                         "(a scalar has no axis to concatenate along)")
    return np.concatenate(list(stacked), axis=axis % ndim)


def scatter_slice(total, size, index, dim, tiled):
    """Device ``index``'s part of ``total`` along ``dim`` (``psum_scatter``):
    entry ``index`` (the axis removed, whose length must be ``size``) or,
    ``tiled``, block ``index`` of ``size`` equal blocks."""
    dim = dim % total.ndim
    length = total.shape[dim]
    if not tiled:
        if length != size:
            raise ValueError(f"psum_scatter: the scattered dimension {dim} has length "
                             f"{length}, which must equal the axis size {size} "
                             "(or pass tiled=True)")
        return np.take(total, index, axis=dim)
    if length % size:
        raise ValueError(f"psum_scatter(..., tiled=True): dimension {dim} of length "
                         f"{length} does not split into {size} equal blocks")
    block = length // size
    return np.take(total, np.arange(index * block, (index + 1) * block), axis=dim)
