"""Statements: a block converted statement by statement, with the
user names read after each (a conservative liveness the control flow keeps
only those of); assignments bound (tuple unpacking, starred targets), and
the expression statements with an effect (``xs.append(v)``,
``np.add.at(y, idx, v)``, a call kept for its effect).  ``break``,
``continue`` and early ``return`` are first rewritten away by ``exits``.
Mixed into ``converter.Converter``; ``if``/``for``/``while`` are
``branches``' and ``loops``', ``x[i] = v`` and ``y += v`` ``mutation``'s."""
import gast
import numpy as np

from . import exits
from ..core import ir, primitives as P
from ..errors import TransformError
from .expressions import UNSUPPORTED_EXPR
from .names import escaping_jumps, has_local_functions, live_before, loaded_names
from .pullbacks import VjpPair
from .scope import LocalFunction, Static

_UNSUPPORTED_STMT = {
    gast.Try: ("`try` statement", "move the try/except outside the transformed function"),
    gast.With: ("`with` statement", "move the with-block outside the transformed function"),
    gast.Global: ("`global` statement", "pass the value as an argument or read it without `global`"),
    gast.Nonlocal: ("`nonlocal` statement", "return the new value instead of rebinding it"),
    gast.Delete: ("`del` statement", "remove the `del`; names are freed automatically"),
    gast.Import: ("`import` inside the function", "import at module level"),
    gast.ImportFrom: ("`import` inside the function", "import at module level"),
    gast.ClassDef: ("class definition inside the function", "define the class at module level"),
    gast.AsyncFunctionDef: ("async function", "use a plain def"),
    gast.AsyncFor: ("async for", "use plain code"),
    gast.AsyncWith: ("async with", "use plain code"),
}

_AT_UFUNCS = {"index_add": np.add, "index_min": np.minimum, "index_max": np.maximum,
              "index_mul": np.multiply}


def _same(a, b):
    try:
        return bool(a == b)
    except Exception:       # an array's ==
        return False


class Statements:
    """Mixed into ``converter.Converter``."""

    def rewrite_exits(self, node, parsed):
        """break/continue/early return -> structured flow, on a copy of the AST."""
        if not exits.needs_rewrite(node):
            return node
        try:
            return exits.rewrite(ir.clone(node))
        except exits.InfiniteLoop as exc:
            raise TransformError(str(exc), parsed.origin(exc.node),
                                 "add a `break`, or give the loop a condition") from None

    def block(self, scope, body, live_after=frozenset()):
        """Convert statements; returns the atom they return (or None).

        ``live_after``: user names read after these statements (a
        conservative liveness set: control flow keeps only those)."""
        result = ir.const(None)
        later = [set(live_after)]
        precise = not self.local_functions(scope) and not escaping_jumps(body)
        for stmt in reversed(body[1:]):
            later.append(live_before(stmt, later[-1]) if precise
                         else later[-1] | loaded_names([stmt]))
        later.reverse()
        for i, stmt in enumerate(body):
            self.origin = scope.parsed.origin(stmt)
            self._live_after = later[i]
            self._stmt = stmt
            if isinstance(stmt, gast.Return):
                if i != len(body) - 1:
                    raise self.error("code after `return` is never run", stmt,
                                     "remove it", scope)
                if stmt.value is not None:
                    result = self.as_atom(scope, self.expr(scope, stmt.value), stmt.value)
                break
            if isinstance(stmt, gast.Raise):
                # it always raises when reached: what follows is never run,
                # and whoever uses the block's value never gets it
                self.stmt_Raise(scope, stmt)
                result = self.unbound_eqn("raised", self.eqns)
                self._raised = True
                break
            if isinstance(stmt, (gast.If, gast.For, gast.While)):
                returned = getattr(self, "stmt_" + type(stmt).__name__)(scope, stmt, later[i])
                if returned is not None:
                    result = returned
                    break
                continue
            self.stmt(scope, stmt)
        return result

    def local_functions(self, scope):
        """Whether ``scope``'s function defines functions inside, which read
        its names when called (liveness then counts every name read)."""
        key = id(scope.node)
        if key not in self._local_functions:
            self._local_functions[key] = has_local_functions(scope.node)
        return self._local_functions[key]

    def stmt(self, scope, stmt):
        method = getattr(self, "stmt_" + type(stmt).__name__, None)
        if method is None:
            what, hint = _UNSUPPORTED_STMT.get(
                type(stmt), (f"{type(stmt).__name__} statement", "rewrite it"))
            raise self.error(f"{what} is not supported", stmt, hint, scope)
        method(scope, stmt)

    def stmt_Pass(self, scope, stmt):
        pass

    def stmt_Expr(self, scope, stmt):
        if isinstance(stmt.value, gast.Constant):
            return   # docstring
        if type(stmt.value) in UNSUPPORTED_EXPR:
            self.expr(scope, stmt.value)    # raises the construct's own message
        call = stmt.value
        if isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute) \
                and call.func.attr == "append" and isinstance(call.func.value, gast.Name) \
                and len(call.args) == 1 and not call.keywords \
                and not isinstance(self.expr(scope, call.func.value), Static):
            # xs.append(v): a functional update that aliases of xs see
            name_ = call.func.value.id
            old = self.atom(scope, call.func.value)
            item = self.atom(scope, call.args[0])
            new = self.emit(P.get("appended"), [old, item], target=name_)
            self.members_after_append(old, item, new)
            self.propagate(old, new)
            self.bind(scope, name_, new)
            return
        if isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute) \
                and call.func.attr == "at" and len(call.args) == 3 and not call.keywords \
                and isinstance(call.args[0], gast.Name):
            func = self.expr(scope, call.func)
            prim_name = next((p for p, ufunc in _AT_UFUNCS.items()
                              if isinstance(func, Static) and _same(func.obj, ufunc.at)), None)
            if prim_name is not None:
                # np.add.at(y, idx, v) (or minimum/maximum/multiply): repeated
                # indices combine; a functional update (index_add, index_min...)
                # that aliases of y see
                name_ = call.args[0].id
                old = self.atom(scope, call.args[0])
                self.check_joined(scope, call.args[0], old, self._live_after)
                new = self.index_update(old, self.index_atom(scope, call.args[1]),
                                        self.atom(scope, call.args[2]), prim_name, name_)
                self.propagate(old, new)
                self.bind(scope, name_, new)
                return
        if not isinstance(stmt.value, gast.Call):
            raise self.error("an expression statement has no effect here", stmt,
                             "assign its value or remove it", scope)
        result = self.expr(scope, stmt.value)
        if ir.is_name(result) and self.eqns and self.eqns[-1].out == result.id \
                and self.eqns[-1].prim.kind in ("opaque", "call", "effect"):
            self.eqns[-1].outs = []   # kept for its effect (e.g. print)
            # and never reused for an equal value later (a helper's ``return
            # np.sum(q)``, discarded, then ``np.sum(y)`` of the same array)
            self._cse = {k: v for k, v in self._cse.items() if v != result.id}

    def stmt_FunctionDef(self, scope, stmt):
        if stmt.decorator_list:
            raise self.error("decorated nested functions are not supported", stmt,
                             "define the function at module level", scope)
        scope.locals[stmt.name] = Static(LocalFunction(stmt, scope))

    def stmt_Assign(self, scope, stmt):
        if len(stmt.targets) == 1:
            self.assign(scope, stmt.targets[0], stmt.value)
            return
        value = self.atom(scope, stmt.value)
        for t in stmt.targets:
            self.bind_atom(scope, t, value)

    def stmt_AnnAssign(self, scope, stmt):
        if stmt.value is not None:
            self.assign(scope, stmt.target, stmt.value)

    def assign(self, scope, target, value):
        if isinstance(target, gast.Name):
            self.bind(scope, target.id, self.expr(scope, value, target=target.id))
        elif isinstance(target, (gast.Tuple, gast.List)) and \
                isinstance(value, (gast.Tuple, gast.List)) and \
                len(target.elts) == len(value.elts) and \
                not any(isinstance(e, gast.Starred) for e in target.elts):
            values = [self.expr(scope, v) for v in value.elts]   # all right sides first
            for t, v in zip(target.elts, values):
                self.bind_atom(scope, t, v)
        else:
            converted = self.expr(scope, value)
            if isinstance(converted, Static) and isinstance(converted.obj, VjpPair) and \
                    isinstance(target, (gast.Tuple, gast.List)) and len(target.elts) == 2 \
                    and all(isinstance(t, gast.Name) for t in target.elts):
                for t, item in zip(target.elts, converted.obj.items):   # out, pullback = ...
                    self.bind(scope, t.id, item)
                return
            self.bind_atom(scope, target, self.as_atom(scope, converted, value))

    def bind_atom(self, scope, target, value):
        if isinstance(target, gast.Name):
            self.bind(scope, target.id, value)
        elif isinstance(target, (gast.Tuple, gast.List)):
            starred = [i for i, e in enumerate(target.elts) if isinstance(e, gast.Starred)]
            after = len(target.elts) - 1 - (starred[0] if starred else 0)
            for i, t in enumerate(target.elts):
                if isinstance(t, gast.Starred):
                    stop = ir.const(-after) if after else ir.const(None)
                    rest = ir.slice_call(ir.const(i), stop, None)
                    label = t.value.id if isinstance(t.value, gast.Name) else "rest"
                    # (``a, *rest = (x, y, z)``: rest is the list [y])
                    item = self.members_sliced(value, rest, label, "list") \
                        or self.item_of(value, rest, label)
                    self.bind_atom(scope, t.value, item)
                    continue
                k = i if not starred or i < starred[0] else i - len(target.elts)
                base = t.id if isinstance(t, gast.Name) else "item"
                # (a, b = x of a 2-d array: two views of its rows)
                self.bind_atom(scope, t, self.item_of(value, ir.const(k), base))
        elif isinstance(target, gast.Subscript):
            self.assign_subscript(scope, target, value)
        else:
            raise self.error(f"assignment to {type(target).__name__.lower()} is not supported",
                             target, "assign to local names only", scope)
