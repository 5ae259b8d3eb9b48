"""``vmap``: the public transform, its boundary checks and its two strategies
(the pieces of the code it generates: ``vmap_body``).

The boundary does what JAX's does — checks ``in_axes`` against the
arguments, finds the batch size, reports mismatched sizes naming the
arguments — and then calls generated code specialised for the structure of
the arguments (pytree structure, which leaves are mapped and along which
axis, per-example ranks and dtypes), cached per structure as JAX caches
traces.  The generated code itself moves mapped axes to the front, runs the
vectorised body (``batching.py``) and moves the batch to ``out_axes``, so
``vmap(vmap(f))`` and ``grad(vmap(f))`` can read and transform it again.

Two strategies (``method``): ``"vectorize"`` (the default) emits batched
NumPy by the batching rules, running only operations without a rule once
per example; ``"loop"`` emits ``out[k] = f(x[k])`` as a plain loop — always
correct, and the shape a compiled loop (Numba ``prange``) wants.
"""
import functools
import numbers
import weakref

import gast
import numpy as np

from ..core.arguments import broadcast_prefix, param_names, refuse_masked
from ..numba_stage.compile import jitted_of
from ..canonical import converter as canonical
from ..python_stage import emit, loader as modules
from ..python_stage.pipeline import optimize
from .generate import unwrap
from .specialised import container_kinds, key_of, static_arguments
from .transformed import Unspecialized, structure_dependent, structure_key
from ..core import ir, lower, primitives as P
from ..core.builders import assign, call
from .. import runtime, tree_nodes, tree_util
from ..transforms.batching import PerExample, all_batched, any_batched
from .vmap_body import (Opaque, finish, first_lane_access, flag_of, leaf_tuple, loop_body,
                        probing, vectorized_body)
from ..errors import TransformError
from ..runtime.lanes import strong_lanes
from ..analysis.defuse import mentioned_names
from ..analysis.probe import probe

METHODS = ("vectorize", "loop")
# vmap(jit(f)) is jit(vmap(f)).  api.jit sits above this module (it compiles
# a Vmapped its own way), so it registers itself here when it loads.
_JIT = []


def register_jit(jit):
    _JIT[:] = [jit]


def vmap(fun, in_axes=0, out_axes=0, axis_name=None, method="vectorize"):
    """Vectorise ``fun`` over a leading (or ``in_axes``) axis of its arguments.

    ``axis_name`` names the mapped axis for the collectives inside
    (``lax.psum(x, axis_name)`` sums over the batch, as in pmap)."""
    if axis_name is not None and method == "loop":
        raise ValueError("vmap(..., axis_name=...) needs method='vectorize': a collective "
                         "spans every example, which a loop over examples cannot give")
    if method not in METHODS:
        raise ValueError(f"vmap method must be one of {METHODS}, got {method!r}")
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    _check_axes_spec(in_axes, "in_axes")
    _check_axes_spec(out_axes, "out_axes")
    if jitted_of(fun) is not None:  # vmap(jit(f)) is jit(vmap(f)): still compiled
        fun = jitted_of(fun)
        jit, = _JIT
        return jit(Vmapped(fun._fun, in_axes, out_axes, method, axis_name),
                   static_argnums=fun._static_argnums,
                   static_argnames=fun._static_argnames)
    # one Vmapped per (function, options): vmap applied inside a function
    # body keeps its specialisations from call to call
    try:
        table = _VMAPPED.setdefault(fun, {})
    except TypeError:
        return Vmapped(fun, in_axes, out_axes, method, axis_name)
    key = (repr(in_axes), repr(out_axes), method, repr(axis_name))
    if key not in table:
        table[key] = Vmapped(fun, in_axes, out_axes, method, axis_name)
    return table[key]


_VMAPPED = weakref.WeakKeyDictionary()
_LEAF_STRUCTURE = str(tree_util.tree_structure(0.0))   # a leaf's treedef, in cache keys


def _check_axes_spec(spec, what):
    for leaf in tree_util.tree_leaves(spec, is_leaf=lambda a: a is None):
        if leaf is not None and not isinstance(leaf, numbers.Integral):
            raise TypeError(f"vmap {what} must be an int, None, or a (nested) tuple/list/"
                            f"dict of those, got {leaf!r} of type {type(leaf).__name__}")


class Generated:
    def __init__(self, function, text, path, deps, description, out_flags):
        self.function = function
        self.text = text
        self.path = path
        self.deps = deps
        self.description = description
        self.out_flags = out_flags


class Vmapped:
    """A vmapped function: callable; ``tx.source`` shows its latest specialisation."""

    def __init__(self, fun, in_axes, out_axes, method, axis_name=None):
        functools.update_wrapper(self, fun, updated=())
        self.axis_name = axis_name
        self._fun = fun
        self.in_axes = in_axes
        self.out_axes = out_axes
        self.method = method
        self._cache = {}
        self._last = None
        self._static_needed = False
        self._structure_keyed = False

    def _user_fun(self):
        """The user's function under any transforms (its signature)."""
        fun = self._fun
        while getattr(getattr(fun, "__tangent_x__", None), "_fun", None) is not None:
            fun = fun.__tangent_x__._fun
        return fun

    @property
    def __tangent_x__(self):
        return self

    @property
    def generated(self):
        if self._last is None:
            raise Unspecialized("vmap specialises its code to the structure of the arguments "
                            "(as JAX traces): pass them, tx.source(f, example_args=(xs,)), "
                            "call the function once, or use `tangent-x vmap FILE:FUNC "
                            "--example-args ...`")
        return self._last

    @property
    def function(self):
        return self.generated.function

    def specialize(self, *args):
        """The generated code for arguments like ``args`` (built on first use)."""
        if not args:
            raise TypeError("vmap wrapped function must be passed at least one argument "
                            "containing an array")
        axes, size, key = self._boundary(args)
        static = None
        kinds = container_kinds(self._user_fun(), args, {})
        if self._static_needed:     # the generic code was refused (api.specialised)
            static = static_arguments(self._user_fun(), args, {}, ())
            key = (key, key_of(static))
        if self._structure_keyed:   # code inlining a structure-specialised transform
            key = (key, structure_key(args, {}))
        gen = self._cache.get(key)
        if gen is None or not canonical.deps_current(gen.deps):
            examples = [tree_util.tree_map(lambda a, ax: a if ax is None
                                           else np.take(a, 0, axis=ax), arg, ax,
                                           is_leaf=lambda v: v is None)
                        for arg, ax in zip(args, axes)]
            try:
                gen = build(self._fun, args, axes, examples, self.out_axes, self.method,
                            self.axis_name, size, static, kinds)
            except TransformError as exc:
                # a recursion's depth hangs on an unmapped Python int or a
                # tuple's length: code specialised on them, as JAX traces
                if static is not None or not getattr(exc, "specialisable", False):
                    raise
                static = static_arguments(self._user_fun(), args, {}, ())
                if not static:
                    raise
                self._static_needed = True
                key = (key, key_of(static))
                gen = build(self._fun, args, axes, examples, self.out_axes, self.method,
                            self.axis_name, size, static, kinds)
            if not self._structure_keyed and structure_dependent(gen):
                # from now on one code per shape, not per rank: the code
                # inlines one specialised to its examples' shapes
                self._structure_keyed = True
                key = (key, structure_key(args, {}))
            self._cache[key] = gen
        self._last = gen
        return gen

    def __call__(self, *args, **kwargs):
        refuse_masked("vmap", self._fun, args, kwargs)
        if kwargs:
            name = getattr(self._fun, "__name__", "f")
            raise TypeError(
                f"vmap({name}) maps over positional arguments only, but was given the "
                f"keyword argument(s) {', '.join(kwargs)} (JAX would map them over "
                "axis 0): vmap a function that binds them, e.g. "
                f"vmap(lambda x: {name}(x, {next(iter(kwargs))}=...)), or pass positional "
                "parameters positionally")
        gen = self.specialize(*args)
        try:
            out = gen.function(*args)
        except runtime.RaggedLanes as exc:
            if self.out_axes != 0:
                modules.annotate(exc)
                raise
            # the examples' values differ in structure at some point (a
            # tape popped in some lanes only): example by example, as
            # vmap promises whatever a loop over the examples runs
            out = self._example_by_example(args)
        except Exception as exc:
            modules.annotate(exc)
            raise
        out = _fill_grads(self._fun, self.out_axes, out, args, self._boundary(args)[:2])
        return tree_util.tree_map(_writable, out)

    def _example_by_example(self, args):
        """The function applied to each example (its slice of every mapped
        argument, as ``x[k]`` gives it), results stacked on axis 0."""
        axes, size, _ = self._boundary(args)

        def example(arg, ax, k):
            return tree_util.tree_map(
                lambda a, leaf: leaf if a is None else np.take(leaf, k, axis=a),
                ax, arg, is_leaf=lambda a: a is None)
        return runtime.stack_lanes([
            self._fun(*[example(a, ax, k) for a, ax in zip(args, axes)])
            for k in range(size)])

    def _boundary(self, args):
        """Per-argument leaf axes (normalised), the batch size, the cache key.
        Runs on every call: the parameters' names (``inspect.signature``, a
        good part of a small call's cost) are looked up for errors only."""
        def name(i):
            return param_names(self._fun, len(args))[i]
        plain = _plain_boundary(self.in_axes, args)
        if plain is not None:
            return plain
        in_axes = self.in_axes
        if isinstance(in_axes, tuple):
            if len(in_axes) != len(args):
                raise ValueError(
                    "vmap in_axes must be an int, None, or a tuple of entries corresponding "
                    "to the positional arguments passed to the function, but got "
                    f"len(in_axes)={len(in_axes)}, len(args)={len(args)}")
            per_arg = in_axes
        else:
            per_arg = (in_axes,) * len(args)
        axes = []
        sizes = []
        key = []
        for i, (arg, spec) in enumerate(zip(args, per_arg)):
            try:
                full = broadcast_prefix(spec, arg)
            except ValueError as exc:
                raise ValueError(f"vmap in_axes specification for argument {name(i)} "
                                 f"does not match its structure: {exc}") from None
            leaves, treedef = tree_util.tree_flatten(arg)
            leaf_axes = tree_util.tree_leaves(full, is_leaf=lambda a: a is None)
            normal = []
            for leaf, ax in zip(leaves, leaf_axes):
                # an unbatched leaf may be a placeholder for a variable the
                # path never assigned (a split vjp's residual of a loop-carried
                # value): it has no rank, and any use of it raises
                nd = 0 if ax is None and isinstance(leaf, runtime.Unbound) else np.ndim(leaf)
                if ax is not None:
                    if not -nd <= ax < nd:
                        raise ValueError(
                            f"vmap was requested to map its argument {name(i)} along axis "
                            f"{ax}, which implies that its rank should be at least "
                            f"{ax + 1 if ax >= 0 else -ax}, but is only {nd} (its shape is "
                            f"{np.shape(leaf)})")
                    ax = ax % nd
                    sizes.append((np.shape(leaf)[ax], i, ax, leaf))
                normal.append(ax)
                key.append((ax, nd, np.result_type(leaf).str if _is_arrayish(leaf)
                            else type(leaf).__name__))
            axes.append(tree_util.tree_unflatten(treedef, normal))
            key.append(str(treedef))
        if not sizes:
            raise ValueError("vmap must have at least one non-None value in in_axes")
        distinct = {s for s, *_ in sizes}
        if len(distinct) > 1:
            lines = [f"  * axis {ax} of argument {name(i)} of shape {np.shape(leaf)} has "
                     f"size {s}" for s, i, ax, leaf in sizes]
            raise ValueError("vmap got inconsistent sizes for array axes to be mapped:\n"
                             + "\n".join(lines))
        return axes, sizes[0][0], tuple(key)


def _plain_boundary(in_axes, args):
    """``Vmapped._boundary`` for the common call, every argument an array
    (or a flat dict of them, shared: ``in_axes`` None for it, as for
    parameters) and ``in_axes`` an axis or a tuple of axes, in a few attribute reads
    instead of pytree walks (a jit(vmap) call runs this on every call);
    None for anything else, and for a bad axis or mismatched sizes, whose
    errors the general path words."""
    n = len(args)
    per_arg = in_axes if isinstance(in_axes, tuple) else (in_axes,) * n
    if len(per_arg) != n:
        return None
    axes, key, size = [], [], None
    for arg, ax in zip(args, per_arg):
        if type(arg) is dict and ax is None:
            # shared parameters: a flat dict of arrays with string keys
            names = sorted(arg) if all(type(k) is str for k in arg) else None
            if names is None or not all(type(v) is np.ndarray for v in arg.values()):
                return None
            axes.append(dict.fromkeys(names))
            key.append(("dict", tuple((k, arg[k].ndim, arg[k].dtype.str) for k in names)))
            continue
        if type(arg) is not np.ndarray or not (ax is None or type(ax) is int):
            return None
        nd = arg.ndim
        if ax is not None:
            if not -nd <= ax < nd:
                return None
            ax %= nd
            if size is None:
                size = arg.shape[ax]
            elif arg.shape[ax] != size:
                return None
        axes.append(ax)
        key.append((ax, nd, arg.dtype.str))
        key.append(_LEAF_STRUCTURE)
    if size is None:
        return None
    return axes, size, tuple(key)


def _is_arrayish(x):
    return isinstance(x, (np.ndarray, np.generic, numbers.Number))


def _writable(leaf):
    leaf = strong_lanes(leaf)
    if isinstance(leaf, np.ndarray) and not leaf.flags.writeable:
        return leaf.copy()
    return leaf


# --- code generation ------------------------------------------------------------

def _fill_grads(fun, out_axes, out, args, boundary):
    """The finishing step of a vmapped ``grad``/``value_and_grad``, lane by
    lane.  Generated gradient code returns symbolic zeros (None) for parts of
    an argument no gradient reaches, and a gradient the shape of the
    argument's per-example value only after ``tx.grad``'s finishing step
    (which vmap does not run: it vectorises the bare generated code).  Each
    such gradient leaf becomes ``(batch,) + shape of one example`` (JAX:
    ``out_axes=0`` broadcasts unbatched outputs), with the argument's dtype."""
    kind = getattr(fun, "_kind", None)
    if kind not in ("grad", "value_and_grad") or out_axes != 0:
        return out
    axes, size = boundary
    nums, has_aux, single = fun._argnums, fun._has_aux, getattr(fun, "_single", True)

    def fill(g, x, ax):
        if isinstance(x, dict):
            keys = tree_nodes._sorted_keys(x) if type(x) is dict else list(x)
            return type(x)((k, fill(g.get(k) if isinstance(g, dict) else None, x[k],
                                    ax[k] if isinstance(ax, dict) else ax)) for k in keys)
        if isinstance(x, (list, tuple)):
            gs = g if isinstance(g, (list, tuple)) else [None] * len(x)
            xs = ax if isinstance(ax, (list, tuple)) else [ax] * len(x)
            items = [fill(u, v, a) for u, v, a in zip(gs, x, xs)]
            return type(x)(*items) if hasattr(x, "_fields") else type(x)(items)
        if not _is_arrayish(x):
            return g
        one = np.shape(x) if ax is None else np.shape(np.take(x, 0, axis=ax))
        dtype = np.result_type(x)
        if g is None:
            return np.zeros((size,) + one, dtype=dtype)
        if np.shape(g) != (size,) + one:
            g = np.broadcast_to(g, (size,) + one)
        if np.issubdtype(dtype, np.inexact) and np.result_type(g) != dtype:
            g = np.asarray(g, dtype=dtype)
        return g

    def fill_all(grads):
        if single:
            return fill(grads, args[nums[0]], axes[nums[0]])
        return tuple(fill(g, args[i], axes[i]) for g, i in zip(grads, nums))

    try:
        if kind == "grad":
            if has_aux:
                return fill_all(out[0]), out[1]
            return fill_all(out)
        value, grads = out
        return value, fill_all(grads)
    except (TypeError, ValueError, IndexError, KeyError):
        return out


def build(fun, args, axes, examples, out_axes, method, axis_name=None, size=None,
          static=None, kinds=None):
    spec = getattr(fun, "__tangent_x__", None)
    if getattr(fun, "__tangent_x_loop__", False):
        inner = fun
        fn = Opaque(fun, len(args))
        namer = fn.namer
        method = "loop"
    else:
        if isinstance(spec, Vmapped):      # vmap of vmap: the inner code for one example
            with probing(axis_name, size):
                inner = spec.specialize(*examples).function
        else:
            with probing(axis_name, size):
                inner = unwrap(fun, static, examples)
        # (``kinds``: the containers the arguments are, ``container_kinds``)
        fn, namer = canonical.canonicalize(inner, {**(kinds or {}), **(static or {})})
        if not static and hasattr(spec, "generated_for") and structure_dependent(spec.generated):
            # the inner transform's code holds for examples like these only
            fn.deps.append(("specialised", spec, None, spec.generated))
    params = fn.positional
    if len(args) > len(params):
        raise TypeError(f"{fn.name}() takes {len(params)} positional argument(s) but vmap "
                        f"was given {len(args)}")
    batch_size = namer.fresh("batch_size")
    entry = []
    first = next(i for i, ax in enumerate(axes)
                 if any(a is not None for a in tree_util.tree_leaves(
                     ax, is_leaf=lambda v: v is None)))
    for p, arg, ax in zip(params, args, axes):
        leaves = tree_util.tree_leaves(ax, is_leaf=lambda v: v is None)
        if all(a in (None, 0) for a in leaves):
            continue
        if not isinstance(arg, (dict, list, tuple)):
            entry.append(assign(p, call("np.moveaxis", ir.name(p), ir.const(ax),
                                          ir.const(0))))
        else:
            entry.append(assign(p, call("move_lanes", ir.name(p), leaf_tuple(leaves),
                                          ir.const(0))))
    size_expr = gast.Subscript(
        value=call("np.shape", first_lane_access(params[first], args[first], axes[first])),
        slice=ir.const(0), ctx=gast.Load())
    entry.append(assign(batch_size, size_expr))
    blocks = [lower.Block(entry, None, "the batch on axis 0 of every mapped argument")]
    with probing(axis_name, size):
        shapes = probe(fn, examples) if method == "vectorize" else {}
    flags = {p: flag_of(a, ax) for p, a, ax in zip(params, args, axes)}
    for p in params[len(args):] + fn.kwonly:
        flags[p] = False
    if method == "vectorize":
        try:
            batcher, body = vectorized_body(fn, namer, flags, shapes, batch_size, axis_name)
        except PerExample:      # no vectorised form: slower, never wrong
            if axis_name is not None:
                raise TransformError(
                    f"vmap(..., axis_name={axis_name!r}) of {fn.name}: some operation has no "
                    "batching rule, and running it once per example would break the "
                    "collectives over the batch", fn.origin, "pmap the function instead")
            method = "loop"
    if method == "vectorize":
        blocks += body
        result = fn.result
        out_flag = batcher.flag(result)
        result_shape = shapes.get(result.id) if ir.is_name(result) else None
        env = dict(fn.env)
    else:
        result, out_flag, result_shape, env = loop_body(fn, inner, params, args, flags,
                                                         batch_size, blocks, namer)
    result = finish(fn, result, out_flag, result_shape, out_axes, batch_size, blocks, namer)
    base = fn.name if fn.name != "lambda" else "fn"
    name = f"vmap_{base}"
    grows = None
    if method == "vectorize":
        def grows(old, new, flags=batcher.flags):
            # a shared value plus a batched one is batched: a new, larger array
            return any_batched(flags.get(new)) and not all_batched(flags.get(old, True))
    optimize(blocks, ir.names_in(result), grows)
    lines, origins = emit.render_function(name, params, fn.defaults, blocks, result,
                                          origin=fn.origin, kwonly=fn.kwonly,
                                          kw_defaults=fn.kw_defaults)
    used = mentioned_names(s for block in blocks for s in block.stmts)
    used |= ir.names_in(result) | fn.default_names()
    imports = used & P.RUNTIME_NAMES
    env = {k: v for k, v in env.items() if k in used}
    axes_text = ", ".join(str(a) for a in axes) if len(axes) > 1 else str(axes[0])
    description = f"vmap of {fn.name} (in_axes per argument: {axes_text}" + \
        (f", out_axes={out_axes}" if out_axes != 0 else "") + \
        (", method='loop'" if method == "loop" else "") + \
        (f", axis_name={axis_name!r}" if axis_name is not None else "") + ")"
    modules_used = [(P.MODULE_ALIASES[a], a) for a in used if a in P.MODULE_ALIASES]
    text, linemap = emit.render_module(description, fn.origin, imports, env,
                                       [(lines, origins)], modules_used)
    module, path = modules.load(f"{fn.name}_vmap".replace("<", "").replace(">", ""),
                                text, env, linemap)
    return Generated(getattr(module, name), text, path, fn.deps, description, out_flag)

