"""Building a transform's generated module: source in, source out.

``generate`` canonicalises a function, applies one transform to it (grad,
value_and_grad, vjp, its split form, jvp, or none: ``python``), optimises
the result (``python_stage.pipeline``) and renders a module; ``build``
writes and loads that module.  ``Transformed`` (``transformed.py``) calls
``build`` lazily and again whenever what the code was built from changes.
"""
import gast

from ..analysis.defuse import bound_names, mentioned_names
from ..canonical import converter as canonical
from ..core import ir, lower, primitives as P
from ..core.builders import assign, call
from ..python_stage import emit, loader as modules
from ..python_stage.pipeline import optimize
from ..transforms.forward import jvp_blocks
from ..transforms.reverse import forward_blocks, vjp_blocks, vjp_parts
from ..errors import TransformError
from . import complex_values


def _names_used(blocks, result):
    """The names ``blocks`` mention and ``result`` reads."""
    return ir.names_in(result) | mentioned_names(s for block in blocks for s in block.stmts)


def unwrap(fun, static=None, examples=None):
    """The plain function behind a transformed one (``__tangent_x__``);
    with ``static`` (``specialised.static_arguments``), the inner
    transform's code specialised the same way; with ``examples`` (the
    arguments one call of it gets, as vmap's lanes), its code for a call
    like that (``Transformed.generated_for``)."""
    inner = getattr(fun, "__tangent_x__", None)
    if inner is None:
        return fun
    if static and hasattr(inner, "generated_with"):
        return inner.generated_with(static).function
    if examples is not None and hasattr(inner, "generated_for"):
        return inner.generated_for(list(examples), {}).function
    return inner.function


class Generated:
    """One generated module: its text, its function, and where it came from."""

    def __init__(self, function, text, path, canonical_fn, description):
        self.function = function
        self.text = text
        self.path = path
        self.canonical = canonical_fn
        self.deps = canonical_fn.deps
        self.description = description
        self.static_params = ()      # parameters folded in by value (api.specialised)


def _tuple(items):
    return items[0] if len(items) == 1 else gast.Tuple(elts=list(items), ctx=gast.Load())


def build(fun, kind, argnums=(), has_aux=False, grads_tuple=False, static=None):
    """Generate, write and load the source for ``kind`` applied to ``fun``.
    ``grads_tuple``: one gradient is returned in a tuple (``argnums=(0,)``),
    not bare (``argnums=0``); ``static``: see ``canonicalize``."""
    name, text, linemap, env, fn, description = generate(fun, kind, argnums, has_aux,
                                                         grads_tuple, static)
    module, path = modules.load(f"{fn.name}_{kind}".replace("<", "").replace(">", ""),
                                text, env, linemap)
    generated = Generated(getattr(module, name), text, path, fn, description)
    generated.module = module
    generated.static_params = tuple(sorted(p for p, (k, _) in (static or {}).items()
                                           if k == "value"))
    return generated


def generate(fun, kind, argnums=(), has_aux=False, grads_tuple=False, static=None):
    """Source in, source out: (function name, module text, line map, env,
    canonical function, description).  The garbage collector is paused
    meanwhile: building thousands of small AST nodes otherwise triggers
    collections that double the cost."""
    import gc
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _generate(fun, kind, argnums, has_aux, grads_tuple, static)
    finally:
        if enabled:
            gc.enable()


def _generate(fun, kind, argnums, has_aux, grads_tuple=False, static=None):
    fn, namer = canonical.canonicalize(unwrap(fun, static), static)
    params = fn.positional        # argnums index these, as in JAX
    for i in argnums:
        if not -len(params) <= i < len(params):
            raise TransformError(
                f"argnums={i} is out of range for {fn.name}() with "
                f"{len(params)} positional parameter(s)", fn.origin,
                "pick a valid argument index (argnums counts positional parameters "
                "only; keyword-only ones are passed by name and not differentiated)")
    wrt = [params[i] for i in argnums]
    if kind != "python":
        complex_values.refuse_in_code(fn, kind)
    extra = []         # parameters the transform adds, after the chosen ones
    if kind == "python":
        blocks, result = forward_blocks(fn), fn.result
        name = fn.name if fn.name != "lambda" else "fn"
    elif kind == "vjp_split":
        return _generate_vjp_split(fn, namer, wrt, has_aux)
    elif kind == "jvp":
        dots = {p: namer.tangent(p) for p in wrt}
        blocks, fwd = jvp_blocks(fn, namer, dots)
        fn.env.update(fwd.env_extra)
        result = gast.Tuple(elts=[fn.result, fwd.dot_or_zeros(fn.result)], ctx=gast.Load())
        base = fn.name if fn.name != "lambda" else "fn"
        name, extra = f"jvp_{base}", [dots[p] for p in wrt]
    else:
        seed = namer.adjoint("out") if kind == "vjp" else None
        blocks, value, aux, grads = vjp_blocks(fn, namer, wrt, has_aux, seed)
        zeros = []
        for i, (w, g) in enumerate(zip(wrt, grads)):
            if g is None:
                bar = namer.adjoint(w)
                zeros.append(assign(bar, call("zeros_like", ir.name(w))))
                grads[i] = ir.name(bar)
        if zeros:
            blocks.append(lower.Block(zeros, None, "no gradient flows to these arguments"))
        grads_atom = _tuple(grads) if len(grads) == 1 and not grads_tuple else \
            gast.Tuple(elts=grads, ctx=gast.Load())
        if kind == "grad":
            result = gast.Tuple(elts=[grads_atom, aux], ctx=gast.Load()) if has_aux \
                else grads_atom
        else:
            out = gast.Tuple(elts=[value, aux], ctx=gast.Load()) if has_aux else value
            result = gast.Tuple(elts=[out, grads_atom], ctx=gast.Load())
        base = fn.name if fn.name != "lambda" else "fn"
        name, extra = f"{kind}_{base}", ([seed] if seed else [])
    # arguments not differentiated may be ints (n in `return s * n`): their
    # cotangent seeds keep `1.0 *` (passes.fold.fold_binop)
    optimize(blocks, ir.names_in(result),
             maybe_ints=[p for p in fn.params if p not in wrt])
    params, defaults = _with_extra(fn, wrt, extra)
    lines, origins = emit.render_function(name, params, defaults, blocks, result,
                                          origin=fn.origin, kwonly=fn.kwonly,
                                          kw_defaults=fn.kw_defaults)
    used = _names_used(blocks, result) | fn.default_names()
    imports = used & P.RUNTIME_NAMES
    env = {k: v for k, v in fn.env.items() if k in used}
    description = f"{kind} of {fn.name}" + \
        (f", argnums={tuple(argnums)}" if tuple(argnums) not in ((), (0,)) else "") \
        + (", has_aux" if has_aux else "") + _specialised_on(static)
    modules_used = [(P.MODULE_ALIASES[a], a) for a in used if a in P.MODULE_ALIASES]
    text, linemap = emit.render_module(description, fn.origin, imports, env, [(lines, origins)],
                                       modules_used)
    return name, text, linemap, env, fn, description


def _specialised_on(static):
    """The description's note of what the code is specialised on."""
    def one(p, k, v):
        if k == "value":
            return f"{p}={v!r}"
        if k == "kind":         # (the container an argument is)
            return f"{p} a {v}"
        return f"len({p})={v}"
    parts = [one(p, k, v) for p, (k, v) in sorted((static or {}).items())]
    if not parts:
        return ""
    kinds = [p for p in parts if " a " in p]
    if len(kinds) == len(parts):
        return ", for " + ", ".join(kinds)
    return ", specialised on " + ", ".join(parts)


def _with_extra(fn, wrt, extra):
    """(positional parameters, their trailing defaults) of generated code
    that takes ``extra`` parameters (tangents, a cotangent seed): the chosen
    primals, then ``extra``, then the other positional parameters, so that
    parameters left at their defaults stay last: ``jvp_f(x, x_dot,
    scale=2.5)``, ``vjp_f(x, out_bar, scale=2.5)`` (``call_with_extra``
    calls it).  With no extra parameters, the function's own order."""
    params = fn.positional
    if not extra:
        return params, fn.defaults
    rest = [p for p in params if p not in wrt]
    defaulted = params[len(params) - len(fn.defaults):] if fn.defaults else []
    defaults = [d for p, d in zip(defaulted, fn.defaults) if p in rest]
    return list(wrt) + list(extra) + rest, defaults


def _generate_vjp_split(fn, namer, wrt, has_aux):
    """Two functions: ``vjp_fwd_f(*args) -> (out, residuals)`` and
    ``vjp_bwd_f(residuals, out_bar) -> cotangents``, so that one forward pass
    serves any number of cotangents (the residuals are the forward values
    the backward pass reads, its tapes copied so it can run again)."""
    seed = namer.adjoint("out")
    forward, backward, value, aux, grads, tape_names = vjp_parts(fn, namer, wrt, has_aux, seed)
    for i, (w, g) in enumerate(zip(wrt, grads)):
        if not ir.is_name(g):
            bar = namer.adjoint(w)
            value_ = g if g is not None else call("zeros_like", ir.name(w))
            backward.append(lower.Block([assign(bar, value_)]))
            grads[i] = ir.name(bar)
    grads_atom = gast.Tuple(elts=list(grads), ctx=gast.Load())
    optimize(backward, ir.names_in(grads_atom))
    assigned_fwd = set(fn.params) | bound_names(s for b in forward for s in b.stmts)
    read_bwd = _names_used(backward, grads_atom)
    residuals = sorted((read_bwd & assigned_fwd) - {seed})
    tapes = [r for r in residuals if r in tape_names]
    top_level = set(fn.params) | {t.id for b in forward for s in b.stmts
                                  if isinstance(s, gast.Assign)
                                  for t in ir.walk(s.targets[0]) if isinstance(t, gast.Name)}
    maybe_unbound = [r for r in residuals if r not in top_level]
    if maybe_unbound:      # assigned only on some paths: bind them on every path
        forward.insert(0, lower.Block(
            [assign(r, gast.List(elts=[], ctx=gast.Load()) if r in tapes
                    else ir.const(None))      # a tape is copied: a list on every path
             for r in maybe_unbound],
            None, "values assigned only inside branches or loops"))
    out = gast.Tuple(elts=[value, aux], ctx=gast.Load()) if has_aux else value
    fwd_result = gast.Tuple(elts=[out, gast.Tuple(elts=[ir.name(r) for r in residuals],
                                                  ctx=gast.Load())], ctx=gast.Load())
    optimize(forward, ir.names_in(fwd_result))
    unpack = []
    if len(residuals) == 1:     # `(y,) = ...` prints differently across Pythons
        unpack.append(assign(residuals[0], gast.Subscript(
            value=ir.name("residuals"), slice=ir.const(0), ctx=gast.Load())))
    elif residuals:
        unpack.append(assign(gast.Tuple(elts=[ir.store(r) for r in residuals],
                                        ctx=gast.Store()), ir.name("residuals")))
    unpack += [assign(t, call("list", ir.name(t))) for t in tapes]
    backward = [lower.Block(unpack, None, "the forward pass's values (tapes copied: "
                                         "each call pops its own)")] + backward
    base = fn.name if fn.name != "lambda" else "fn"
    fwd_name, bwd_name = f"vjp_fwd_{base}", f"vjp_bwd_{base}"
    fwd_lines = emit.render_function(fwd_name, fn.positional, fn.defaults, forward,
                                     fwd_result, origin=fn.origin, kwonly=fn.kwonly,
                                     kw_defaults=fn.kw_defaults)
    bwd_lines = emit.render_function(bwd_name, ["residuals", seed], [], backward, grads_atom,
                                     origin=fn.origin)
    used = _names_used(forward + backward, grads_atom) | ir.names_in(fwd_result) | \
        fn.default_names()
    imports = used & P.RUNTIME_NAMES
    env = {k: v for k, v in fn.env.items() if k in used}
    modules_used = [(P.MODULE_ALIASES[a], a) for a in used if a in P.MODULE_ALIASES]
    description = f"vjp of {fn.name}" + (", has_aux" if has_aux else "")
    text, linemap = emit.render_module(description, fn.origin, imports, env,
                                       [fwd_lines, bwd_lines], modules_used)
    return fwd_name, text, linemap, env, fn, description
