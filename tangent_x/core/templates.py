"""Rule templates: tiny Python functions whose body is spliced into generated code.

A template reads like the math::

    @adjoint(np.tanh)
    def _(g, ans, x):
        x_bar = g * (1.0 - ans * ans)

``g`` is the incoming cotangent (or tangent), ``ans`` the primitive's
result, the remaining parameters the primitive's arguments by position or
keyword; keyword-only parameters receive the equation's static parameters.
Assignments to ``<param>_bar`` (``<param>_dot`` for tangents) are the
rule's outputs; any other assigned name is a local and gets a fresh name.
A keyword argument in the template that passes a parameter the user left at
its default is dropped, so defaults never clutter generated code.
"""
import inspect
import textwrap

import gast

from . import ir
from .builders import assign
from .naming import ADJOINT_SUFFIX, tangent_name


class Template:
    """A rule's template, parsed when a transform first reads it: of the ~200
    templates registered when the rules load, a program uses a few (parsing
    them all took ~0.2 s of every process's first transform)."""

    _PARSED = frozenset({"params", "star", "kwonly", "defaults", "body"})

    def __init__(self, fn, suffix=ADJOINT_SUFFIX):
        self.fn = fn
        self.suffix = suffix

    def __getattr__(self, attr):
        # only called for attributes not set yet: the parsed ones, once
        if attr not in Template._PARSED or "fn" not in self.__dict__:
            raise AttributeError(attr)
        self._parse()
        return self.__dict__[attr]

    def _parse(self):
        fn = self.fn
        source = textwrap.dedent(inspect.getsource(fn))
        node = gast.parse(source).body[0]
        a = node.args
        self.params = [p.id for p in a.posonlyargs + a.args]
        self.star = a.vararg.id if a.vararg else None
        self.kwonly = [p.id for p in a.kwonlyargs]
        sig = inspect.signature(fn)
        self.defaults = {k: p.default for k, p in sig.parameters.items()
                         if p.default is not inspect.Parameter.empty}
        self.body = node.body
        if self.body and isinstance(self.body[0], gast.Expr) and \
                isinstance(self.body[0].value, gast.Constant):
            self.body = self.body[1:]   # docstring

    lead = 2    # leading parameters that are not the primitive's: g, ans

    def bind(self, g, ans, eqn):
        """Map template parameter names to atoms; the set of defaulted ones."""
        mapping = dict(zip(self.params[:self.lead], [g, ans][2 - self.lead:]))
        defaulted = set()
        arg_params = self.params[self.lead:]
        args = list(eqn.args)
        positions = {}
        for i, p in enumerate(arg_params):
            if i < len(args):
                mapping[p] = args[i]
                positions[p] = i
            elif p in eqn.kwargs:
                mapping[p] = eqn.kwargs[p]
                positions[p] = ("kw", p)
            elif p in self.defaults:
                mapping[p] = ir.const(self.defaults[p])
                defaulted.add(p)
            else:
                raise TypeError(f"template {self.fn.__qualname__}: missing argument {p}")
        if self.star:
            rest = args[len(arg_params):]
            mapping[self.star] = gast.Tuple(elts=rest, ctx=gast.Load())
            positions[self.star] = ("star", len(arg_params), len(rest))
        for p in self.kwonly:
            if p in eqn.kwargs:
                mapping[p] = eqn.kwargs[p]
            elif p in eqn.params:
                mapping[p] = _as_atom(eqn.params[p])
            elif p in self.defaults:
                mapping[p] = ir.const(self.defaults[p])
                defaulted.add(p)
        return mapping, defaulted, positions

    def instantiate(self, g, ans, eqn, namer, wanted):
        """Splice the template for ``eqn``.

        ``wanted(position)`` says whether an argument needs a result.
        Returns (statements, outputs) where outputs maps an argument position
        (an int, ("kw", name) or ("star", i)) to an expression.
        """
        mapping, defaulted, positions = self.bind(g, ans, eqn)
        outputs_of = {p + self.suffix: p for p in positions}
        renames = {}
        stmts, outputs = [], {}
        for stmt in self.body:
            stmt = _Substituter(mapping, defaulted, renames).visit(ir.clone(stmt))
            target = stmt.targets[0] if isinstance(stmt, gast.Assign) else None
            tid = target.id if isinstance(target, gast.Name) else None
            if tid in outputs_of:
                p = outputs_of[tid]
                pos = positions[p]
                if isinstance(pos, tuple) and pos[0] == "star":
                    _, first, count = pos
                    holder = stmt.value
                    if not all(ir.is_name(e) or isinstance(e, gast.Constant)
                               for e in getattr(holder, "elts", [None])):
                        if any(wanted(first + k) for k in range(count)):
                            tmp = namer.fresh(tid)
                            stmts.append(assign(tmp, holder))
                            holder = ir.name(tmp)
                    for k in range(count):
                        if wanted(first + k):
                            item = (holder.elts[k] if isinstance(holder, (gast.Tuple, gast.List))
                                    else gast.Subscript(value=holder, slice=ir.const(k),
                                                        ctx=gast.Load()))
                            outputs[first + k] = item
                elif wanted(pos):
                    outputs[pos] = stmt.value
                continue
            if isinstance(stmt, gast.Assign) and tid is not None:
                new = namer.fresh(tid)
                renames[tid] = new
                stmt.targets[0] = ir.name(new, gast.Store())
            stmts.append(stmt)
        return stmts, outputs


def _as_atom(value):
    if isinstance(value, gast.AST):
        return value
    if isinstance(value, tuple):
        return gast.Tuple(elts=[_as_atom(v) for v in value], ctx=gast.Load())
    return ir.const(value)


class _Substituter(gast.NodeTransformer):
    def __init__(self, mapping, defaulted, renames):
        self.mapping = mapping
        self.defaulted = defaulted
        self.renames = renames

    def visit_Call(self, node):
        node.keywords = [k for k in node.keywords
                         if not (isinstance(k.value, gast.Name)
                                 and k.value.id in self.defaulted)]
        self.generic_visit(node)
        return node

    def visit_Name(self, node):
        if isinstance(node.ctx, gast.Load):
            if node.id in self.mapping:
                return ir.clone(self.mapping[node.id])
            if node.id in self.renames:
                return ir.name(self.renames[node.id])
        return node


ZERO = "__tangent_x_zero__"


class TangentTemplate(Template):
    """A forward-mode template: ``def _(ans, x, y): ans_dot = x_dot * y + y_dot * x``.

    ``<param>_dot`` is the tangent of that argument; ``ans_dot`` must be a
    sum of terms each linear in one argument's tangent, so the terms of
    arguments without a tangent are simply left out (no zeros are built).
    """

    lead = 1

    def instantiate_tangent(self, ans, eqn, namer, dot_of):
        """(statements, tangent expression or None).  ``dot_of(atom)`` is the
        tangent atom of an argument, or None when it has none."""
        mapping, defaulted, positions = self.bind(None, ans, eqn)
        for p in positions:
            if isinstance(positions[p], tuple) and positions[p][0] == "star":
                continue
            dot = dot_of(mapping[p])
            mapping[tangent_name(p)] = dot if dot is not None else ir.name(ZERO)
        for p in self.params[self.lead:] + self.kwonly:
            mapping.setdefault(tangent_name(p), ir.name(ZERO))   # not passed: no tangent
        renames = {}
        stmts, result = [], None
        for stmt in self.body:
            stmt = _Substituter(mapping, defaulted, renames).visit(ir.clone(stmt))
            target = stmt.targets[0] if isinstance(stmt, gast.Assign) else None
            tid = target.id if isinstance(target, gast.Name) else None
            if tid == tangent_name("ans"):
                result = _drop_zero_terms(stmt.value)
                continue
            if tid is not None:
                if ZERO in ir.names_in(stmt.value):
                    renames[tid] = ZERO
                    continue
                new = namer.fresh(tid)
                renames[tid] = new
                stmt.targets[0] = ir.name(new, gast.Store())
            stmts.append(stmt)
        return stmts, result


def _terms(node, sign=1):
    if isinstance(node, gast.BinOp) and isinstance(node.op, (gast.Add, gast.Sub)):
        right_sign = sign if isinstance(node.op, gast.Add) else -sign
        return _terms(node.left, sign) + _terms(node.right, right_sign)
    return [(sign, node)]


def _drop_zero_terms(expr):
    kept = [(s, t) for s, t in _terms(expr) if ZERO not in ir.names_in(t)]
    if not kept:
        return None
    sign, total = kept[0]
    if sign < 0:
        total = gast.UnaryOp(op=gast.USub(), operand=total)
    for s, t in kept[1:]:
        total = gast.BinOp(left=total, op=gast.Add() if s > 0 else gast.Sub(), right=t)
    return total
