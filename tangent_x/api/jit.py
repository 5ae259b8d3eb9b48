"""``jit`` and ``disable_jit``: the front end of the numba stage.

``jit(f)`` (or ``jit(grad(f))``, ``jit(jvp...)``) compiles the python stage
that eager mode runs, per call signature, with Numba (see
``numba_stage.compile``).  Here: checking the static arguments, choosing
the machinery (a ``Jitted`` for a function or a transform, ``lane_loop``'s
for ``jit(vmap(f))``, ``drivers``' for a Jacobian or Hessian), and saying
what is compiled of a function (``python_stage``).
"""
import contextlib
import inspect
import numbers

from ..errors import TransformError, call_site
from ..numba_stage import dispatch
from ..numba_stage.compile import Jitted
from ..numba_stage.drivers import JittedDriver
from ..numba_stage.results import identity_finish
from .transformed import Transformed, cached
from .vmap import Vmapped, register_jit

__all__ = ["jit", "disable_jit", "jitted", "python_stage"]


def jit(fun=None, static_argnums=(), static_argnames=(), target="cpu", *, tape_capacity=None):
    """Compile ``fun`` (plain or transformed) with Numba, per call signature.

    ``static_argnums``/``static_argnames``: arguments whose values are folded
    into the code (they must be hashable; a new value compiles again).
    Usable as ``@jit`` or ``@jit(static_argnames='config')``.  Returns a plain
    function (see ``Jitted.front``); ``jit(vmap(f))`` and ``jit`` of a
    Jacobian or Hessian return objects with call paths of their own.

    ``target="cuda"``: ``jit(vmap(f), target="cuda")`` compiles a CUDA
    kernel, one thread per example (``cuda_stage``; needs the ``[cuda]``
    extra); ``tape_capacity``: how many iterations a thread's ``while``
    loop may record for its gradient (default ``cuda_stage.launch.TAPE_CAPACITY``)."""
    if fun is None:
        return lambda f: jit(f, static_argnums, static_argnames, target,
                             tape_capacity=tape_capacity)
    _check_static_args(fun, static_argnums, static_argnames)
    if target == "cuda":
        return _cuda(fun, static_argnums, static_argnames, tape_capacity)
    if target != "cpu":
        raise ValueError(f"jit: unknown target {target!r}; choose 'cpu' or 'cuda'")
    if tape_capacity is not None:
        raise ValueError("jit: tape_capacity is for target='cuda' (a GPU thread's tape); "
                         "the CPU's tapes grow as they need")
    if getattr(fun, "__tangent_x_pmapped__", False):  # pmap with compiled shards
        return fun.jitted()
    if hasattr(fun, "__tangent_x_rebuild__"):         # jacfwd, jacrev, hessian
        return JittedDriver(fun, jit, static_argnums, static_argnames)
    if isinstance(fun, Vmapped):                      # batched, or a prange loop
        # local import: lane_loop's Numba overloads (lane_runtime) load at the first jit(vmap)
        from ..numba_stage.lane_loop import JittedVmap
        return JittedVmap(fun, python_stage, static_argnums, static_argnames)
    return Jitted(fun, python_stage, static_argnums, static_argnames).front()


def _cuda(fun, static_argnums, static_argnames, tape_capacity):
    """``jit(vmap(f), target="cuda")``: a kernel, one thread per example;
    ``jit(lambda P, X: np.sum(vf(P, X), axis=0), target="cuda")`` with ``vf``
    vmapped: one that sums the examples' results (``cuda_stage.reduction``)."""
    reduction = None
    if not isinstance(fun, Vmapped):
        # local import: the source reader of the CUDA target's reductions
        from ..cuda_stage.reduction import match
        reduction = _grad_of_reduction(fun) if isinstance(fun, Transformed) else \
            match(fun, lambda v: isinstance(v, Vmapped))
        if reduction is None:
            where = call_site()
            raise TypeError(
                f"{where.where() + ': ' if where is not None else ''}jit(..., target='cuda') "
                "compiles a vmapped function, one GPU thread per example: write "
                f"jit(vmap({getattr(fun, '__name__', 'f')}), target='cuda') (or a sum over "
                "its batch, jit(lambda *a: np.sum(vf(*a), axis=0), target='cuda') with vf "
                "vmapped), or use target='cpu'")
        fun = reduction.vmapped
    # local import: the CUDA target (and numba-cuda) loads only when asked for
    from ..cuda_stage.launch import TAPE_CAPACITY, CudaVmap
    return CudaVmap(fun, python_stage, static_argnums, static_argnames,
                    TAPE_CAPACITY if tape_capacity is None else int(tape_capacity), reduction)


def _grad_of_reduction(fun):
    """``grad(lambda P, X: np.sum(vf(P, X)))`` with ``vf`` vmapped and the
    differentiated arguments shared (``in_axes`` None): the sum over the
    batch of ``vmap(grad(f))``'s per-example gradients (the mean's: their
    mean), a ``BatchReduction``; None for any other transform."""
    # local import: the source reader of the CUDA target's reductions
    from ..cuda_stage.reduction import BatchReduction, match
    if getattr(fun, "_kind", None) != "grad" or fun._has_aux:
        return None
    found = match(fun._fun, lambda v: isinstance(v, Vmapped), whole=True)
    if found is None:
        return None
    vf = found.vmapped
    in_axes = vf.in_axes if isinstance(vf.in_axes, tuple) else None
    if in_axes is None or any(n >= len(in_axes) or in_axes[n] is not None
                              for n in fun._argnums):
        raise TransformError(
            "a CUDA kernel cannot run this reduction: grad of a sum over the batch "
            "differentiates shared arguments only (in_axes None for each argnum); a mapped "
            "argument's gradient is per example: jit(vmap(grad(f)), target='cuda')",
            found.origin, "use jit(..., target='cpu') for this function")
    # grad(f) of the same arguments: the same transform, finished the same way
    grad_f = Transformed(vf._fun, "grad", fun._argnums, False, fun._finish)
    grad_f._single = fun._single
    per_example = Vmapped(grad_f, vf.in_axes, 0, vf.method, vf.axis_name)
    return BatchReduction(per_example, found.op, found.origin, f"grad_{found.name}")


@contextlib.contextmanager
def disable_jit(disable=True):
    """Run jitted functions as their python stage (eager NumPy) inside the
    block: for pdb, prints, or code Numba cannot compile."""
    old = dispatch.open_disabled(disable)
    try:
        yield
    finally:
        dispatch.close_disabled(old)


register_jit(jit)


def jitted(fun, static_argnums=(), static_argnames=()):
    """The ``Jitted`` of ``fun`` (a function or a transform; ``jit`` returns
    its front function): for ``numba_source`` and the command line."""
    return Jitted(fun, python_stage, static_argnums, static_argnames)


def python_stage(fun):
    """What ``jit`` compiles of ``fun``: its transform, or, for a plain
    function, its python stage (one per function, finished as it is)."""
    if isinstance(fun, Transformed):
        return fun
    return cached(fun, "python", (), identity_finish)


def _check_static_args(fun, static_argnums, static_argnames):
    """As JAX: ``static_argnums`` past the parameters, or ``static_argnames``
    naming none, is a ValueError (not a silently traced argument).  ``*args``
    takes any position and ``**kwargs`` any name."""
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        return
    kinds = inspect.Parameter
    nums = (static_argnums,) if isinstance(static_argnums, numbers.Integral) else static_argnums
    names = (static_argnames,) if isinstance(static_argnames, str) else static_argnames
    name = getattr(fun, "__name__", "the function")
    signature = f"{name}({', '.join(str(p) for p in params)})"
    where = call_site()
    prefix = f"{where.where()}: " if where is not None else ""
    if not any(p.kind == kinds.VAR_POSITIONAL for p in params):
        positional = sum(p.kind in (kinds.POSITIONAL_ONLY, kinds.POSITIONAL_OR_KEYWORD)
                         for p in params)
        bad = [int(i) for i in nums if not -positional <= int(i) < positional]
        if bad:
            takes = (f"{positional} positional parameter{'' if positional == 1 else 's'}"
                     f" (static_argnums from {-positional} to {positional - 1})"
                     if positional else "no positional parameters")
            raise ValueError(
                f"{prefix}jit has static_argnums={tuple(int(i) for i in nums)}, but "
                f"{signature} has {takes}; give the positions of its parameters, "
                "or their names as static_argnames")
    if not any(p.kind == kinds.VAR_KEYWORD for p in params):
        known = {p.name for p in params
                 if p.kind in (kinds.POSITIONAL_OR_KEYWORD, kinds.KEYWORD_ONLY)}
        bad = [n for n in names if n not in known]
        if bad:
            raise ValueError(
                f"{prefix}jit has static_argnames={tuple(names)}, but {signature} has no "
                f"parameter {', '.join(repr(n) for n in bad)} that can be passed by "
                "name; name one of its parameters")
