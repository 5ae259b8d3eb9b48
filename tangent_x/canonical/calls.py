"""Calls inside a function being canonicalized (mixed into converter.Converter).

Calls are resolved by the object they reach: a NumPy primitive becomes an
equation; a user function, lambda, bound method or callable object is
inlined (``inlining``: its parameters bound to the caller's atoms,
functions passed as arguments included); ``lax`` control flow,
custom-derivative functions and builtins with a meaning of their own
(``max(a, b)``) get their own equations; anything else is an opaque
call, fine while no gradient has to flow through it.
"""
import ast
import builtins
import types

import gast
import numpy as np

from ..core import custom
from ..core import ir, primitives as P
from . import parser
from ..core.naming import base_name
from .mutation import _at_update
from .scope import LocalFunction, NotStatic, Static

# Array methods and attributes, as the NumPy functions they mean.
_METHODS = {"sum", "mean", "prod", "max", "min", "var", "std", "cumsum",
            "trace", "ravel", "squeeze", "swapaxes", "dot", "clip", "copy",
            "repeat", "conj", "diagonal", "any", "all", "argmax", "argmin",
            "round", "nonzero", "sort", "argsort"}
_METHOD_RENAME = {"flatten": "ravel", "conjugate": "conj"}
_SHAPE_METHODS = {"reshape", "transpose"}    # accept varargs: x.reshape(2, 3)



_NOT_KNOWN = object()


def _method_refusal(text, method, known):
    """Message and hint for ``text.method(...)`` that has no rule: the advice
    depends on whether arrays have that method and what ``text`` holds."""
    call = f"{text}.{method}()"
    if known is not _NOT_KNOWN and not isinstance(known, (np.ndarray, np.generic)):
        kind = type(known).__name__
        return (f"{call} calls a method of the {kind} {text}, which tangent_x cannot "
                "transform",
                "compute it outside the transformed function and pass the result in "
                "(an argument or a global)")
    if hasattr(np.ndarray, method):
        function = getattr(np, method, None)
        if callable(function):
            return (f"the array method {call} is not supported by tangent_x",
                    f"call the NumPy function instead: np.{method}({text}, ...)")
        return (f"the array method {call} is not supported by tangent_x",
                "write it with NumPy functions and indexing")
    return (f"{call}: arrays have no method .{method}(), and tangent_x treats "
            f"{text} as an array",
            f"if {text} is a string, dict or other Python object, compute "
            f"{call} outside the transformed function and pass the result in")


class Calls:
    """Mixed into ``converter.Converter``."""

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
            obj = self.static_attribute(scope, base.obj, func)
        else:
            callee = self.expr(scope, func)
            if not isinstance(callee, Static):
                raise self.error(f"'{ir.ast_text(func)}' is a value, not a function", node,
                                 "call functions by name", scope)
            obj = callee.obj
        return self.call_object(scope, obj, node, target)

    def _static_len(self, scope, node):
        """``len`` of a tuple, string or range known when transforming (a
        module constant, a literal), as a number; None otherwise.  Lists and
        dicts are left to run time: their contents may change between calls."""
        try:
            value = self.static_value(scope, node)
        except NotStatic:
            return None
        return len(value) if isinstance(value, (tuple, str, range)) else None

    def _static_argument(self, scope, node):
        """The Python value of an argument fixed at transform time."""
        if isinstance(node, (gast.Name, gast.Attribute)):
            value = self.expr(scope, node)
            if isinstance(value, Static) and not isinstance(value.obj, LocalFunction):
                return value.obj
            raise NotStatic()
        try:
            return ast.literal_eval(gast.gast_to_ast(node))
        except (ValueError, TypeError, SyntaxError):
            raise NotStatic() from None

    def call_object(self, scope, obj, node, target):
        if obj is len and len(node.args) == 1 and not node.keywords:
            length = self._static_len(scope, node.args[0])
            if length is not None:      # a recursion's depth may hang on it
                return ir.const(length)
        if isinstance(obj, LocalFunction):
            args, kwargs = self.call_args(scope, node, allow_static=True)
            return self.inline(obj.node, obj.scope.parsed, obj.scope, args, kwargs,
                               target, scope, node)
        handler = self.lax_handler(obj) or self.tree_handler(obj)
        if handler is not None:
            return handler(scope, node, target)
        if isinstance(obj, (custom.custom_jvp, custom.custom_vjp)):
            return self.custom_call(scope, obj, node, target)
        if obj is builtins.getattr and len(node.args) == 2 and \
                isinstance(node.args[1], gast.Constant):     # getattr(x, 'w') is x.w
            return self.expr(scope, gast.Attribute(value=node.args[0], attr=node.args[1].value,
                                                   ctx=gast.Load()), target)
        if obj in (list, tuple, builtins.sum) and len(node.args) == 1 and not node.keywords \
                and isinstance(node.args[0], (gast.GeneratorExp, gast.ListComp)):
            return self.generator_call(scope, obj, node, target)
        if obj in (builtins.max, builtins.min) and len(node.args) == 2 and not node.keywords:
            return self.builtin_extreme(scope, obj, node, target)
        if obj in (builtins.max, builtins.min) and len(node.args) == 1 and not node.keywords:
            obj = np.max if obj is builtins.max else np.min
        if obj is builtins.reversed and len(node.args) == 1 and not node.keywords:
            # reversed(seq) iterates as seq[::-1] (a range, list or array view),
            # which has a length: loops over it (as backward passes print
            # them) canonicalize like any loop over a sequence
            (arg,), _ = self.call_args(scope, node)
            return self.emit(P.get("getitem"),
                             [arg, ir.slice_call(None, None, ir.const(-1))],
                             target=target, base="reversed")
        if obj in (dict, list) and len(node.args) == 1 and not node.keywords \
                and isinstance(node.args[0], gast.Name):
            arg = self.expr(scope, node.args[0])
            kind = "dict" if obj is dict else "list"
            if ir.is_name(arg) and self._containers.get(arg.id) == kind:
                out = self.emit(P.get(f"{kind}_copy"), [arg], target=target,
                                base=base_name("", arg) or kind)
                self._containers[out.id] = kind
                return out
        prim = P.lookup(obj)
        if prim is not None:
            args, kwargs = self.call_args(scope, node)
            return self.emit(prim, args, kwargs, target=target,
                             base=base_name(prim.name.split(".")[-1], *args[:1]))
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
        if _is_transform(obj):
            # tx.grad(g)(x) inside: the transform is applied now, to static
            # arguments (module-level functions, literal argnums/in_axes), and
            # its generated code is inlined like any transformed callable
            try:
                args = [self._static_argument(scope, a) for a in node.args]
                kwargs = {k.arg: self._static_argument(scope, k.value) for k in node.keywords}
            except NotStatic:
                raise self.error(f"tx.{obj.__name__}(...) inside a transformed function "
                                 "needs static arguments (a module-level function, literal "
                                 "options)", node,
                                 f"apply it once outside, e.g. g = tx.{obj.__name__}(f) at "
                                 "module level, and call g inside", scope) from None
            return Static(obj(*args, **kwargs))
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

    def generator_call(self, scope, obj, node, target):
        """``list(g)``, ``tuple(g)``, ``sum(g)`` of a generator expression
        (or of a list comprehension): the loop it is (see ``comprehensions``)."""
        gen = node.args[0]
        if obj is builtins.sum:
            return self.comprehension(scope, gen, "sum", target)
        if obj is list:
            return self.comprehension(scope, gen, "list", target)
        items = self.comprehension(scope, gen, "list", None)
        return self.emit(P.get("list_to_tuple"), [items], target=target, base=target or "tup")

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
        # (a custom function transformed itself is called from a function
        # of its own name: its global must not be that function)
        base = obj.__name__ if obj.__name__ != self.function_name else f"{obj.__name__}_custom"
        params = {"callee": self.env_name(obj, base), "obj": obj,
                  "label": obj.__name__}
        if is_vjp:
            params["fwd"] = self.env_name(obj.fwd, obj.fwd.__name__)
            params["bwd"] = self.env_name(obj.bwd, obj.bwd.__name__)
        return self.emit(P.get("custom_vjp_call" if is_vjp else "custom_jvp_call"), args,
                         params=params, target=target, base=obj.__name__)


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
        if method == "flatten":     # ``ravel``, but always a copy: not a view of ``base``
            return self.quietly(self.method_call, scope, base, "ravel", node, target)
        method = _METHOD_RENAME.get(method, method)
        args, kwargs = self.call_args(scope, node)
        if method == "unflatten" and len(args) == 1 and not kwargs:
            # treedef.unflatten(leaves): arrays have no such method (see trees)
            return self.emit(P.get("tree_rebuild"), [base, args[0], ir.const(None)],
                             target=target, base="tree")
        if method in _SHAPE_METHODS:
            if len(args) > 1 or (len(args) == 1 and isinstance(args[0], gast.Constant)
                                 and isinstance(args[0].value, int)
                                 and method == "reshape"):
                args = [self.emit(P.get("tuple"), args, base="shape")]
            if method == "transpose" and not args:
                args = []
            return self.emit(P.get(method), [base] + args, kwargs, target=target,
                             base=base_name(method, base))
        if method == "astype":
            return self.quietly(      # a copy, whatever the dtype: not a view of ``base``
                self.emit, P.get("asarray"), [base], {"dtype": args[0], **kwargs}, None,
                target, base_name("", base) or "cast")
        if method in _METHODS and method in P.BY_NAME:
            return self.emit(P.get(method), [base] + args, kwargs, target=target,
                             base=base_name(method, base))
        known = _NOT_KNOWN
        if isinstance(base, gast.Constant):
            known = base.value
        elif ir.is_name(base) and base.id in self.env:
            known = self.env[base.id]
        message, hint = _method_refusal(ir.ast_text(node.func.value), method, known)
        raise self.error(message, node, hint, scope)


_TRANSFORM_MODULES = ("tangent_x.api.derivatives", "tangent_x.api.vmap", "tangent_x.api.pmap",
                      "tangent_x.api.jacobians",
                      "tangent_x.numba_stage")
_TRANSFORM_NAMES = {"grad", "value_and_grad", "vjp", "jvp", "vmap", "jacfwd", "jacrev",
                    "hessian", "jit", "pmap"}


def _is_transform(obj):
    """tangent_x's own transforms (``tx.vmap`` itself, not a vmapped function)."""
    return getattr(obj, "__module__", None) in _TRANSFORM_MODULES and \
        getattr(obj, "__name__", None) in _TRANSFORM_NAMES


def _transformed_source(obj):
    """A tangent_x-transformed callable is inlined through its generated code."""
    generated = getattr(obj, "__tangent_x__", None)
    return generated.function if generated is not None else None
