"""Expressions, flattened: every name resolved to what it means when
transforming (a local atom, a NumPy primitive, a ``Static`` Python object,
a constant, a global array) and every expression turned into one primitive
per equation (ANF), returning the atom that holds its value.  Values known
when transforming fold (``n - 1`` of a number), and a comprehension is
inlined as the small function Python 3 makes of it (``comprehensions``).
Mixed into ``converter.Converter``; calls are ``calls``', conditional
expressions ``branches``'."""
import builtins
import types

import gast
import numpy as np

from . import comprehensions
from ..core import ir, primitives as P
from ..core.builders import dotted
from ..core.naming import base_name, binop_name, item_name
from .mutation import looks_basic
from .pullbacks import VjpPair
from .scope import LocalFunction, NotStatic, Static, is_plain_constant, numpy_spelling

UNSUPPORTED_EXPR = {
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


class Expressions:
    """Mixed into ``converter.Converter``."""

    # --- values -----------------------------------------------------------

    def value_atom(self, obj, base):
        """An atom for a value known at transform time."""
        if is_plain_constant(obj):
            return ir.const(obj)
        spelling = numpy_spelling(obj)
        if spelling:
            return dotted(spelling)
        return ir.name(self.env_name(obj, base))

    def classify(self, obj, base):
        """Data (numbers, arrays, containers) becomes an atom; everything else
        (modules, functions, classes, user objects) is resolved statically, so
        ``model.loss(x)`` and ``self.W`` are looked up when transforming."""
        if is_plain_constant(obj) or isinstance(obj, (np.ndarray, np.generic, list,
                                                      tuple, dict)):
            return self.value_atom(obj, base)
        return Static(obj)

    def lookup(self, scope, node):
        name_ = node.id
        s = scope
        while True:
            if name_ in s.locals:
                return self.live_value(s, name_, node, scope) if self._live_carries \
                    else s.locals[name_]
            if name_ in s.assigned:
                if s is scope and self._branch_scopes or \
                        any(b is s for b in self._branch_scopes):
                    # in a branch or loop, which may never get here: Python
                    # raises only if this runs, and so does the check (so
                    # for a function reading it from a scope in a branch:
                    # ``lambda a, xi: a + c`` given to lax.scan there)
                    self.emit_check(ir.const(False), self.value_atom(
                        UnboundLocalError, "UnboundLocalError"), ir.const(
                        f"cannot access local variable '{name_}' where it is not "
                        "associated with a value"), [])
                    return self.unbound_eqn(name_, self.eqns)
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
            what, hint = UNSUPPORTED_EXPR.get(
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
            obj = self.static_attribute(scope, base.obj, node)
            if is_plain_constant(obj) and isinstance(base.obj, types.ModuleType) \
                    and base.obj is np:
                return dotted(f"np.{node.attr}")
            return self.classify(obj, node.attr)
        if node.attr in _ATTRIBUTES:
            return self.emit(P.get(_ATTRIBUTES[node.attr]), [base], target=target,
                             base=base_name(_ATTRIBUTES[node.attr], base))
        return self.emit(P.get("getattr"), [base], params={"attr": node.attr},
                         target=target, base=node.attr)

    def static_attribute(self, scope, holder, node):
        """``holder.attr`` read while converting (``node``: the Attribute),
        recorded as a dependency of the code: rebound later, the code is
        stale.  Only the attributes of the libraries the code is written
        against (NumPy, math, tangent_x) are taken as fixed: a user's
        module may be reloaded or patched, and its functions with it."""
        try:
            obj = getattr(holder, node.attr)
        except AttributeError:
            raise self.error(f"'{ir.ast_text(node.value)}' has no attribute '{node.attr}'",
                             node, "check the spelling", scope) from None
        if not _fixed_module(holder):
            self.deps.append(("attr", holder, node.attr, obj))
        return obj

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
        value = self.expr(scope, node.value)
        idx = self.index_atom(scope, node.slice)
        if isinstance(value, Static) and isinstance(value.obj, VjpPair):
            return self.vjp_pair_item(value.obj, idx, node, scope)
        base = self.as_atom(scope, value, node.value)
        return self.item_of(base, idx, target, ir.ast_text(node.value))

    def item_of(self, base, idx, target, text=None):
        """``base[idx]`` (``text``: the user's spelling of ``base``): folded
        where it is known now, else a ``getitem`` recorded as a view of
        ``base`` where basic indexing shares memory."""
        folded = self.static_item(base, idx, target)
        if folded is not None:
            return folded
        out = self.emit(P.get("getitem"), [base, idx], target=target,
                        base=item_name(base, idx))
        if _is_slice(idx) and self.slice_of_container(base, idx, out):
            pass            # a list's slice is a new list (of the same objects)
        elif ir.is_name(base) and (looks_basic(idx) or (
                self._containers.get(base.id) == "dict" and isinstance(idx, gast.Constant))):
            # (an item of a dict is the object it holds: ``w = p["w"]; w -= v``
            # changes ``p["w"]`` too -- it was lost, a wrong value in every
            # transform; a list's item is taken as basic indexing is)
            self._add_view(out, base, idx)
        if text is not None and _constant_slice(idx) is not None:
            # its length is decided at run time: named if a recursion hangs on it
            self._run_time_slices[out.id] = text
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
        if prim.name == "not_":
            length = self.tuple_length(operand)
            if length is not None:      # `not layers` of a tuple of known length
                return ir.const(length == 0)
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
        out = self.emit(P.get("tuple"), elts, target=target, base="tup")
        self._tuple_lengths[out.id] = len(elts)
        self.note_members(out, "tuple", range(len(elts)), elts)
        return out

    # --- tuples of a length known when transforming ------------------------

    def tuple_length(self, atom):
        """The length of a tuple known when transforming -- a constant tuple
        (a module global, a closure value, a slice of one) or one built in
        the code (``(a, b)``, a constant slice of it) -- else None.  A
        recursion over ``layers[1:]`` ends on it (``if not layers``)."""
        if not ir.is_name(atom):
            return None
        if atom.id in self.env:
            value = self.env[atom.id]
            return len(value) if isinstance(value, tuple) else None
        return self._tuple_lengths.get(atom.id)

    def static_item(self, base, idx, target):
        """``base[idx]`` of a tuple of known length with a constant index,
        when it can be known now: an item of a constant tuple is that
        object (a number folds, a function stays callable); a constant
        slice of a constant tuple is the smaller tuple, and of a tuple
        built in the code a tuple whose length is known; an item of a
        container built in the code is the value it holds (``members``).
        None otherwise."""
        member = self.member_at(base, idx)
        if member is not None:
            return member
        kept = self.members_sliced(base, idx, target)    # ``t[1:]``: (b, c)
        if kept is not None:
            return kept
        length = self.tuple_length(base)
        if length is None:
            return None
        constant = self.env.get(base.id) if base.id in self.env else None
        # items are named after the tuple the slices were cut from: W_1, not item
        root, start, step = self._tuple_roots.get(base.id, (base.id, 0, 1))
        if isinstance(idx, gast.Constant) and type(idx.value) is int and constant is not None:
            if not -length <= idx.value < length:
                return None          # Python's IndexError, at run time
            return self.classify(constant[idx.value],
                                 f"{root}_{start + (idx.value % length) * step}")
        window = _constant_slice(idx)
        if window is None:
            return None
        if constant is not None:
            kept = range(length)[window]
            out = self.value_atom(constant[window], f"{root}_rest")
            if ir.is_name(out):
                self._tuple_roots[out.id] = (root, start + kept.start * step,
                                             step * kept.step)
            return out
        out = self.emit(P.get("getitem"), [base, idx], target=target,
                        base=item_name(base, idx))
        self._tuple_lengths[out.id] = len(range(length)[window])
        self.slice_of_container(base, idx, out)
        return out

    def expr_List(self, scope, node, target):
        elts = self._static_sequence(scope, node)
        if isinstance(elts, Static):
            return elts
        out = self.emit(P.get("list"), elts, target=target, base="items")
        self._containers[out.id] = "list"
        self.note_members(out, "list", range(len(elts)), elts)
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
        self._dict_keys[out.id] = tuple(dict.fromkeys(keys))
        self.note_members(out, "dict", keys, values)
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
            for param, gen in zip([a.id for a in fn.args.args], node.generators):
                if comprehensions.loaded(gen.iter) & bound:
                    raise self.error("a dict comprehension whose inner loop depends on an "
                                     "outer one is not supported", gen.iter,
                                     "build the dict with a for loop", scope)
                try:
                    args.append(Static(list(self.static_value(scope, gen.iter))))
                    continue
                except (NotStatic, TypeError):
                    pass
                keyed = self.dict_view(scope, gen.iter, bound)
                if keyed is not None:
                    # a dict of the function's own, its keys known: the loop
                    # over them reads each value from the dict
                    mapping, view, keys = keyed
                    args.append(Static(list(keys)))
                    fn = comprehensions.reading_dict(fn, param, mapping, view)
                else:
                    raise self.error(
                        "a dict comprehension must loop over values known when "
                        "transforming (literals, range(3), zip/enumerate of them, "
                        "module-level constants), since its keys are part of the "
                        "dict's structure", gen.iter,
                        "write the dict out ({'a': ..., 'b': ...}), or use "
                        "tree_util.tree_map over an argument dict", scope)
        else:
            args = [self.expr(scope, a) for a in passed]
        return self.inline(fn, scope.parsed, scope, args, {}, target, scope, node)

    def dict_view(self, scope, node, bound):
        """``(name, view, keys)`` when ``node`` is ``d``, ``d.keys()``,
        ``d.values()`` or ``d.items()`` of a dict ``d`` the function built
        whose keys are known here (``_dict_keys``: a literal, then item
        updates at constant keys); else None."""
        view = "keys"
        if isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) \
                and not node.args and not node.keywords \
                and node.func.attr in ("keys", "values", "items"):
            node, view = node.func.value, node.func.attr
        if not isinstance(node, gast.Name) or node.id in bound:
            return None
        atom = self.expr(scope, node)
        keys = self._dict_keys.get(atom.id) if ir.is_name(atom) else None
        return None if keys is None else (node.id, view, keys)

    def static_value(self, scope, node):
        """The Python value of an expression known when transforming
        (literals, module-level constants, range/zip/enumerate/reversed of
        them, a constant dict's keys/values/items); else ``NotStatic``."""
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
            raise NotStatic()
        if isinstance(node, gast.Call) and not node.keywords:
            if isinstance(node.func, gast.Attribute) and not node.args \
                    and node.func.attr in ("keys", "values", "items"):
                mapping = self.static_value(scope, node.func.value)
                if isinstance(mapping, dict):
                    return list(getattr(mapping, node.func.attr)())
                raise NotStatic()
            func = self.expr(scope, node.func)
            if isinstance(func, Static) and func.obj in _STATIC_BUILTINS:
                return list(func.obj(*[self.static_value(scope, a) for a in node.args]))
        raise NotStatic()


def _constant_slice(idx):
    """The ``slice`` of a slice atom whose bounds are numbers or None, else None."""
    if not (isinstance(idx, gast.Call) and isinstance(idx.func, gast.Name)
            and idx.func.id == "slice"):
        return None
    parts = []
    for a in idx.args:
        if not (isinstance(a, gast.Constant) and (a.value is None or type(a.value) is int)):
            return None
        parts.append(a.value)
    return slice(*parts)


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
    if prim.kind == "binop" and not all(type(a.value) in (int, float) for a in (left, right)) \
            and not (prim.name == "add" and all(type(a.value) is str for a in (left, right))):
        return None         # (strings: joined, as dict keys are: ``k + "2"``)
    try:
        return ir.const(prim.fn(left.value, right.value))
    except (ArithmeticError, TypeError):
        return None       # 1 // 0 fails at run time, where Python fails


_STATIC_BUILTINS = (range, zip, enumerate, reversed, sorted)


_FIXED_ROOTS = ("numpy", "math", "cmath", "builtins", "functools", "operator", "tangent_x",
                "scipy")


def _fixed_module(holder):
    """A module of a library the code is written against, whose attributes
    are not checked on every call (``static_attribute``)."""
    if not isinstance(holder, types.ModuleType):
        return False
    return holder.__name__.split(".")[0] in _FIXED_ROOTS


def _is_slice(idx):
    return isinstance(idx, gast.Call) and ir.is_name(idx.func, "slice")
