"""Comprehensions as the loops they are (an AST-to-AST desugaring).

``[layer(p, x) for p in params if p is not None]`` is, in Python 3, a small
function called on the spot: its loop variables are its own locals, so they
neither leak out nor clobber the caller's names.  This module writes that
function out, as plain statements the canonical stage already handles::

    def listcomp():
        hs = []
        for p in params:
            if p is not None:
                hs.append(layer(p, x))
        return hs

and the converter inlines it like any local function (``calls.inline``).
Every node it makes carries the comprehension's line, so generated code
is commented with the user's own line.  Generator expressions are written
the same way when they are the argument of ``list``, ``tuple`` or ``sum``
(``sum`` adds item by item from ``0``, as Python does); dict comprehensions
set one key per step.
"""
import gast

from ..core import ir


def _loc(node, like):
    for n in ir.walk(node):
        for attr in ("lineno", "col_offset", "end_lineno", "end_col_offset"):
            if hasattr(like, attr) and getattr(n, attr, None) is None:
                setattr(n, attr, getattr(like, attr))
    return node


def _name(id_, store=False):
    return gast.Name(id=id_, ctx=gast.Store() if store else gast.Load(),
                     annotation=None, type_comment=None)


def as_generator_call(call):
    """``f(it)`` as ``f(item for item in it)`` (``list(zip(a, b))``,
    ``sum(items)``): the loop the call runs, written as a generator."""
    item = "item"
    while item in loaded(call.args[0]):
        item += "_"
    gen = _loc(gast.GeneratorExp(elt=_name(item), generators=[gast.comprehension(
        target=_name(item, store=True), iter=call.args[0], ifs=[], is_async=0)]), call)
    return gast.Call(func=call.func, args=[gen], keywords=[])


def loaded(node):
    return {n.id for n in ir.walk(node) if isinstance(n, gast.Name)}


def targets(node):
    return {n.id for g in node.generators for n in ir.walk(g.target)
            if isinstance(n, gast.Name)}


def as_function(node, kind, target=None, static_iters=False):
    """(a ``def`` computing the comprehension ``node``, the names of its
    parameters, the expressions to pass them).

    ``kind``: "list", "sum" or "dict" (what the loop accumulates; a
    generator expression is accumulated as a list for ``list``/``tuple``).
    ``target``: the user's name for the result, used for the accumulator
    when it is free inside the comprehension.  With ``static_iters`` every
    iterable is made a parameter (the caller passes the sequence it found
    when transforming, and the loop is written out item by item)."""
    taken = loaded(node)
    acc = target if target and target not in taken else None
    if acc is None:
        acc = {"list": "items", "sum": "total", "dict": "entries"}[kind]
        while acc in taken:
            acc += "_"
    if kind == "dict":
        key = gast.Subscript(value=_name(acc), slice=node.key, ctx=gast.Store())
        step = gast.Assign(targets=[key], value=node.value, type_comment=None)
        start = gast.Dict(keys=[], values=[])
    elif kind == "sum":
        step = gast.Assign(targets=[_name(acc, True)],
                           value=gast.BinOp(left=_name(acc), op=gast.Add(), right=node.elt),
                           type_comment=None)
        start = gast.Constant(value=0, kind=None)
    else:
        call = gast.Call(func=gast.Attribute(value=_name(acc), attr="append", ctx=gast.Load()),
                         args=[node.elt], keywords=[])
        step = gast.Expr(value=call)
        start = gast.List(elts=[], ctx=gast.Load())
    # Python evaluates the first iterable outside the comprehension: if it
    # reads a name the comprehension binds (``[x * 2 for x in x]``), it is
    # passed in as an argument
    params, passed = [], []

    def parameter(iterable):
        name = "iterable"
        while name in taken or name in params:
            name += "_"
        params.append(name)
        passed.append(iterable)
        return _name(name)
    iters = [g.iter for g in node.generators]
    if static_iters:        # each iterable is evaluated outside, when transforming
        iters = [parameter(it) for it in iters]
    elif loaded(iters[0]) & (targets(node) | {acc}):
        iters[0] = parameter(iters[0])
    body = [step]
    for gen, it in reversed(list(zip(node.generators, iters))):
        for test in reversed(gen.ifs):
            body = [gast.If(test=test, body=body, orelse=[])]
        body = [gast.For(target=gen.target, iter=it, body=body, orelse=[],
                         type_comment=None)]
    stmts = [gast.Assign(targets=[_name(acc, True)], value=start, type_comment=None)]
    stmts += body + [gast.Return(value=_name(acc))]
    args = gast.arguments(args=[_name(p, False) for p in params], posonlyargs=[],
                          vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None,
                          defaults=[])
    for a in args.args:
        a.ctx = gast.Param()
    fn = gast.FunctionDef(name=f"{kind}comp", args=args, body=stmts, decorator_list=[],
                          returns=None, type_comment=None, type_params=[])
    return _loc(fn, node), passed


def reading_dict(fn, param, mapping, view):
    """``fn`` (from ``as_function`` with ``static_iters``) with its loop over
    ``param`` -- the keys, known when transforming, of the dict named
    ``mapping`` -- giving what the comprehension iterated over instead:
    ``view`` "items" binds the loop's target to ``(key, mapping[key])``,
    "values" to ``mapping[key]`` ("keys" and the dict itself: the key)."""
    if view not in ("items", "values"):
        return fn
    taken = loaded(fn) | {n.id for n in ir.walk(fn) if isinstance(n, gast.Name)}
    key = "key"
    while key in taken:
        key += "_"
    for loop in ir.walk(fn):
        if isinstance(loop, gast.For) and isinstance(loop.iter, gast.Name) \
                and loop.iter.id == param:
            item = gast.Subscript(value=_name(mapping), slice=_name(key), ctx=gast.Load())
            value = item if view == "values" else gast.Tuple(elts=[_name(key), item],
                                                              ctx=gast.Load())
            bind = gast.Assign(targets=[loop.target], value=value, type_comment=None)
            loop.target = _name(key, store=True)
            loop.body = [_loc(bind, loop)] + loop.body
    return _loc(fn, fn)
