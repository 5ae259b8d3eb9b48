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
import functools
import types

import gast
import numpy as np

from ..core import custom
from ..runtime.custom import custom_jvp_cotangents, pullback_of
from ..core import ir, primitives as P
from . import parser
from .comprehensions import as_generator_call
from ..core.naming import base_name
from .mutation import _at_update
from .number_calls import primitive_call
from .pullbacks import Pullback
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
            if length is None and isinstance(node.args[0], gast.Name):
                length = self.tuple_length(self.expr(scope, node.args[0]))
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
        if obj in (builtins.max, builtins.min) and len(node.args) == 1 and not node.keywords \
                and not isinstance(node.args[0], (gast.GeneratorExp, gast.ListComp)):
            # max(vals) of a list of numbers (or a 1-d array): NumPy's max of
            # it stacked (np.stack's adjoint gives the list a list)
            arg = self.expr(scope, node.args[0]) if isinstance(node.args[0], gast.Name) else None
            if not (ir.is_name(arg) and self._containers.get(arg.id) == "list"):
                obj = np.max if obj is builtins.max else np.min
            else:
                items = self.emit(P.lookup(np.stack), [arg], base=base_name("", arg) or "items")
                return self.emit(P.lookup(np.max if obj is builtins.max else np.min), [items],
                                 target=target, base=obj.__name__)
        if obj is builtins.reversed and len(node.args) == 1 and not node.keywords:
            # reversed(seq) iterates as seq[::-1] (a range, list or array view),
            # which has a length: loops over it (as backward passes print
            # them) canonicalize like any loop over a sequence
            (arg,), _ = self.call_args(scope, node)
            return self.emit(P.get("getitem"),
                             [arg, ir.slice_call(None, None, ir.const(-1))],
                             target=target, base="reversed")
        if obj in (dict, list, tuple) and len(node.args) == 1 and not node.keywords \
                and isinstance(node.args[0], gast.Name):
            arg = self.expr(scope, node.args[0])
            kind = "dict" if obj is dict else "list"
            if ir.is_name(arg) and self._containers.get(arg.id) == kind:
                # (``tuple(items)`` of a list the code built: list_to_tuple)
                prim = "list_to_tuple" if obj is tuple else f"{kind}_copy"
                out = self.emit(P.get(prim), [arg], target=target, base=base_name("", arg) or kind)
                if obj is not tuple:
                    self._containers[out.id] = kind
                return out
        if obj in (list, tuple, builtins.sum) and len(node.args) == 1 and not node.keywords \
                and self._iterated(scope, node.args[0], copy=obj is not builtins.sum):
            # list(zip(a, b)), tuple(enumerate(xs)), list(x), sum(items): the
            # loop over the iterable they are, as for a generator expression
            # (an opaque builtin here would hide the derivative through it)
            return self.generator_call(scope, obj, as_generator_call(node), target)
        if obj is custom_jvp_cotangents and len(node.args) == 3 and not node.keywords:
            return self.custom_cotangents_call(scope, node, target)
        prim = P.lookup(obj)
        if prim is not None:
            args, kwargs = self.call_args(scope, node)
            return primitive_call(self, obj, prim, args, kwargs, target)
        if isinstance(obj, type) and issubclass(obj, tuple) and hasattr(obj, "_fields"):
            args, kwargs = self.call_args(scope, node)
            return self.emit(P.get("namedtuple"), args, kwargs,
                             params={"callee": self.env_name(obj, obj.__name__),
                                     "cls": obj},
                             target=target, base=obj.__name__.lower())
        if obj is dict and not node.args:
            _, kwargs = self.call_args(scope, node)
            out = self.emit(P.get("dict"), list(kwargs.values()),
                            params={"keys": tuple(kwargs)}, target=target, base="d")
            self._containers[out.id], self._dict_keys[out.id] = "dict", tuple(kwargs)
            return out
        if _is_transform(obj) and hasattr(obj, "for_primals"):
            return self.jvp_call(scope, obj, node, target)
        if _is_transform(obj) and hasattr(obj, "pullback_for_primals"):
            return self.vjp_call(scope, obj, node, target)
        if isinstance(obj, Pullback):
            return self.pullback_call(scope, obj, node, target)
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
            source = obj.__tangent_x__
            if hasattr(source, "specialize"):
                # code specialised to the structure of the arguments it last
                # got (a vmapped function, a Jacobian): this code holds only
                # for calls like the one that specialised it (deps_current)
                self.deps.append(("specialised", source, None, source.generated))
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

    def jvp_call(self, scope, jvp, node, target):
        """``tx.jvp(f, primals, tangents)`` inside a transformed function (JAX
        allows transforms inside jit): ``f`` is known now (a function, or
        ``tx.grad(g)``: an hvp), so its jvp code for that many primals is
        made now (``jvp.for_primals``) and inlined, called with the primals
        then the tangents; it returns ``(out, out_tangent)``."""
        if len(node.args) != 3 or node.keywords:
            raise self.error("tx.jvp takes (fun, primals, tangents)", node,
                             "call it as tx.jvp(f, (x,), (v,))", scope)
        fun, bound = self._jvp_target(scope, node.args[0], node)
        primals = self._sequence_atoms(scope, node.args[1], "primals")
        tangents = self._sequence_atoms(scope, node.args[2], "tangents")
        if len(primals) != len(tangents):
            raise self.error(f"jvp called with different primal and tangent counts: "
                             f"{len(primals)} and {len(tangents)}", node, None, scope)
        code = jvp.for_primals(fun, len(primals), first=len(bound)).function
        parsed = parser.parse(code)
        return self.inline(parsed.node, parsed, None, primals + tangents + bound, {},
                           target, scope, node)

    def _jvp_target(self, scope, fun_node, node):
        """The function ``tx.jvp`` differentiates inside a transformed
        function, and the values bound before its primals: a function
        known now (``f``, ``tx.grad(f)``), or ``functools.partial(f, a, ...)``
        or ``lambda y: f(a, y)`` whose ``a`` may be values of the code."""
        if isinstance(fun_node, gast.Call) and not fun_node.keywords and fun_node.args:
            maker = self.expr(scope, fun_node.func)
            if isinstance(maker, Static) and maker.obj is functools.partial:
                fun, bound = self._jvp_target(scope, fun_node.args[0], node)
                return fun, bound + [self.atom(scope, a) for a in fun_node.args[1:]]
        fun = self.expr(scope, fun_node)
        if isinstance(fun, Static) and isinstance(fun.obj, LocalFunction):
            found = self._partial_in_disguise(fun.obj)
            if found is not None:
                return found
        if not isinstance(fun, Static) or isinstance(fun.obj, LocalFunction) \
                or not callable(fun.obj):
            raise self.error(
                f"tx.jvp({ir.ast_text(fun_node)}, ...) inside a transformed function "
                "needs a function whose jvp code can be made when transforming: a "
                "module-level function, tx.grad(f) of one, functools.partial(f, a) or "
                "lambda y: f(a, y) (one call, the primals last)", node,
                "define the function at module level, with the values it closes over "
                "as its first parameters, and pass partial(f, params)", scope)
        return fun.obj, []

    def _partial_in_disguise(self, local):
        """``lambda y: f(params, y)`` (or a nested def returning that call):
        ``partial(f, params)``, its bound values read in the scope the lambda
        was made in.  (f, bound atoms), or None for any other body."""
        node = local.node
        if isinstance(node, gast.Lambda):
            body = node.body
        elif len(node.body) == 1 and isinstance(node.body[0], gast.Return):
            body = node.body[0].value
        else:
            return None
        a = node.args
        if a.vararg or a.kwarg or a.kwonlyargs or a.defaults or a.posonlyargs \
                or not isinstance(body, gast.Call) or body.keywords:
            return None
        params = [p.id for p in a.args]
        k = len(body.args) - len(params)
        tail = body.args[k:] if k >= 0 else []
        if len(tail) != len(params) or not all(
                isinstance(t, gast.Name) and t.id == p for t, p in zip(tail, params)):
            return None
        head = body.args[:k]
        if any(isinstance(n, gast.Name) and n.id in params
               for e in head + [body.func] for n in ir.walk(e)):
            return None
        fun = self.expr(local.scope, body.func)
        if not isinstance(fun, Static) or isinstance(fun.obj, LocalFunction) \
                or not callable(fun.obj):
            return None
        return fun.obj, [self.atom(local.scope, e) for e in head]

    def _sequence_atoms(self, scope, node, what):
        """The items of a tuple or list whose length is known now (jvp's
        primals and tangents): a literal ``(x, y)``, or a tuple of known length."""
        if isinstance(node, (gast.Tuple, gast.List)):
            return [self.atom(scope, e) for e in node.elts]
        seq = self.atom(scope, node)
        length = self.tuple_length(seq)
        if length is None:
            raise self.error(f"tx.jvp's {what} inside a transformed function must be a "
                             f"tuple whose length is known when transforming", node,
                             f"write the {what} out as a tuple: tx.jvp(f, (x,), (v,))", scope)
        return [self.static_item(seq, ir.const(i), None)
                or self.emit(P.get("getitem"), [seq, ir.const(i)], base=what)
                for i in range(length)]

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

    def custom_cotangents_call(self, scope, node, target):
        """``custom_jvp_cotangents(fun, (args...), g)`` in derivative code being
        differentiated again (hessian, jacfwd(grad) of a custom_jvp function):
        the transposed tangent map of ``fun``'s rule is inlined as the code it
        is (``pullback_of``), so it differentiates like any code -- JAX
        differentiates the rule again.  Returns the tuple of cotangents."""
        fun = self.expr(scope, node.args[0])
        if not isinstance(fun, Static) or not isinstance(fun.obj, custom.custom_jvp) \
                or not isinstance(node.args[1], gast.Tuple):
            raise self.error("custom_jvp_cotangents is derivative code's own helper",
                             node, "call the custom_jvp function itself", scope)
        obj = fun.obj
        args = [self.atom(scope, a) for a in node.args[1].elts]
        g = self.atom(scope, node.args[2])
        nondiff, primals = obj.split(args)
        zeros = [self.emit(P.get("zeros_like"), [p], base="zeros") for p in primals]
        pullback = parser.parse(pullback_of(obj, len(args)).function)
        out_and_bars = self.inline(pullback.node, pullback, None,
                                   zeros + [g] + nondiff + primals, {}, None, scope, node)
        bars = self.emit(P.get("getitem"), [out_and_bars, ir.const(1)], base="cotangents")
        if len(primals) == 1:
            bars = self.emit(P.get("tuple"), [bars], target=target, base="cotangents")
        return bars

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
