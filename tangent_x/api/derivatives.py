"""The public transforms grad, value_and_grad, vjp and jvp, and ``source``.

Each front end checks what JAX checks, then returns (or calls) a
``Transformed`` (``transformed.py``), whose code ``generate.py`` builds;
``boundary.py`` shapes the gradients it returns.  ``source`` prints any
stage of any of them, and ``derivative_function`` makes a derivative a
plain function that can be transformed again (check_grads' higher orders).
"""
import functools
import inspect
import linecache
import types

import numpy as np

from ..canonical import converter as canonical, parser
from ..core.arguments import refuse_masked
from ..core import lower
from ..python_stage import emit, loader as modules
from .. import tree_util
from ..errors import TransformError
from . import complex_values
from .boundary import cast_grads, fill, owned
from .generate import build
from .transformed import Transformed, Unspecialized, argnums_tuple, cached, call_jvp
from ..numba_stage.compile import jitted_of
from .jit import jit, jitted


def grad(fun, argnums=0, has_aux=False):
    """Reverse-mode gradient of a scalar-output function (JAX semantics)."""
    nums, single = argnums_tuple(argnums)

    def finish(out, args):
        if has_aux:
            grads, aux = out
            return cast_grads(grads, args, nums, single), aux
        return cast_grads(out, args, nums, single)

    transformed = Transformed(fun, "grad", nums, has_aux, finish)
    transformed._single = single      # jit's finishing step reads it
    return transformed


def value_and_grad(fun, argnums=0, has_aux=False):
    """``(value, grad)``; with ``has_aux``: ``((value, aux), grad)``."""
    nums, single = argnums_tuple(argnums)

    def finish(out, args):
        value, grads = out
        if has_aux:
            primal = value[0]
        else:
            primal = value
        if np.shape(primal) != ():
            raise TypeError("Gradient only defined for scalar-output functions. "
                            f"Output had shape: {np.shape(primal)}.")
        return value, cast_grads(grads, args, nums, single)

    transformed = Transformed(fun, "value_and_grad", nums, has_aux, finish)
    transformed._single = single
    return transformed


def vjp(fun, *primals, has_aux=False):
    """``(out, vjp_fun)``; ``vjp_fun(cotangent)`` returns one cotangent per primal.

    The forward pass runs once; ``vjp_fun`` runs only the backward pass and
    may be called with any number of cotangents."""
    nums = tuple(range(len(primals)))
    transformed = cached(fun, "vjp_split", nums, lambda out, a: out, has_aux)
    out, residuals = transformed(*primals)
    # the backward pass of the forward that ran (code specialised on the
    # arguments' container kinds: fuzz seed 520195)
    generated = transformed.generated_for(primals, {})
    backward = getattr(generated.module,
                       generated.function.__name__.replace("vjp_fwd_", "vjp_bwd_"))
    aux = None
    if has_aux:
        out, aux = out

    def vjp_fun(cotangent):
        refuse_masked("vjp", fun, (cotangent,), what="cotangent")
        complex_values.refuse_in_arguments("vjp", fun, (cotangent,), what="cotangent")
        try:
            grads = backward(residuals, cotangent)
        except Exception as exc:
            modules.annotate(exc)
            raise
        return owned(tuple(fill(g, p) for g, p in zip(grads, primals)), primals)

    vjp_fun.__tangent_x__ = cached(fun, "vjp", nums, lambda out, a: out, has_aux)
    vjp_fun.__tangent_x_source__ = transformed
    return (out, vjp_fun, aux) if has_aux else (out, vjp_fun)


def jvp(fun, primals, tangents):
    """Forward mode: ``(fun(*primals), directional derivative along tangents)``."""
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("primal and tangent arguments to jvp must be tuples or lists; "
                        f"found {type(primals).__name__} and {type(tangents).__name__}.")
    if len(primals) != len(tangents):
        raise TypeError("jvp called with different primal and tangent counts: "
                        f"{len(primals)} and {len(tangents)}")
    for i, (p, t) in enumerate(zip(primals, tangents)):
        if tree_util.tree_structure(p) != tree_util.tree_structure(t):
            raise TypeError(f"primal and tangent arguments to jvp must have the same tree "
                            f"structure; argument {i} has {tree_util.tree_structure(p)} "
                            f"and {tree_util.tree_structure(t)}")
        for a, b in zip(tree_util.tree_leaves(p), tree_util.tree_leaves(t)):
            if np.shape(a) != np.shape(b):
                raise ValueError(f"jvp called with different primal and tangent shapes: "
                                 f"{np.shape(a)} and {np.shape(b)} (argument {i})")
    refuse_masked("jvp", fun, primals, what="primal")
    refuse_masked("jvp", fun, tangents, what="tangent")
    complex_values.refuse_in_arguments("jvp", fun, primals, what="primal")
    complex_values.refuse_in_arguments("jvp", fun, tangents, what="tangent")
    transformed = cached(fun, "jvp", tuple(range(len(primals))), lambda out, a: out)
    return call_jvp(transformed, primals, range(len(primals)), tangents)


def _jvp_for_primals(fun, n, first=0):
    """The jvp code of ``fun`` for ``n`` primals, a callable taking the
    primals then the tangents (then the ``first`` arguments bound before
    them, for ``jvp(partial(fun, a), ...)``) and returning ``(out,
    out_tangent)``: what a ``tx.jvp(fun, primals, tangents)`` call inside a
    transformed function inlines (the canonical stage asks for it through
    this attribute)."""
    return cached(fun, "jvp", tuple(range(first, first + n)), lambda out, a: out)


jvp.for_primals = _jvp_for_primals


def _vjp_for_primals(fun, n, first=0):
    """(the vjp code of ``fun`` for ``n`` primals after ``first`` bound
    arguments, taking the primals, a cotangent, then the bound arguments
    and returning ``(out, cotangents)``; a Python function computing
    ``fun``): what ``tx.vjp(fun, ...)`` inside a transformed function
    inlines.  A NumPy function (``np.sin``) is wrapped in a one-line
    Python function first."""
    inner = getattr(fun, "__tangent_x__", None)
    if inner is not None:
        primal = inner.function
    elif isinstance(fun, (types.FunctionType, types.MethodType, functools.partial)):
        primal = fun
    else:
        primal = fun = _wrapped(fun, first + n)
    return cached(fun, "vjp", tuple(range(first, first + n)), lambda out, a: out), primal


_WRAPPED = {}


def _wrapped(fun, n):
    """``def sin(a0): return fun(a0)``, its source registered (as a
    Jacobian's source form is) so that it can be transformed."""
    key = (id(fun), n)
    if key not in _WRAPPED:
        name = "".join(c if c.isalnum() else "_" for c in getattr(fun, "__name__", "f"))
        params = ", ".join(f"a{i}" for i in range(n))
        text = f"def {name}({params}):\n    return fun({params})\n"
        filename = f"<tangent_x vjp of {name} {id(fun)} {n}>"
        linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
        namespace = {"fun": fun}
        exec(compile(text, filename, "exec"), namespace)
        _WRAPPED[key] = (fun, namespace[name])      # (fun kept alive with its id)
    return _WRAPPED[key][1]


vjp.pullback_for_primals = _vjp_for_primals


STAGES = ("parse", "canonical", "python", "numba", "cuda", "ptx")


def source(fun, stage="python", example_args=None):
    """The generated source of a transformed (or plain) function, as a string.

    ``example_args`` (a tuple of arguments, as ``jax.make_jaxpr`` takes):
    the code for arguments like these -- vmap specialises its code to their
    structure and ranks, jit to their types.  Without them: the latest
    call's code, else a generic form (vmap: every example a number, mapped
    along axis 0 where ``in_axes`` maps; jit: every argument one array or
    number).

    ``stage="numba"``: what ``jit`` hands to Numba.  ``stage="cuda"``: the
    kernel module of ``jit(vmap(f), target="cuda")`` (``fun`` is that, or the
    vmapped function); ``stage="ptx"``: its PTX for ``cc=(9, 0)`` (needs
    ``example_args``; no GPU needed)."""
    if stage not in STAGES:
        raise ValueError(f"unknown stage {stage!r}; choose one of {', '.join(STAGES)}")
    if example_args is not None and not isinstance(example_args, tuple):
        example_args = (example_args,)
    if stage in ("cuda", "ptx"):
        return _cuda_source(fun, stage, example_args)
    if stage == "numba":
        compiled = fun.shard_jitted() if getattr(fun, "__tangent_x_pmapped__", False) \
            else jitted_of(fun) or jitted(fun)
        return compiled.numba_source(*example_args) if example_args is not None \
            else compiled.numba_source()
    _specialize_for_source(fun, example_args)
    inner = getattr(fun, "__tangent_x__", None)
    if example_args is not None and stage == "python" and isinstance(inner, Transformed) \
            and getattr(fun, "__tangent_x_source__", None) is None:
        # (code specialised on the examples' Python ints where it must be)
        return inner.generated_for(example_args, {}).text
    fun = getattr(fun, "__tangent_x_source__", None) or getattr(fun, "__tangent_x__", fun)
    if hasattr(fun, "specialize") and stage == "python":    # vmap: its latest specialisation
        return fun.generated.text
    target = fun.generated.function if isinstance(fun, (Transformed,)) or \
        hasattr(fun, "specialize") else fun
    if stage == "parse":
        parsed = parser.parse(target)
        node = parsed.node
        start = node.decorator_list[0].lineno if getattr(node, "decorator_list", None) \
            else node.lineno
        return "".join(parsed.lines[start - 1:node.end_lineno])
    if stage == "python":
        if isinstance(fun, Transformed):
            return fun.generated.text
        return build(fun, "python").text
    fn, _ = canonical.canonicalize(target)
    body = [lower.Block(lower.lower([e]), e.origin) for e in fn.eqns]
    lines, _ = emit.render_function(fn.name if fn.name != "lambda" else "fn", fn.positional,
                                    fn.defaults, body, fn.result, kwonly=fn.kwonly,
                                    kw_defaults=fn.kw_defaults)
    return "\n".join(lines) + "\n"


def _cuda_source(fun, stage, example_args):
    """The CUDA kernel's text or PTX (see ``source``)."""
    kernel = fun if hasattr(fun, "cuda_source") else jit(fun, target="cuda")
    if stage == "ptx":
        if example_args is None:
            raise ValueError("source(..., stage='ptx') needs example_args: the kernel's "
                             "PTX is compiled for the argument types")
        return kernel.ptx(*example_args)
    return kernel.cuda_source(*(example_args or ()))


def _specialize_for_source(fun, example_args):
    """Make the code ``source`` prints: for ``example_args`` (run once where
    a vmapped function inside needs the primal arguments, as JAX traces),
    or, for a vmapped function never called, for generic examples."""
    inner = getattr(fun, "__tangent_x__", None)
    if inner is None:
        return
    if example_args is None:
        if hasattr(inner, "specialize") and getattr(inner, "_last", 1) is None:
            inner.specialize(*_generic_examples(inner))
        return
    if hasattr(inner, "specialize"):
        inner.specialize(*example_args)
        return
    if isinstance(inner, Transformed):
        inner._specialize_inner(example_args)
        try:
            inner.generated
        except Unspecialized:
            inner._fun(*inner._primal_args(example_args))
        except TransformError as exc:
            if not getattr(exc, "specialisable", False):
                raise       # (else specialised on the examples: ``source``)


def _generic_examples(vmapped):
    """Arguments for a vmapped function never called: a number per example,
    a batch of 2 along axis 0 where ``in_axes`` maps (the ranks of scalars)."""
    try:
        params = [p for p in inspect.signature(vmapped._fun).parameters.values()
                  if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY,
                                                         p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    in_axes = vmapped.in_axes
    axes = in_axes if isinstance(in_axes, (tuple, list)) else (in_axes,) * len(params)
    if not params or len(axes) != len(params) or not all(a in (None, 0, -1) for a in axes):
        raise Unspecialized("vmap specialises its code to the structure of the arguments "
                            "(as JAX traces): pass them, tx.source(f, example_args=(xs,)), "
                            "or call the function once")
    return tuple(0.5 if a is None else np.full(2, 0.5) for a in axes)


def derivative_function(fun, mode, n, plain=None):
    """A plain Python function (with real source) computing a derivative of
    ``fun`` of ``n`` arguments, so that it can itself be transformed again:

    - ``"fwd"``: ``(primals, tangents) -> jvp(fun, primals, tangents)``;
    - ``"rev"``: ``(*primals) -> vjp(fun, *primals)[1](fun(*primals))`` (the
      cotangent is the output itself, as JAX's check_grads does).

    check_grads uses these for orders >= 2."""
    finish = lambda out, a: out  # noqa: E731
    ps = [f"p{i}" for i in range(n)]
    if mode == "fwd":     # all n arguments differentiated: primals, then tangents
        inner = cached(fun, "jvp", tuple(range(n)), finish)
        args = ", ".join([f"primals[{i}]" for i in range(n)] +
                         [f"tangents[{i}]" for i in range(n)])
        source = f"def jvp_of_fun(primals, tangents):\n    return derivative({args})\n"
    else:
        inner = cached(fun, "vjp", tuple(range(n)), finish)
        args = ", ".join(ps)
        pick = "cotangents" if n > 1 else "(cotangents,)"
        # fun is called on copies of its array and number arguments (p0 * 1.0):
        # it may change them in place, which the pullback below must not see
        plain = plain or (False,) * n
        copies = ", ".join(f"{p} * 1.0" if k else p for p, k in zip(ps, plain))
        source = (f"def vjp_of_fun({args}):\n"
                  f"    out = fun({copies})\n"
                  f"    value_and_cotangents = derivative({args}, out)\n"
                  f"    cotangents = value_and_cotangents[1]\n"
                  f"    return {pick}\n")
    filename = f"<tangent_x {mode} derivative of {getattr(fun, '__name__', 'f')} {id(inner)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"derivative": inner, "fun": fun}
    exec(compile(source, filename, "exec"), namespace)
    return namespace["jvp_of_fun" if mode == "fwd" else "vjp_of_fun"]
