"""JAX's collectives (``psum``, ``pmean``, ``pmax``, ``pmin``,
``all_gather``, ``psum_scatter``, ``ppermute``, ``axis_index``): outside a
mapped function they raise ``NameError`` exactly as JAX does; inside a
``pmap`` worker (or a ``vmap(..., axis_name=...)`` run one example at a
time) they dispatch to the handler bound for the axis with ``_bind_axis``.

Inside transformed code they are primitives (``rules/collectives.py``):
grad, jvp and vmap know them by their rules, and generated code calls
these same functions, spelled ``lax.psum(...)``.

A tuple of axis names reduces over each axis in turn (the product of the
axes, as in JAX); ``all_gather``, ``psum_scatter``, ``ppermute`` and
``axis_index`` take one axis name here.  ``axis_index_groups`` is not
supported (a clear error, not a silently different result).
"""
import contextlib
import contextvars

from .. import tree_util

# name -> handler(op, x, axis_name, **params), bound by a pmap worker
_axis_env = contextvars.ContextVar("tangent_x_axis_env", default={})

_REDUCTIONS = ("psum", "pmean", "pmax", "pmin")


@contextlib.contextmanager
def _bind_axis(axis_name, handler):
    """Bind ``axis_name`` for the collectives in this context (used by pmap).

    ``handler(op, x, axis_name, **params)`` performs collective ``op`` (one of
    ``"psum", "pmean", "pmax", "pmin", "all_gather", "psum_scatter",
    "ppermute", "axis_index"``) on one array or scalar ``x``.  Context
    variables are per thread, so each pmap worker binds its own."""
    token = _axis_env.set({**_axis_env.get(), axis_name: handler})
    try:
        yield
    finally:
        _axis_env.reset(token)


def bound_axes():
    """The axis names bound here (outermost first)."""
    return tuple(_axis_env.get())


def _names(axis_name):
    return tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)


def _collective(op, x, axis_name, axis_index_groups=None, **params):
    env = _axis_env.get()
    names = _names(axis_name)
    for name in names:
        if name not in env:
            raise NameError(
                f"unbound axis name: {name}. Collectives such as lax.{op} only "
                f"work inside a function mapped by tangent_x.pmap (or vmap) that "
                f"binds axis_name={name!r}.")
    if axis_index_groups is not None:
        raise NotImplementedError(
            f"lax.{op}(..., axis_index_groups=...) is not supported by tangent_x; "
            "reduce over the whole axis and select with lax.axis_index instead")
    if len(names) > 1 and op not in _REDUCTIONS:
        raise NotImplementedError(
            f"lax.{op} over several axes {names} is not supported by tangent_x; "
            "gather over one axis at a time")
    if op == "axis_index":
        return env[names[0]](op, None, names[0], **params)

    def one(leaf):
        for name in names:
            leaf = env[name](op, leaf, name, **params)
        return leaf
    return tree_util.tree_map(one, x)


def psum(x, axis_name, *, axis_index_groups=None):
    """Sum of ``x`` (any pytree) over the mapped axis ``axis_name``."""
    return _collective("psum", x, axis_name, axis_index_groups)


def pmean(x, axis_name, *, axis_index_groups=None):
    """Mean of ``x`` over the mapped axis ``axis_name``."""
    return _collective("pmean", x, axis_name, axis_index_groups)


def pmax(x, axis_name, *, axis_index_groups=None):
    """Maximum of ``x`` over the mapped axis ``axis_name``."""
    return _collective("pmax", x, axis_name, axis_index_groups)


def pmin(x, axis_name, *, axis_index_groups=None):
    """Minimum of ``x`` over the mapped axis ``axis_name``."""
    return _collective("pmin", x, axis_name, axis_index_groups)


def all_gather(x, axis_name, *, axis_index_groups=None, axis=0, tiled=False):
    """Every worker's ``x``, stacked along ``axis`` (concatenated if ``tiled``)."""
    return _collective("all_gather", x, axis_name, axis_index_groups, axis=axis, tiled=tiled)


def psum_scatter(x, axis_name, *, scatter_dimension=0, axis_index_groups=None, tiled=False):
    """The sum of ``x`` over the axis, of which each worker keeps its own
    slice along ``scatter_dimension`` (entry ``axis_index``, or with
    ``tiled`` block ``axis_index``): the transpose of ``all_gather``."""
    return _collective("psum_scatter", x, axis_name, axis_index_groups,
                       scatter_dimension=scatter_dimension, tiled=tiled)


def ppermute(x, axis_name, perm):
    """``x`` sent along ``perm``, a sequence of (source, destination)
    indices; a worker that is no destination gets zeros."""
    perm = tuple((int(s), int(d)) for s, d in perm)
    for k, what in ((0, "source"), (1, "destination")):
        seen = [p[k] for p in perm]
        if len(set(seen)) != len(seen):
            raise ValueError(f"ppermute perm has a repeated {what}: {perm}")
    return _collective("ppermute", x, axis_name, perm=perm)


def ppermute_inverse(x, axis_name, perm):
    """``ppermute`` along ``perm`` reversed (each pair's destination sends to
    its source): ``ppermute``'s transpose, which derivative code calls."""
    return ppermute(x, axis_name, [(d, s) for s, d in perm])


def axis_index(axis_name):
    """This worker's index along the mapped axis ``axis_name``."""
    return _collective("axis_index", None, axis_name)
