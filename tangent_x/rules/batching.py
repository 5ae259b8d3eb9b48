"""Batching rules (vmap): how each primitive runs on a whole batch at once.

A rule gets the equation and the running ``Batcher`` (``b``) and returns the
statements computing the batched result, marking which outputs are batched;
``None`` means "no vectorised form here" and the equation runs once per
example (``map_lanes``).  The batch is always axis 0 of a batched value, so
the rules are few and small:

- elementwise ops only need operands of lower rank lined up
  (``np.expand_dims``): NumPy broadcasting does the rest;
- reductions and shape ops shift their axis arguments by one;
- contractions become batched matmuls or einsums;
- indexing gains a leading ``:``, or a lane index (``np.arange``) when the
  index itself differs per example.

A rule is called only when some operand is batched; ranks (``b.rank``) are
per example, from one example run at first call (``probe``).
"""
import inspect
import string

import gast
import numpy as np

from ..core import ir, primitives as P
from ..transforms.batching import all_batched, any_batched, call, full_flag
from . import BATCHING

_NO_VALUE = inspect.Parameter.empty


def batching(*names):
    def register(fn):
        for key in names:
            name = key if isinstance(key, str) else P.lookup(key).name
            BATCHING[name] = fn
        return fn
    return register


def _const(value):
    if isinstance(value, tuple):
        return gast.Tuple(elts=[_const(v) for v in value], ctx=gast.Load())
    return ir.const(value)


def _value(b, atom):
    """A static Python value of an atom, or _NO_VALUE: constants, and names
    the probe saw holding small ints/tuples that no batched value feeds."""
    if isinstance(atom, gast.Constant):
        return atom.value
    if isinstance(atom, gast.Tuple) and all(isinstance(e, gast.Constant) for e in atom.elts):
        return tuple(e.value for e in atom.elts)
    if isinstance(atom, gast.UnaryOp) and isinstance(atom.op, gast.USub) and \
            isinstance(atom.operand, gast.Constant):
        return -atom.operand.value
    return _NO_VALUE


def _respell(eqn, args=None, kwargs=None):
    new = ir.Eqn(eqn.outs, eqn.prim, eqn.args if args is None else args,
                 eqn.kwargs if kwargs is None else kwargs, eqn.params, eqn.origin)
    return ir.spell(new)


# Parameter names of NumPy functions whose signature some NumPy versions do
# not expose (C functions).
_PARAMETERS = {"concatenate": ["arrays", "axis", "out"]}


def _parameters(eqn):
    try:
        return [p.name for p in inspect.signature(eqn.prim.fn).parameters.values()]
    except (TypeError, ValueError):
        return _PARAMETERS.get(eqn.prim.name)


def _bound(eqn):
    """{parameter name: atom} for a NumPy call (positional args named)."""
    names = _parameters(eqn)
    if names is None:
        return None
    out = dict(zip(names, eqn.args))
    out.update(eqn.kwargs)
    return out


def _with(eqn, **changes):
    """The call with some parameters replaced (by position if passed so)."""
    names = _parameters(eqn)
    args = list(eqn.args)
    kwargs = dict(eqn.kwargs)
    for key, atom in changes.items():
        i = names.index(key)
        if i < len(args):
            args[i] = atom
        else:
            kwargs[key] = atom
    return _respell(eqn, args, kwargs)


def _shift(axis, rank):
    """A per-example axis (int or tuple, possibly negative) on batched data."""
    if isinstance(axis, tuple):
        return tuple(_shift(a, rank) for a in axis)
    return axis + 1 if axis >= 0 else axis


def _lanes_axes(rank):
    """Every per-example axis of a batched value (what ``axis=None`` meant)."""
    return 1 if rank == 1 else tuple(range(1, rank + 1))


def _expanded(b, atom, rank, target):
    """``atom`` (batched, per-example rank ``rank``) with new axes after the
    batch axis so that it has per-example rank ``target``."""
    if rank >= target:
        return atom
    axes = tuple(range(1, 1 + target - rank))
    return b.let(f"{atom.id}_expanded", call("np.expand_dims", atom,
                                             _const(axes if len(axes) > 1 else axes[0])))


# --- elementwise --------------------------------------------------------------

def elementwise(eqn, b):
    """Operands line up by NumPy broadcasting once every batched operand has
    the result's per-example rank."""
    if eqn.kwargs:
        return None
    target = b.rank(ir.name(eqn.out)) if eqn.outs else None
    ranks = [b.rank(a) for a in eqn.args]
    if target is None:
        if any(r is None for r in ranks):
            return None
        target = max(ranks)
    args = []
    for a, r in zip(eqn.args, ranks):
        if b.batched(a):
            if r is None or not ir.is_name(a):
                return None
            a = _expanded(b, a, r, target)
        args.append(a)
    b.mark(eqn.out)
    return _respell(eqn, args)


_ELEMENTWISE = ["add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "bitand", "bitor",
                "neg", "invert", "lt", "le", "gt", "ge", "eq", "ne",
                "where", "clip", "sign", "floor", "ceil", "round", "rint", "trunc",
                "isnan", "isinf", "isfinite", "logical_and", "logical_or", "logical_not",
                "logical_xor", "stop_gradient",
                "abs", "sqrt", "cbrt", "square", "reciprocal", "exp", "exp2", "expm1", "log",
                "log2", "log10", "log1p", "sin", "cos", "tan", "arcsin", "arccos", "arctan",
                "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "real", "conj",
                "maximum", "minimum", "arctan2", "logaddexp", "hypot", "fmax", "fmin"]
batching(*[n for n in _ELEMENTWISE if n in P.BY_NAME])(elementwise)


@batching("zeros_like", "ones_like", "empty_like", "copy", "float32", "float64",
          "int32", "int64")
def same(eqn, b):
    """Ops that act on each element (or the whole value) alike."""
    if b.shape(eqn.args[0]) is not None and b.shape(eqn.args[0]).kind != "array":
        return None
    for o in eqn.outs:
        b.mark(o, b.flag(eqn.args[0]))
    return _respell(eqn)


@batching("inplace_result")
def inplace_result(eqn, b):
    """A cast to the dtype of ``old``: batched as ``new`` is."""
    new, old = eqn.args
    if not b.batched(new) or eqn.kwargs:
        return None
    b.mark(eqn.out, b.flag(new))
    return _respell(eqn)


@batching("is_array")
def is_array(eqn, b):
    """Whether one example's value is an array (``x op= v`` then changes it
    in place) or a number: the same for every example, as the probe saw it
    (an example of a batched vector is a number)."""
    shape = b.shape(eqn.args[0])
    if shape is None or shape.kind != "array" or shape.ndarray is None:
        return None
    b.mark(eqn.out, False)
    return ir.spell(ir.Eqn(eqn.outs, P.get("assign"), [ir.const(shape.ndarray)],
                           origin=eqn.origin))


@batching("is_view_of")
def is_view_of(eqn, b):
    """Whether NumPy's ``reshape``/``ravel`` made a view: taken on the batch
    (a view of every example exactly when the batched result is one of the
    batched array), the same for every example."""
    view, base = eqn.args
    if b.batched(view) != b.batched(base):
        return None
    b.mark(eqn.out, False)
    return _respell(eqn)


@batching("full_like")
def full_like(eqn, b):
    bound = _bound(eqn)
    if bound is None:
        return None
    if b.batched(bound.get("fill_value", ir.const(0))):
        return None
    b.mark(eqn.out)
    return _respell(eqn)


@batching("asarray", "array")
def asarray(eqn, b):
    x = eqn.args[0]
    shape = b.shape(x)
    if shape is not None and shape.kind == "array":
        b.mark(eqn.out)
        return _respell(eqn)
    if shape is not None and shape.kind in ("list", "tuple") and \
            all(s.kind == "array" and s.ndim == shape.items[0].ndim for s in shape.items) \
            and len(eqn.args) == 1 and not eqn.kwargs:
        items = _all_lanes(b, x)
        b.mark(eqn.out)
        return [ir.spell(ir.Eqn(eqn.outs, P.get("stack"), [items],
                                {"axis": ir.const(1)}))[0]]
    return None


@batching("not_")
def not_(eqn, b):
    """``not x`` per example."""
    b.mark(eqn.out)
    return [gast.Assign(targets=[ir.name(eqn.out, gast.Store())],
                        value=call("np.logical_not", eqn.args[0]), type_comment=None)]


@batching("float", "builtins.int", "builtins.bool")
def scalar_cast(eqn, b):
    dtype = {"builtins.int": "int", "builtins.bool": "bool"}.get(eqn.prim.name, "float")
    b.mark(eqn.out)
    value = call("np.asarray", eqn.args[0], dtype=ir.name(dtype))
    return [gast.Assign(targets=[ir.name(eqn.out, gast.Store())], value=value,
                        type_comment=None)]


# --- structure ------------------------------------------------------------------

@batching("tuple", "list", "namedtuple")
def pack(eqn, b):
    b.mark(eqn.out, [b.flag(a) for a in eqn.args])
    return _respell(eqn)


@batching("dict")
def pack_dict(eqn, b):
    b.mark(eqn.out, {k: b.flag(a) for k, a in zip(eqn.params["keys"], eqn.args)})
    return _respell(eqn)


def _item_flag(flag, key):
    if isinstance(flag, dict):
        return flag.get(key, False) if key is not _NO_VALUE else any_batched(flag)
    if isinstance(flag, list):
        if isinstance(key, int) and -len(flag) <= key < len(flag):
            return flag[key]
        if isinstance(key, slice):
            return flag[key]
        return any_batched(flag) if all_batched(flag) or not any_batched(flag) else None
    return flag


def _all_lanes(b, items):
    """A list/tuple name all of whose items carry the batch axis."""
    flag = b.flag(items)
    if all_batched(flag):
        return items
    mask = tuple(bool(any_batched(f)) for f in flag) if isinstance(flag, list) else None
    return b.let(f"{items.id}_lanes", call("broadcast_items", items, _const(mask),
                                           b.batch_size))


# --- indexing -------------------------------------------------------------------

def _index_parts(idx):
    return list(idx.elts) if isinstance(idx, gast.Tuple) else [idx]


def _spread_index(b, idx):
    """An index held in a name bound to a tuple (``t = 0, 1``; ``x[t]``) as
    a tuple of one name per part, so that each part is seen (and shifted past
    the batch axis) as a part: ``x[:, t]`` would index axis 1 with the array
    ``[0, 1]`` instead."""
    shape = b.shape(idx)
    if not ir.is_name(idx) or shape is None or shape.kind != "tuple" or \
            shape.fields is not None:
        return idx
    # (not the values the probe saw in it: a tuple built in a loop, ``(i, 0)``,
    # holds another one in each step)
    flag = b.flag(idx)
    flags = flag if isinstance(flag, list) and len(flag) == len(shape.items) else \
        [flag] * len(shape.items)
    parts = []
    for i, (item, item_flag) in enumerate(zip(shape.items, flags)):
        part = b.let(f"{idx.id}_{i}", gast.Subscript(value=idx, slice=ir.const(i),
                                                       ctx=gast.Load()),
                     flag=item_flag)
        b.shapes[part.id] = item
        parts.append(part)
    return gast.Tuple(elts=parts, ctx=gast.Load())


def _is_static_part(b, part):
    """A part of an index the same for every example and not an array."""
    if b.batched(part):
        return False
    if isinstance(part, gast.Constant) or (isinstance(part, gast.Call)
                                           and ir.is_name(part.func, "slice")):
        return True
    rank = b.rank(part)
    return rank == 0


def _lane_index(b, idx, x_batched):
    """The index of a batched ``x`` (or of a shared one indexed per example):
    a leading ``:`` for a shared index, ``np.arange`` lanes for a batched one."""
    parts = _index_parts(idx)
    batched_parts = [b.batched(p) for p in parts]
    if not any(batched_parts):
        if not x_batched:
            return None
        arrays = [p for p in parts if not _is_static_part(b, p)]
        if len(arrays) > 1:
            return None        # several advanced indices: NumPy moves their axes
        return gast.Tuple(elts=[ir.slice_call(None, None, None)] + parts, ctx=gast.Load())
    # batched parts must lead, be integer scalars per example, and be adjacent
    lead = 0
    while lead < len(parts) and batched_parts[lead]:
        lead += 1
    if any(batched_parts[lead:]) or any(b.rank(p) != 0 for p in parts[:lead]):
        return None
    if any(not _is_static_part(b, p) for p in parts[lead:]):
        return None
    if not x_batched:
        return idx if len(parts) > 1 else parts[0]
    lanes = b.let("lanes", call("np.arange", b.batch_size), flag=False)
    return gast.Tuple(elts=[lanes] + parts, ctx=gast.Load())


@batching("getitem")
def getitem(eqn, b):
    x, idx = eqn.args
    shape = b.shape(x)
    if shape is None:
        return None
    if shape.kind not in ("array",):
        if b.batched(idx):
            return None
        flag = _item_flag(b.flag(x), _value(b, idx))
        if flag is None:
            return None
        b.mark(eqn.out, flag)
        return _respell(eqn)
    idx = _spread_index(b, idx)
    new = _lane_index(b, idx, b.batched(x))
    if new is None:
        return None
    b.mark(eqn.out)
    return _respell(eqn, [x, new])


@batching("index_set", "index_add", "index_min", "index_max", "index_mul")
def index_set(eqn, b):
    x, idx, v = eqn.args
    if eqn.params.get("container") in ("dict", "list"):
        return with_item(eqn, b)
    rx = b.rank(x)
    if rx is None:
        return None
    if not b.batched(x):
        x = b.let(f"{x.id}_lanes", call("broadcast_lanes", x, b.batch_size))
    idx = _spread_index(b, idx)
    new = _lane_index(b, idx, True)
    if new is None:
        return None
    if b.batched(v):
        target = _indexed_rank(b, idx, rx)
        rv = b.rank(v)
        if target is None or rv is None or not ir.is_name(v):
            return None
        v = _expanded(b, v, rv, target)
    b.mark(eqn.out)
    return _respell(eqn, [x, new, v])


@batching("with_item")
def with_item(eqn, b):
    """A container with one slot replaced: the slot takes the new value's flag."""
    x, idx, v = eqn.args
    if b.batched(idx):
        return None
    key = _value(b, idx)
    flag = b.flag(x)
    if flag is False and b.shape(x) is not None:    # a container of shared values
        flag = full_flag(b.shape(x), False)
    if key is _NO_VALUE or not isinstance(flag, (dict, list)):
        if any_batched(flag) != any_batched(b.flag(v)):
            return None
        b.mark(eqn.out, any_batched(flag))
        return _respell(eqn)
    flag = dict(flag) if isinstance(flag, dict) else list(flag)
    try:
        flag[key] = b.flag(v)
    except (IndexError, TypeError):
        return None
    b.mark(eqn.out, flag)
    return _respell(eqn)


def _indexed_rank(b, idx, rank):
    """Per-example rank of ``x[idx]`` for an index of ints, slices, None and ``...``."""
    out = rank
    for part in _index_parts(idx):
        value = _value(b, part)
        if value is None:
            out += 1
        elif value is Ellipsis or isinstance(part, gast.Call):
            continue
        elif b.rank(part) == 0:
            out -= 1
        elif b.rank(part) is not None and not b.batched(part) and \
                len(_index_parts(idx)) == 1:      # one integer array: its shape replaces an axis
            out += b.rank(part) - 1
        else:
            return None
    return out


# --- reductions -----------------------------------------------------------------

@batching("sum", "mean", "prod", "max", "min", "var", "std", "all", "any",
          "count_nonzero", "argmax", "argmin", "cumsum")
def reduction(eqn, b):
    bound = _bound(eqn)
    if bound is None or any(b.batched(v) for k, v in bound.items() if k != "a"):
        return None
    a = bound.get("a")
    rank = b.rank(a)
    axis = _value(b, bound["axis"]) if "axis" in bound else None
    if axis is _NO_VALUE or rank is None:
        return None
    b.mark(eqn.out)
    flat = eqn.prim.name in ("argmax", "argmin", "cumsum")
    if axis is None and flat:
        if rank > 1:
            a = b.let(f"{a.id}_rows", call("np.reshape", a,
                                           gast.Tuple(elts=[b.batch_size, ir.const(-1)],
                                                      ctx=gast.Load())))
        if rank == 0:
            return None
        return _with(eqn, a=a, axis=ir.const(1))
    new_axis = _lanes_axes(rank) if axis is None else _shift(axis, rank)
    return _with(eqn, axis=_const(new_axis))


@batching("unreduce")
def unreduce(eqn, b):
    """``unreduce(g, x, axis, keepdims)``: the reduction's rule, backwards."""
    bound = dict(zip(["g", "x", "axis", "keepdims"], eqn.args))
    bound.update(eqn.kwargs)
    x = bound["x"]
    rank = b.rank(x)
    axis = _value(b, bound.get("axis", ir.const(None)))
    if rank is None or axis is _NO_VALUE or not b.batched(x):
        return None
    new_axis = _lanes_axes(rank) if axis is None else _shift(axis, rank)
    args = list(eqn.args)
    kwargs = dict(eqn.kwargs)
    if not b.batched(args[0]):     # a cotangent shared by every example
        args[0] = b.let("g_lanes", call("broadcast_lanes", args[0], b.batch_size))
    if len(args) > 2:
        args[2] = _const(new_axis)
    else:
        kwargs["axis"] = _const(new_axis)
    b.mark(eqn.out)
    return _respell(eqn, args, kwargs)


@batching("unbroadcast")
def unbroadcast(eqn, b):
    g, x = eqn.args
    rg, rx = b.rank(g), b.rank(x)
    if rg is None or rx is None:
        return None
    b.mark(eqn.out)
    if b.batched(x) and b.batched(g) and rg == rx:
        return _respell(eqn)
    if b.batched(g):
        value = call("unbroadcast_lanes", g, x, **({"x_batched": ir.const(True)}
                                                   if b.batched(x) else {}))
        return [gast.Assign(targets=[ir.name(eqn.out, gast.Store())], value=value,
                            type_comment=None)]
    return None


@batching("scan_length")
def scan_length(eqn, b):
    """A scan's length is its inputs' leading size per example: axis 1."""
    xs = eqn.args[0]
    if not all_batched(b.flag(xs)) or any(b.batched(a) for a in eqn.args[1:]):
        return None
    example = call("lane_item", xs, ir.const(0))
    b.mark(eqn.out, False)
    return [gast.Assign(targets=[ir.name(eqn.out, gast.Store())],
                        value=call("scan_length", example, *eqn.args[1:]),
                        type_comment=None)]


@batching("check_grad_output")
def check_grad_output(eqn, b):
    """grad's check of one example's output (``vmap(grad(f))``: each example
    must be a scalar, as without vmap; the batch axis is vmap's)."""
    y = eqn.args[0]
    if b.rank(y) == 0:
        return []
    example = gast.Subscript(value=ir.clone(y), slice=ir.const(0), ctx=gast.Load())
    return [gast.Expr(value=call("check_grad_output", example))]


@batching("check_aux_pair")
def check_aux_pair(eqn, b):
    """Whether the output is a pair does not depend on the batch."""
    return [gast.Expr(value=call("check_aux_pair", eqn.args[0]))]


# --- contractions -----------------------------------------------------------------

def _einsum(b, eqn, spec, operands):
    b.mark(eqn.out)
    return [gast.Assign(targets=[ir.name(eqn.out, gast.Store())],
                        value=call("np.einsum", ir.const(spec), *operands),
                        type_comment=None)]


@batching("matmul")
def matmul(eqn, b):
    a, c = eqn.args
    ra, rc = b.rank(a), b.rank(c)
    if ra is None or rc is None or ra == 0 or rc == 0:
        return None
    return _matmul(eqn, b, a, c, ra, rc)


def _matmul(eqn, b, a, c, ra, rc):
    ba, bc = b.batched(a), b.batched(c)
    out = eqn.out
    if ba and not bc and (rc <= 2 or ra >= rc) and ra >= 1:
        b.mark(out)
        return _respell(eqn, [a, c])
    if bc and not ba:
        if rc == 1 and ra <= 2:     # W @ x for each x: x @ W.T
            other = a if ra == 1 else gast.Attribute(value=a, attr="T", ctx=gast.Load())
            b.mark(out)
            return [gast.Assign(targets=[ir.name(out, gast.Store())],
                                value=gast.BinOp(left=c, op=gast.MatMult(), right=other),
                                type_comment=None)]
        if rc >= 2 and ra <= rc:
            b.mark(out)
            return _respell(eqn, [a, c])
        return None
    if ba and bc and ra == rc and ra >= 2:
        b.mark(out)
        return _respell(eqn, [a, c])
    lhs = "z..." + ("ij" if ra >= 2 else "j") if ra >= 2 else "zj"
    rhs = "z..." + ("jk" if rc >= 2 else "j") if rc >= 2 else "zj"
    res = "z..." + ("i" if ra >= 2 else "") + ("k" if rc >= 2 else "")
    if not ba:
        lhs = lhs[1:]
    if not bc:
        rhs = rhs[1:]
    if res == "z...":
        res = "z"
    return _einsum(b, eqn, f"{lhs},{rhs}->{res}", [a, c])


@batching("dot")
def dot(eqn, b):
    a, c = eqn.args[:2]
    ra, rc = b.rank(a), b.rank(c)
    if ra is None or rc is None or len(eqn.args) > 2 or eqn.kwargs:
        return None
    if ra == 0 or rc == 0:
        return elementwise(ir.Eqn(eqn.outs, P.get("mul"), [a, c], origin=eqn.origin), b)
    if ra <= 2 and rc <= 2:
        return _matmul(ir.Eqn(eqn.outs, P.get("matmul"), [a, c], origin=eqn.origin), b,
                       a, c, ra, rc)
    return None


@batching("einsum")
def einsum(eqn, b):
    spec = _value(b, eqn.args[0])
    if not isinstance(spec, str) or eqn.kwargs:
        return None
    operands = eqn.args[1:]
    spec = spec.replace(" ", "")
    if "->" in spec:
        inputs, output = spec.split("->")
    else:
        inputs = spec
        letters = [ch for ch in inputs if ch.isalpha()]
        output = ("..." if "..." in inputs else "") + "".join(
            sorted(ch for ch in set(letters) if letters.count(ch) == 1))
    free = [ch for ch in string.ascii_letters if ch not in spec]
    z = free[0]
    specs = inputs.split(",")
    specs = [z + s if b.batched(o) else s for s, o in zip(specs, operands)]
    return _einsum(b, eqn, ",".join(specs) + "->" + z + output, operands)


# --- shape ops ----------------------------------------------------------------------

def _shape_value(b, atom):
    value = _value(b, atom)
    if value is _NO_VALUE:
        shape = b.shape(atom)
        if shape is not None and shape.value is not None and not b.batched(atom):
            return "dynamic", shape.value
        return None, None
    return "static", value


def _lanes_shape(b, atom):
    """``(batch_size,) + shape`` for a per-example shape atom."""
    how, value = _shape_value(b, atom)
    if how is None:
        return None
    if isinstance(value, int):
        return gast.Tuple(elts=[b.batch_size, atom], ctx=gast.Load())
    if how == "static":
        return gast.Tuple(elts=[b.batch_size] + [ir.const(v) for v in value], ctx=gast.Load())
    return gast.BinOp(left=gast.Tuple(elts=[b.batch_size], ctx=gast.Load()), op=gast.Add(),
                      right=atom)


@batching("reshape")
def reshape(eqn, b):
    bound = _bound(eqn)
    if bound is None:
        return None
    if b.batched(bound["shape"]) or "order" in eqn.kwargs:
        return None
    shape = _lanes_shape(b, bound["shape"])
    if shape is None:
        return None
    b.mark(eqn.out)
    return _with(eqn, shape=shape)


@batching("ravel")
def ravel(eqn, b):
    if len(eqn.args) > 1 or eqn.kwargs:
        return None
    b.mark(eqn.out)
    value = call("np.reshape", eqn.args[0],
                 gast.Tuple(elts=[b.batch_size, ir.const(-1)], ctx=gast.Load()))
    return [gast.Assign(targets=[ir.name(eqn.out, gast.Store())], value=value,
                        type_comment=None)]


@batching("transpose")
def transpose(eqn, b):
    bound = _bound(eqn)
    if bound is None:
        return None
    rank = b.rank(bound["a"])
    axes = _value(b, bound.get("axes", ir.const(None)))
    if rank is None or axes is _NO_VALUE:
        how, axes = _shape_value(b, bound.get("axes"))
        if rank is None or how is None:
            return None
    if axes is None:
        new = (0,) + tuple(range(rank, 0, -1))
    else:
        new = (0,) + tuple((a % rank) + 1 for a in axes)
    b.mark(eqn.out)
    return _with(eqn, axes=_const(new))


def _axis_rule(*params, defaults=None, none_is_every_axis=False):
    """Shape ops whose only batching change is shifting axis parameters
    (``none_is_every_axis``: ``axis=None`` means every axis, as for flip)."""
    def rule(eqn, b):
        bound = _bound(eqn)
        if bound is None:
            return None
        first = next(iter(bound.values()))
        rank = b.rank(first)
        if rank is None or any(b.batched(v) for k, v in bound.items() if v is not first):
            return None
        changes = {}
        for p in params:
            atom = bound.get(p)
            value = _value(b, atom) if atom is not None else (defaults or {}).get(p, _NO_VALUE)
            if value is None and none_is_every_axis:
                changes[p] = _const(_lanes_axes(rank))
            elif value is None or value is _NO_VALUE:
                return None
            else:
                changes[p] = _const(_shift(value, rank))
        b.mark(eqn.out)
        return _with(eqn, **changes)
    return rule


# np.atleast_{1,2,3}d of one example of per-example rank r: the new axes
# NumPy adds (a leading one, and atleast_3d's trailing one), counted in
# batched coordinates (axis 0 the batch)
_ATLEAST_AXES = {
    ("atleast_1d", 0): (1,),
    ("atleast_2d", 0): (1, 2), ("atleast_2d", 1): (1,),
    ("atleast_3d", 0): (1, 2, 3), ("atleast_3d", 1): (1, 3), ("atleast_3d", 2): (3,),
}


def _atleast(eqn, b):
    if len(eqn.args) != 1 or eqn.kwargs:
        return None
    rank = b.rank(eqn.args[0])
    if rank is None:
        return None
    axes = _ATLEAST_AXES.get((eqn.prim.name, rank), ())
    b.mark(eqn.out)
    value = eqn.args[0] if not axes else call(
        "np.expand_dims", eqn.args[0], _const(axes if len(axes) > 1 else axes[0]))
    return [gast.Assign(targets=[ir.name(eqn.out, gast.Store())], value=value,
                        type_comment=None)]


for _name in ("atleast_1d", "atleast_2d", "atleast_3d"):
    batching(_name)(_atleast)

batching("swapaxes")(_axis_rule("axis1", "axis2"))
batching("moveaxis")(_axis_rule("source", "destination"))
batching("expand_dims")(_axis_rule("axis"))
batching("squeeze")(_axis_rule("axis"))
batching("flip")(_axis_rule("axis", defaults={"axis": None}, none_is_every_axis=True))
batching("diagonal")(_axis_rule("axis1", "axis2", defaults={"axis1": 0, "axis2": 1}))
batching("trace")(_axis_rule("axis1", "axis2", defaults={"axis1": 0, "axis2": 1}))
batching("repeat")(_axis_rule("axis"))


@batching("broadcast_to")
def broadcast_to(eqn, b):
    bound = _bound(eqn)
    if bound is None:
        return None
    x, shape = bound["array"], bound["shape"]
    rank = b.rank(x)
    how, value = _shape_value(b, shape)
    if rank is None or how is None or b.batched(shape):
        return None
    target = 1 if isinstance(value, int) else len(value)
    x = _expanded(b, x, rank, target)
    b.mark(eqn.out)
    return _with(eqn, array=x, shape=_lanes_shape(b, shape))


@batching("concatenate", "stack")
def join(eqn, b):
    bound = _bound(eqn)
    if bound is None:
        return None
    items = bound["arrays"]
    axis = _value(b, bound.get("axis", ir.const(0)))
    shape = b.shape(items)
    if axis is _NO_VALUE or axis is None or shape is None or shape.kind not in ("list", "tuple") \
            or not ir.is_name(items):
        return None
    items = _all_lanes(b, items)
    b.mark(eqn.out)
    return _with(eqn, arrays=items, axis=ir.const(_shift(axis, None)))


@batching("hstack", "vstack")
def hvstack(eqn, b):
    items = eqn.args[0]
    shape = b.shape(items)
    if len(eqn.args) > 1 or eqn.kwargs or shape is None or not shape.items or \
            shape.kind not in ("list", "tuple") or not ir.is_name(items):
        return None
    rank = shape.items[0].ndim
    if rank is None:
        return None
    items = _all_lanes(b, items)
    b.mark(eqn.out)
    if eqn.prim.name == "hstack":
        prim, axis = "concatenate", 1 if rank <= 1 else 2
        if rank == 0:
            prim = "stack"
    else:
        prim, axis = ("stack", 1) if rank <= 1 else ("concatenate", 1)
    return ir.spell(ir.Eqn(eqn.outs, P.get(prim), [items], {"axis": ir.const(axis)}))


# --- shape queries: the same for every example --------------------------------------

def _query(eqn, b, value):
    b.mark(eqn.out, False)
    return [gast.Assign(targets=[ir.name(eqn.out, gast.Store())], value=value,
                        type_comment=None)]


def _per_example_shape(x):
    return gast.Subscript(value=call("np.shape", x),
                          slice=gast.Slice(lower=ir.const(1), upper=None, step=None),
                          ctx=gast.Load())


@batching("shape")
def shape(eqn, b):
    if len(eqn.args) != 1 or b.shape(eqn.args[0]) is None or \
            b.shape(eqn.args[0]).kind != "array":
        return None
    return _query(eqn, b, _per_example_shape(eqn.args[0]))


@batching("builtins.len")
def length(eqn, b):
    shape = b.shape(eqn.args[0])
    if shape is not None and shape.kind in ("list", "tuple", "dict"):
        return _query(eqn, b, ir.expr_of(eqn))      # a container's length is every example's
    if shape is None or shape.kind != "array":
        return None
    return _query(eqn, b, gast.Subscript(value=call("np.shape", eqn.args[0]),
                                         slice=ir.const(1), ctx=gast.Load()))


@batching("ndim")
def ndim(eqn, b):
    if b.shape(eqn.args[0]) is None or b.shape(eqn.args[0]).kind != "array":
        return None
    return _query(eqn, b, gast.BinOp(left=call("np.ndim", eqn.args[0]), op=gast.Sub(),
                                     right=ir.const(1)))


@batching("size")
def size(eqn, b):
    if len(eqn.args) != 1 or b.shape(eqn.args[0]) is None or \
            b.shape(eqn.args[0]).kind != "array":
        return None
    return _query(eqn, b, call("int", call("np.prod", _per_example_shape(eqn.args[0]))))


@batching("getattr")
def getattr_(eqn, b):
    attr = eqn.params["attr"]
    shape = b.shape(eqn.args[0])
    if shape is not None and shape.fields and attr in shape.fields:     # a namedtuple field
        flag = _item_flag(b.flag(eqn.args[0]), shape.fields.index(attr))
        if flag is None:
            return None
        b.mark(eqn.out, flag)
        return _respell(eqn)
    if shape is None or shape.kind != "array":
        return None
    if attr == "dtype":
        b.mark(eqn.out, False)
        return _respell(eqn)
    if attr in ("real", "imag"):
        b.mark(eqn.out)
        return _respell(eqn)
    if attr == "T":
        rank = shape.ndim
        b.mark(eqn.out)
        return [gast.Assign(targets=[ir.name(eqn.out, gast.Store())],
                            value=call("np.transpose", eqn.args[0],
                                       _const((0,) + tuple(range(rank, 0, -1)))),
                            type_comment=None)]
    if attr == "shape":
        return _query(eqn, b, _per_example_shape(eqn.args[0]))
    if attr == "ndim":
        return _query(eqn, b, gast.BinOp(left=call("np.ndim", eqn.args[0]), op=gast.Sub(),
                                         right=ir.const(1)))
    return None


@batching("tree_add")
def tree_add(eqn, b):
    """Cotangents of the same value: same per-example shapes, so a shared and a
    batched one add by broadcasting, leaf by leaf."""
    from ..transforms.batching import exact_or
    x, y = eqn.args
    if b.shape(x) is not None and b.shape(x).kind == "array":
        return elementwise(eqn, b)
    # the flag must say exactly which leaves of the sum are batched: a
    # container of a batched and a shared cotangent plus a shared one (a
    # symbolic zero's ``unindex``, flagged False) keeps its shared leaf
    # shared, and whatever reads the sum per example (``map_lanes``) relies
    # on that
    flag = exact_or(b.flag(x), b.flag(y))
    if flag is None:
        return None
    b.mark(eqn.out, flag)
    return _respell(eqn)


@batching("unindex")
def unindex(eqn, b):
    """Zeros like ``x`` with ``g`` at ``index``: a container keeps its slots'
    flags; an array gets the index shifted past the batch axis."""
    x, idx, g = eqn.args
    shape = b.shape(x)
    if shape is None:
        return None
    if shape.kind != "array":
        key = _value(b, idx)
        if b.batched(idx) or key is _NO_VALUE:
            return None
        flag = full_flag(shape, False)
        try:
            flag[key] = b.flag(g)
        except (IndexError, KeyError, TypeError):
            return None
        b.mark(eqn.out, flag)
        return _respell(eqn)
    rx = b.rank(x)
    if rx is None:
        return None
    if not b.batched(x):
        x = b.let(f"{x.id}_lanes" if ir.is_name(x) else "x_lanes",
                  call("broadcast_lanes", x, b.batch_size))
    idx = _spread_index(b, idx)
    new = _lane_index(b, idx, True)
    if new is None:
        return None
    if b.batched(g):
        target, rg = _indexed_rank(b, idx, rx), b.rank(g)
        if target is None or rg is None or not ir.is_name(g):
            return None
        g = _expanded(b, g, rg, target)
    b.mark(eqn.out)
    return _respell(eqn, [x, new, g])


# cotangents of ``a @ b`` per example, as einsum specs: (rank a, rank b) ->
# (spec of the first operand, of the second, of the result)
_MATMUL_LHS = {(1, 1): ("", "j", "j"), (1, 2): ("k", "jk", "j"),
               (2, 1): ("i", "j", "ij"), (2, 2): ("ik", "jk", "ij")}
_MATMUL_RHS = {(1, 1): ("j", "", "j"), (1, 2): ("i", "k", "ik"),
               (2, 1): ("ij", "i", "j"), (2, 2): ("ij", "ik", "jk")}


def _matmul_adjoint(table, pick):
    def rule(eqn, b):
        if eqn.kwargs or len(eqn.args) != 3:
            return None
        g, a, c = eqn.args
        ranks = (b.rank(a), b.rank(c))
        if ranks not in table:
            return None
        first, second = pick(g, a, c)
        if not b.batched(first) and not b.batched(second):
            # only the operand giving the shape is batched: per example
            return None
        s1, s2, out = table[ranks]
        s1 = "z" + s1 if b.batched(first) else s1
        s2 = "z" + s2 if b.batched(second) else s2
        return _einsum(b, eqn, f"{s1},{s2}->z{out}", [first, second])
    return rule


batching("matmul_adjoint_lhs", "dot_adjoint_lhs")(
    _matmul_adjoint(_MATMUL_LHS, lambda g, a, c: (g, c)))
batching("matmul_adjoint_rhs", "dot_adjoint_rhs")(
    _matmul_adjoint(_MATMUL_RHS, lambda g, a, c: (a, g)))


# --- tapes: lists pushed and popped in loops --------------------------------------
#
# A list whose every item is batched has the flag True: it is a plain list of
# batched arrays, one per push, so pushing and popping stay one list operation
# per step (``tape[-1]`` and ``tape[:-1]`` keep the flag through ``getitem``),
# and its length is the same in every example.

@batching("appended")
def appended(eqn, b):
    items, item = eqn.args
    if not b.batched(item) and not b.batched(items):
        return None
    if not all_batched(b.flag(items)):
        if not ir.is_name(items):
            return None
        items = _all_lanes(b, items) if isinstance(b.flag(items), list) else \
            b.let(f"{items.id}_lanes", call("broadcast_lanes", items, b.batch_size))
    shape = b.shape(item)
    item, setup = b.lanes_of(item, True if shape is None else full_flag(shape), "item")
    b.stmts_out += setup
    b.mark(eqn.out, True)
    return _respell(eqn, [items, item])


@batching("check")
def check(eqn, b):
    """``assert`` under vmap: every example is checked, the first failing
    one reported with its own values (``check_lanes``)."""
    ok, error, template, *parts = eqn.args
    if not b.batched(ok):
        ok = call("broadcast_lanes", ok, b.batch_size)
    flags = _const(tuple(bool(b.batched(p)) for p in parts))
    return [gast.Expr(value=call("check_lanes", ok, error, template, flags, *parts))]
