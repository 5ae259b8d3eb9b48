"""Rewrite early exits into structured control flow (an AST-to-AST pass).

After this pass a function body has no ``break`` or ``continue``, loops
contain no ``return``, and every ``return`` is the last statement of its
path: the canonical stage then only sees ``if``/``for``/``while`` with
explicit state.  The rewrites are the textbook ones:

- the statements after an ``if`` that may exit are moved into the branches
  that fall through (a *continuation*), so nothing runs after an exit;
- ``break`` sets a flag that the loop condition tests; ``for`` loops that
  break become index loops over ``len(...)`` that test the flag;
- ``continue`` ends the body's path (the continuation rule does the rest);
- ``return v`` inside a loop stores ``v``, sets a flag and breaks; after the
  loop, ``if returned: return value`` hands it on.

The flags are ordinary local variables (named ``loop_broken``,
``returned``...), so generated code shows exactly what happens.
"""
import copy

import gast

from ..core import ir
from ..core.builders import assign as _assign, const as _const
from ..core.naming import Namer


def _name(id_, store=False):
    return gast.Name(id=id_, ctx=gast.Store() if store else gast.Load(),
                     annotation=None, type_comment=None)


def _walk_no_nested(stmts, loops=True):
    """Nodes of ``stmts`` not inside nested functions (or loops, if asked)."""
    stack = list(stmts)
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (gast.FunctionDef, gast.Lambda, gast.ClassDef)):
            continue        # (a ``def`` in a loop's body: its returns are its own)
        for child in ir.children(node):
            if isinstance(child, (gast.FunctionDef, gast.Lambda, gast.ClassDef)):
                continue
            if not loops and isinstance(child, (gast.For, gast.While)):
                continue
            stack.append(child)


def _has(stmts, kinds, loops=True):
    return any(isinstance(n, kinds) for n in _walk_no_nested(stmts, loops))


def _copy_loc(new, old):
    for attr in ("lineno", "col_offset", "end_lineno", "end_col_offset"):
        if hasattr(old, attr):
            setattr(new, attr, getattr(old, attr))
    return new


class ExitRewriter:
    def __init__(self, func_node):
        taken = {n.id for n in ir.walk(func_node) if isinstance(n, gast.Name)}
        self.namer = Namer(taken)
        self.returned = None
        self.value = None

    def function_body(self, body):
        return self.tail(body)

    # --- returns outside loops: continuation into the branches -------------

    def tail(self, stmts):
        out = []
        for i, stmt in enumerate(stmts):
            rest = stmts[i + 1:]
            if isinstance(stmt, (gast.Return, gast.Raise)):   # nothing after runs
                out.append(stmt)
                return out
            if isinstance(stmt, (gast.For, gast.While)):
                new, after = self.loop(stmt, context=None)
                out.extend(new)
                if after is not None:      # the loop may return
                    out.append(self._if_returned(after, rest))
                    return out
                continue
            if isinstance(stmt, gast.If) and _has([stmt], gast.Return, loops=True):
                body = self.tail(stmt.body + rest)
                orelse = self.tail(stmt.orelse + rest)
                out.append(_copy_loc(gast.If(test=stmt.test, body=body or [gast.Pass()],
                                             orelse=orelse), stmt))
                return out
            # an `if` with no return may still hold loops that break or
            # continue: rewrite them too
            out.append(self.plain_if(stmt) if isinstance(stmt, gast.If) else stmt)
        return out

    def _if_returned(self, loop_node, rest):
        ret = _copy_loc(gast.Return(value=_name(self.value)), loop_node)
        orelse = self.tail(rest)
        return _copy_loc(gast.If(test=_name(self.returned), body=[ret],
                                 orelse=orelse), loop_node)

    # --- loops ----------------------------------------------------------------

    def loop(self, node, context):
        """Rewrite one loop; returns (statements, node) where node is not None
        if the loop contains a ``return`` (then ``self.returned`` says if it ran)."""
        body = node.body
        if isinstance(node, gast.While) and isinstance(node.test, gast.Constant) \
                and node.test.value is True and not _has(body, (gast.Break, gast.Return),
                                                         loops=False) \
                and not _has(body, gast.Return, loops=True):
            raise _infinite(node)
        has_break = _has(body, gast.Break, loops=False)
        has_continue = _has(body, gast.Continue, loops=False)
        has_return = _has(body, gast.Return, loops=True)
        if not (has_break or has_continue or has_return):
            inner = self.loop_body_plain(body)
            new = _copy_loc(type(node)(**{**{f: getattr(node, f) for f in node._fields},
                                          "body": inner}), node)
            return [new], None
        pre = []
        broken = self.namer.fresh("loop_broken") if (has_break or has_return) else None
        if has_return and self.returned is None:
            self.returned = self.namer.fresh("returned")
            self.value = self.namer.fresh("return_value")
        if has_return:
            pre += [_copy_loc(_assign(self.returned, _const(False)), node),
                    _copy_loc(_assign(self.value, _const(None)), node)]
        if broken:
            pre.append(_copy_loc(_assign(broken, _const(False)), node))
        ctx = {"broken": broken}
        new_body = self.body(body, ctx)
        if isinstance(node, gast.While):
            if isinstance(node.test, gast.Constant) and node.test.value is True and not broken:
                raise _infinite(node)
            test = node.test
            if broken:
                test = gast.BoolOp(op=gast.And(), values=[
                    gast.UnaryOp(op=gast.Not(), operand=_name(broken)), node.test])
            loop = _copy_loc(gast.While(test=test, body=new_body or [gast.Pass()],
                                        orelse=[]), node)
            stmts = pre + [loop]
        else:
            stmts = pre + self.for_as_while(node, new_body, broken)
        if node.orelse:
            orelse = self.loop_body_plain(node.orelse)
            if broken:
                stmts.append(_copy_loc(gast.If(test=gast.UnaryOp(op=gast.Not(),
                                                                 operand=_name(broken)),
                                               body=orelse, orelse=[]), node))
            else:
                stmts.extend(orelse)
        return stmts, (node if has_return else None)

    def for_as_while(self, node, new_body, broken):
        """``for t in it`` that may break: an index loop that tests the flag."""
        if not broken:
            return [_copy_loc(gast.For(target=node.target, iter=node.iter,
                                       body=new_body or [gast.Pass()], orelse=[],
                                       type_comment=None), node)]
        count = self.namer.fresh("loop_count")
        k = self.namer.fresh("loop_k")
        setup, length, fetch = self.indexed(node.iter, node)
        setup += [
            _copy_loc(_assign(count, length), node),
            _copy_loc(_assign(k, _const(0)), node),
        ]
        test = gast.BoolOp(op=gast.And(), values=[
            gast.UnaryOp(op=gast.Not(), operand=_name(broken)),
            gast.Compare(left=_name(k), ops=[gast.Lt()], comparators=[_name(count)])])
        fetch = _copy_loc(gast.Assign(targets=[node.target], value=fetch(_name(k)),
                                      type_comment=None), node)
        step = _copy_loc(_assign(k, gast.BinOp(left=_name(k), op=gast.Add(),
                                               right=_const(1))), node)
        loop = _copy_loc(gast.While(test=test, body=[fetch, step] + new_body, orelse=[]),
                         node)
        return setup + [loop]

    def indexed(self, it, node):
        """(setup statements, length, fetch(k) -> item k) for the iterable
        ``it`` read by index: ``zip``, ``enumerate`` and ``reversed`` are
        read through their arguments (their objects have no ``len`` and no
        index), anything else (arrays, lists, ``range``) is indexed itself."""
        def call_of(name):
            return isinstance(it, gast.Call) and isinstance(it.func, gast.Name) and \
                it.func.id == name and not it.keywords and it.args and \
                not any(isinstance(a, gast.Starred) for a in it.args)

        def length_of(seq):
            return gast.Call(func=_name("len"), args=[seq], keywords=[])

        if call_of("zip"):
            parts = [self.indexed(a, node) for a in it.args]
            setup = [s for p in parts for s in p[0]]
            lengths = [p[1] for p in parts]
            length = lengths[0] if len(lengths) == 1 else \
                gast.Call(func=_name("min"), args=lengths, keywords=[])
            return setup, length, lambda k: gast.Tuple(elts=[p[2](k) for p in parts],
                                                       ctx=gast.Load())
        if call_of("enumerate") and len(it.args) == 1:
            setup, length, fetch = self.indexed(it.args[0], node)
            return setup, length, lambda k: gast.Tuple(elts=[k, fetch(k)], ctx=gast.Load())
        if call_of("reversed") and len(it.args) == 1:
            setup, length, fetch = self.indexed(it.args[0], node)
            last = self.namer.fresh("loop_last")
            setup.append(_copy_loc(_assign(last, gast.BinOp(
                left=copy.deepcopy(length), op=gast.Sub(), right=_const(1))), node))
            return setup, length, lambda k: fetch(
                gast.BinOp(left=_name(last), op=gast.Sub(), right=k))
        if call_of("range") and len(it.args) <= 3:
            # a range's items are numbers computed from its bounds, not items
            # of a sequence the loop holds (which a change in place of the
            # target would be taken to write into; fuzz seed 480284)
            bounds = [_const(0), None, _const(1)]
            args = it.args if len(it.args) > 1 else [bounds[0]] + it.args
            setup, names = [], []
            for stem, a in zip(("loop_start", "loop_stop", "loop_step"),
                               args + bounds[len(args):]):
                if isinstance(a, gast.Constant) or stem == "loop_stop":   # (read once, by len)
                    names.append(a)
                    continue
                n = self.namer.fresh(stem)
                setup.append(_copy_loc(_assign(n, a), node))
                names.append(_name(n))
            start, stop, step = names
            length = length_of(gast.Call(func=_name("range"), keywords=[], args=[
                copy.deepcopy(a) for a in (names if setup else it.args)]))
            return setup, length, lambda k: gast.BinOp(
                left=copy.deepcopy(start), op=gast.Add(),
                right=gast.BinOp(left=k, op=gast.Mult(), right=copy.deepcopy(step)))
        items = self.namer.fresh("loop_items")
        return ([_copy_loc(_assign(items, it), node)], length_of(_name(items)),
                lambda k: gast.Subscript(value=_name(items), slice=k, ctx=gast.Load()))

    def loop_body_plain(self, stmts):
        """Statements with no exits of this loop: only nested loops to rewrite."""
        out = []
        for i, stmt in enumerate(stmts):
            if isinstance(stmt, (gast.For, gast.While)):
                new, after = self.loop(stmt, None)
                out.extend(new)
                if after is not None:
                    raise AssertionError("return in loop reached plain body")
                continue
            out.append(self.plain_if(stmt) if isinstance(stmt, gast.If) else stmt)
        return out

    def plain_if(self, stmt):
        """An ``if`` with no exits of the enclosing loop: rewrite nested loops only."""
        return _copy_loc(gast.If(test=stmt.test, body=self.loop_body_plain(stmt.body),
                                 orelse=self.loop_body_plain(stmt.orelse)), stmt)

    def body(self, stmts, ctx):
        """A loop body where break/continue/return end the path."""
        out = []
        for i, stmt in enumerate(stmts):
            rest = stmts[i + 1:]
            if isinstance(stmt, gast.Break):
                out.append(_copy_loc(_assign(ctx["broken"], _const(True)), stmt))
                return out
            if isinstance(stmt, gast.Continue):
                return out
            if isinstance(stmt, gast.Return):
                value = stmt.value if stmt.value is not None else _const(None)
                out += [_copy_loc(_assign(self.value, value), stmt),
                        _copy_loc(_assign(self.returned, _const(True)), stmt),
                        _copy_loc(_assign(ctx["broken"], _const(True)), stmt)]
                return out
            if isinstance(stmt, (gast.For, gast.While)):
                new, after = self.loop(stmt, ctx)
                out.extend(new)
                if after is not None:      # an inner return leaves this loop too
                    exit_ = [_copy_loc(_assign(ctx["broken"], _const(True)), stmt)]
                    out.append(_copy_loc(gast.If(test=_name(self.returned), body=exit_,
                                                 orelse=self.body(rest, ctx)), stmt))
                    return out
                continue
            if isinstance(stmt, gast.If) and _has([stmt], (gast.Break, gast.Continue,
                                                           gast.Return), loops=False):
                body = self.body(stmt.body + rest, ctx)
                orelse = self.body(stmt.orelse + rest, ctx)
                out.append(_copy_loc(gast.If(test=stmt.test, body=body or [gast.Pass()],
                                             orelse=orelse), stmt))
                return out
            out.append(self.plain_if(stmt) if isinstance(stmt, gast.If) else stmt)
        return out


class InfiniteLoop(Exception):
    def __init__(self, node):
        super().__init__("`while True:` without `break` never ends")
        self.node = node


def _infinite(node):
    return InfiniteLoop(node)


def needs_rewrite(func_node):
    return isinstance(func_node, gast.FunctionDef) and _has(
        func_node.body, (gast.Break, gast.Continue, gast.For, gast.While, gast.If)) or (
        isinstance(func_node, gast.FunctionDef) and any(
            isinstance(n, gast.Return) for n in _walk_no_nested(func_node.body[:-1])))


def rewrite(func_node):
    """Rewrite a FunctionDef's body in place; returns it."""
    if not isinstance(func_node, gast.FunctionDef):
        return func_node
    if not _has(func_node.body, (gast.Break, gast.Continue, gast.Return, gast.For,
                                 gast.While, gast.If)):
        return func_node
    rewriter = ExitRewriter(func_node)
    body = list(func_node.body)
    if not body or not isinstance(body[-1], gast.Return):
        # Falling off the end returns None: say so, so that every path ends
        # in a return once the continuation moves into the branches.
        body.append(_copy_loc(gast.Return(value=None), body[-1] if body else func_node))
    func_node.body = rewriter.function_body(body)
    return func_node
