"""Calls on containers evaluated now (see ``registry``): the runtime
helpers building and reading cotangent containers, and Python's builtins
(``len``, ``isinstance``, ``list`` ...) on values of known structure."""
import ast

import numpy as np

from ... import runtime
from ...errors import TransformError
from .signals import DeadPath
from .registry import HANDLERS, handles, is_zero, opened, static_index
from .values import Const, Dyn, Expr, Steps, Tape, Zero, av_leaves, children, describe, \
    is_container, is_namedtuple, rebuild


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


@handles(runtime.last_writes)
def _last_writes(s, args, kwargs):
    """The values written into a container item (``d['w'] = v``) all reach
    it: a key or a position never repeats."""
    items, index, like = args
    if is_container(opened(like)) or isinstance(like, Zero):
        return items
    return NotImplemented


@handles(runtime.unindex)
def _unindex(s, args, kwargs):
    x, index, g = args
    x = opened(x)
    if not is_container(x):
        return NotImplemented
    key = static_index(s, index)
    if isinstance(x, dict):
        items = {k: _zero_of(s, v) for k, v in x.items()}
        items[key] = s.materialize(g, "g")
        return rebuild(x, list(items.values()))
    items = [_zero_of(s, v) for v in children(x)]
    if isinstance(key, slice):
        # ``parts[::-1]``: its cotangent's items go back to the positions
        # the slice took them from
        g = opened(g)
        taken = range(len(items))[key]
        if is_container(g) and len(children(g)) == len(taken):
            for k, item in zip(taken, children(g)):
                items[k] = s.materialize(item, "g")
            return rebuild(x, items)
        if is_zero(g):
            return rebuild(x, items)
        return NotImplemented
    items[key] = s.materialize(g, "g")
    return rebuild(x, items)


@handles(runtime.unattr)
def _unattr(s, args, kwargs):
    x, attr, g = args
    x = opened(x)
    if not is_namedtuple(x):
        return NotImplemented
    items = [_zero_of(s, v) for v in x]
    items[x._fields.index(attr.value)] = s.materialize(g, "g")
    return type(x)(*items)


def tree_add(s, a, b, hint="sum"):
    """``a + b`` leafwise; symbolic zeros and None add nothing."""
    if is_zero(a):
        return b
    if is_zero(b):
        return a
    a, b = opened(a), opened(b)
    if is_container(a) and is_container(b):
        if isinstance(a, dict) and isinstance(b, dict) and set(a) == set(b):
            b = {k: b[k] for k in a}       # items match by key, not by position
        if len(children(a)) != len(children(b)):
            s.fail(f"cannot add cotangents {describe(a)} and {describe(b)}")
        return rebuild(a, [tree_add(s, x, y, hint) for x, y in zip(children(a), children(b))])
    for empty, other in ((a, b), (b, a)):
        if is_container(empty) and not children(empty) and isinstance(other, (Dyn, Expr, Tape)):
            # the cotangents of one list: the run-time one is as empty as
            # the known one (Python's tree_add zips them: an empty list)
            return empty
    if is_container(a) or is_container(b):
        s.fail(f"cannot add cotangents {describe(a)} and {describe(b)}")
    return s.materialize(Expr(ast.BinOp(left=s.render(a), op=ast.Add(), right=s.render(b))),
                         hint)


@handles(runtime.tree_add)
def _tree_add(s, args, kwargs):
    a, b = args
    if not (_structured(a) or _structured(b)):
        return NotImplemented
    return tree_add(s, a, b)


@handles(runtime.zeros_like)
def _zeros_like(s, args, kwargs):
    (x,) = args
    x = opened(x)
    if is_container(x):
        return rebuild(x, [_zeros_like(s, [c], {}) if is_container(c) else
                           _materialized_zero(s, c) for c in children(x)])
    if isinstance(x, Zero):
        return x
    if isinstance(x, Const) and x.value is None:
        # (a run-time None is typed as an optional value still being
        # settled, see overloads/cotangents.py: a known one is zero now)
        return Const(0.0)
    return NotImplemented


def _materialized_zero(s, av):
    if isinstance(av, Const) and av.value is None:
        return av
    if isinstance(av, Zero):
        return av
    return s.materialize(Expr(ast.Call(func=s.global_name(runtime.zeros_like, "zeros_like"),
                                       args=[s.render(av)], keywords=[])), "zeros")


def _zero_like(s, like):
    """A zero cotangent shaped like ``like`` (a container's leaves each)."""
    like = opened(like)
    return _zeros_like(s, [like], {}) if is_container(like) else _materialized_zero(s, like)


def _step_item(s, g, key, like):
    """Item ``key`` of a loop's per-step cotangents (``Steps``), zeros where
    the step gave none."""
    item = opened(g).item(s, static_index(s, key))
    return _zero_like(s, like) if is_zero(item) else item


@handles(runtime.cotangent_item)
def _cotangent_item(s, args, kwargs):
    g, key, like = args
    if isinstance(opened(g), Steps):
        return _step_item(s, g, key, like)
    if is_zero(g):
        return _zero_like(s, like)
    g = opened(g)
    if not is_container(g):
        return NotImplemented
    item = g[static_index(s, key)]
    return _zero_like(s, like) if is_zero(item) else item


@handles(runtime.item_cotangent)
def _item_cotangent(s, args, kwargs):
    g, key, like = args
    if isinstance(opened(g), Steps):
        return _step_item(s, g, key, like)
    if is_zero(g):
        return Const(None)
    return _unindex(s, [g, key, like], {})


@handles(runtime.attr_cotangent)
def _attr_cotangent(s, args, kwargs):
    ct, attr, like = args
    if is_zero(ct):
        return _materialized_zero(s, like)
    ct = opened(ct)
    item = getattr(ct, attr.value)
    return _materialized_zero(s, like) if is_zero(item) else item


@handles(runtime.dense)
def _dense(s, args, kwargs):
    items, like = opened(args[0]), opened(args[1])
    if not is_container(items):
        return NotImplemented
    return [(_materialized_zero(s, x) if is_zero(g) else g)
            for g, x in zip(children(items), children(like))]


@handles(runtime.unbroadcast, runtime.broadcast_like)
def _shaped_like(s, args, kwargs):
    """``unbroadcast(g, x)`` / ``broadcast_like(t, ans)``: the value as it
    is where ``x`` is a container (its leaves are already shaped) or the
    value is a symbolic zero."""
    value, like = args
    if is_container(opened(like)) or is_zero(value):
        return value
    return NotImplemented


@handles(runtime.stop_gradient)
def _stop_gradient(s, args, kwargs):
    return args[0]


@handles(runtime.check_aux_pair)
def _check_aux_pair(s, args, kwargs):
    """The output's structure is known when specialising: check it then."""
    (out,) = args
    out = opened(out)
    if not (isinstance(out, (list, tuple)) and len(out) == 2):
        got = f"a {type(out).__name__} {describe(out)}" if is_container(out) else \
            "one value, not a tuple"
        raise TransformError(runtime.aux_pair_message(got), s.where(),
                             "return value, aux")
    return Const(None)


@handles(runtime.check_grad_output)
def _check_grad_output(s, args, kwargs):
    (y,) = args
    y = opened(y)
    if is_container(y) or (isinstance(y, Const) and np.shape(y.value) != ()):
        s.fail(f"Gradient only defined for scalar-output functions; the output is "
               f"{describe(y)}", "return a scalar")
    if isinstance(y, Const) and np.result_type(y.value).kind not in "biu":
        return Const(None)
    if isinstance(y, Dyn) and y.name in s.int_starts:
        # a loop's variable Python started as an int: still that int (an
        # int output) when the loop never assigned it
        return Expr(ast.Call(func=s.global_name(runtime.check_grad_output, "check_grad_output"),
                             args=[s.render(y), ast.Name(s.int_starts[y.name], ast.Load())],
                             keywords=[]))
    return NotImplemented       # (an integer constant: the run-time check raises)


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
    items = opened(items)
    if isinstance(items, dict):
        return Const(list(items)[static_index(s, k)])
    if is_container(items):
        return items[static_index(s, k)]
    if isinstance(items, Tape) and is_container(items.template):
        return s.tape_item(items, k, in_range=True)     # ``for a, b in items``
    return NotImplemented


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


@handles(runtime.index_zero)
def _index_zero(s, args, kwargs):
    g, index = args
    g = opened(g)
    if not is_container(g):
        if is_zero(g):
            return g
        return NotImplemented
    key = static_index(s, index)
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
    acc = opened(acc)
    if is_zero(acc) and not is_container(acc):
        return NotImplemented
    if not is_container(acc):
        return NotImplemented
    key = static_index(s, index)
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
    items = opened(items)
    if not isinstance(items, (list, dict, tuple)):
        return NotImplemented
    k = static_index(s, key)
    out = dict(items) if isinstance(items, dict) else list(items)
    try:
        out[k] = s.materialize(value, "item")
    except IndexError as exc:
        s.fail(f"{describe(items)}[{k!r}] = ... fails: {exc}")
    if isinstance(items, tuple):
        return rebuild(items, out)
    return type(items)(out)


@handles(runtime.unbound)
def _unbound(s, args, kwargs):
    return Const(runtime.Unbound(args[0].value))


@handles(runtime.check)
def _check_known_to_fail(s, args, kwargs):
    """A check that fails whenever it runs (``check(False,
    UnboundLocalError, ...)`` where a path reads a variable it never
    assigned), on a path taken at run time: a ``raise`` there, as Python
    raises only if that path runs; the rest of the path is dead."""
    if kwargs or len(args) < 3 or not all(isinstance(a, Const) for a in args) or \
            args[0].value is not False or not s.if_loops or s.if_loops[-1] != len(s.loops):
        # (in a compiled loop inside the if, which may run no turn, it is
        # not the path that is dead)
        return NotImplemented
    error, template, parts = args[1].value, args[2].value, [a.value for a in args[3:]]
    if not (isinstance(error, type) and issubclass(error, Exception)):
        return NotImplemented
    try:
        message = [template.format(*parts)] if template is not None else parts
    except Exception:        # noqa: BLE001 - a message that fails to format: fold it
        return NotImplemented
    s.emit(ast.Raise(exc=ast.Call(func=s.render(args[1], error.__name__),
                                  args=[ast.Constant(m) for m in message], keywords=[]),
                     cause=None))
    raise DeadPath()


@handles(len)
def _len(s, args, kwargs):
    (x,) = args
    x = opened(x)
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
    return [leaf for leaf in av_leaves(tape.template) if isinstance(leaf, Dyn)]


@handles(isinstance)
def _isinstance(s, args, kwargs):
    x, types = args
    x = opened(x)
    if is_container(x):
        return Const(isinstance(rebuild(x, [None] * len(x)) if not isinstance(x, dict)
                                else {}, types.value))
    return NotImplemented


@handles(np.shape, np.ndim, np.size)
def _shape_of_container(s, args, kwargs):
    x = opened(args[0])
    if is_container(x):
        s.fail(f"np.shape of the container {describe(x)} in compiled code",
               "convert it with np.asarray first")
    return NotImplemented


def _ndim(s, args, kwargs):
    """``np.ndim`` of an argument array: its rank, a constant of the signature."""
    x = opened(args[0]) if len(args) == 1 and not kwargs else None
    if isinstance(x, Dyn) and x.name in s.ranks:
        return Const(s.ranks[x.name])
    return _shape_of_container(s, args, kwargs)


HANDLERS[np.ndim] = _ndim


def _is_array(s, args, kwargs):
    """``is_array`` of a constant or of an argument array (whose rank the
    signature fixes): known now, so only the branch taken is compiled."""
    x = opened(args[0]) if len(args) == 1 and not kwargs else None
    if isinstance(x, Const):
        return Const(isinstance(x.value, np.ndarray))
    if isinstance(x, Dyn) and x.name in s.ranks:
        return Const(True)
    return NotImplemented


HANDLERS[runtime.is_array] = _is_array


@handles(list)
def _list(s, args, kwargs):
    """``list(x)`` of a known container: its items (of a dict, its keys, known
    now: a loop over ``d.items()`` is then written out, key by key)."""
    if len(args) == 1 and not kwargs:
        x = opened(args[0])
        if isinstance(x, dict):
            return Const(list(x))
        if isinstance(x, (list, tuple)):
            return list(x)
        if isinstance(x, Tape):
            s.fail("copying a list filled by a loop cannot be compiled")
    return NotImplemented


@handles(tuple)
def _tuple(s, args, kwargs):
    """``tuple(x)`` of a known container: its items; of a list a loop
    filled: a copy of the list (it reads as the tuple does: by index, by
    ``len``, in a loop; and the list may still grow)."""
    if len(args) == 1:
        x = opened(args[0])
        if isinstance(x, (list, tuple)):
            return tuple(x)
        if isinstance(x, Tape):
            return s.copy_tape(x)
    return NotImplemented


@handles(dict)
def _dict(s, args, kwargs):
    if not args:
        return dict(kwargs)
    if len(args) == 1 and isinstance(opened(args[0]), dict):
        out = dict(opened(args[0]))
        out.update(kwargs)
        return out
    return NotImplemented
