"""custom_jvp and custom_vjp: per-function derivative rules, JAX's API.

    @tx.custom_jvp
    def log1pexp(x):
        return np.log1p(np.exp(x))

    @log1pexp.defjvp
    def log1pexp_jvp(primals, tangents):
        x, = primals
        t, = tangents
        return log1pexp(x), t * (1.0 - 1.0 / (1.0 + np.exp(x)))

Called directly they run the primal function.  Inside a transformed
function a call is one equation whose derivative comes from the rule: a
custom_vjp's ``bwd`` is called in the backward pass with the residuals its
``fwd`` saved; a custom_jvp's tangent map is linear in the tangents, so
reverse mode transposes it by transforming it (tangent_x's own reverse mode
applied to the rule).
"""
import functools
import linecache


class _Custom:
    def __init__(self, fun, nondiff_argnums=()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)

    def __call__(self, *args, **kwargs):
        return self.fun(*args, **kwargs)

    def split(self, args):
        """(nondiff args, differentiable args) in call order."""
        nondiff = [a for i, a in enumerate(args) if i in self.nondiff_argnums]
        diff = [a for i, a in enumerate(args) if i not in self.nondiff_argnums]
        return nondiff, diff


class custom_jvp(_Custom):
    """A function with a forward-mode rule (also used by reverse mode)."""

    def __init__(self, fun, nondiff_argnums=()):
        super().__init__(fun, nondiff_argnums)
        self.jvp = None
        self._pullbacks = {}

    def defjvp(self, jvp):
        """``jvp(primals, tangents) -> (out, out_tangent)``; returns ``jvp``
        so it can be used as a decorator."""
        self.jvp = jvp
        return jvp

    def tangent_map(self, n_args):
        """A Python function ``(*nondiff, *primals, *tangents) -> out_tangent``
        with real source, so tangent_x can transform it."""
        if n_args in self._pullbacks:
            return self._pullbacks[n_args]
        n_nondiff = len(self.nondiff_argnums)
        nd = [f"nondiff{i}" for i in range(n_nondiff)]
        ps = [f"p{i}" for i in range(n_args - n_nondiff)]
        ts = [f"t{i}" for i in range(n_args - n_nondiff)]
        tup = lambda names: "(" + ", ".join(names) + ("," if len(names) == 1 else "") + ")"
        call = ", ".join(nd + [tup(ps), tup(ts)])
        source = (f"def tangent_map({', '.join(nd + ps + ts)}):\n"
                  f"    out_and_tangent = rule({call})\n"
                  f"    return out_and_tangent[1]\n")
        filename = f"<tangent_x tangent map of {self.__name__} {id(self)}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        namespace = {"rule": self.jvp}
        exec(compile(source, filename, "exec"), namespace)
        self._pullbacks[n_args] = namespace["tangent_map"]
        return namespace["tangent_map"]


class custom_vjp(_Custom):
    """A function with a reverse-mode rule ``defvjp(fwd, bwd)``."""

    def __init__(self, fun, nondiff_argnums=()):
        super().__init__(fun, nondiff_argnums)
        self.fwd = None
        self.bwd = None

    def defvjp(self, fwd, bwd):
        """``fwd(*args) -> (out, residuals)``; ``bwd(*nondiff, residuals, g)``
        returns one cotangent per differentiable argument, as a tuple."""
        self.fwd = fwd
        self.bwd = bwd


def _decorator(cls):
    def make(fun=None, *, nondiff_argnums=()):
        if fun is None:
            return lambda f: cls(f, nondiff_argnums)
        return cls(fun, nondiff_argnums)
    make.__name__ = cls.__name__
    make.__doc__ = cls.__doc__
    return make
