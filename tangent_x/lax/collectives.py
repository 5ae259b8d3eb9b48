"""JAX's collectives (``psum``, ``pmean``, ``pmax``, ``pmin``, ``all_gather``,
``axis_index``): outside a mapped function they raise ``NameError``
exactly as JAX does; inside an eager ``pmap`` they dispatch to the handler
that ``pmap`` binds with ``_bind_axis``."""
import contextlib
import contextvars


# name -> handler(op, x, axis_name, **params), bound by an eager pmap worker.
_axis_env = contextvars.ContextVar("tangent_x_axis_env", default={})


@contextlib.contextmanager
def _bind_axis(axis_name, handler):
    """Bind ``axis_name`` for the collectives in this context (used by pmap).

    ``handler(op, x, axis_name, **params)`` performs collective ``op`` (one
    of ``"psum", "pmean", "pmax", "pmin", "all_gather", "axis_index"``).
    Context variables are per thread, so each pmap worker binds its own.
    """
    token = _axis_env.set({**_axis_env.get(), axis_name: handler})
    try:
        yield
    finally:
        _axis_env.reset(token)


def _collective(op, x, axis_name, **params):
    env = _axis_env.get()
    names = axis_name if isinstance(axis_name, (tuple, list)) else (axis_name,)
    for name in names:
        if name not in env:
            raise NameError(
                f"unbound axis name: {name}. Collectives such as lax.{op} only "
                f"work inside a function mapped by tangent_x.pmap (or another "
                f"transform) that binds axis_name={name!r}.")
    return env[names[0]](op, x, axis_name, **params)


def psum(x, axis_name, *, axis_index_groups=None):
    """Sum of ``x`` (any pytree) over the mapped axis ``axis_name``."""
    return _collective("psum", x, axis_name, axis_index_groups=axis_index_groups)


def pmean(x, axis_name, *, axis_index_groups=None):
    """Mean of ``x`` over the mapped axis ``axis_name``."""
    return _collective("pmean", x, axis_name, axis_index_groups=axis_index_groups)


def pmax(x, axis_name, *, axis_index_groups=None):
    """Maximum of ``x`` over the mapped axis ``axis_name``."""
    return _collective("pmax", x, axis_name, axis_index_groups=axis_index_groups)


def pmin(x, axis_name, *, axis_index_groups=None):
    """Minimum of ``x`` over the mapped axis ``axis_name``."""
    return _collective("pmin", x, axis_name, axis_index_groups=axis_index_groups)


def all_gather(x, axis_name, *, axis_index_groups=None, axis=0, tiled=False):
    """Every worker's ``x``, stacked along ``axis`` (concatenated if ``tiled``)."""
    return _collective("all_gather", x, axis_name,
                       axis_index_groups=axis_index_groups, axis=axis, tiled=tiled)


def axis_index(axis_name):
    """This worker's index along the mapped axis ``axis_name``."""
    return _collective("axis_index", None, axis_name)
