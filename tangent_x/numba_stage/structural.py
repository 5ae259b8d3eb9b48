"""What the specialiser evaluates itself instead of emitting a call.

``HANDLERS``: runtime helpers that build or read cotangent *containers*
(``unindex(params, 'W', g)``, ``tree_add``, ``cotangent_item`` ...).  Given
a container or a symbolic zero they are evaluated now, on abstract values,
exactly as ``tangent_x.runtime`` evaluates them on real ones; given plain
run-time leaves they return ``NotImplemented`` and the call is emitted
(Numba then compiles the helper's overload, ``numba_runtime``).

``REWRITES``: NumPy calls whose keyword arguments Numba's NumPy lacks
(``np.sum(x, axis=(0, 2), keepdims=True)``): spelled as calls to
``numba_runtime`` helpers that take the (static) options positionally.
"""
import ast

import numpy as np

from .. import runtime
from ..errors import TransformError
from .specialize import (Const, Dyn, Expr, Steps, Tape, Zero, children, describe,
                         is_container, is_namedtuple, rebuild)

HANDLERS = {}
REWRITES = {}


def handles(*fns):
    def deco(handler):
        for fn in fns:
            HANDLERS[fn] = handler
        return handler
    return deco


def rewrites(*fns):
    def deco(handler):
        for fn in fns:
            REWRITES[fn] = handler
        return handler
    return deco


def _structured(av):
    return is_container(av) or isinstance(av, Zero) or (
        isinstance(av, Const) and (av.value is None or isinstance(av.value, (list, tuple, dict))))


def _zero_of(s, like):
    """A symbolic zero (containers: a container of them)."""
    if is_container(like):
        return rebuild(like, [_zero_of(s, c) for c in children(like)])
    if isinstance(like, Zero):
        return like
    if isinstance(like, Const) and like.value is None:
        return Const(None)
    return Zero(s.materialize(like, "like"))


def _open(av):
    from .specialize import _as_av
    if isinstance(av, Const) and isinstance(av.value, (list, tuple, dict)):
        return _as_av(av.value)
    return av


def _index(s, index):
    if not isinstance(index, Const):
        from .specialize import _NeedUnroll
        raise _NeedUnroll("a container", s.where())
    return index.value


@handles(runtime.last_writes)
def _last_writes(s, args, kwargs):
    """The values written into a container item (``d['w'] = v``) all reach
    it: a key or a position never repeats."""
    items, index, like = args
    if is_container(_open(like)) or isinstance(like, Zero):
        return items
    return NotImplemented


@handles(runtime.unindex)
def _unindex(s, args, kwargs):
    x, index, g = args
    x = _open(x)
    if not is_container(x):
        return NotImplemented
    key = _index(s, index)
    if isinstance(x, dict):
        items = {k: _zero_of(s, v) for k, v in x.items()}
        items[key] = s.materialize(g, "g")
        return rebuild(x, list(items.values()))
    items = [_zero_of(s, v) for v in children(x)]
    items[key] = s.materialize(g, "g")
    return rebuild(x, items)


@handles(runtime.unattr)
def _unattr(s, args, kwargs):
    x, attr, g = args
    x = _open(x)
    if not is_namedtuple(x):
        return NotImplemented
    items = [_zero_of(s, v) for v in x]
    items[x._fields.index(attr.value)] = s.materialize(g, "g")
    return type(x)(*items)


def tree_add(s, a, b, hint="sum"):
    """``a + b`` leafwise; symbolic zeros and None add nothing."""
    if _is_zero(a):
        return b
    if _is_zero(b):
        return a
    a, b = _open(a), _open(b)
    if is_container(a) and is_container(b):
        if len(children(a)) != len(children(b)):
            s.fail(f"cannot add cotangents {describe(a)} and {describe(b)}")
        return rebuild(a, [tree_add(s, x, y, hint) for x, y in zip(children(a), children(b))])
    if is_container(a) or is_container(b):
        s.fail(f"cannot add cotangents {describe(a)} and {describe(b)}")
    return s.materialize(Expr(ast.BinOp(left=s.render(a), op=ast.Add(), right=s.render(b))),
                         hint)


def _is_zero(av):
    return isinstance(av, Zero) or (isinstance(av, Const) and av.value is None)


@handles(runtime.tree_add)
def _tree_add(s, args, kwargs):
    a, b = args
    if not (_structured(a) or _structured(b)):
        return NotImplemented
    return tree_add(s, a, b)


@handles(runtime.zeros_like)
def _zeros_like(s, args, kwargs):
    (x,) = args
    x = _open(x)
    if is_container(x):
        return rebuild(x, [_zeros_like(s, [c], {}) if is_container(c) else
                           _materialized_zero(s, c) for c in children(x)])
    if isinstance(x, Zero):
        return x
    return NotImplemented


def _materialized_zero(s, av):
    if isinstance(av, Const) and av.value is None:
        return av
    if isinstance(av, Zero):
        return av
    return s.materialize(Expr(ast.Call(func=s.global_name(runtime.zeros_like, "zeros_like"),
                                       args=[s.render(av)], keywords=[])), "zeros")


@handles(runtime.cotangent_item)
def _cotangent_item(s, args, kwargs):
    g, key, like = args
    if isinstance(_open(g), Steps):
        key = _index(s, key)
        item = _open(g).item(s, key)
        if _is_zero(item):
            like = _open(like)
            return _zeros_like(s, [like], {}) if is_container(like) else \
                _materialized_zero(s, like)
        return item
    if _is_zero(g):
        return _zeros_like(s, [like], {}) if is_container(_open(like)) else \
            _materialized_zero(s, like)
    g = _open(g)
    if not is_container(g):
        return NotImplemented
    item = g[_index(s, key)]
    if _is_zero(item):
        like = _open(like)
        return _zeros_like(s, [like], {}) if is_container(like) else _materialized_zero(s, like)
    return item


@handles(runtime.item_cotangent)
def _item_cotangent(s, args, kwargs):
    g, key, like = args
    if isinstance(_open(g), Steps):
        key = _index(s, key)
        item = _open(g).item(s, key)
        if _is_zero(item):
            like = _open(like)
            return _zeros_like(s, [like], {}) if is_container(like) else \
                _materialized_zero(s, like)
        return item
    if _is_zero(g):
        return Const(None)
    return _unindex(s, [g, key, like], {})


@handles(runtime.attr_cotangent)
def _attr_cotangent(s, args, kwargs):
    ct, attr, like = args
    if _is_zero(ct):
        return _materialized_zero(s, like)
    ct = _open(ct)
    item = getattr(ct, attr.value)
    return _materialized_zero(s, like) if _is_zero(item) else item


@handles(runtime.dense)
def _dense(s, args, kwargs):
    items, like = _open(args[0]), _open(args[1])
    if not is_container(items):
        return NotImplemented
    return [(_materialized_zero(s, x) if _is_zero(g) else g)
            for g, x in zip(children(items), children(like))]


@handles(runtime.unbroadcast)
def _unbroadcast(s, args, kwargs):
    g, x = args
    if is_container(_open(x)) or _is_zero(g):
        return g
    return NotImplemented


@handles(runtime.broadcast_like)
def _broadcast_like(s, args, kwargs):
    t, ans = args
    if is_container(_open(ans)) or _is_zero(t):
        return t
    return NotImplemented


@handles(runtime.stop_gradient)
def _stop_gradient(s, args, kwargs):
    return args[0]


@handles(runtime.check_aux_pair)
def _check_aux_pair(s, args, kwargs):
    """The output's structure is known when specialising: check it then."""
    (out,) = args
    out = _open(out)
    if not (isinstance(out, (list, tuple)) and len(out) == 2):
        got = f"a {type(out).__name__} {describe(out)}" if is_container(out) else \
            "one value, not a tuple"
        raise TransformError(runtime.aux_pair_message(got), s.where(),
                             "return value, aux")
    return Const(None)


@handles(runtime.check_grad_output)
def _check_grad_output(s, args, kwargs):
    (y,) = args
    y = _open(y)
    if is_container(y) or (isinstance(y, Const) and np.shape(y.value) != ()):
        s.fail(f"Gradient only defined for scalar-output functions; the output is "
               f"{describe(y)}", "return a scalar")
    if isinstance(y, Const):
        return Const(None)
    return NotImplemented


@handles(runtime.iteration_item)
def _iteration_item(s, args, kwargs):
    items, k = args
    bounds = None
    if isinstance(items, Expr) and isinstance(items.node, ast.Call) and \
            isinstance(items.node.func, ast.Name) and items.node.func.id == "range":
        bounds = items.node.args
    elif isinstance(items, Dyn) and items.name in s.ranges:
        bounds = s.ranges[items.name]
    if bounds is not None:          # item k of range(start, stop, step)
        start = ast.unparse(bounds[0]) if len(bounds) > 1 else "0"
        step = ast.unparse(bounds[2]) if len(bounds) > 2 else "1"
        text = f"({start}) + ({ast.unparse(s.render(k))}) * ({step})"
        return Expr(ast.parse(text.replace("(0) + ", "").replace(" * (1)", ""),
                              mode="eval").body)
    items = _open(items)
    if isinstance(items, dict):
        return Const(list(items)[_index(s, k)])
    if is_container(items):
        return items[_index(s, k)]
    return NotImplemented


@handles(runtime.index_zero)
def _index_zero(s, args, kwargs):
    g, index = args
    g = _open(g)
    if not is_container(g):
        if _is_zero(g):
            return g
        return NotImplemented
    key = _index(s, index)
    out = rebuild(g, children(g))
    if isinstance(out, dict) and key not in out:
        return out
    if isinstance(out, tuple):
        items = list(children(out))
        items[key] = Const(None)
        return rebuild(g, items)
    out[key] = Const(None)
    return out


@handles(runtime.add_at)
def _add_at(s, args, kwargs):
    acc, index, g = args
    acc = _open(acc)
    if _is_zero(acc) and not is_container(acc):
        return NotImplemented
    if not is_container(acc):
        return NotImplemented
    key = _index(s, index)
    if isinstance(acc, tuple):
        return tree_add(s, acc, _unindex(s, [acc, index, g], {}))
    out = rebuild(acc, children(acc))
    out[key] = tree_add(s, out[key], g)
    return out


@handles(runtime.with_item)
def _with_item(s, args, kwargs):
    """``items[key] = value`` on a list or dict of known structure: a copy
    with the item replaced, now (as ``runtime.with_item`` does at run time)."""
    items, key, value = args
    items = _open(items)
    if not isinstance(items, (list, dict)):
        return NotImplemented
    k = _index(s, key)
    out = dict(items) if isinstance(items, dict) else list(items)
    try:
        out[k] = s.materialize(value, "item")
    except IndexError as exc:
        s.fail(f"{describe(items)}[{k!r}] = ... fails: {exc}")
    return type(items)(out)


@handles(runtime.unbound)
def _unbound(s, args, kwargs):
    return Const(runtime.Unbound(args[0].value))


@handles(len)
def _len(s, args, kwargs):
    (x,) = args
    x = _open(x)
    if is_container(x):
        return Const(len(x))
    if isinstance(x, Tape):
        leaves = [leaf for leaf in _tape_leaves(x)]
        if leaves:
            size = s.sizes.get(leaves[0].name)       # a tape kept with its size
            if size is not None:
                return Expr(ast.Name(size, ast.Load()))
            return Expr(ast.Call(func=ast.Name("len", ast.Load()),
                                 args=[ast.Name(leaves[0].name, ast.Load())], keywords=[]))
    return NotImplemented


def _tape_leaves(tape):
    from .specialize import av_leaves
    return [leaf for leaf in av_leaves(tape.template) if isinstance(leaf, Dyn)]


@handles(isinstance)
def _isinstance(s, args, kwargs):
    x, types = args
    x = _open(x)
    if is_container(x):
        return Const(isinstance(rebuild(x, [None] * len(x)) if not isinstance(x, dict)
                                else {}, types.value))
    return NotImplemented


@handles(np.shape, np.ndim, np.size)
def _shape_of_container(s, args, kwargs):
    x = _open(args[0])
    if is_container(x):
        s.fail(f"np.shape of the container {describe(x)} in compiled code",
               "convert it with np.asarray first")
    return NotImplemented


def _ndim(s, args, kwargs):
    """``np.ndim`` of an argument array: its rank, a constant of the signature."""
    x = _open(args[0]) if len(args) == 1 and not kwargs else None
    if isinstance(x, Dyn) and x.name in s.ranks:
        return Const(s.ranks[x.name])
    return _shape_of_container(s, args, kwargs)


HANDLERS[np.ndim] = _ndim


def _is_array(s, args, kwargs):
    """``is_array`` of a constant or of an argument array (whose rank the
    signature fixes): known now, so only the branch taken is compiled."""
    x = _open(args[0]) if len(args) == 1 and not kwargs else None
    if isinstance(x, Const):
        return Const(isinstance(x.value, np.ndarray))
    if isinstance(x, Dyn) and x.name in s.ranks:
        return Const(True)
    return NotImplemented


HANDLERS[runtime.is_array] = _is_array


@handles(list)
def _list(s, args, kwargs):
    if len(args) == 1:
        x = _open(args[0])
        if isinstance(x, (list, tuple)):
            return list(x)
        if isinstance(x, Tape):
            s.fail("copying a list filled by a loop cannot be compiled")
    return NotImplemented


@handles(tuple)
def _tuple(s, args, kwargs):
    if len(args) == 1:
        x = _open(args[0])
        if isinstance(x, (list, tuple)):
            return tuple(x)
    return NotImplemented


@handles(dict)
def _dict(s, args, kwargs):
    if not args:
        return dict(kwargs)
    if len(args) == 1 and isinstance(_open(args[0]), dict):
        out = dict(_open(args[0]))
        out.update(kwargs)
        return out
    return NotImplemented


# -- reductions with axis/keepdims -------------------------------------------

def _helper(s, name):
    from . import numba_runtime
    return s.global_name(getattr(numba_runtime, name), name)


def _reduction(name):
    def rewrite(s, args, kwargs):
        kwargs = dict(kwargs)
        positional = ["a", "axis", "dtype", "out", "keepdims"]
        for k, v in zip(positional, args):
            kwargs[k] = v
        extra = set(kwargs) - {"a", "axis", "keepdims"}
        if extra and not all(isinstance(kwargs[k], Const) and kwargs[k].value is None
                             for k in extra):
            return NotImplemented
        axis = kwargs.get("axis", Const(None))
        keepdims = kwargs.get("keepdims", Const(False))
        if not isinstance(axis, Const) or not isinstance(keepdims, Const):
            return NotImplemented
        if axis.value is None and not keepdims.value:
            if name in ("all", "any"):
                return NotImplemented
            return Expr(ast.Call(func=_numpy(s, name), args=[s.render(kwargs["a"])],
                                 keywords=[]))
        axes = axis.value
        axes = None if axes is None else ((int(axes),) if np.ndim(axes) == 0 else
                                          tuple(int(a) for a in axes))
        helper = f"{name}_axes" + ("_keepdims" if keepdims.value else "")
        return Expr(ast.Call(func=_helper(s, helper),
                             args=[s.render(kwargs["a"]), s.render(Const(axes))], keywords=[]))
    return rewrite


def _numpy(s, name):
    return ast.Attribute(value=s.global_name(np, "np"), attr=name, ctx=ast.Load())


for _name in ("sum", "mean", "max", "min", "prod", "var", "std", "amax", "amin"):
    if hasattr(np, _name):
        REWRITES[getattr(np, _name)] = _reduction(
            {"amax": "max", "amin": "min"}.get(_name, _name))


def _by_helper(name):
    """Calls spelled as a ``numba_runtime`` helper of the same meaning."""
    def rewrite(s, args, kwargs):
        names = _SIGNATURES[name]
        bound = dict(zip(names, args))
        bound.update(kwargs)
        if set(bound) - set(names):
            return NotImplemented
        optional = _DEFAULTS.get(name, {})
        if optional and all(isinstance(bound.get(n, Const(None)), Const) and
                            bound.get(n, Const(None)).value is None for n in optional):
            return NotImplemented      # Numba's own NumPy has the plain form
        values = []
        for n in names:
            if n in bound:
                values.append(bound[n])
            elif n in _DEFAULTS.get(name, {}):
                values.append(Const(_DEFAULTS[name][n]))
            else:
                return NotImplemented
        rendered = []
        for v in values:
            if name == "array" and isinstance(v, (list, tuple)) and not is_namedtuple(v):
                rendered.append(ast.Tuple(elts=[s.render(s.materialize(c)) for c in v],
                                          ctx=ast.Load()))
            else:
                rendered.append(s.render(s.materialize(v)))
        return Expr(ast.Call(func=_helper(s, name), args=rendered, keywords=[]))
    return rewrite


_SIGNATURES = {
    "transpose": ["a", "axes"],
    "squeeze": ["a", "axis"],
    "expand_dims": ["a", "axis"],
    "moveaxis": ["a", "source", "destination"],
    "broadcast_to": ["array", "shape"],
    "einsum2": ["subscripts", "a", "b"],
    "cumsum": ["a", "axis"],
    "flip": ["m", "axis"],
    "dot": ["a", "b"],
    "matmul": ["x1", "x2"],
    "reshape": ["a", "shape"],
    "clip": ["a", "a_min", "a_max"],
    "ndim": ["a"],
    "size": ["a"],
    "inner": ["a", "b"],
    "array": ["object"],
    "add_at": ["a", "indices", "b"],
    "minimum_at": ["a", "indices", "b"],
    "maximum_at": ["a", "indices", "b"],
    "multiply_at": ["a", "indices", "b"],
}
_DEFAULTS = {"transpose": {"axes": None}, "squeeze": {"axis": None},
             "cumsum": {"axis": None}, "flip": {"axis": None}}

for _name in ("transpose", "squeeze", "expand_dims", "moveaxis", "broadcast_to", "cumsum",
              "flip", "dot", "matmul", "reshape", "clip", "ndim", "size", "array", "inner"):
    REWRITES[getattr(np, _name)] = _by_helper(_name)
REWRITES[np.add.at] = _by_helper("add_at")
for _name in ("minimum", "maximum", "multiply"):
    REWRITES[getattr(np, _name).at] = _by_helper(f"{_name}_at")


@handles(reversed)
def _reversed(s, args, kwargs):
    """``reversed(range(...))``: a static range reversed now; a run-time
    one spelled as a counting-down ``range`` (what Numba compiles)."""
    (items,) = args
    if isinstance(items, Const) and isinstance(items.value, range):
        return Const(items.value[::-1])
    if isinstance(items, Expr) and isinstance(items.node, ast.Call) and \
            isinstance(items.node.func, ast.Name) and items.node.func.id == "range":
        bounds = items.node.args
        if len(bounds) == 1:
            text = "range({0} - 1, -1, -1)"
        elif len(bounds) == 2:
            text = "range({1} - 1, {0} - 1, -1)"
        elif isinstance(bounds[2], ast.Constant) and bounds[2].value in (1, -1):
            text = "range({1} - 1, {0} - 1, -1)" if bounds[2].value == 1 else \
                "range({1} + 1, {0} + 1, 1)"
        else:
            text = ("range({0} + (max(0, ({1} - {0} + {2} - np.sign({2})) // {2}) - 1) * {2}, "
                    "{0} - {2}, -{2})")
        parts = [ast.unparse(b) for b in bounds]
        node = ast.parse(text.format(*[f"({p})" if not p.isidentifier() and
                                       not p.lstrip("-").isdigit() else p for p in parts]),
                         mode="eval").body
        s.global_name(np, "np")
        return Expr(node)
    return NotImplemented


# -- contractions (numba_stage.contractions): static options positional --------

def _contraction_helper(s, name):
    from . import contractions
    return s.global_name(getattr(contractions, name), name)


@rewrites(np.einsum)
def _einsum(s, args, kwargs):
    """``np.einsum('ij,jk->ik', a, b)`` with a constant subscripts string
    (and no options): the loop-nest helper of the same meaning."""
    if kwargs or not args or not isinstance(args[0], Const) or \
            not isinstance(args[0].value, str):
        return NotImplemented
    operands = [s.render(s.materialize(a)) for a in args[1:]]
    return Expr(ast.Call(func=_contraction_helper(s, "einsum"),
                         args=[ast.Constant(args[0].value)] + operands, keywords=[]))


@rewrites(np.tensordot)
def _tensordot(s, args, kwargs):
    """``np.tensordot(a, b, axes=n)`` with a constant integer ``n``."""
    bound = dict(zip(["a", "b", "axes"], args))
    bound.update(kwargs)
    axes = bound.get("axes", Const(2))
    if set(bound) - {"a", "b", "axes"} or "a" not in bound or "b" not in bound or \
            not isinstance(axes, Const) or not isinstance(axes.value, (int, np.integer)):
        return NotImplemented
    return Expr(ast.Call(func=_contraction_helper(s, "tensordot"),
                         args=[s.render(s.materialize(bound["a"])),
                               s.render(s.materialize(bound["b"])),
                               ast.Constant(int(axes.value))], keywords=[]))


@rewrites(np.tile)
def _tile(s, args, kwargs):
    bound = dict(zip(["A", "reps"], args))
    bound.update(kwargs)
    if set(bound) != {"A", "reps"}:
        return NotImplemented
    return Expr(ast.Call(func=_helper(s, "tile"),
                         args=[s.render(s.materialize(bound["A"])),
                               s.render(s.materialize(bound["reps"]))], keywords=[]))


@rewrites(np.diagonal)
def _diagonal(s, args, kwargs):
    names = ["a", "offset", "axis1", "axis2"]
    bound = dict(zip(names, args))
    bound.update(kwargs)
    if set(bound) - set(names) or "a" not in bound:
        return NotImplemented
    defaults = {"offset": 0, "axis1": 0, "axis2": 1}
    rendered = [s.render(s.materialize(bound["a"]))] + [
        s.render(s.materialize(bound.get(n, Const(defaults[n])))) for n in names[1:]]
    return Expr(ast.Call(func=_helper(s, "diagonal"), args=rendered, keywords=[]))


_squeeze_by_helper = REWRITES[np.squeeze]


@rewrites(np.squeeze)
def _squeeze(s, args, kwargs):
    """``np.squeeze(a)`` without ``axis``: the axes known to have size 1
    (``unit_axes``) made explicit, ``squeeze(a, (0, 2))``."""
    bound = dict(zip(["a", "axis"], args))
    bound.update(kwargs)
    axis = bound.get("axis", Const(None))
    if s.units is None or set(bound) - {"a", "axis"} or "a" not in bound or \
            not (isinstance(axis, Const) and axis.value is None):
        return _squeeze_by_helper(s, args, kwargs)
    from . import unit_axes
    a = s.materialize(bound["a"], "a")
    if not isinstance(a, Dyn):
        return _squeeze_by_helper(s, args, kwargs)
    used = set()
    fact = unit_axes.infer(s, ast.Name(a.name, ast.Load()), used)
    if fact is None or None in fact:
        s.fail("np.squeeze without axis of an array whose size-1 axes are not known "
               "here (they are followed from the arguments through arithmetic, ufuncs, "
               "expand_dims and squeeze): the result's rank is not known",
               "pass axis= to np.squeeze")
    for name in used:
        s.units_used.setdefault(name, s.where())
    axes = tuple(d for d, unit in enumerate(fact) if unit)
    if not axes:
        return a
    return Expr(ast.Call(func=_helper(s, "squeeze"),
                         args=[s.render(a), s.render(Const(axes))], keywords=[]))


@rewrites(np.repeat)
def _repeat(s, args, kwargs):
    """``np.repeat`` along an axis (Numba's own takes none)."""
    bound = dict(zip(["a", "repeats", "axis"], args))
    bound.update(kwargs)
    axis = bound.get("axis", Const(None))
    if set(bound) - {"a", "repeats", "axis"} or "a" not in bound or \
            "repeats" not in bound or (isinstance(axis, Const) and axis.value is None):
        return NotImplemented
    return Expr(ast.Call(func=_helper(s, "repeat"),
                         args=[s.render(s.materialize(bound[n]))
                               for n in ("a", "repeats", "axis")], keywords=[]))


def _vectorisable(name):
    """``np.tanh(x)`` ... spelled ``vmath.tanh(x)``: the same function as a
    Numba ufunc whose loop LLVM vectorises (Numba's own ``np.tanh`` calls
    scalar libm per element).  Calls with ``out=``/``dtype=`` keep NumPy's."""
    def rewrite(s, args, kwargs):
        if len(args) != 1 or kwargs:
            return NotImplemented
        from . import vmath
        func = ast.Attribute(value=s.global_name(vmath, "vmath"), attr=name, ctx=ast.Load())
        return Expr(ast.Call(func=func, args=[s.render(s.materialize(args[0]))], keywords=[]))
    return rewrite


def _register_vectorisable():
    from . import vmath
    for numpy_fn, kernel in vmath.KERNELS.items():
        REWRITES[numpy_fn] = _vectorisable(kernel.__name__)


_register_vectorisable()


# -- lax.scan's helpers ------------------------------------------------------

def _leaf_list(av):
    if is_container(av):
        return [x for c in children(av) for x in _leaf_list(c)]
    return [av]


@handles(runtime.scan_length)
def _scan_length(s, args, kwargs):
    """Steps of a scan: ``length`` if given, else ``len`` of the first leaf."""
    length = args[1] if len(args) > 1 else kwargs.get("length", Const(None))
    if isinstance(length, Const) and length.value is not None:
        return Const(int(length.value))
    if not isinstance(length, Const):
        return Expr(ast.Call(func=ast.Name("int", ast.Load()), args=[s.render(length)],
                             keywords=[]))
    first = _leaf_list(_open(args[0]))[0]
    if isinstance(first, Const) and first.value is not None:
        return Const(len(first.value))
    return Expr(ast.Call(func=ast.Name("len", ast.Load()), args=[s.render(first)],
                         keywords=[]))


@handles(runtime.scan_slice)
def _scan_slice(s, args, kwargs):
    """Step ``k`` of a scan's inputs, leaf by leaf (None stays None)."""
    xs, k = _open(args[0]), args[1]

    def take(x):
        if is_container(x):
            return rebuild(x, [take(c) for c in children(x)])
        if isinstance(x, Const) and x.value is None:
            return x
        return s.materialize(Expr(ast.Subscript(value=s.render(x), slice=s.render(k, "k"),
                                                ctx=ast.Load())), "x")
    return take(xs)


@handles(runtime.appended)
def _appended_to_tape(s, args, kwargs):
    """``appended`` on a list a compiled loop fills (a scan's outputs): a
    push, where the statement rebinds the list's one name (``xs =
    appended(xs, y)``: the old list is not read again)."""
    items, item = _open(args[0]), args[1]
    if isinstance(items, list):
        return items + [s.materialize(item, "item")]
    if isinstance(items, Tape) and s.append_in_place:
        s.tape_push(items, s.materialize(item, "item"))
        return items
    return NotImplemented


@handles(runtime.stack_steps)
def _stack_steps(s, args, kwargs):
    """A scan's stacked outputs: each leaf's list stacked along a new axis
    (``numba_runtime.stack_items``); outputs that are None stay None."""
    items = _open(args[0])
    reverse = args[1] if len(args) > 1 else kwargs.get("reverse", Const(False))
    if not isinstance(reverse, Const):
        return NotImplemented
    if isinstance(items, list) and all(isinstance(i, Const) and i.value is None
                                       for i in items):
        return Const(None)
    if isinstance(items, list) and items:
        # a loop unrolled (a static length): stack the items leaf by leaf
        items = items[::-1] if reverse.value else items
        first = items[0]

        def stack_known(parts):
            if is_container(parts[0]):
                return rebuild(parts[0], [stack_known([children(p)[k] for p in parts])
                                          for k in range(len(children(parts[0])))])
            if isinstance(parts[0], Const) and parts[0].value is None:
                return parts[0]
            elts = [s.render(s.materialize(p, "item")) for p in parts]
            return s.materialize(Expr(ast.Call(
                func=_helper(s, "array"), args=[ast.Tuple(elts=elts, ctx=ast.Load())],
                keywords=[])), "stacked")
        return stack_known(items) if first is not None else NotImplemented
    if not isinstance(items, Tape):
        return NotImplemented
    helper = _helper(s, "stack_items")

    def stack(template):
        if is_container(template):
            return rebuild(template, [stack(c) for c in children(template)])
        if isinstance(template, Const):
            return template
        size = s.sizes.get(template.name)
        n = ast.Name(size, ast.Load()) if size else \
            ast.Call(func=ast.Name("len", ast.Load()), args=[ast.Name(template.name,
                                                                      ast.Load())],
                     keywords=[])
        return s.materialize(Expr(ast.Call(
            func=helper, args=[ast.Name(template.name, ast.Load()), n,
                               ast.Constant(bool(reverse.value))], keywords=[])), "stacked")
    return stack(items.template)


@handles(runtime.unstack_steps)
def _unstack_steps(s, args, kwargs):
    """The per-step slices of a scan's stacked cotangent, kept whole
    (``Steps``): a loop takes its items from the end and drops them."""
    g, items = _open(args[0]), _open(args[1])
    reverse = args[2] if len(args) > 2 else kwargs.get("reverse", Const(False))
    if not isinstance(reverse, Const):
        return NotImplemented
    if isinstance(g, Const) and g.value is None:
        n = Const(0)            # items of None: no count needed
    elif isinstance(items, list):
        n = Const(len(items))
    elif isinstance(items, Tape):
        lists = [t for t in _leaf_list(items.template) if isinstance(t, Dyn)]
        if lists:
            size = s.sizes.get(lists[0].name)
            n = s.materialize(Expr(ast.Name(size, ast.Load()) if size else ast.Call(
                func=ast.Name("len", ast.Load()), args=[ast.Name(lists[0].name, ast.Load())],
                keywords=[])), "n")
        else:
            return NotImplemented
    else:
        return NotImplemented
    return Steps(g, n, n, Const(bool(reverse.value)))


@handles(runtime.scan_unslice)
def _scan_unslice(s, args, kwargs):
    """Cotangent of ``scan_slice``, leaf by leaf: ``unindex(x, k, g)``."""
    xs, k, g = _open(args[0]), args[1], _open(args[2])

    def put(x, g):
        if isinstance(x, Const) and x.value is None:
            return x
        if is_container(x):
            gs = children(g) if is_container(g) else [g] * len(children(x))
            return rebuild(x, [put(a, b) for a, b in zip(children(x), gs)])
        if _is_zero(g):
            return Zero(x)
        return s.materialize(Expr(ast.Call(func=s.global_name(runtime.unindex, "unindex"),
                                           args=[s.render(x), s.render(k, "k"), s.render(g)],
                                           keywords=[])), "unsliced")
    return put(xs, g)


@handles(list)
def _list_of(s, args, kwargs):
    """``list(d)`` of a dict: its keys, known now (a loop over ``d.items()``
    is then written out, key by key)."""
    if len(args) == 1 and not kwargs and isinstance(_open(args[0]), dict):
        return Const(list(_open(args[0])))
    return NotImplemented
