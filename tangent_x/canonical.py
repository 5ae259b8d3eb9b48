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
refused with a clear error.
"""
import builtins
import inspect
import types

import gast
import numpy as np

from . import custom, exits, ir, parser, primitives as P
from .controlflow import ControlFlow, LaxCalls, loaded_names
from .errors import TransformError
from .naming import Namer

# Names the generated module defines itself; user names are renamed around them.
RESERVED = {"np", "slice", "float", "len", "int", "range", "bool", "print",
            "isinstance", "str", "tuple", "list", "dict", "None", "True", "False",
            "min", "reversed"} | set(P.RUNTIME_NAMES) | set(P.MODULE_ALIASES)

_UNSUPPORTED_STMT = {
    gast.Try: ("`try` statement", "move the try/except outside the transformed function"),
    gast.With: ("`with` statement", "move the with-block outside the transformed function"),
    gast.Raise: ("`raise` statement", "validate inputs before calling the transformed function"),
    gast.Assert: ("`assert` statement", "check inputs before calling the transformed function"),
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
    gast.ListComp: ("list comprehension", "build the list explicitly or use NumPy"),
    gast.SetComp: ("set comprehension", "use NumPy"),
    gast.DictComp: ("dict comprehension", "build the dict explicitly"),
    gast.GeneratorExp: ("generator expression", "use NumPy (np.sum over an array)"),
    gast.Set: ("set literal", "use a tuple or list"),
    gast.JoinedStr: ("f-string", "format strings outside the transformed function"),
    gast.NamedExpr: ("walrus `:=`", "use a separate assignment"),
    gast.Starred: ("starred expression", "pass arguments explicitly"),
}

# Array methods and attributes, as the NumPy functions they mean.
_METHODS = {"sum", "mean", "prod", "max", "min", "var", "std", "cumsum",
            "trace", "ravel", "squeeze", "swapaxes", "dot", "clip", "copy",
            "repeat", "conj", "diagonal", "any", "all", "argmax", "argmin",
            "round", "nonzero", "sort", "argsort"}
_METHOD_RENAME = {"flatten": "ravel", "conjugate": "conj"}
_SHAPE_METHODS = {"reshape", "transpose"}    # accept varargs: x.reshape(2, 3)
_ATTRIBUTES = {"T": "transpose", "shape": "shape", "ndim": "ndim",
               "size": "size", "real": "real"}
_AT_UPDATES = {"set": None, "add": "index_add", "multiply": "mul",
               "min": "minimum", "max": "maximum"}


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
    found = set()
    body = node.body if isinstance(node.body, list) else []

    def visit(n):
        if isinstance(n, (gast.FunctionDef, gast.Lambda, gast.ClassDef)):
            if isinstance(n, (gast.FunctionDef, gast.ClassDef)):
                found.add(n.name)
            return
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
            found.add(n.id)
        for child in gast.iter_child_nodes(n):
            visit(child)

    for stmt in body:
        visit(stmt)
    return found


class Scope:
    def __init__(self, parsed, node, parent=None):
        self.parsed = parsed
        self.node = node
        self.parent = parent
        self.locals = {}
        self.assigned = _assigned_names(node)


def _is_plain_constant(obj):
    return type(obj) in (int, float, bool, str, complex, type(None))


def _numpy_spelling(obj):
    """'np.float32' for objects that live in numpy's namespace, else None."""
    name = getattr(obj, "__name__", None)
    if name and getattr(np, name, None) is obj:
        return f"np.{name}"
    return None


class Converter(ControlFlow, LaxCalls):
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
        self._lengths = set()  # atoms known to be lengths (len(...) results)
        self._containers = {}  # atom name -> "dict" | "list" for packed containers
        self._view_children = {}  # base atom name -> names of views taken from it
        self._views = {}      # atom name -> (base atom, index): x = base[index]
        self._cse = {}   # pure equations already emitted: reuse, don't recompute
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
                    f"'{ast_text(node)}' is a {type(value.obj).__name__} used as a value",
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
                raise self.error(f"'{ast_text(node.value)}' has no attribute '{node.attr}'",
                                 node, "check the spelling", scope) from None
            if not isinstance(base.obj, types.ModuleType):
                self.deps.append(("attr", base.obj, node.attr, obj))
            if _is_plain_constant(obj) and isinstance(base.obj, types.ModuleType) \
                    and base.obj is np:
                return P.dotted(f"np.{node.attr}")
            return self.classify(obj, node.attr)
        if node.attr in _ATTRIBUTES:
            return self.emit(P.get(_ATTRIBUTES[node.attr]), [base], target=target,
                             base=_base_name(_ATTRIBUTES[node.attr], base))
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
                        base=_item_name(base, idx))
        if ir.is_name(base) and _looks_basic(idx):
            self._add_view(out, base, idx)
        return out

    def expr_BinOp(self, scope, node, target):
        left, right = self.atom(scope, node.left), self.atom(scope, node.right)
        prim = P.BINOP_BY_AST.get(type(node.op))
        if prim is None:
            raise self.error(f"operator {type(node.op).__name__} is not supported", node,
                             None, scope)
        return self.emit(prim, [left, right], target=target,
                         base=_binop_name(prim.name, left, right))

    def expr_UnaryOp(self, scope, node, target):
        operand = self.atom(scope, node.operand)
        prim = P.UNARYOP_BY_AST[type(node.op)]
        if prim.name == "pos":
            return operand
        if prim.name == "neg" and isinstance(operand, gast.Constant) and \
                type(operand.value) in (int, float, complex):
            return ir.const(-operand.value)        # a literal: -1.0
        return self.emit(prim, [operand], target=target, base=_base_name(prim.name, operand))

    def expr_Compare(self, scope, node, target):
        if len(node.ops) != 1:     # a < b < c  is  a < b and b < c
            parts = [gast.Compare(left=l, ops=[op], comparators=[r])
                     for l, op, r in zip([node.left] + node.comparators[:-1], node.ops,
                                         node.comparators)]
            return self.expr(scope, gast.BoolOp(op=gast.And(), values=parts), target)
        left, right = self.atom(scope, node.left), self.atom(scope, node.comparators[0])
        prim = P.COMPARE_BY_AST[type(node.ops[0])]
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

    # --- calls ------------------------------------------------------------

    def call_args(self, scope, node, allow_static=False):
        """Atoms for a call's arguments; functions may be passed only to
        functions that are inlined (they are bound, not evaluated)."""
        def arg(value_node):
            value = self.expr(scope, value_node)
            if isinstance(value, Static) and allow_static:
                return value
            return self.as_atom(scope, value, value_node)

        args, kwargs = [], {}
        for a in node.args:
            if isinstance(a, gast.Starred):
                raise self.error("*args in a call is not supported", a,
                                 "pass the arguments one by one", scope)
            args.append(arg(a))
        for k in node.keywords:
            if k.arg is None:
                raise self.error("**kwargs in a call is not supported", k.value,
                                 "pass keyword arguments one by one", scope)
            kwargs[k.arg] = arg(k.value)
        return args, kwargs

    def expr_Call(self, scope, node, target):
        func = node.func
        if isinstance(func, gast.Attribute):
            at = _at_update(func)
            if at is not None:
                return self.at_update(scope, node, at, target)
            if func.attr == "pop" and not node.args and not node.keywords \
                    and isinstance(func.value, gast.Name) \
                    and not isinstance(self.expr(scope, func.value), Static):
                return self.list_pop(scope, func.value, target)
            base = self.expr(scope, func.value)
            if not isinstance(base, Static):
                return self.method_call(scope, base, func.attr, node, target)
            try:
                obj = getattr(base.obj, func.attr)
            except AttributeError:
                raise self.error(f"'{ast_text(func.value)}' has no attribute '{func.attr}'",
                                 node, "check the spelling", scope) from None
        else:
            callee = self.expr(scope, func)
            if not isinstance(callee, Static):
                raise self.error(f"'{ast_text(func)}' is a value, not a function", node,
                                 "call functions by name", scope)
            obj = callee.obj
        return self.call_object(scope, obj, node, target)

    def call_object(self, scope, obj, node, target):
        if isinstance(obj, LocalFunction):
            args, kwargs = self.call_args(scope, node, allow_static=True)
            return self.inline(obj.node, obj.scope.parsed, obj.scope, args, kwargs,
                               target, scope, node)
        handler = self.lax_handler(obj)
        if handler is not None:
            return handler(scope, node, target)
        if isinstance(obj, (custom.custom_jvp, custom.custom_vjp)):
            return self.custom_call(scope, obj, node, target)
        if obj is builtins.getattr and len(node.args) == 2 and \
                isinstance(node.args[1], gast.Constant):     # getattr(x, 'w') is x.w
            return self.expr(scope, gast.Attribute(value=node.args[0], attr=node.args[1].value,
                                                   ctx=gast.Load()), target)
        if obj in (builtins.max, builtins.min) and len(node.args) == 2 and not node.keywords:
            return self.builtin_extreme(scope, obj, node, target)
        if obj in (builtins.max, builtins.min) and len(node.args) == 1 and not node.keywords:
            obj = np.max if obj is builtins.max else np.min
        prim = P.lookup(obj)
        if prim is not None:
            args, kwargs = self.call_args(scope, node)
            return self.emit(prim, args, kwargs, target=target,
                             base=_base_name(prim.name.split(".")[-1], *args[:1]))
        if isinstance(obj, type) and issubclass(obj, tuple) and hasattr(obj, "_fields"):
            args, kwargs = self.call_args(scope, node)
            return self.emit(P.get("namedtuple"), args, kwargs,
                             params={"callee": self.env_name(obj, obj.__name__),
                                     "cls": obj},
                             target=target, base=obj.__name__.lower())
        if obj is dict and not node.args:
            _, kwargs = self.call_args(scope, node)
            return self.emit(P.get("dict"), list(kwargs.values()),
                             params={"keys": tuple(kwargs)}, target=target, base="d")
        wrapped = _transformed_source(obj)
        if wrapped is not None:
            obj = wrapped
        if not isinstance(obj, (type, types.FunctionType, types.MethodType,
                                types.BuiltinFunctionType, np.ufunc)) \
                and isinstance(getattr(obj, "__call__", None), types.MethodType):
            obj = obj.__call__          # a callable instance: inline its __call__
        if isinstance(obj, (types.FunctionType, types.MethodType)) and \
                isinstance(getattr(obj, "__func__", obj), types.FunctionType):
            args, kwargs = self.call_args(scope, node, allow_static=True)
            parsed = parser.parse(obj)
            return self.inline(parsed.node, parsed, None, args, kwargs, target, scope, node)
        # Anything else is called as it is: fine while no gradient flows
        # through it (the reverse transform reports it otherwise).
        args, kwargs = self.call_args(scope, node)
        label = getattr(obj, "__name__", type(obj).__name__)
        return self.emit(P.get("opaque"), args, kwargs,
                         params={"callee": self.env_name(obj, label), "label": label},
                         target=target, base=label)

    def custom_call(self, scope, obj, node, target):
        """A custom_jvp/custom_vjp function: one equation; its rule decides."""
        args, kwargs = self.call_args(scope, node)
        if kwargs:
            raise self.error(f"keyword arguments to the custom-derivative function "
                             f"{obj.__name__} are not supported", node,
                             "pass them positionally", scope)
        is_vjp = isinstance(obj, custom.custom_vjp)
        rule = obj.fwd if is_vjp else obj.jvp
        if rule is None:
            raise self.error(f"{obj.__name__} has no rule: call "
                             f"{'defvjp(fwd, bwd)' if is_vjp else 'defjvp(rule)'} first",
                             node, None, scope)
        params = {"callee": self.env_name(obj, obj.__name__), "obj": obj,
                  "label": obj.__name__}
        if is_vjp:
            params["fwd"] = self.env_name(obj.fwd, obj.fwd.__name__)
            params["bwd"] = self.env_name(obj.bwd, obj.bwd.__name__)
        return self.emit(P.get("custom_vjp_call" if is_vjp else "custom_jvp_call"), args,
                         params=params, target=target, base=obj.__name__)

    def list_pop(self, scope, name_node, target):
        """``v = xs.pop()``: the last item, and ``xs`` rebound without it."""
        old = self.atom(scope, name_node)
        item = self.emit(P.get("getitem"), [old, ir.const(-1)], target=target, base="last")
        rest = self.emit(P.get("getitem"), [old, ir.slice_call(None, ir.const(-1), None)],
                         target=name_node.id)
        self.propagate(old, rest)
        self.bind(scope, name_node.id, rest)
        return item

    def builtin_extreme(self, scope, obj, node, target):
        """``max(a, b)`` is Python's choice of one operand (ties pick ``a``),
        so it becomes a conditional and the gradient follows the choice."""
        a, b = (self.atom(scope, x) for x in node.args)
        op = P.get("gt") if obj is builtins.max else P.get("lt")
        pick_b = self.emit(op, [b, a], base="pick")
        out = self.namer.fresh(target or ("larger" if obj is builtins.max else "smaller"))
        self.emit_cond(pick_b, [out], [[b], [a]], [[], []], self.origin)
        return ir.name(out)

    def method_call(self, scope, base, method, node, target):
        method = _METHOD_RENAME.get(method, method)
        args, kwargs = self.call_args(scope, node)
        if method in _SHAPE_METHODS:
            if len(args) > 1 or (len(args) == 1 and isinstance(args[0], gast.Constant)
                                 and isinstance(args[0].value, int)
                                 and method == "reshape"):
                args = [self.emit(P.get("tuple"), args, base="shape")]
            if method == "transpose" and not args:
                args = []
            return self.emit(P.get(method), [base] + args, kwargs, target=target,
                             base=_base_name(method, base))
        if method == "astype":
            return self.emit(P.get("asarray"), [base], {"dtype": args[0], **kwargs},
                             target=target, base=_base_name("", base) or "cast")
        if method in _METHODS and method in P.BY_NAME:
            return self.emit(P.get(method), [base] + args, kwargs, target=target,
                             base=_base_name(method, base))
        raise self.error(f"method .{method}() is not supported by tangent_x", node,
                         "call the NumPy function instead (np.f(x, ...))", scope)

    def at_update(self, scope, node, at, target):
        """``x.at[idx].set(v)`` (JAX's functional update): copy plus update."""
        base_node, index_node, op = at
        base = self.atom(scope, base_node)
        idx = self.index_atom(scope, index_node)
        (value,), _ = self.call_args(scope, node)
        return self.index_update(base, idx, value, _AT_UPDATES[op], target)

    def index_update(self, base, idx, value, binop, target):
        params = {}
        if ir.is_name(base) and base.id in self._containers:
            params["container"] = self._containers[base.id]
        if binop == "index_add":     # x.at[idx].add(v): repeated indices accumulate
            return self.emit(P.get("index_add"), [base, idx, value], params=params,
                             target=target, base=_base_name("", base) or "updated")
        if binop is not None:
            old = self.emit(P.get("getitem"), [base, idx], base=_base_name("", base) or "item")
            value = self.emit(P.get(binop), [old, value], base=_base_name("", old))
        out = self.emit(P.get("index_set"), [base, idx, value], params=params,
                        target=target, base=_base_name("", base) or "updated")
        if params:
            self._containers[out.id] = params["container"]
        return out

    def inline(self, node, parsed, parent, args, kwargs, target, call_scope, call_node):
        key = id(node)
        if key in self._inlining:
            raise self.error(f"recursive call to {parsed.name}", call_node,
                             "recursion cannot be transformed; write it as a loop",
                             call_scope)
        self._inlining.append(key)
        saved_origin = self.origin
        try:
            scope = Scope(parsed, node, parent)
            self.bind_params(scope, node, parsed, args, kwargs, call_scope, call_node)
            start = len(self.eqns)
            if isinstance(node, gast.Lambda):
                self.origin = parsed.origin(node)
                result = self.expr(scope, node.body)
            else:
                result = self.block(scope, self.rewrite_exits(node, parsed).body)
        finally:
            self._inlining.pop()
            self.origin = saved_origin
        if (target is not None and ir.is_name(result) and len(self.eqns) > start
                and self.eqns[-1].outs == [result.id]
                and not self.eqns[-1].bodies() and "carry" not in self.eqns[-1].params):
            new = self.namer.fresh(target)
            self.eqns[-1].outs = [new]
            result = ir.name(new)
        return result

    def bind_params(self, scope, node, parsed, args, kwargs, call_scope, call_node):
        a = node.args
        positional = [p.id for p in a.posonlyargs + a.args]
        args = list(args)
        if parsed.self_obj is not None and scope.parent is None:
            scope.locals[positional.pop(0)] = Static(parsed.self_obj)
        fn = parsed.fn if scope.parent is None else None
        defaults = list(getattr(fn, "__defaults__", None) or ()) if fn else None
        kwdefaults = dict(getattr(fn, "__kwdefaults__", None) or {}) if fn else None

        def default(i_or_name, expr_node):
            if fn is not None:
                value = (defaults[i_or_name] if isinstance(i_or_name, int)
                         else kwdefaults[i_or_name])
                return self.value_atom(value, "default")
            return self.atom(scope.parent, expr_node)

        bound = {}
        for p, v in zip(positional, args):
            bound[p] = v
        extra = args[len(positional):]
        if extra:
            if a.vararg is None:
                raise self.error(f"{parsed.name}() takes {len(positional)} positional "
                                 f"arguments but {len(args)} were given", call_node,
                                 None, call_scope)
            bound[a.vararg.id] = self.emit(P.get("tuple"), extra, base=a.vararg.id)
        elif a.vararg is not None:
            bound[a.vararg.id] = self.emit(P.get("tuple"), [], base=a.vararg.id)
        kwonly = [p.id for p in a.kwonlyargs]
        rest = {}
        for k, v in kwargs.items():
            if k in bound:
                raise self.error(f"{parsed.name}() got multiple values for '{k}'",
                                 call_node, None, call_scope)
            if k in positional or k in kwonly:
                bound[k] = v
            else:
                rest[k] = v
        if rest:
            if a.kwarg is None:
                raise self.error(f"{parsed.name}() got an unexpected keyword argument "
                                 f"'{next(iter(rest))}'", call_node, None, call_scope)
            bound[a.kwarg.id] = self.emit(P.get("dict"), list(rest.values()),
                                          params={"keys": tuple(rest)}, base=a.kwarg.id)
        elif a.kwarg is not None:
            bound[a.kwarg.id] = self.emit(P.get("dict"), [], params={"keys": ()},
                                          base=a.kwarg.id)
        first_default = len(positional) - len(a.defaults)
        for i, p in enumerate(positional):
            if p not in bound:
                if i < first_default:
                    raise self.error(f"{parsed.name}() missing argument '{p}'",
                                     call_node, None, call_scope)
                bound[p] = default(i - first_default, a.defaults[i - first_default])
        for i, p in enumerate(kwonly):
            if p not in bound:
                if a.kw_defaults[i] is None:
                    raise self.error(f"{parsed.name}() missing keyword argument '{p}'",
                                     call_node, None, call_scope)
                bound[p] = default(p, a.kw_defaults[i])
        scope.locals.update(bound)

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
            if isinstance(stmt, gast.Return):
                if i != len(body) - 1:
                    raise self.error("code after `return` is never run", stmt,
                                     "remove it", scope)
                if stmt.value is not None:
                    result = self.as_atom(scope, self.expr(scope, stmt.value), stmt.value)
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
        if not isinstance(stmt.value, gast.Call):
            raise self.error("an expression statement has no effect here", stmt,
                             "assign its value or remove it", scope)
        result = self.expr(scope, stmt.value)
        if ir.is_name(result) and self.eqns and self.eqns[-1].out == result.id \
                and self.eqns[-1].prim.kind in ("opaque", "call"):
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

    def bind(self, scope, name_, value):
        """Bind a user name; names bound to the same atom are aliases."""
        scope.locals[name_] = value
        if ir.is_name(value):
            self._bindings.setdefault(value.id, []).append((scope, name_))

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

    def assign_subscript(self, scope, target, value, binop=None):
        """``base[idx] = value`` (or ``op=``): a functional update, then every
        alias of ``base`` -- and the array ``base`` is a view of -- sees it.
        ``x[i][j] = v`` updates ``x[i]`` and writes it back into ``x``."""
        base_node = target.value
        if not isinstance(base_node, (gast.Name, gast.Subscript)):
            raise self.error("assignment into this kind of target is not supported",
                             target, "assign into a local variable: x[i] = v", scope)
        base = self.atom(scope, base_node)
        idx = self.index_atom(scope, target.slice)
        name_ = base_node.id if isinstance(base_node, gast.Name) else None
        new = self.index_update(base, idx, value, binop, name_ or "updated")
        if isinstance(base_node, gast.Subscript):
            self.assign_subscript(scope, base_node, new)
            return
        self.propagate(base, new)
        self.bind(scope, name_, new)

    def propagate(self, old, new):
        """Python semantics of mutation: after ``old`` became ``new``, its
        aliases, the views taken from it (``row = y[0]``), and the array it
        is itself a view of all see the change."""
        if not ir.is_name(old):
            return
        self._rebind(old, new)
        self._refresh_views(old, new, skip=None)
        view = self._views.get(old.id)
        while view is not None:
            base, idx = view
            updated = self.index_update(base, idx, new, None, base.id)
            self._add_view(new, updated, idx)
            self._rebind(base, updated)
            self._refresh_views(base, updated, skip=old.id)
            old, new, view = base, updated, self._views.get(base.id)

    def _add_view(self, view, base, idx):
        self._views[view.id] = (base, idx)
        self._view_children.setdefault(base.id, []).append(view.id)

    def _rebind(self, old, new):
        for s, n in list(self._bindings.get(old.id, [])):
            current = s.locals.get(n)
            if ir.is_name(current) and current.id == old.id:
                self.bind(s, n, new)

    def _is_bound(self, atom_id):
        return any(ir.is_name(s.locals.get(n)) and s.locals[n].id == atom_id
                   for s, n in self._bindings.get(atom_id, []))

    def _refresh_views(self, old_base, new_base, skip):
        for view_id in list(self._view_children.get(old_base.id, [])):
            if view_id == skip or not self._is_bound(view_id):
                continue
            _, idx = self._views[view_id]
            fresh = self.emit(P.get("getitem"), [new_base, idx],
                              base=_item_name(new_base, idx))
            self._add_view(fresh, new_base, idx)
            self._rebind(ir.name(view_id), fresh)
            self._refresh_views(ir.name(view_id), fresh, skip=None)

    def stmt_AugAssign(self, scope, stmt):
        prim = P.BINOP_BY_AST.get(type(stmt.op))
        target = stmt.target
        if isinstance(target, gast.Name):
            old = self.atom(scope, target)
            value = self.atom(scope, stmt.value)
            self.bind(scope, target.id, self.emit(prim, [old, value], target=target.id))
        elif isinstance(target, gast.Subscript):
            self.assign_subscript(scope, target, self.atom(scope, stmt.value), prim.name)
        else:
            raise self.error("augmented assignment to this target is not supported",
                             stmt, "assign to a local name or x[index]", scope)


def _at_update(func):
    """Match ``x.at[idx].op`` ; returns (x node, idx node, op) or None."""
    if func.attr in _AT_UPDATES and isinstance(func.value, gast.Subscript):
        holder = func.value.value
        if isinstance(holder, gast.Attribute) and holder.attr == "at":
            return holder.value, func.value.slice, func.attr
    return None


def _transformed_source(obj):
    """A tangent_x-transformed callable is inlined through its generated code."""
    generated = getattr(obj, "__tangent_x__", None)
    return generated.function if generated is not None else None


def ast_text(node):
    try:
        return gast.unparse(node) if hasattr(gast, "unparse") else \
            __import__("ast").unparse(gast.gast_to_ast(node))
    except Exception:   # pragma: no cover - only used in messages
        return type(node).__name__


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


def _looks_basic(idx):
    """Basic indexing (ints, slices) returns a view that shares memory.

    Names are assumed to hold integers here: ``row = X[i]`` is the common
    case; an integer-array index makes a copy in NumPy, and assigning into
    that copy would (wrongly) be written back.
    """
    parts = idx.elts if isinstance(idx, gast.Tuple) else [idx]
    for p in parts:
        if isinstance(p, gast.Constant) and (p.value is None or p.value is Ellipsis
                                             or type(p.value) is int):
            continue
        if isinstance(p, gast.Call) and ir.is_name(p.func, "slice"):
            continue
        if ir.is_name(p):
            continue
        return False
    return True


def _item_name(base, idx):
    """``params[0]['W']`` -> ``params_0_W``: the path reads in the name."""
    stem = base.id if ir.is_name(base) else "item"
    if isinstance(idx, gast.Constant) and isinstance(idx.value, (int, str)) \
            and len(str(idx.value)) <= 8:
        return f"{stem}_{idx.value}"
    if ir.is_name(idx) and len(idx.id) <= 8:
        return f"{stem}_{idx.id}"
    return stem


def _base_name(prefix, *atoms):
    """A readable temp name from an operation and its first operand."""
    for a in atoms:
        if ir.is_name(a):
            return f"{prefix}_{a.id}" if prefix else a.id
    return prefix or "t"


_OP_WORDS = {"add": "plus", "sub": "minus", "mul": "times", "truediv": "over",
             "pow": "pow", "matmul": "at", "mod": "mod", "floordiv": "div"}


def _binop_name(op, left, right):
    word = _OP_WORDS.get(op, op)
    parts = [a.id if ir.is_name(a) else None for a in (left, right)]
    if all(parts) and len(parts[0]) + len(parts[1]) <= 14:
        return f"{parts[0]}_{word}_{parts[1]}"
    named = parts[0] or parts[1]
    return f"{word}_{named}" if named else word


def canonicalize(fn):
    """The canonical form of a user function (not transformed)."""
    parsed = parser.parse(fn)
    conv = Converter()
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
        scope.locals[p] = ir.name(p)
    defaults = [conv.value_atom(v, "default") for v in (fn.__defaults__ or ())] \
        if isinstance(fn, types.FunctionType) else []
    conv.origin = parsed.origin(node)
    if isinstance(node, gast.Lambda):
        result = conv.as_atom(scope, conv.expr(scope, node.body), node.body)
    else:
        result = conv.block(scope, conv.rewrite_exits(node, parsed).body)
    fn_ir = ir.Function(parsed.name, params, defaults, conv.eqns, result, conv.env,
                        parsed.origin(node), parsed.filename)
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
