"""JAX's collectives in compiled code (``jit(pmap(f))``): ``lax.psum`` and
the others call back into Python for the rendezvous.

A pmap worker's compiled shard runs without the GIL; a collective takes it
(an ``objmode`` block) to call the very function eager code calls, which
meets the other workers in their ``Group`` (threads: a barrier; MPI ranks:
their own bindings, see ``numba_stage.mpi_calls``).  The GIL is held only
for the exchange, so the compute between collectives runs in parallel.
The result's Numba type is fixed by the argument's (a C-contiguous array
of the same dtype, of one rank more for ``all_gather``).  With one device
per MPI process the shard's collectives are direct MPI calls instead
(``numba_stage.mpi_shard``, which falls back on these)."""
import numba
from numba import types
from numba.extending import overload

from ... import lax
from ...lax import collectives


def _literal(value, default, what):
    """A compile-time parameter (``tiled``, ``axis`` ...)."""
    if value is None or isinstance(value, (types.Omitted, types.NoneType)):
        return getattr(value, "value", default) if isinstance(value, types.Omitted) else default
    if isinstance(value, types.Literal):
        return value.literal_value
    if isinstance(value, (int, bool)):
        return value
    raise numba.TypingError(f"lax collective in compiled code: {what} must be a constant")


def _result_type(x, rank_change=0):
    if isinstance(x, types.Array):
        ndim = x.ndim + rank_change
        return types.Array(x.dtype, ndim, "C") if ndim > 0 else x.dtype
    if isinstance(x, types.Boolean):
        x = types.int64
    if rank_change > 0:
        return types.Array(x, rank_change, "C")
    return x


def _reduction(op):
    def typer(x, axis_name, axis_index_groups=None):
        out_type = _result_type(x)

        def impl(x, axis_name, axis_index_groups=None):
            with numba.objmode(out=out_type):
                out = collectives._collective(op, x, axis_name)
            return out
        return impl
    return typer


for _op in ("psum", "pmean", "pmax", "pmin"):
    overload(getattr(lax, _op))(_reduction(_op))


@overload(lax.all_gather)
def _all_gather(x, axis_name, axis_index_groups=None, axis=0, tiled=False):
    is_tiled = _literal(tiled, False, "tiled")
    out_type = _result_type(x, 0 if is_tiled else 1)

    def impl(x, axis_name, axis_index_groups=None, axis=0, tiled=False):
        with numba.objmode(out=out_type):
            out = collectives._collective("all_gather", x, axis_name, axis=axis, tiled=tiled)
        return out
    return impl


@overload(lax.psum_scatter)
def _psum_scatter(x, axis_name, scatter_dimension=0, axis_index_groups=None, tiled=False):
    is_tiled = _literal(tiled, False, "tiled")
    out_type = _result_type(x, 0 if is_tiled else -1)

    def impl(x, axis_name, scatter_dimension=0, axis_index_groups=None, tiled=False):
        with numba.objmode(out=out_type):
            out = collectives._collective("psum_scatter", x, axis_name,
                                          scatter_dimension=scatter_dimension, tiled=tiled)
        return out
    return impl


def _permute(inverse):
    def typer(x, axis_name, perm):
        if isinstance(perm, types.BaseTuple) and any(isinstance(p, types.List) for p in perm):
            # the numba stage passes a list of pairs built in a loop (a
            # comprehension) as its columns, (sources, destinations): read
            # as pairs they would send the wrong values
            raise numba.TypingError(
                "lax.ppermute in compiled code: its perm is a list of pairs built in a loop "
                "(or pairs given as lists); write the (source, destination) pairs out as "
                "tuples, or make perm a global tuple of tuples")
        out_type = _result_type(x)

        def impl(x, axis_name, perm):
            with numba.objmode(out=out_type):
                pairs = [(int(d), int(s)) if inverse else (int(s), int(d)) for s, d in perm]
                out = collectives._collective("ppermute", x, axis_name, perm=tuple(pairs))
            return out
        return impl
    return typer


overload(lax.ppermute)(_permute(False))
overload(lax.collectives.ppermute_inverse)(_permute(True))


@overload(lax.axis_index)
def _axis_index(axis_name):
    def impl(axis_name):
        with numba.objmode(out=types.int64):
            out = collectives._collective("axis_index", None, axis_name)
        return out
    return impl
