"""``tx.lax`` control flow inside a transformed function: ``fori_loop``,
``while_loop``, ``cond``, ``switch``, ``scan`` (and vmap's ``map_lanes``)
become the same compound equations as Python's loops and ifs
(``branches``, ``loops``), their function arguments inlined into the bodies.
Mixed into ``converter.Converter``."""
import inspect

import gast

from .. import lax
from ..core import ir, primitives as P
from ..runtime.lanes import map_lanes
from . import parser
from .scope import LocalFunction, Static


class LaxCalls:
    """``tx.lax.fori_loop(...)`` and friends inside a transformed function
    become the same compound equations as Python loops and ifs; their
    function arguments are inlined into the bodies."""

    def lax_handler(self, obj):
        table = {lax.fori_loop: self.lax_fori_loop, lax.while_loop: self.lax_while_loop,
                 lax.cond: self.lax_cond, lax.switch: self.lax_switch,
                 lax.scan: self.lax_scan, map_lanes: self.map_lanes_loop}
        try:
            return table.get(obj)
        except TypeError:
            return None

    def apply(self, scope, fn, args, node, target=None):
        """Call a transform-time function value with atom arguments."""
        obj = fn.obj if isinstance(fn, Static) else None
        if obj is None:
            raise self.error("expected a function here", node, "pass a def or a lambda",
                             scope)
        if isinstance(obj, LocalFunction):
            return self.inline(obj.node, obj.scope.parsed, obj.scope, args, {}, target,
                               scope, node)
        prim = P.lookup(obj)
        if prim is not None:
            return self.emit(prim, args, target=target, base=prim.name.split(".")[-1])
        parsed = parser.parse(obj)
        return self.inline(parsed.node, parsed, None, args, {}, target, scope, node)

    def _lax_args(self, scope, node, fn):
        """Bind a lax call's argument nodes to ``fn``'s parameters, as Python
        would bind the call (a missing or unknown argument is the user's
        located error): name -> node, ``*operands`` -> a tuple of nodes."""
        for a in node.args:
            if isinstance(a, gast.Starred):
                raise self.error(f"*args in a call of lax.{fn.__name__} is not supported",
                                 a, "pass the arguments one by one", scope)
        if any(k.arg is None for k in node.keywords):
            raise self.error(f"**kwargs in a call of lax.{fn.__name__} is not supported",
                             node, "pass keyword arguments one by one", scope)
        signature = inspect.signature(fn)
        unknown = [k.arg for k in node.keywords if k.arg not in signature.parameters]
        try:
            if unknown:
                raise TypeError(f"got an unexpected keyword argument '{unknown[0]}'")
            bound = signature.bind(*node.args, **{k.arg: k.value for k in node.keywords})
        except TypeError as exc:
            raise self.error(f"lax.{fn.__name__}{signature}: {exc}", node,
                             "pass the arguments its signature names", scope) from None
        return dict(bound.arguments)

    def lax_fori_loop(self, scope, node, target):
        a = self._lax_args(scope, node, lax.fori_loop)
        lower, upper = self.atom(scope, a["lower"]), self.atom(scope, a["upper"])
        body_fun = self.expr(scope, a["body_fun"])
        init = self.atom(scope, a["init_val"])
        carry = self.namer.fresh(target or "carry")
        index = self.namer.fresh("i")
        eqns, result = self.pure_loop_body(scope, node, "body", lambda: self.nested(
            self.apply, scope, body_fun, [ir.name(index), ir.name(carry)], node))
        self.eqns.append(ir.Eqn([carry], P.get("for_range"),
                                [lower, upper, ir.const(1), init],
                                params={"carry": (carry,), "index": index,
                                        "body": ir.Body(eqns, [result])},
                                origin=self.origin))
        return ir.name(carry)

    def map_lanes_loop(self, scope, node, target):
        """vmap's per-example fallback ``map_lanes(fn, batch_size, *lanes)``,
        in code transformed again (``grad(vmap(f))``): the loop it runs, one
        step per example whose body is ``fn`` inlined (``scan``'s machinery:
        step ``k`` of every lane, results appended, stacked after the loop),
        so the transforms differentiate (or batch) ``fn`` like any code."""
        if node.keywords or len(node.args) < 2:
            raise self.error("map_lanes takes (fn, batch_size, *lanes)", node, None, scope)
        fn = self.expr(scope, node.args[0])
        size = self.atom(scope, node.args[1])
        lanes = [self.atom(scope, a) for a in node.args[2:]]
        empty = self.emit(P.get("list"), [], base="ys")
        outputs = self.namer.fresh("ys")
        index = self.namer.fresh("k")

        def body():
            k = ir.name(index)
            examples = [self.emit(P.get("scan_slice"), [lane, k], base="example")
                        for lane in lanes]
            out = self.apply(scope, fn, examples, node)
            return [self.emit(P.get("appended"), [ir.name(outputs), out], base="ys")]

        eqns, results = self.nested(body, scope=scope)
        self.eqns.append(ir.Eqn([outputs], P.get("for_range"),
                                [ir.const(0), size, ir.const(1), empty],
                                params={"carry": (outputs,), "index": index,
                                        "body": ir.Body(eqns, results)},
                                origin=self.origin))
        return self.emit(P.get("stack_steps"), [ir.name(outputs), ir.const(False)],
                         target=target, base="lanes")

    def lax_while_loop(self, scope, node, target):
        a = self._lax_args(scope, node, lax.while_loop)
        cond_fun, body_fun = self.expr(scope, a["cond_fun"]), self.expr(scope, a["body_fun"])
        init = self.atom(scope, a["init_val"])
        carry = self.namer.fresh(target or "carry")
        cond_eqns, pred = self.pure_loop_body(scope, node, "test", lambda: self.nested(
            self.apply, scope, cond_fun, [ir.name(carry)], node))
        eqns, result = self.pure_loop_body(scope, node, "body", lambda: self.nested(
            self.apply, scope, body_fun, [ir.name(carry)], node))
        self.eqns.append(ir.Eqn([carry], P.get("while"), [init], params={
            "carry": (carry,), "cond": ir.Body(cond_eqns, [pred]),
            "body": ir.Body(eqns, [result])}, origin=self.origin))
        return ir.name(carry)

    def _operands(self, scope, a):
        """``*operands`` (or JAX's older ``operand=``) of a bound cond/switch."""
        nodes = list(a.get("operands", ()))
        if "operand" in a:
            nodes.append(a["operand"])
        return [self.atom(scope, x) for x in nodes]

    def lax_cond(self, scope, node, target):
        a = self._lax_args(scope, node, lax.cond)
        pred = self.atom(scope, a["pred"])
        funs = [self.expr(scope, a["true_fun"]), self.expr(scope, a["false_fun"])]
        ops = self._operands(scope, a)
        return self._branches(scope, node, pred, funs, ops, target)

    def _branches(self, scope, node, pred, funs, ops, target):
        if isinstance(pred, gast.Constant) and isinstance(pred.value, (bool, int)):
            # a test known now: the branch it takes, as an ``if`` on it
            # (no join: what the branch gives is followed as it is)
            return self.apply(scope, funs[0 if pred.value else 1], list(ops), node)
        bodies, results = self.pure_branches(scope, node, [
            lambda fn=fn: self.nested(self.apply, scope, fn, list(ops), node) for fn in funs])
        out = self.namer.fresh(target or "branch_value")
        self.emit_cond(pred, [out], [[r] for r in results], bodies, self.origin)
        return ir.name(out)

    def lax_switch(self, scope, node, target):
        """``switch`` clamps the index (as JAX) and picks among the branches."""
        a = self._lax_args(scope, node, lax.switch)
        index = self.atom(scope, a["index"])
        branch_node = a["branches"]
        if isinstance(branch_node, (gast.List, gast.Tuple)):
            funs = [self.expr(scope, e) for e in branch_node.elts]
        else:
            value = self.expr(scope, branch_node)
            obj = value.obj if isinstance(value, Static) else None
            env = getattr(self, "env", {})
            if obj is None and ir.is_name(value) and value.id in env:
                obj = env[value.id]
            if not isinstance(obj, (list, tuple)):
                raise self.error("lax.switch needs its branches as a list of functions "
                                 "known when transforming", node,
                                 "write the list literally: switch(i, [f, g], x)", scope)
            funs = [Static(f) for f in obj]
        ops = self._operands(scope, a)
        last = len(funs) - 1
        clamped = self.emit(P.get("clip"), [index, ir.const(0), ir.const(last)],
                            base="branch_index")
        # every branch's test before the first branch: a value a branch
        # passes through is then followed by joins on tests all visible
        # here (``rejoins``)
        preds = [self.emit(P.get("eq"), [clamped, ir.const(k)], base=f"is_branch_{k}")
                 for k in range(last)]
        return self._switch(scope, node, preds, funs, ops, 0, target)

    def _switch(self, scope, node, preds, funs, ops, k, target):
        if k == len(funs) - 1:
            return self.apply(scope, funs[k], list(ops), node)
        pred = preds[k]
        if isinstance(pred, gast.Constant) and isinstance(pred.value, (bool, int)):
            if pred.value:       # an index known now: its branch only
                return self.apply(scope, funs[k], list(ops), node)
            return self._switch(scope, node, preds, funs, ops, k + 1, target)
        bodies, results = self.pure_branches(scope, node, [
            lambda: self.nested(self.apply, scope, funs[k], list(ops), node),
            lambda: self.nested(self._switch, scope, node, preds, funs, ops, k + 1, None)])
        out = self.namer.fresh(target or "branch_value")
        self.emit_cond(pred, [out], [[r] for r in results], bodies, self.origin)
        return ir.name(out)

    def lax_scan(self, scope, node, target):
        """``scan(f, init, xs)``: a loop whose carry is ``(carry, ys so far)``;
        the per-step outputs are stacked after it."""
        a = self._lax_args(scope, node, lax.scan)
        f = self.expr(scope, a["f"])
        init = self.atom(scope, a["init"])
        xs = self.atom(scope, a["xs"]) if "xs" in a else ir.const(None)
        length = self.atom(scope, a["length"]) if "length" in a else ir.const(None)
        reverse = self.atom(scope, a["reverse"]) if "reverse" in a else ir.const(False)
        if not isinstance(reverse, gast.Constant):
            raise self.error("scan's reverse= must be a constant True/False", node,
                             None, scope)
        steps = self.emit(P.get("scan_length"), [xs, length], base="steps")
        empty = self.emit(P.get("list"), [], base="ys")
        carry = self.namer.fresh("carry")
        outputs = self.namer.fresh("ys")
        index = self.namer.fresh("k")

        def body():
            k = ir.name(index)
            if reverse.value:
                last = self.emit(P.get("sub"), [steps, ir.const(1)], base="last")
                k = self.emit(P.get("sub"), [last, k], base="step")
            x = self.emit(P.get("scan_slice"), [xs, k], base="x")
            out = self.apply(scope, f, [ir.name(carry), x], node)
            new_carry = self.emit(P.get("getitem"), [out, ir.const(0)], base="carry")
            y = self.emit(P.get("getitem"), [out, ir.const(1)], base="y")
            ys = self.emit(P.get("appended"), [ir.name(outputs), y], base="ys")
            return [new_carry, ys]

        eqns, results = self.pure_loop_body(scope, node, "body",
                                            lambda: self.nested(body, scope=scope))
        self.eqns.append(ir.Eqn([carry, outputs], P.get("for_range"),
                                [ir.const(0), steps, ir.const(1), init, empty],
                                params={"carry": (carry, outputs), "index": index,
                                        "body": ir.Body(eqns, results)},
                                origin=self.origin))
        stacked = self.emit(P.get("stack_steps"), [ir.name(outputs), reverse], base="ys")
        return self.emit(P.get("tuple"), [ir.name(carry), stacked], target=target,
                         base="scanned")
