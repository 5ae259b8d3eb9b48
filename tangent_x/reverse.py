"""Reverse mode: canonical function -> forward pass + backward pass.

The forward pass is the canonical equations as they are (every
intermediate keeps its own name, so nothing needs a tape in straight-line
code).  The backward pass visits the equations in reverse and splices each
primitive's adjoint template, accumulating one ``<name>_bar`` per variable.
Only variables that both depend on a differentiated input and influence
the output get an adjoint (activity analysis), so no zero adjoints are
ever built.
"""
import gast

from . import ir, primitives as P
from .emit import Block
from .errors import TransformError
from .rules import ADJOINT, load_all
from .simplify import fold_ones
from .templates import Template


def _activity(fn, wrt, value):
    active = set(wrt)
    for eqn in fn.eqns:
        # An opaque call (no rule known) counts as differentiable, so that a
        # gradient needing it fails loudly instead of silently being zero.
        if (eqn.prim.differentiable or eqn.prim.kind == "opaque") and eqn.reads() & active:
            active.update(eqn.outs)
    needed = {value}
    for eqn in reversed(fn.eqns):
        if set(eqn.outs) & needed and (eqn.prim.differentiable or eqn.prim.kind == "opaque"):
            needed |= eqn.reads() & active
    return active & needed


def _is_scalar_const(atom):
    return isinstance(atom, gast.Constant) or (
        isinstance(atom, gast.Attribute) and ir.is_name(atom.value, "np"))


class Reverse:
    def __init__(self, fn, namer, wrt, value, seed):
        load_all()
        self.fn = fn
        self.namer = namer
        self.bars = {}
        self.kinds = _array_kinds(fn)
        self.differentiated = _activity(fn, wrt, value)
        self.bars[value] = seed

    def accumulate(self, var, expr, stmts):
        if var not in self.bars or not ir.is_name(self.bars[var]):
            bar = self.namer.fresh(f"{var}_bar")
            self.bars[var] = ir.name(bar)
            stmts.append(_assign(bar, expr))
            return
        bar = self.bars[var]
        if var in self.kinds:
            total = gast.BinOp(left=ir.name(bar.id), op=gast.Add(), right=expr)
        else:
            total = gast.Call(func=ir.name("tree_add"), args=[ir.name(bar.id), expr],
                              keywords=[])
        stmts.append(_assign(bar.id, total))

    def backward(self):
        blocks = []
        for eqn in reversed(self.fn.eqns):
            if eqn.out not in self.bars or eqn.out not in self.differentiated:
                continue
            blocks.append(self.adjoint_of(eqn))
        return blocks

    def adjoint_of(self, eqn):
        rule = ADJOINT.get(eqn.prim.name)
        if rule is None:
            label = eqn.params.get("label", eqn.prim.name)
            raise TransformError(f"no derivative rule for {label}", eqn.origin,
                                 "use NumPy functions tangent_x knows, wrap the value in "
                                 "stop_gradient, or give the function a custom_vjp")
        g = self.bars[eqn.out]
        positions = _arg_positions(eqn)

        def wanted(pos):
            atom = positions.get(pos)
            return ir.is_name(atom) and atom.id in self.differentiated

        if isinstance(rule, Template):
            stmts, outputs = rule.instantiate(g, ir.name(eqn.out), eqn, self.namer, wanted)
        else:
            stmts, outputs = [], {p: e for p, e in rule(g, eqn).items() if wanted(p)}
        stmts = [fold_ones(s) for s in stmts]
        for pos, expr in outputs.items():
            var = positions[pos].id
            expr = fold_ones(expr)
            if eqn.prim.broadcasting and not all(
                    _is_scalar_const(a) for p, a in positions.items() if p != pos):
                expr = gast.Call(func=ir.name("unbroadcast"), args=[expr, ir.name(var)],
                                 keywords=[])
            self.accumulate(var, expr, stmts)
        origin = eqn.origin
        comment = f"adjoint of {origin.short()}: {origin.text}" if origin else None
        return Block(stmts, origin, comment)


def _arg_positions(eqn):
    positions = dict(enumerate(eqn.args))
    positions.update({("kw", k): v for k, v in eqn.kwargs.items()})
    return positions


def _array_kinds(fn):
    """Variables known to hold arrays (their cotangents add with ``+``).

    A variable is an array if an array primitive produced or consumed it;
    the rest (containers from packing or indexing into pytrees) accumulate
    with ``tree_add``.
    """
    structural = {"getitem", "getattr", "tuple", "list", "dict", "namedtuple",
                  "assign", "opaque"}
    packs = {"tuple", "list", "dict", "namedtuple"}
    kinds, containers = set(), set()
    for eqn in fn.eqns:
        if eqn.prim.name in packs or eqn.params.get("container"):
            containers.update(eqn.outs)
            continue
        if eqn.prim.name not in structural:
            kinds.update(eqn.outs)
            kinds.update(a.id for a in eqn.args if ir.is_name(a))
        elif eqn.prim.name == "getitem":
            kinds.update(a.id for a in eqn.args[1:] if ir.is_name(a))
    return kinds - containers


def _assign(name_, value):
    return gast.Assign(targets=[ir.name(name_, gast.Store())], value=value, type_comment=None)


def forward_blocks(fn):
    """The canonical equations as Python, one block per user line."""
    blocks = []
    for eqn in fn.eqns:
        stmts = ir.spell(eqn)
        if blocks and blocks[-1].origin is eqn.origin:
            blocks[-1].stmts.extend(stmts)
        else:
            blocks.append(Block(stmts, eqn.origin))
    return blocks


def split_output(fn, namer, has_aux):
    """The atoms of the differentiated value and of the aux output."""
    result = fn.result
    if not has_aux:
        return result, None
    for eqn in fn.eqns:
        if eqn.out == getattr(result, "id", None) and eqn.prim.name in ("tuple", "list") \
                and len(eqn.args) == 2:
            return eqn.args[0], eqn.args[1]
    if not ir.is_name(result):
        raise TransformError("has_aux=True needs the function to return a pair "
                             "(value, aux)", fn.origin, "return value, aux")
    items = []
    for i, base in enumerate(("value", "aux")):
        out = namer.fresh(base)
        fn.eqns.append(ir.Eqn([out], P.get("getitem"), [result, ir.const(i)],
                              origin=fn.origin))
        items.append(ir.name(out))
    return items[0], items[1]


def vjp_blocks(fn, namer, wrt, has_aux, seed_name=None):
    """Forward and backward blocks plus (value, aux, cotangents of ``wrt``).

    With ``seed_name`` None the cotangent of the output is the constant 1.0
    (grad); otherwise it is the parameter called ``seed_name`` (vjp).
    """
    value, aux = split_output(fn, namer, has_aux)
    blocks = forward_blocks(fn)
    if not ir.is_name(value):
        return blocks, value, aux, [None for _ in wrt]
    if seed_name is None:
        blocks.append(Block([gast.Expr(value=gast.Call(
            func=ir.name("check_grad_output"), args=[ir.name(value.id)], keywords=[]))],
            fn.origin, "grad is defined for scalar outputs only"))
        seed = ir.const(1.0)
    else:
        seed = ir.name(seed_name)
    rev = Reverse(fn, namer, wrt, value.id, seed)
    blocks += rev.backward()
    grads = []
    for w in wrt:
        bar = rev.bars.get(w)
        grads.append(bar if ir.is_name(bar) else bar)
    return blocks, value, aux, grads
