"""``jit`` of Python driver code: Jacobians and Hessians.

``jacfwd``/``jacrev``/``hessian`` are a few NumPy calls (one-hot bases,
stacking the result into JAX's nested structure) around one batched,
generated derivative.  Compiling the glue would make Numba re-derive
shapes that NumPy already has at hand and buys nothing; what costs time is
the derivative.  So ``jit`` of a driver rebuilds it (its
``__tangent_x_rebuild__``) with every generated callable it runs compiled by
``jit``: the batched jvp of ``hessian``, the primal and the batched vjp of
``jacrev``.  Each of those is an ordinary ``Jitted``: specialised per
signature, cached on disk, inspectable with ``numba_source``.
"""
import functools

from .dispatch import disabled

__all__ = ["JittedDriver"]


class JittedDriver:
    """``jit`` of a driver function (see the module doc)."""

    def __init__(self, fun, jit, static_argnums=(), static_argnames=()):
        if isinstance(static_argnums, int) or static_argnums or static_argnames:
            raise TypeError(
                f"jit({getattr(fun, '__name__', 'f')}): static arguments of a Jacobian or "
                "Hessian are not supported; close over them instead "
                "(tx.hessian(lambda x: f(x, config)), likewise for jacfwd/jacrev)")
        functools.update_wrapper(self, fun, updated=())
        self._fun = fun
        self._jit = jit
        self._parts = []
        self._driver = fun.__tangent_x_rebuild__(self._compile)
        self.__tangent_x_loop__ = True

    def _compile(self, generated_callable):
        part = self._jit(generated_callable)
        self._parts.append(part)
        return part

    def __call__(self, *args, **kwargs):
        if disabled():
            return self._fun(*args, **kwargs)
        return self._driver(*args, **kwargs)

    def __repr__(self):
        return f"<tangent_x jit of {getattr(self._fun, '__qualname__', self._fun)}>"

    def numba_source(self, *args, **kwargs):
        """The numba-stage source of the compiled pieces the driver has run,
        in the order it made them (after a call with ``args``, or the
        latest call): which pieces there are depends on the arguments
        (a batched jvp, or one jvp per basis vector where vmap cannot
        batch), so there is no source before a call."""
        if args or kwargs:
            self(*args, **kwargs)
        ran = [part for part in self._parts if part._last is not None
               or getattr(part, "_last_loop", None) is not None]
        if not ran:
            raise ValueError(f"{self!r} has not been called yet: its compiled pieces depend "
                             "on the arguments; call it (or pass example arguments) first")
        return "\n\n".join(part.numba_source() for part in ran)
