"""Parse stage -> canonical stage.

Turns a user function into ``ir.Function``: every name resolved to what it
means (a local, a NumPy primitive, a user function, a constant, a global
array), every expression flattened to one primitive per equation (ANF),
every variable bound once (SSA-like names ``h``, ``h_1``...), subscript and
augmented assignment rewritten to functional updates, and calls to user
functions inlined.

Why inline user functions rather than transform each separately: the
derivative of a model split over small helpers is then one straight-line
backward pass that reads like hand-written backprop, and later stages
(simplification, Numba) see the whole computation.  Recursion is therefore
unrolled, as JAX traces it: numbers known when transforming fold (``n - 1``,
``n == 0``) and decide ``if``/``else``, so a recursion on them ends
(``calls.check_recursion`` refuses one decided at run time).  Comprehensions
are inlined too, as the small functions Python 3 makes of them
(``comprehensions``); ``assert`` and ``if bad: raise`` become checks
(``checks``).
"""
import builtins
import sys
import types

import gast
import numpy as np

from . import comprehensions, exits, parser
from ..core import ir, primitives as P
from .calls import MAX_RECURSION, Calls
from .checks import Checks
from .controlflow import ControlFlow, loaded_names, stored_names
from .lax_calls import LaxCalls
from .mutation import Mutation, looks_basic
from ..errors import TransformError
from ..core.naming import Namer, base_name, binop_name, item_name

# Names the generated module defines itself; user names are renamed around them.
RESERVED = {"np", "slice", "float", "len", "int", "range", "bool", "print",
            "isinstance", "str", "tuple", "list", "dict", "None", "True", "False",
            "min", "reversed"} | set(P.RUNTIME_NAMES) | set(P.MODULE_ALIASES)

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
_UNSUPPORTED_EXPR = {
    gast.Yield: ("`yield` (a generator)", "return a value instead; generators cannot be transformed"),
    gast.YieldFrom: ("`yield from` (a generator)", "return a value instead"),
    gast.Await: ("`await`", "transform synchronous code"),
    gast.SetComp: ("set comprehension", "use a list comprehension"),
    gast.GeneratorExp: ("generator expression outside list(), tuple() or sum()",
                        "use a list comprehension [... for ...]"),
    gast.Set: ("set literal", "use a tuple or list"),
    gast.NamedExpr: ("walrus `:=`", "use a separate assignment"),
    gast.Starred: ("starred expression", "pass arguments explicitly"),
}

_ATTRIBUTES = {"T": "transpose", "shape": "shape", "ndim": "ndim",
               "size": "size", "real": "real"}


class Static:  # noqa: E302
    """A value fixed when the code is transformed: module, function, class."""

    def __init__(self, obj):
        self.obj = obj


class LocalFunction:
    """A nested ``def`` or a lambda bound to a name inside the function."""

    def __init__(self, node, scope):
        self.node = node
        self.scope = scope


def _assigned_names(node):
    """Names local to a function (Python decides this statically)."""
    return stored_names(node.body if isinstance(node.body, list) else [], updates=False)


class Scope:
    def __init__(self, parsed, node, parent=None):
        self.parsed = parsed
        self.node = node
        self.parent = parent
        self.locals = {}
        self.assigned = _assigned_names(node)
        self.finished = False     # an inlined call that has returned
        self.caller = None        # an inlined call: the scope calling it, and the
        self.caller_live = None   # names read there after (or beside) the call
        self.inlined = None       # an inlined function: its key (recursion is counted)


def _is_plain_constant(obj):
    return type(obj) in (int, float, bool, str, complex, type(None))


def _numpy_spelling(obj):
    """'np.float32' for objects that live in numpy's namespace, else None."""
    name = getattr(obj, "__name__", None)
    if name and getattr(np, name, None) is obj:
        return f"np.{name}"
    return None


class Converter(Calls, Checks, Mutation, ControlFlow, LaxCalls):
    Static = Static
    LocalFunction = None     # set below (defined after this class's helpers)

    def __init__(self, namer=None):
        self.namer = namer or Namer(RESERVED)
        self.env = {}
        self._env_ids = {}
        self.eqns = []
        self.origin = None
        self.temps = set()
        self._inlining = []
        self._bindings = {}   # atom name -> [(scope, user name)] bound to it
        self._may_alias = {}  # a branch's result -> values from before it it may be
        self._lengths = set()  # atoms known to be lengths (len(...) results)
        self._containers = {}  # atom name -> "dict" | "list" for packed containers
        self._view_children = {}  # base atom name -> names of views taken from it
        self._carry_guard = {}  # loop carry-in atom -> (name, its aliases) not shared
        self._branch_scopes = []  # scopes whose branch or loop body is being converted
        self._views = {}      # atom name -> (base atom, index): x = base[index]
        # (or a views.ViewCall: x = base.T, base.reshape(-1) ...)
        self._quiet_views = 0   # > 0: views emitted are not recorded (they rebuild known ones)
        self._live_after = frozenset()  # user names read after the current statement
        self._stmt = None               # the statement being converted
        self._cse = {}   # pure equations already emitted: reuse, don't recompute
        self._raised = False  # the block being converted ended in a `raise`
        self.deps = []   # (kind, holder, name, value): what the code was built from

    # --- bookkeeping ----------------------------------------------------

    def error(self, message, node=None, hint=None, scope=None):
        origin = self.origin
        if node is not None and scope is not None and getattr(node, "lineno", None):
            origin = scope.parsed.origin(node)
        return TransformError(message, origin, hint)

    def env_name(self, obj, base):
        key = id(obj)
        if key in self._env_ids:
            return self._env_ids[key]
        name_ = self.namer.fresh(base)
        self.env[name_] = obj
        self._env_ids[key] = name_
        return name_

    def emit(self, prim, args, kwargs=None, params=None, target=None, base="t"):
        key = _cse_key(prim, args, kwargs, params)
        # Reuse an equal earlier value only for anonymous temporaries, and
        # only if no user name holds it: two names must stay two objects,
        # or a later x[i] = v would be seen through both.
        if key is not None and target is None and key in self._cse \
                and not self._bindings.get(self._cse[key]):
            return ir.name(self._cse[key])
        if target is None:
            out = self.namer.fresh(base)
            self.temps.add(out)
        else:
            out = self.namer.fresh(target)
        self.eqns.append(ir.Eqn([out], prim, args, kwargs, params, self.origin))
        if key is not None:
            self._cse[key] = out
        self.note_view(self.eqns[-1])
        return ir.name(out)

    # --- values -----------------------------------------------------------

    def value_atom(self, obj, base):
        """An atom for a value known at transform time."""
        if _is_plain_constant(obj):
            return ir.const(obj)
        spelling = _numpy_spelling(obj)
        if spelling:
            return P.dotted(spelling)
        return ir.name(self.env_name(obj, base))

    def classify(self, obj, base):
        """Data (numbers, arrays, containers) becomes an atom; everything else
        (modules, functions, classes, user objects) is resolved statically, so
        ``model.loss(x)`` and ``self.W`` are looked up when transforming."""
        if _is_plain_constant(obj) or isinstance(obj, (np.ndarray, np.generic, list,
                                                       tuple, dict)):
            return self.value_atom(obj, base)
        return Static(obj)

    def lookup(self, scope, node):
        name_ = node.id
        s = scope
        while True:
            if name_ in s.locals:
                return s.locals[name_]
            if name_ in s.assigned:
                raise self.error(f"local variable '{name_}' is used before it is assigned",
                                 node, "assign it first", scope)
            if s.parent is None:
                break
            s = s.parent
        parsed = s.parsed    # the outermost function of this source
        if name_ in parsed.closure:
            code = parsed.fn.__code__
            cell = parsed.fn.__closure__[code.co_freevars.index(name_)]
            self.deps.append(("cell", cell, name_, parsed.closure[name_]))
            return self.classify(parsed.closure[name_], name_)
        if name_ in parsed.globals:
            self.deps.append(("global", parsed.globals, name_, parsed.globals[name_]))
            return self.classify(parsed.globals[name_], name_)
        if hasattr(builtins, name_):
            return self.classify(getattr(builtins, name_), name_)
        raise self.error(f"name '{name_}' is not defined", node,
                         "define it or import it in the function's module", scope)

    def as_atom(self, scope, value, node):
        if isinstance(value, Static):
            if isinstance(value.obj, (types.ModuleType, LocalFunction)) or \
                    isinstance(value.obj, types.FunctionType):
                raise self.error(
                    f"'{ir.ast_text(node)}' is a {type(value.obj).__name__} used as a value",
                    node, "call it, or pass data (arrays, numbers) instead", scope)
            return self.value_atom(value.obj, getattr(value.obj, "__name__", "value"))
        return value

    # --- expressions ------------------------------------------------------

    def atom(self, scope, node):
        return self.as_atom(scope, self.expr(scope, node), node)

    def expr(self, scope, node, target=None):
        """Convert an expression; returns an atom or a Static."""
        method = getattr(self, "expr_" + type(node).__name__, None)
        if method is None:
            what, hint = _UNSUPPORTED_EXPR.get(
                type(node), (f"{type(node).__name__} expression", "rewrite it with NumPy calls"))
            raise self.error(f"{what} is not supported", node, hint, scope)
        return method(scope, node, target)

    def expr_Constant(self, scope, node, target):
        return ir.const(node.value)

    def expr_Name(self, scope, node, target):
        return self.lookup(scope, node)

    def expr_Attribute(self, scope, node, target):
        base = self.expr(scope, node.value)
        if isinstance(base, Static):
            try:
                obj = getattr(base.obj, node.attr)
            except AttributeError:
                raise self.error(f"'{ir.ast_text(node.value)}' has no attribute '{node.attr}'",
                                 node, "check the spelling", scope) from None
            if not isinstance(base.obj, types.ModuleType):
                self.deps.append(("attr", base.obj, node.attr, obj))
            if _is_plain_constant(obj) and isinstance(base.obj, types.ModuleType) \
                    and base.obj is np:
                return P.dotted(f"np.{node.attr}")
            return self.classify(obj, node.attr)
        if node.attr in _ATTRIBUTES:
            return self.emit(P.get(_ATTRIBUTES[node.attr]), [base], target=target,
                             base=base_name(_ATTRIBUTES[node.attr], base))
        return self.emit(P.get("getattr"), [base], params={"attr": node.attr},
                         target=target, base=node.attr)

    def index_atom(self, scope, node):
        if isinstance(node, gast.Slice):
            parts = [None if p is None else self.atom(scope, p)
                     for p in (node.lower, node.upper, node.step)]
            return ir.slice_call(*parts)
        if isinstance(node, gast.Tuple):
            return gast.Tuple(elts=[self.index_atom(scope, e) for e in node.elts],
                              ctx=gast.Load())
        return self.atom(scope, node)

    def expr_Subscript(self, scope, node, target):
        base = self.atom(scope, node.value)
        idx = self.index_atom(scope, node.slice)
        out = self.emit(P.get("getitem"), [base, idx], target=target,
                        base=item_name(base, idx))
        if ir.is_name(base) and looks_basic(idx):
            self._add_view(out, base, idx)
        return out

    def expr_BinOp(self, scope, node, target):
        left, right = self.atom(scope, node.left), self.atom(scope, node.right)
        prim = P.BINOP_BY_AST.get(type(node.op))
        if prim is None:
            raise self.error(f"operator {type(node.op).__name__} is not supported", node,
                             None, scope)
        folded = _fold(prim, left, right)
        if folded is not None:      # n - 1 of a number known now: a number
            return folded
        return self.emit(prim, [left, right], target=target,
                         base=binop_name(prim.name, left, right))

    def expr_UnaryOp(self, scope, node, target):
        operand = self.atom(scope, node.operand)
        prim = P.UNARYOP_BY_AST[type(node.op)]
        if prim.name == "pos":
            return operand
        if prim.name == "neg" and isinstance(operand, gast.Constant) and \
                type(operand.value) in (int, float, complex):
            return ir.const(-operand.value)        # a literal: -1.0
        return self.emit(prim, [operand], target=target, base=base_name(prim.name, operand))

    def expr_Compare(self, scope, node, target):
        if len(node.ops) != 1:     # a < b < c  is  a < b and b < c
            parts = [gast.Compare(left=l, ops=[op], comparators=[r])
                     for l, op, r in zip([node.left] + node.comparators[:-1], node.ops,
                                         node.comparators)]
            return self.expr(scope, gast.BoolOp(op=gast.And(), values=parts), target)
        left, right = self.atom(scope, node.left), self.atom(scope, node.comparators[0])
        prim = P.COMPARE_BY_AST[type(node.ops[0])]
        folded = _fold(prim, left, right)
        if folded is not None:
            return folded
        return self.emit(prim, [left, right], target=target, base=prim.name.strip("_"))

    def _static_sequence(self, scope, node):
        """A list/tuple literal of functions stays a transform-time value."""
        values = [self.expr(scope, e) for e in node.elts]
        if values and all(isinstance(v, Static) for v in values):
            return Static(type(node.elts)([v.obj for v in values]) if False else
                          [v.obj for v in values])
        if any(isinstance(v, Static) for v in values):
            raise self.error("a list mixing functions and values is not supported",
                             node, "keep functions and data in separate lists", scope)
        return values

    def expr_Tuple(self, scope, node, target):
        elts = self._static_sequence(scope, node)
        if isinstance(elts, Static):
            return elts
        return self.emit(P.get("tuple"), elts, target=target, base="tup")

    def expr_List(self, scope, node, target):
        elts = self._static_sequence(scope, node)
        if isinstance(elts, Static):
            return elts
        out = self.emit(P.get("list"), elts, target=target, base="items")
        self._containers[out.id] = "list"
        return out

    def expr_Dict(self, scope, node, target):
        keys = []
        for k in node.keys:
            if k is None or not isinstance(k, gast.Constant):
                raise self.error("dict keys must be constants", node,
                                 "use string or number keys", scope)
            keys.append(k.value)
        values = [self.atom(scope, v) for v in node.values]
        out = self.emit(P.get("dict"), values, params={"keys": tuple(keys)},
                        target=target, base="d")
        self._containers[out.id] = "dict"
        return out

    def expr_Lambda(self, scope, node, target):
        return Static(LocalFunction(node, scope))

    def expr_ListComp(self, scope, node, target):
        return self.comprehension(scope, node, "list", target)

    def expr_DictComp(self, scope, node, target):
        return self.comprehension(scope, node, "dict", target)

    def comprehension(self, scope, node, kind, target):
        """A comprehension is a loop in a function of its own (Python 3
        scoping): written out by ``comprehensions`` and inlined."""
        if any(getattr(g, "is_async", 0) for g in node.generators):
            raise self.error("async comprehension is not supported", node,
                             "use a plain comprehension", scope)
        static = kind == "dict"
        fn, passed = comprehensions.as_function(ir.clone(node), kind, target, static)
        if static:
            # a dict's keys are part of its structure: known when transforming,
            # so the loop is written out, one key per item
            bound = comprehensions.targets(node)
            args = []
            for gen in node.generators:
                if comprehensions.loaded(gen.iter) & bound:
                    raise self.error("a dict comprehension whose inner loop depends on an "
                                     "outer one is not supported", gen.iter,
                                     "build the dict with a for loop", scope)
                try:
                    args.append(Static(list(self.static_value(scope, gen.iter))))
                except (_NotStatic, TypeError):
                    raise self.error(
                        "a dict comprehension must loop over values known when "
                        "transforming (literals, range(3), zip/enumerate of them, "
                        "module-level constants), since its keys are part of the "
                        "dict's structure", gen.iter,
                        "write the dict out ({'a': ..., 'b': ...}), or use "
                        "tree_util.tree_map over an argument dict", scope) from None
        else:
            args = [self.expr(scope, a) for a in passed]
        return self.inline(fn, scope.parsed, scope, args, {}, target, scope, node)

    def static_value(self, scope, node):
        """The Python value of an expression known when transforming
        (literals, module-level constants, range/zip/enumerate/reversed of
        them, a constant dict's keys/values/items); else ``_NotStatic``."""
        if isinstance(node, gast.Constant):
            return node.value
        if isinstance(node, (gast.Tuple, gast.List)):
            items = [self.static_value(scope, e) for e in node.elts]
            return tuple(items) if isinstance(node, gast.Tuple) else items
        if isinstance(node, (gast.Name, gast.Attribute)):
            value = self.expr(scope, node)
            if isinstance(value, Static) and not isinstance(value.obj, LocalFunction):
                return value.obj
            if isinstance(value, gast.Constant):
                return value.value
            if ir.is_name(value) and value.id in self.env and \
                    isinstance(self.env[value.id], (tuple, list, dict, range, str)):
                return self.env[value.id]
            raise _NotStatic()
        if isinstance(node, gast.Call) and not node.keywords:
            if isinstance(node.func, gast.Attribute) and not node.args \
                    and node.func.attr in ("keys", "values", "items"):
                mapping = self.static_value(scope, node.func.value)
                if isinstance(mapping, dict):
                    return list(getattr(mapping, node.func.attr)())
                raise _NotStatic()
            func = self.expr(scope, node.func)
            if isinstance(func, Static) and func.obj in _STATIC_BUILTINS:
                return list(func.obj(*[self.static_value(scope, a) for a in node.args]))
        raise _NotStatic()

    # --- calls ------------------------------------------------------------

    # --- statements -------------------------------------------------------

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
        for stmt in reversed(body[1:]):
            later.append(later[-1] | loaded_names([stmt]))
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
        if type(stmt.value) in _UNSUPPORTED_EXPR:
            self.expr(scope, stmt.value)    # raises the construct's own message
        call = stmt.value
        if isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute) \
                and call.func.attr == "append" and isinstance(call.func.value, gast.Name) \
                and len(call.args) == 1 and not call.keywords \
                and not isinstance(self.expr(scope, call.func.value), Static):
            # xs.append(v): a functional update that aliases of xs see
            name_ = call.func.value.id
            old = self.atom(scope, call.func.value)
            new = self.emit(P.get("appended"), [old, self.atom(scope, call.args[0])],
                            target=name_)
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
            self.bind_atom(scope, target, self.atom(scope, value))

    def bind_atom(self, scope, target, value):
        if isinstance(target, gast.Name):
            self.bind(scope, target.id, value)
        elif isinstance(target, (gast.Tuple, gast.List)):
            starred = [i for i, e in enumerate(target.elts) if isinstance(e, gast.Starred)]
            after = len(target.elts) - 1 - (starred[0] if starred else 0)
            for i, t in enumerate(target.elts):
                if isinstance(t, gast.Starred):
                    stop = ir.const(-after) if after else ir.const(None)
                    item = self.emit(P.get("getitem"),
                                     [value, ir.slice_call(ir.const(i), stop, None)],
                                     target=t.value.id if isinstance(t.value, gast.Name)
                                     else "rest")
                    self.bind_atom(scope, t.value, item)
                    continue
                k = i if not starred or i < starred[0] else i - len(target.elts)
                base = t.id if isinstance(t, gast.Name) else "item"
                item = self.emit(P.get("getitem"), [value, ir.const(k)], target=base)
                self.bind_atom(scope, t, item)
        elif isinstance(target, gast.Subscript):
            self.assign_subscript(scope, target, value)
        else:
            raise self.error(f"assignment to {type(target).__name__.lower()} is not supported",
                             target, "assign to local names only", scope)

_NOT_CSE = {"opaque", "effect", "index_set", "custom_vjp_call", "custom_jvp_call", "copy", "array", "print", "zeros",
            "ones", "empty", "full"}


def _cse_key(prim, args, kwargs, params):
    """Equations with equal primitive and atoms compute equal values (SSA)."""
    if prim.name in _NOT_CSE or prim.kind in ("opaque", "effect"):
        return None
    try:
        return (prim.name, tuple(gast.dump(a) for a in args),
                tuple((k, gast.dump(v)) for k, v in sorted((kwargs or {}).items())),
                tuple(sorted((k, repr(v)) for k, v in (params or {}).items())))
    except Exception:
        return None


def canonicalize(fn):
    """The canonical form of a user function (not transformed)."""
    # inlining nests Python calls (~10 frames per inlined call): recursion
    # unrolled ``MAX_RECURSION`` calls deep needs room beyond the default
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 20 * MAX_RECURSION + 2000))
    try:
        return _canonicalize(fn)
    finally:
        sys.setrecursionlimit(limit)


def _canonicalize(fn):
    parsed = parser.parse(fn)
    conv = Converter()
    conv.deps.append(parsed.code_dep)
    node = parsed.node
    scope = Scope(parsed, node)
    a = node.args
    if a.vararg is not None or a.kwarg is not None:
        raise TransformError("functions with *args or **kwargs cannot be transformed "
                             "directly", parsed.origin(node),
                             "give the function explicit parameters")
    params = [p.id for p in a.posonlyargs + a.args + a.kwonlyargs]
    if parsed.self_obj is not None:
        scope.locals[params.pop(0)] = Static(parsed.self_obj)
    for p in params:
        conv.namer.reserve(p)
        conv.bind(scope, p, ir.name(p))     # an alias made later (d = p) is seen through p
    # the defaults of the function parsed (a bound method's, the one-line
    # function a functools.partial stands for)
    fn = parsed.fn
    defaults = [conv.value_atom(v, "default") for v in (fn.__defaults__ or ())] \
        if isinstance(fn, types.FunctionType) else []
    kwonly = [p.id for p in a.kwonlyargs]
    kw_defaults = {k: conv.value_atom(v, "default")
                   for k, v in (getattr(fn, "__kwdefaults__", None) or {}).items()} \
        if isinstance(fn, types.FunctionType) else {}
    conv.origin = parsed.origin(node)
    scope.inlined = (id(node), ((None,) * len(params), ()))
    conv._inlining.append(scope.inlined)   # a call back to it is recursion
    if isinstance(node, gast.Lambda):
        result = conv.as_atom(scope, conv.expr(scope, node.body), node.body)
    else:
        result = conv.block(scope, conv.rewrite_exits(node, parsed).body)
    fn_ir = ir.Function(parsed.name, params, defaults, conv.eqns, result, conv.env,
                        parsed.origin(node), parsed.filename, kwonly, kw_defaults)
    fn_ir.deps = conv.deps
    return fn_ir, conv.namer


_MISSING = object()


def deps_current(deps):
    """True while every global, closure cell and attribute the code was
    built from still holds the same object (else the code is stale)."""
    for kind, holder, name_, value in deps:
        if kind == "global":
            current = holder.get(name_, _MISSING)
        elif kind == "cell":
            try:
                current = holder.cell_contents
            except ValueError:
                return False
        else:
            current = getattr(holder, name_, _MISSING)
        if current is not value:
            if kind == "attr" and callable(value) and current == value:
                continue   # bound methods are new objects on every access
            return False
    return True


Converter.LocalFunction = LocalFunction
Converter.Scope = Scope


class _NotStatic(Exception):
    pass


_FOLDED = (int, float, str, type(None))
_FOLDED_OPS = {"add", "sub", "mul", "floordiv", "mod", "truediv", "lt", "le", "gt", "ge",
               "eq", "ne", "is_", "is_not"}


def _fold(prim, left, right):
    """A binary operation or comparison of two numbers (or strings, None)
    known when transforming, computed now as Python computes it: ``n - 1``
    and ``n == 0`` of a static ``n`` stay numbers, so an ``if`` or a
    recursion on them is decided when transforming.  None otherwise."""
    if prim.name not in _FOLDED_OPS or not all(
            isinstance(a, gast.Constant) and type(a.value) in _FOLDED for a in (left, right)):
        return None
    if prim.kind == "binop" and not all(type(a.value) in (int, float) for a in (left, right)):
        return None
    try:
        return ir.const(prim.fn(left.value, right.value))
    except (ArithmeticError, TypeError):
        return None       # 1 // 0 fails at run time, where Python fails


_STATIC_BUILTINS = (range, zip, enumerate, reversed, sorted)

_AT_UFUNCS = {"index_add": np.add, "index_min": np.minimum, "index_max": np.maximum,
              "index_mul": np.multiply}


def _same(a, b):
    try:
        return bool(a == b)
    except Exception:       # an array's ==
        return False
