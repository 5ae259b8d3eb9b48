"""The public transforms: grad, value_and_grad, vjp, source.

A transform returns a ``Transformed`` callable at once; the source is
generated lazily at the first call (or when ``source`` asks for it), as JAX
traces at first call, so a decorated function may use helpers defined later
in its module.  The generated code is rebuilt whenever a global, closure
value or attribute it was built from has been rebound.
"""
import functools
import numbers
import weakref

import gast
import numpy as np

from ..canonical import converter as canonical
from ..python_stage import emit, lower, loader as modules
from ..core import ir, primitives as P
from .. import runtime
from ..core.arguments import plain_real, refuse_masked
from . import complex_values
from ..errors import TransformError, call_site
from ..numba_stage.compile import jitted_of
from .vmap import Unspecialized
from ..transforms.reverse import forward_blocks, vjp_blocks
from ..python_stage.pipeline import eliminate_dead_code
from .. import tree_util


class Generated:
    """One generated module: its text, its function, and where it came from."""

    def __init__(self, function, text, path, canonical_fn, description):
        self.function = function
        self.text = text
        self.path = path
        self.canonical = canonical_fn
        self.deps = canonical_fn.deps
        self.description = description


def _names_used(blocks, result):
    used = ir.names_in(result)
    for block in blocks:
        for stmt in block.stmts:
            used |= {n.id for n in ir.walk(stmt) if isinstance(n, gast.Name)}
    return used


def _tuple(items):
    return items[0] if len(items) == 1 else gast.Tuple(elts=list(items), ctx=gast.Load())


def build(fun, kind, argnums=(), has_aux=False, grads_tuple=False):
    """Generate, write and load the source for ``kind`` applied to ``fun``.
    ``grads_tuple``: one gradient is returned in a tuple (``argnums=(0,)``),
    not bare (``argnums=0``)."""
    name, text, linemap, env, fn, description = generate(fun, kind, argnums, has_aux,
                                                         grads_tuple)
    module, path = modules.load(f"{fn.name}_{kind}".replace("<", "").replace(">", ""),
                                text, env, linemap)
    generated = Generated(getattr(module, name), text, path, fn, description)
    generated.module = module
    return generated


def generate(fun, kind, argnums=(), has_aux=False, grads_tuple=False):
    """Source in, source out: (function name, module text, line map, env,
    canonical function, description).  The garbage collector is paused
    meanwhile: building thousands of small AST nodes otherwise triggers
    collections that double the cost."""
    import gc
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _generate(fun, kind, argnums, has_aux, grads_tuple)
    finally:
        if enabled:
            gc.enable()


def _generate(fun, kind, argnums, has_aux, grads_tuple=False):
    fn, namer = canonical.canonicalize(_unwrap(fun))
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
        from ..transforms.forward import jvp_blocks
        dots = {p: namer.fresh(f"{p}_dot") for p in wrt}
        blocks, fwd = jvp_blocks(fn, namer, dots)
        fn.env.update(fwd.env_extra)
        result = gast.Tuple(elts=[fn.result, fwd.dot_or_zeros(fn.result)], ctx=gast.Load())
        base = fn.name if fn.name != "lambda" else "fn"
        name, extra = f"jvp_{base}", [dots[p] for p in wrt]
    else:
        seed = namer.fresh("out_bar") if kind == "vjp" else None
        blocks, value, aux, grads = vjp_blocks(fn, namer, wrt, has_aux, seed)
        zeros = []
        for i, (w, g) in enumerate(zip(wrt, grads)):
            if g is None:
                bar = namer.fresh(f"{w}_bar")
                zeros.append(gast.Assign(targets=[ir.name(bar, gast.Store())],
                                         value=gast.Call(func=ir.name("zeros_like"),
                                                         args=[ir.name(w)], keywords=[]),
                                         type_comment=None))
                grads[i] = ir.name(bar)
        if zeros:
            blocks.append(emit.Block(zeros, None, "no gradient flows to these arguments"))
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
    # cotangent seeds keep `1.0 *` (simplify.fold_binop)
    eliminate_dead_code(blocks, ir.names_in(result),
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
        + (", has_aux" if has_aux else "")
    modules_used = [(P.MODULE_ALIASES[a], a) for a in used if a in P.MODULE_ALIASES]
    text, linemap = emit.render_module(description, fn.origin, imports, env, [(lines, origins)],
                                       modules_used)
    return name, text, linemap, env, fn, description


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
    from ..transforms.reverse import vjp_parts
    seed = namer.fresh("out_bar")
    forward, backward, value, aux, grads, tape_names = vjp_parts(fn, namer, wrt, has_aux, seed)
    for i, (w, g) in enumerate(zip(wrt, grads)):
        if not ir.is_name(g):
            bar = namer.fresh(f"{w}_bar")
            value_ = g if g is not None else gast.Call(func=ir.name("zeros_like"),
                                                       args=[ir.name(w)], keywords=[])
            backward.append(emit.Block([gast.Assign(targets=[ir.name(bar, gast.Store())],
                                                    value=value_, type_comment=None)]))
            grads[i] = ir.name(bar)
    grads_atom = gast.Tuple(elts=list(grads), ctx=gast.Load())
    eliminate_dead_code(backward, ir.names_in(grads_atom))
    assigned_fwd = set(fn.params) | {n.id for b in forward for s in b.stmts
                                     for n in ir.walk(s) if isinstance(n, gast.Name)
                                     and isinstance(n.ctx, gast.Store)}
    read_bwd = _names_used(backward, grads_atom)
    residuals = sorted((read_bwd & assigned_fwd) - {seed})
    tapes = [r for r in residuals if r in tape_names]
    top_level = set(fn.params) | {t.id for b in forward for s in b.stmts
                                  if isinstance(s, gast.Assign)
                                  for t in ir.walk(s.targets[0]) if isinstance(t, gast.Name)}
    maybe_unbound = [r for r in residuals if r not in top_level]
    if maybe_unbound:      # assigned only on some paths: bind them on every path
        forward.insert(0, emit.Block(
            [gast.Assign(targets=[ir.name(r, gast.Store())],
                         value=gast.List(elts=[], ctx=gast.Load()) if r in tapes
                         else ir.const(None),      # a tape is copied: a list on every path
                         type_comment=None) for r in maybe_unbound],
            None, "values assigned only inside branches or loops"))
    out = gast.Tuple(elts=[value, aux], ctx=gast.Load()) if has_aux else value
    fwd_result = gast.Tuple(elts=[out, gast.Tuple(elts=[ir.name(r) for r in residuals],
                                                  ctx=gast.Load())], ctx=gast.Load())
    eliminate_dead_code(forward, ir.names_in(fwd_result))
    unpack = []
    if len(residuals) == 1:     # `(y,) = ...` prints differently across Pythons
        unpack.append(gast.Assign(targets=[ir.name(residuals[0], gast.Store())],
                                  value=gast.Subscript(value=ir.name("residuals"),
                                                       slice=ir.const(0), ctx=gast.Load()),
                                  type_comment=None))
    elif residuals:
        unpack.append(gast.Assign(
            targets=[gast.Tuple(elts=[ir.name(r, gast.Store()) for r in residuals],
                                ctx=gast.Store())],
            value=ir.name("residuals"), type_comment=None))
    unpack += [gast.Assign(targets=[ir.name(t, gast.Store())],
                           value=gast.Call(func=ir.name("list"), args=[ir.name(t)],
                                           keywords=[]), type_comment=None) for t in tapes]
    backward = [emit.Block(unpack, None, "the forward pass's values (tapes copied: "
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


def _unwrap(fun):
    inner = getattr(fun, "__tangent_x__", None)
    return inner.function if inner is not None else fun


class Transformed:
    """A transformed function: callable, with its generated source inspectable."""

    def __init__(self, fun, kind, argnums, has_aux, finish):
        functools.update_wrapper(self, fun, updated=())
        self._fun = fun
        self._kind = kind
        self._argnums = argnums
        self._has_aux = has_aux
        self._finish = finish
        self._generated = None
        self._call_site = call_site()

    @property
    def __tangent_x__(self):
        return self

    @property
    def generated(self):
        gen = self._generated
        if gen is None or not canonical.deps_current(gen.deps):
            try:
                gen = build(self._fun, self._kind, self._argnums, self._has_aux,
                            grads_tuple=getattr(self, "_single", None) is False)
            except TransformError as exc:
                if exc.origin is None and self._call_site is not None:
                    exc = TransformError(exc.bare_message, self._call_site, exc.hint)
                    raise exc from None
                raise
            self._generated = gen
        return gen

    @property
    def function(self):
        return self.generated.function

    def __call__(self, *args, **kwargs):
        plain = plain_real((args, kwargs))
        if not plain:
            refuse_masked(self._kind, self._fun, args, kwargs)
        _check_inputs(self._kind, self._fun, args, self.checked_argnums(), plain)
        self._specialize_inner(args)
        try:
            function = self.generated.function
        except Unspecialized:
            # a vmapped function called inside: one plain run of the function
            # specialises it on the arguments it really gets (as JAX traces)
            self._fun(*self._primal_args(args), **kwargs)
            function = self.generated.function
        try:
            out = function(*args, **kwargs)
        except Exception as exc:
            modules.annotate(exc)
            raise
        return self._finish(out, args)

    def __repr__(self):
        return f"<tangent_x {self._kind} of {getattr(self._fun, '__qualname__', self._fun)}>"

    def check_inputs(self, args):
        """The checks a call makes of its inputs (float inputs for grad
        ...), for a caller that runs this transform's code itself (jit)."""
        _check_inputs(self._kind, self._fun, args, self.checked_argnums())

    @staticmethod
    def fill_gradient(g, x):
        """A gradient cast to its argument's structure and dtype, symbolic
        zeros filled: grad's finishing of one gradient, for jit's."""
        return _fill(g, x)

    @staticmethod
    def cast_gradient(g, x):
        """A gradient leaf cast to its argument's shape and dtype."""
        return _cast_like(g, x)

    def checked_argnums(self):
        """Where the differentiated arguments are in a call's arguments:
        first in jvp and vjp code (see ``_with_extra``)."""
        if self._kind in ("jvp", "vjp"):
            return range(len(self._argnums))
        return self._argnums

    def _primal_args(self, args):
        """The arguments of the untransformed function within ``args`` (jvp
        code takes primals, tangents, then the rest; vjp code primals, a
        seed, then the rest: see ``_with_extra``)."""
        if self._kind in ("jvp", "vjp"):
            k = len(self._argnums)
            n_extra = k if self._kind == "jvp" else 1
            primals = list(args[:k]) + list(args[k + n_extra:])
            order = list(self._argnums) + [i for i in range(len(primals))
                                           if i not in self._argnums]
            return [p for _, p in sorted(zip(order, primals))]
        return args

    def _specialize_inner(self, args):
        """A transformed function whose code depends on its arguments'
        structure (a vmapped one) is specialised for the primal arguments
        first; this code is rebuilt when that specialisation changes."""
        inner = getattr(self._fun, "__tangent_x__", None)
        if not hasattr(inner, "specialize"):
            return
        specialised = inner.specialize(*self._primal_args(args))
        if getattr(self, "_inner_generated", None) is not specialised:
            self._inner_generated = specialised
            self._generated = None


def _argnums_tuple(argnums):
    if isinstance(argnums, numbers.Integral):
        return (int(argnums),), True
    argnums = tuple(int(a) for a in argnums)
    return argnums, False


def _check_inputs(kind, fun, args, argnums, plain=False):
    """Inputs a derivative takes (``plain``: the caller saw that every leaf
    is a plain real array or number, see ``arguments.plain_real``)."""
    if kind == "python":
        return
    if not plain:
        complex_values.refuse_in_arguments(kind, fun, args)
    for i in argnums:
        if i >= len(args) or i < -len(args):
            raise TypeError(f"{kind}({getattr(fun, '__name__', 'f')}) was called with "
                            f"{len(args)} positional argument(s) but argnums={i}")
        for leaf in _leaves(args[i]):
            dtype = np.result_type(leaf) if not isinstance(leaf, bool) else np.dtype(bool)
            if not np.issubdtype(dtype, np.inexact):
                raise TypeError(
                    f"{kind} requires real- or complex-valued inputs (a float "
                    f"dtype), but argument {i} of {getattr(fun, '__name__', 'f')} "
                    f"has dtype {dtype}; pass floats (e.g. 1.0 instead of 1) or "
                    "exclude it with argnums")


def _cast_like(g, x):
    """Gradients take the dtype and shape of their primal, as in JAX; a
    symbolic zero (None) becomes real zeros."""
    if g is None:
        return np.zeros_like(x) if isinstance(x, (np.ndarray, np.generic)) else 0.0 * x
    if np.iscomplexobj(g) and not np.iscomplexobj(x):
        raise TypeError("a complex cotangent reached a real argument: the function "
                        "computes with complex values somewhere tangent_x could not see "
                        f"before running it; {complex_values.HINT}")
    if isinstance(x, np.ndarray):
        return np.asarray(np.broadcast_to(g, x.shape) if np.shape(g) != x.shape else g,
                          dtype=x.dtype)
    if isinstance(x, np.generic):
        return x.dtype.type(g)
    if isinstance(x, float):
        return float(g)
    return g


def _cast_grads(grads, args, argnums, single):
    if single:
        grads = (grads,)
    out = tuple(_fill(g, args[i]) for g, i in zip(grads, argnums))
    out = _owned(out, args)
    return out[0] if single else out


def _fill(g, x):
    """Cast a gradient to its argument's structure, filling symbolic zeros."""
    if g is None:
        return runtime.zeros_like(x)
    if isinstance(x, dict):
        # a plain dict's keys in sorted order, as JAX (and tree_util) give them
        keys = tree_util._sorted_keys(x) if type(x) is dict else list(x)
        return type(x)((k, _fill(g.get(k) if isinstance(g, dict) else None, x[k]))
                       for k in keys)
    if isinstance(x, (list, tuple)) and isinstance(g, (list, tuple)):
        items = [_fill(u, v) for u, v in zip(g, x)]
        if hasattr(x, "_fields"):
            return type(x)(*items)
        return type(x)(items)
    if tree_util._node_kind(x) is not None:
        return tree_util.tree_map(_cast_like, g, x)
    return _cast_like(g, x)


def _owned(grads, args):
    """Every gradient leaf a writable array that shares memory with no input
    and no other leaf: never a read-only broadcast view, never the caller's
    own array (generated code may legitimately return ``x_bar = y``).  A
    view of a fresh temporary (``np.transpose(w_bar_t)``) is kept as it is."""
    seen = {id(_root(leaf)) for leaf in _leaves(args) if isinstance(leaf, np.ndarray)}

    def own(leaf):
        if isinstance(leaf, np.ndarray):
            root = _root(leaf)
            if id(root) in seen or not leaf.flags.writeable:
                leaf = leaf.copy()
                root = leaf
            seen.add(id(root))
        return leaf

    return _map(own, grads)


# Walks of plain containers (dict, list, tuple) for the eager call path:
# tree_util's flatten builds a PyTreeDef and sorts dict keys, which here
# nothing needs (the leaves are checked or collected as a set; a map keeps
# the structure it is given).  Other node types go to tree_util.  For the
# MLP's list of dicts, ~25 us a call less.

def _leaves(tree, out=None):
    """The leaves of ``tree`` in no particular order (None is no leaf)."""
    out = [] if out is None else out
    kind = type(tree)
    if kind is dict:
        for v in tree.values():
            _leaves(v, out)
    elif kind is list or kind is tuple:
        for v in tree:
            _leaves(v, out)
    elif tree is not None:
        if tree_util._node_kind(tree) is None:
            out.append(tree)
        else:
            out.extend(tree_util.tree_leaves(tree))
    return out


def _map(f, tree):
    """``tree_util.tree_map(f, tree)`` keeping a plain dict's key order."""
    kind = type(tree)
    if kind is dict:
        return {k: _map(f, v) for k, v in tree.items()}
    if kind is list:
        return [_map(f, v) for v in tree]
    if kind is tuple:
        return tuple(_map(f, v) for v in tree)
    if tree is None:
        return None
    if tree_util._node_kind(tree) is None:
        return f(tree)
    return tree_util.tree_map(f, tree)


def _root(a):
    """The object that owns an array's memory."""
    while isinstance(a, np.ndarray) and a.base is not None:
        a = a.base
    return a


def grad(fun, argnums=0, has_aux=False):
    """Reverse-mode gradient of a scalar-output function (JAX semantics)."""
    nums, single = _argnums_tuple(argnums)

    def finish(out, args):
        if has_aux:
            grads, aux = out
            return _cast_grads(grads, args, nums, single), aux
        return _cast_grads(out, args, nums, single)

    transformed = Transformed(fun, "grad", nums, has_aux, finish)
    transformed._single = single      # jit's finishing step reads it
    return transformed


def value_and_grad(fun, argnums=0, has_aux=False):
    """``(value, grad)``; with ``has_aux``: ``((value, aux), grad)``."""
    nums, single = _argnums_tuple(argnums)

    def finish(out, args):
        value, grads = out
        if has_aux:
            primal = value[0]
        else:
            primal = value
        if np.shape(primal) != ():
            raise TypeError("Gradient only defined for scalar-output functions. "
                            f"Output had shape: {np.shape(primal)}.")
        return value, _cast_grads(grads, args, nums, single)

    transformed = Transformed(fun, "value_and_grad", nums, has_aux, finish)
    transformed._single = single
    return transformed


def vjp(fun, *primals, has_aux=False):
    """``(out, vjp_fun)``; ``vjp_fun(cotangent)`` returns one cotangent per primal.

    The forward pass runs once; ``vjp_fun`` runs only the backward pass and
    may be called with any number of cotangents."""
    nums = tuple(range(len(primals)))
    transformed = _cached(fun, "vjp_split", nums, lambda out, a: out, has_aux)
    out, residuals = transformed(*primals)
    backward = getattr(transformed.generated.module,
                       transformed.generated.function.__name__.replace("vjp_fwd_", "vjp_bwd_"))
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
        return _owned(tuple(_fill(g, p) for g, p in zip(grads, primals)), primals)

    vjp_fun.__tangent_x__ = _cached(fun, "vjp", nums, lambda out, a: out, has_aux)
    vjp_fun.__tangent_x_source__ = transformed
    return (out, vjp_fun, aux) if has_aux else (out, vjp_fun)


_TRANSFORMED = weakref.WeakKeyDictionary()


def _cached(fun, kind, argnums, finish, has_aux=False):
    """One Transformed per (function, kind, argnums), so repeated jvp/vjp
    calls reuse the generated code."""
    try:
        table = _TRANSFORMED.setdefault(fun, {})
    except TypeError:
        return Transformed(fun, kind, argnums, has_aux, finish)
    key = (kind, argnums, has_aux)
    if key not in table:
        table[key] = Transformed(fun, kind, argnums, has_aux, finish)
    return table[key]


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
    transformed = _cached(fun, "jvp", tuple(range(len(primals))), lambda out, a: out)
    return call_jvp(transformed, primals, range(len(primals)), tangents)


def call_jvp(transformed, args, argnums, tangents):
    """Call generated jvp code: its parameters are the differentiated
    primals, their tangents, then the other arguments (so that defaults
    stay last)."""
    return call_with_extra(transformed, args, argnums, tangents)


def call_with_extra(transformed, args, argnums, extra, **kwargs):
    """Call generated jvp or vjp code with the arguments ``args`` of the
    user's function: the differentiated ones, then ``extra`` (tangents, a
    cotangent seed), then the others (see ``_with_extra``)."""
    argnums = [i % len(args) for i in argnums]
    wrt = [args[i] for i in argnums]
    rest = [a for i, a in enumerate(args) if i not in argnums]
    return transformed(*wrt, *extra, *rest, **kwargs)


def extra_in_axes(n_args, argnums, extra_axes):
    """vmap's ``in_axes`` for ``call_with_extra``'s argument order: the
    user's arguments unmapped, ``extra_axes`` for the extra ones."""
    k = len(argnums)
    return (None,) * k + tuple(extra_axes) + (None,) * (n_args - k)


STAGES = ("parse", "canonical", "python", "numba")


def source(fun, stage="python", example_args=None):
    """The generated source of a transformed (or plain) function, as a string.

    ``example_args`` (a tuple of arguments, as ``jax.make_jaxpr`` takes):
    the code for arguments like these -- vmap specialises its code to their
    structure and ranks, jit to their types.  Without them: the latest
    call's code, else a generic form (vmap: every example a number, mapped
    along axis 0 where ``in_axes`` maps; jit: every argument one array or
    number).

    ``stage="numba"``: what ``jit`` hands to Numba."""
    if stage not in STAGES:
        raise ValueError(f"unknown stage {stage!r}; choose one of {', '.join(STAGES)}")
    if example_args is not None and not isinstance(example_args, tuple):
        example_args = (example_args,)
    if stage == "numba":
        # local import: api.jit imports this module (jit compiles a Transformed)
        from .jit import jitted
        jitted = jitted_of(fun) or jitted(fun)
        return jitted.numba_source(*example_args) if example_args is not None \
            else jitted.numba_source()
    _specialize_for_source(fun, example_args)
    fun = getattr(fun, "__tangent_x_source__", None) or getattr(fun, "__tangent_x__", fun)
    if hasattr(fun, "specialize") and stage == "python":    # vmap: its latest specialisation
        return fun.generated.text
    target = fun.generated.function if isinstance(fun, (Transformed,)) or \
        hasattr(fun, "specialize") else fun
    if stage == "parse":
        from ..canonical import parser
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
    body = [emit.Block(lower.lower([e]), e.origin) for e in fn.eqns]
    lines, _ = emit.render_function(fn.name if fn.name != "lambda" else "fn", fn.positional,
                                    fn.defaults, body, fn.result, kwonly=fn.kwonly,
                                    kw_defaults=fn.kw_defaults)
    return "\n".join(lines) + "\n"


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


def _generic_examples(vmapped):
    """Arguments for a vmapped function never called: a number per example,
    a batch of 2 along axis 0 where ``in_axes`` maps (the ranks of scalars)."""
    import inspect
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
    import linecache
    finish = lambda out, a: out  # noqa: E731
    ps = [f"p{i}" for i in range(n)]
    if mode == "fwd":     # all n arguments differentiated: primals, then tangents
        inner = _cached(fun, "jvp", tuple(range(n)), finish)
        args = ", ".join([f"primals[{i}]" for i in range(n)] +
                         [f"tangents[{i}]" for i in range(n)])
        source = f"def jvp_of_fun(primals, tangents):\n    return derivative({args})\n"
    else:
        inner = _cached(fun, "vjp", tuple(range(n)), finish)
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
