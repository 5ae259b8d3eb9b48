"""Abstract values spelled as expressions of the compiled code: literals,
globals the compiled module binds (functions, modules), hidden arguments
(arrays, index lists), and fresh variables for values computed once."""
import ast
import builtins
import copy
import math
import types as pytypes

import numpy as np

from ... import runtime
from .syntax import popped_from, range_node
from .values import Const, Dyn, Expr, Tape, Zero, children, describe, is_container, \
    is_namedtuple, short

_LITERAL_TYPES = (bool, int, float, complex, str, type(None))


class Rendering:
    """Mixin of ``Specializer``: rendering, constants and globals."""

    def render(self, av, hint="value", as_tuple=False):
        """An ast expression computing ``av`` in compiled code (``as_tuple``:
        a list as a tuple, which is what Numba's NumPy takes)."""
        if isinstance(av, Expr):
            return av.node
        if isinstance(av, Dyn):
            return ast.Name(av.name, ast.Load())
        if isinstance(av, Zero):
            return ast.Call(func=self.global_name(runtime.zeros_like, "zeros_like"),
                            args=[self.render(av.like)], keywords=[])
        if isinstance(av, Const):
            return self.render_const(av, hint)
        if isinstance(av, Tape):
            if is_container(av.template):
                return self.render_rows(av, hint)
            return self.render(av.template, hint)
        if isinstance(av, dict):
            self.fail(f"a dict ({describe(av)}) would have to be passed into compiled "
                      "code as a value")
        if is_container(av):
            if isinstance(av, list) and av and all(
                    isinstance(c, Const) and isinstance(c.value, (int, np.integer))
                    and not isinstance(c.value, bool) for c in av):
                return ast.Name(self.hidden_arg(np.asarray([c.value for c in av]), "indices"),
                                ast.Load())
            elts = [self.render(self.materialize(c, hint), hint) for c in children(av)]
            if isinstance(av, list) and not as_tuple:
                return ast.List(elts=elts, ctx=ast.Load())
            return ast.Tuple(elts=elts, ctx=ast.Load())
        raise AssertionError(av)

    def render_rows(self, tape, hint):
        """A list filled by a loop with containers (``items.append((d, x))``)
        as the value the user has: a list of its items, built from the tape's
        per-leaf lists, ``[(items_0[i], items_1[i]) for i in range(n)]``.  The
        per-leaf lists themselves, read as the value, are its transpose: they
        index ``items[i][j]`` as ``items[j][i]`` and give ``np.array(items)``
        the other shape.  Tapes' own operations (append, pop, len, a scan's
        stacking) read the per-leaf lists and never come here."""
        n = self.tape_size(tape)
        if n is None:
            self.fail("a list filled by a loop with items that hold no value")
        i = self.fresh("i")

        def item(template):
            if isinstance(template, dict):
                self.fail("a list of dicts filled by a loop, used as a value, cannot be "
                          "compiled", "keep its items as tuples, or read it by index "
                          "in the loop that fills it")
            if is_container(template):
                return ast.Tuple(elts=[item(c) for c in children(template)], ctx=ast.Load())
            if isinstance(template, Dyn):
                return ast.Subscript(value=ast.Name(template.name, ast.Load()),
                                     slice=ast.Name(i, ast.Load()), ctx=ast.Load())
            return self.render(template, hint)
        rows = ast.ListComp(elt=item(tape.template), generators=[ast.comprehension(
            target=ast.Name(i, ast.Store()),
            iter=ast.Call(func=ast.Name("range", ast.Load()), args=[n], keywords=[]),
            ifs=[], is_async=0)])
        return self.render(self.materialize(Expr(rows), f"{hint}_items"), hint)

    def render_const(self, av, hint):
        value = av.value
        # Only functions, modules and classes keep their global spelling: a
        # number read from a global is written as a literal, so the module's
        # text (and Numba's on-disk cache keyed by it) changes with the value.
        if av.node is not None and (callable(value) or isinstance(value, pytypes.ModuleType)) \
                and not isinstance(value, np.ndarray) and self.spelled_by_globals(av.node):
            return copy.deepcopy(av.node)
        if isinstance(value, bool) or value is None or isinstance(value, str):
            return ast.Constant(value)
        if isinstance(value, (int, float)) and type(value) in (int, float):
            if isinstance(value, float) and not math.isfinite(value):
                return ast.parse(f"np.{'nan' if value != value else 'inf'}", mode="eval").body \
                    if value != -math.inf else ast.parse("-np.inf", mode="eval").body
            return ast.Constant(value)
        if isinstance(value, complex):
            return ast.Call(func=ast.Name("complex", ast.Load()),
                            args=[ast.Constant(value.real), ast.Constant(value.imag)],
                            keywords=[])
        if isinstance(value, np.generic) and value.dtype.kind in "biufc" and value.ndim == 0:
            inner = self.render_const(Const(value.item()), hint)
            return ast.Call(func=ast.Attribute(value=self.global_name(np, "np"),
                                               attr=value.dtype.name, ctx=ast.Load()),
                            args=[inner], keywords=[])
        if isinstance(value, tuple) and not is_namedtuple(value):
            return ast.Tuple(elts=[self.render_const(Const(v), hint) for v in value],
                             ctx=ast.Load())
        if isinstance(value, list) and value and all(
                isinstance(v, (int, bool, np.integer, np.bool_)) for v in value):
            return ast.Name(self.hidden_arg(np.asarray(value), hint), ast.Load())
        if isinstance(value, list) and all(isinstance(v, _LITERAL_TYPES) for v in value):
            return ast.List(elts=[self.render_const(Const(v), hint) for v in value],
                            ctx=ast.Load())
        if isinstance(value, range):
            return range_node(value.start, value.stop, value.step)
        if isinstance(value, slice):
            return ast.Call(func=ast.Name("slice", ast.Load()),
                            args=[self.render_const(Const(v), hint)
                                  for v in (value.start, value.stop, value.step)], keywords=[])
        if isinstance(value, np.ndarray):
            return ast.Name(self.hidden_arg(value, hint), ast.Load())
        if value is Ellipsis:
            return ast.Constant(Ellipsis)
        if callable(value) or isinstance(value, pytypes.ModuleType) or isinstance(value, type):
            return self.global_name(value, getattr(value, "__name__", hint))
        if isinstance(value, runtime.Unbound):
            self.fail_unbound(value)
        self.fail(f"the value {short(value)} of type {type(value).__name__} cannot be "
                  "used in compiled code")

    def spelled_by_globals(self, node):
        """Whether ``node`` (``np.linalg.norm``) reads only module globals
        that mean the same object here."""
        names = [n.id for n in ast.walk(node) if isinstance(n, ast.Name)]
        values = []
        for n in names:
            if n in self.env:
                return False
            if n in self.globals:
                values.append(self.globals[n])
            elif hasattr(builtins, n):
                values.append(getattr(builtins, n))
            else:
                return False
        return all(self.bind(n, v) for n, v in zip(names, values))

    def bind(self, name, obj):
        if name in self.bound and self.bound[name] is not obj:
            return False
        self.bound[name] = obj
        return True

    def global_name(self, obj, hint):
        for name, bound in self.bound.items():
            if bound is obj:
                return ast.Name(name, ast.Load())
        if obj is np:
            hint = "np"
        for name, value in self.globals.items():
            if value is obj and name not in self.env and self.bind(name, obj):
                return ast.Name(name, ast.Load())
        name = hint if hint not in self.taken and hint not in self.bound else self.fresh(hint)
        self.taken.add(name)
        self.bind(name, obj)
        return ast.Name(name, ast.Load())

    def hidden_arg(self, value, hint):
        if id(value) in self.hidden_ids:
            return self.hidden_ids[id(value)]
        name = self.fresh(hint if hint != "value" else "const")
        self.hidden.append((name, value))
        self.hidden_ids[id(value)] = name
        return name

    def outside_array(self, value, hint):
        """An array the function reads from outside (a global, a closure
        cell, an attribute, an item of a global container) as the run-time
        value it is: passed to every call, never folded into the code, so
        that a write into it between calls is seen as eager code sees it.
        Its rank is known (the array object is fixed while the code is:
        ``canonical.deps_current``)."""
        name = self.hidden_arg(value, hint)
        self.ranks[name] = value.ndim
        return Dyn(name)

    def materialize(self, av, hint="v"):
        """``av`` as something a container may hold: an Expr is bound to a
        fresh variable (so it is computed once), named after the tape an
        item comes from when no better hint is given.  A slice stays as it
        is: it only ever stands in an index (``x[:, i:]``'s tuple), and
        ``v = i:`` is not Python."""
        if isinstance(av, Expr) and not isinstance(av.node, ast.Slice):
            if hint == "v":
                hint = popped_from(av.node) or hint
            name = self.fresh(hint)
            self.assign(name, av.node)
            return Dyn(name)
        return av
