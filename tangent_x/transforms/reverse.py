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

from ..core import ir, primitives as P
from ..core.builders import assign, call
from ..core.quoted import quote
from ..analysis.activity import activity, loop_active_carries
from ..analysis.cotangent_kinds import array_kinds
from ..analysis.defuse import bound_names
from ..core import lower
from ..core.lower import Block
from ..errors import TransformError
from ..runtime import aux_pair_message
from ..rules import ADJOINT, load_all
from ..core.fold import fold_ones
from ..core.templates import Template


def _is_scalar_const(atom):
    return isinstance(atom, gast.Constant) or (
        isinstance(atom, gast.Attribute) and ir.is_name(atom.value, "np"))


def _through_conds(eqn):
    """Equations inside a cond's branches, recursively through nested conds."""
    for body in eqn.params["branches"]:
        for e in body.eqns:
            yield e
            if e.prim.kind == "cond":
                yield from _through_conds(e)


def _is_call(node, name_):
    return isinstance(node, gast.Call) and ir.is_name(node.func, name_)


def _zeros_like(var):
    return call("zeros_like", ir.name(var))


class Reverse:
    """The backward pass of one list of equations (a function or a body)."""

    def __init__(self, eqns, namer, differentiated, bars, kinds, tapes):
        load_all()
        self.eqns = eqns
        self.namer = namer
        self.differentiated = differentiated
        self.bars = bars
        self.kinds = kinds
        self.tapes = tapes            # id(loop eqn) -> {carry: tape name}
        self.owned = set()            # bar names holding zeros allocated here
        # names holding ``unbound(...)`` placeholders (a loop's carry that
        # a turn binds before it reads it): no tape counts turns by them
        self.unbound = {out for eqn in eqns if eqn.prim.name == "unbound" for out in eqn.outs}
        # Loops (and custom_vjp calls) at this level, or inside its ifs, are
        # taped by this level's forward pass; loops inside loops are taped
        # when their enclosing loop's body is replayed.
        self._level = {}
        for eqn in eqns:
            self._level[id(eqn)] = None
            if eqn.prim.kind == "cond":
                for e in _through_conds(eqn):
                    self._level[id(e)] = eqn

    @classmethod
    def of_function(cls, fn, namer, wrt, value, seed):
        differentiated = activity(fn.eqns, wrt, {value})
        rev = cls(fn.eqns, namer, differentiated, {value: seed}, array_kinds(fn.eqns), {})
        return rev

    def tape_names(self, eqn):
        """Tapes for loops of this level whose outputs get a gradient (and
        the residuals of custom_vjp calls)."""
        if id(eqn) not in self._level:
            return None
        top = self._level[id(eqn)] or eqn
        if not set(top.outs) & self.differentiated:
            return None
        if eqn.prim.name == "custom_vjp_call":
            if id(eqn) not in self.tapes:
                self.tapes[id(eqn)] = self.namer.fresh(f"{eqn.out}_residuals")
            return self.tapes[id(eqn)]
        if eqn.prim.kind not in ("while", "for_range"):
            return None
        if id(eqn) not in self.tapes:
            self.tapes[id(eqn)] = {c: self.namer.tape(c)
                                   for c in eqn.params["carry"]}
        return self.tapes[id(eqn)]

    # --- accumulation -----------------------------------------------------

    def accumulate(self, var, expr, stmts):
        bar = self.bars.get(var)
        if bar is None:
            name_ = self.namer.adjoint(var)
            self.bars[var] = ir.name(name_)
            stmts.append(assign(name_, expr))
            return
        if not ir.is_name(bar):       # the seed constant
            name_ = self.namer.adjoint(var)
            self.bars[var] = ir.name(name_)
            stmts.append(assign(name_, gast.BinOp(left=bar, op=gast.Add(), right=expr)))
            return
        if bar.id in self.owned and _is_call(expr, "unindex") and \
                ir.is_name(expr.args[0], var):
            # An accumulator this pass allocated: add the one item in place.
            total = call("add_at", ir.name(bar.id), expr.args[1], expr.args[2])
        elif var in self.kinds:
            total = gast.BinOp(left=ir.name(bar.id), op=gast.Add(), right=expr)
        else:
            total = call("tree_add", ir.name(bar.id), expr)
        stmts.append(assign(bar.id, total))

    def materialize(self, names, stmts):
        """Give each of ``names`` a bar variable (zeros if none yet), so that
        code inside a branch or a loop can accumulate into it."""
        for v in sorted(names):
            bar = self.bars.get(v)
            if bar is None:
                name_ = self.namer.adjoint(v)
                stmts.append(assign(name_, _zeros_like(v)))
                self.bars[v] = ir.name(name_)
                self.owned.add(name_)
            elif not ir.is_name(bar):
                name_ = self.namer.adjoint(v)
                stmts.append(assign(name_, bar))
                self.bars[v] = ir.name(name_)

    # --- the backward pass --------------------------------------------------

    def backward(self):
        """Top level: one Block per equation, with a comment for its user line."""
        blocks = []
        for eqn in reversed(self.eqns):
            stmts = self.adjoint_stmts(eqn)
            if stmts is None:
                continue
            origin = eqn.origin
            comment = f"adjoint of {origin.short()}: {origin.text}" if origin else None
            blocks.append(Block(stmts, origin, comment))
        return blocks

    def backward_stmts(self, eqns):
        stmts = []
        for eqn in reversed(eqns):
            stmts += self.adjoint_stmts(eqn) or []
        return stmts

    def adjoint_stmts(self, eqn):
        outs = set(eqn.outs)
        if not outs & set(self.bars) or not outs & self.differentiated:
            return None
        kind = eqn.prim.kind
        if kind == "cond":
            return self.adjoint_cond(eqn)
        if kind in ("while", "for_range"):
            return self.adjoint_loop(eqn)
        return self.adjoint_of(eqn)

    def adjoint_of(self, eqn):
        name = eqn.prim.name
        if name == "index_set" and eqn.params.get("container"):
            # a list's or dict's item update is ``with_item`` (``ir.spell``),
            # whose cotangent may hold None for items nothing read
            name = "with_item"
        rule = ADJOINT.get(name)
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
            made = rule(g, eqn, self)
            stmts, outputs = made if isinstance(made, tuple) else ([], made)
            outputs = {p: e for p, e in outputs.items() if wanted(p)}
        # (``1.0 * name`` stays for the peephole pass, which knows which
        # names may hold ints)
        stmts = [fold_ones(s, ints=None) for s in stmts]
        for pos, expr in outputs.items():
            var = positions[pos].id
            expr = fold_ones(expr, ints=None)
            if eqn.prim.broadcasting and ir.is_name(g) and not all(
                    _is_scalar_const(a) for p, a in positions.items() if p != pos):
                expr = call("unbroadcast", expr, ir.name(var))
            self.accumulate(var, expr, stmts)
        return stmts

    # --- control flow -------------------------------------------------------

    def sub(self, body, seeds, extra_wrt=()):
        """The adjoint of a nested body: seeds [(result atom, bar atom)]."""
        roots = {r.id for r, _ in seeds if ir.is_name(r)}
        wrt = set(extra_wrt) | self.differentiated
        differentiated = activity(body.eqns, wrt, roots)
        bars = {v: b for v, b in self.bars.items()
                if ir.is_name(b) and v not in extra_wrt}   # carry names mean carry-ins here
        inner = Reverse(body.eqns, self.namer, differentiated, bars,
                        self.kinds, self.tapes)
        inner.owned = self.owned
        inner.unbound |= self.unbound
        stmts = []
        for r, bar in seeds:
            if ir.is_name(r) and r.id in differentiated:
                inner.accumulate(r.id, bar, stmts)
        stmts += inner.backward_stmts(body.eqns)
        return stmts, inner

    def _outer_targets(self, eqn, bodies):
        """Outer variables a body's adjoint may add to."""
        names = set()
        for body in bodies:
            names |= body.free_reads()
            for r in body.results:
                names |= ir.names_in(r)
        names -= set(eqn.params.get("carry", ()))
        return names & self.differentiated

    def adjoint_cond(self, eqn):
        """``if pred`` again, each branch running its own adjoint."""
        branches = eqn.params["branches"]
        stmts = []
        self.materialize(self._outer_targets(eqn, branches), stmts)
        bodies = []
        for body in branches:
            seeds = [(r, self.bars[o]) for o, r in zip(eqn.outs, body.results)
                     if o in self.bars]
            inner_stmts, _ = self.sub(body, seeds)
            bodies.append(inner_stmts)
        if not any(bodies):
            return stmts
        if not bodies[0]:
            return stmts + lower.IF_NOT.fill(test=eqn.args[0], body=bodies[1])
        return stmts + lower.IF.fill(test=eqn.args[0], body=bodies[0], orelse=bodies[1])

    def active_carries(self, eqn):
        """Carried variables that can hold a gradient (see loop_active_carries)."""
        active = loop_active_carries(eqn, self.differentiated)
        return [c for c in eqn.params["carry"] if c in active]

    def adjoint_loop(self, eqn):
        """Replay the loop backwards: restore each iteration's carry from the
        tape, recompute the body, run its adjoint (checkpointing per step:
        the tape holds only the carried state).

        What the body computes *into the carry* is not recomputed: at the
        start of backward step k the carried variables still hold their
        values at the end of forward iteration k (the next step's start, or
        the loop's final state), which are the body's results.  Those are
        bound from the carry before the pop, their equations leave the
        recomputation, and dead-code elimination then drops whatever only
        fed them (``h = tanh(W @ h + U @ x)``: the adjoint reads the new
        ``h``, nothing recomputes it).  Nor are values the adjoint reads
        only for their shape (see ``_read_for_shape``)."""
        carry = list(eqn.params["carry"])
        body = eqn.params["body"]
        tapes = self.tape_names(eqn)
        active = self.active_carries(eqn)
        if not active:
            return []
        stmts = []
        self.materialize(self._outer_targets(eqn, [body]), stmts)
        carry_bars = {}
        for c in active:          # the final carries' cotangents start the replay
            bar = self.bars.get(c)
            if ir.is_name(bar):
                carry_bars[c] = bar.id
                continue
            name_ = self.namer.adjoint(c)
            stmts.append(assign(name_, bar if bar is not None else _zeros_like(c)))
            carry_bars[c] = name_
        restore = [POP.stmt(value=c, tape=tapes[c]) for c in carry]
        seeds = [(r, ir.name(carry_bars[c])) for c, r in zip(carry, body.results)
                 if c in carry_bars]
        inner_stmts, inner = self.sub(body, seeds, extra_wrt=active)
        ends, eqns = _results_from_carry(carry, body, inner.tape_names)
        shaped = _read_for_shape(eqns, inner_stmts, inner.tape_names)
        stand_ins = []
        for x in shaped:        # the forward loop tapes their shapes (``lower._push``)
            tapes[x] = self.namer.tape(f"{x}_shape")
            stand_ins.append(POP_SHAPE.stmt(value=x, tape=tapes[x]))
        eqns = [e for e in eqns if not set(e.outs) <= set(shaped)]
        originals = {}
        eqns = _without_prints(eqns, originals)
        recompute = lower.lower(eqns, lambda e: inner.tape_names(originals.get(id(e), e)))
        new_bars = [inner.bars.get(c) if ir.is_name(inner.bars.get(c)) else _zeros_like(c)
                    for c in active]
        update = lower.assign_many([carry_bars[c] for c in active], new_bars)
        loop_body = ends + restore + stand_ins + recompute + inner_stmts + update
        if eqn.prim.kind == "for_range":
            start, stop, step = eqn.args[:3]
            stmts += REPLAY_FOR.fill(index=eqn.params["index"], body=loop_body,
                                     iterations=lower.range_call(start, stop, step))
        inits = eqn.args[len(eqn.args) - len(carry):]
        if eqn.prim.kind != "for_range":
            # the turns are counted by a carry's tape whose first push is a
            # value (an unbound one is a Python object compiled code cannot
            # put on a list of the values the later turns push)
            counted = next((c for c, init in zip(carry, inits)
                            if not (ir.is_name(init) and init.id in self.unbound)), carry[0])
            stmts += REPLAY_WHILE.fill(step=self.namer.fresh("step"), body=loop_body,
                                       tape=tapes[counted])
        for c, init in zip(carry, inits):
            if c in carry_bars and ir.is_name(init) and init.id in self.differentiated:
                self.accumulate(init.id, ir.name(carry_bars[c]), stmts)
        for c in carry:
            self.bars.pop(c, None)
        return stmts


POP = quote("value = tape.pop()")
POP_SHAPE = quote("value = shaped(tape.pop())")   # a stand-in of the taped shape
# A loop's adjoint replays its iterations backwards, a for loop's over its
# range reversed, a while loop's once per iteration taped.
REPLAY_FOR = quote("""
    for index in reversed(iterations):
        body
""")
REPLAY_WHILE = quote("""
    for step in range(len(tape)):
        body
""")


# Equations that replaying the body must run even when their outputs are
# known: control flow (its branches' and inner loops' values feed their own
# adjoints, inner loops fill tapes) and effects.
_REPLAYED = ("cond", "while", "for_range", "custom", "effect")


def _without_prints(eqns, originals):
    """``eqns`` less the calls kept only for what they do (``print``), in
    nested bodies too: replaying a loop's body recomputes its values, and
    its prints ran in the forward pass.  A rebuilt equation is recorded in
    ``originals`` (by id) against the one it stands for (its tapes)."""
    out = []
    for eqn in eqns:
        if ir.kept_for_effect(eqn):
            continue
        if any(ir.kept_for_effect(e) for body in eqn.bodies() for e in ir.all_eqns(body.eqns)):
            params = dict(eqn.params)
            for key, value in eqn.params.items():
                if key == "branches":
                    params[key] = tuple(ir.Body(_without_prints(b.eqns, originals), b.results)
                                        for b in value)
                elif key in ("cond", "body"):
                    params[key] = ir.Body(_without_prints(value.eqns, originals), value.results)
            rebuilt = ir.Eqn(eqn.outs, eqn.prim, eqn.args, eqn.kwargs, params, eqn.origin)
            originals[id(rebuilt)] = originals.get(id(eqn), eqn)
            eqn = rebuilt
        out.append(eqn)
    return out


def _results_from_carry(carry, body, tapes):
    """(``r = c`` for each body result ``r`` a body equation computes,
    bound from its carried variable ``c`` before the pop; the body's
    equations less those whose outputs are all bound so).

    Sound because a body result at the end of forward iteration k is the
    carry at the start of iteration k+1: exactly what ``c`` holds when
    backward step k begins.  A result that is a carry-in or an outer value
    is left alone (the pop or nothing rebinds it)."""
    defined = {o for e in body.eqns for o in e.outs}
    ends, bound = [], set()
    for c, r in zip(carry, body.results):
        if ir.is_name(r) and r.id in defined and r.id not in bound and r.id not in carry:
            ends.append(assign(r.id, ir.name(c)))
            bound.add(r.id)
    eqns = [e for e in body.eqns
            if e.prim.kind in _REPLAYED or tapes(e) is not None or not set(e.outs) <= bound]
    return ends, eqns


def _read_for_shape(eqns, stmts, tapes):
    """Values of the body equations ``eqns`` that the adjoint ``stmts`` read
    only for their shapes (``unbroadcast(g, x)``, where ``x = W @ h`` was
    added to something): recomputing them would cost the whole operation,
    taping ``np.shape(x)`` costs a tuple per step, and the backward loop
    hands the helpers a stand-in of that shape (``shaped``).  Which
    arguments a helper reads only for their shape is a property of its
    primitive (``Primitive.shape_args``).  Values that
    anything else reads, or that equations feeding other reads need, are
    recomputed as before."""
    positions = set()
    for stmt in stmts:
        for node in ir.walk(stmt):
            prim = P.BY_NAME.get(node.func.id) if isinstance(node, gast.Call) and \
                ir.is_name(node.func) else None
            for i in (prim.shape_args if prim is not None else ()):
                if i < len(node.args) and ir.is_name(node.args[i]):
                    positions.add(id(node.args[i]))
    shape_reads, needed = set(), set()
    for stmt in stmts:
        for node in ir.walk(stmt):
            if isinstance(node, gast.Name) and not isinstance(node.ctx, gast.Store):
                (shape_reads if id(node) in positions else needed).add(node.id)
    for e in reversed(eqns):
        if e.prim.kind in _REPLAYED or tapes(e) is not None or set(e.outs) & needed:
            needed |= e.reads()
    plain = {e.out for e in eqns if len(e.outs) == 1 and e.prim.kind not in _REPLAYED
             and tapes(e) is None}
    return sorted((shape_reads & plain) - needed)


def _arg_positions(eqn):
    positions = dict(enumerate(eqn.args))
    positions.update({("kw", k): v for k, v in eqn.kwargs.items()})
    return positions


def forward_blocks(fn, tapes=None):
    """The canonical equations as Python, one block per user line."""
    blocks = []
    for eqn in fn.eqns:
        stmts = lower.lower([eqn], tapes)
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
        if eqn.out == getattr(result, "id", None) and eqn.prim.name in ("tuple", "list"):
            if len(eqn.args) == 2:
                return eqn.args[0], eqn.args[1]
            raise TransformError(
                aux_pair_message(f"a {eqn.prim.name} of {len(eqn.args)} elements"),
                eqn.origin or fn.origin, "return value, aux (put the rest in aux)")
    if not ir.is_name(result):
        raise TransformError(aux_pair_message(f"the constant {gast.dump(result)}"),
                             fn.origin, "return value, aux")
    # known only when it runs: checked then, before the items are read
    fn.eqns.append(ir.Eqn([], P.get("check_aux_pair"), [result], origin=fn.origin))
    items = []
    for i, base in enumerate(("value", "aux")):
        out = namer.fresh(base)
        fn.eqns.append(ir.Eqn([out], P.get("getitem"), [result, ir.const(i)],
                              origin=fn.origin))
        items.append(ir.name(out))
    return items[0], items[1]


def vjp_blocks(fn, namer, wrt, has_aux, seed_name=None):
    """Forward and backward blocks plus (value, aux, cotangents of ``wrt``)."""
    forward, backward, value, aux, grads, _ = vjp_parts(fn, namer, wrt, has_aux, seed_name)
    return forward + backward, value, aux, grads


def vjp_parts(fn, namer, wrt, has_aux, seed_name=None):
    """(forward blocks, backward blocks, value, aux, cotangents of ``wrt``,
    names of the tapes the forward pass fills).

    With ``seed_name`` None the cotangent of the output is the constant 1.0
    (grad); otherwise it is the parameter called ``seed_name`` (vjp).
    """
    value, aux = split_output(fn, namer, has_aux)
    if not ir.is_name(value):
        # a constant output (``return 'x'``, ``return 2.0``): no gradient,
        # but grad still checks it is a scalar number
        blocks = forward_blocks(fn)
        if seed_name is None:
            blocks.append(Block([gast.Expr(value=call("check_grad_output", value))],
                                fn.origin, "grad is defined for scalar outputs only"))
        return blocks, [], value, aux, [None for _ in wrt], set()
    seed = ir.const(1.0) if seed_name is None else ir.name(seed_name)
    rev = Reverse.of_function(fn, namer, wrt, value.id, seed)
    backward = rev.backward()     # first: it decides what the forward loops tape
    blocks = forward_blocks(fn, rev.tape_names)
    if seed_name is None:
        blocks.append(Block([gast.Expr(value=call("check_grad_output", ir.name(value.id)))],
                            fn.origin, "grad is defined for scalar outputs only"))
    # The backward pass replays loops, rebinding their variables: keep the
    # values the function returns in names of their own.
    rebound = bound_names(s for b in backward for s in b.stmts)
    kept = []
    for atom in (value, aux):
        if ir.is_name(atom) and atom.id in rebound:
            copy = namer.fresh(f"{atom.id}_value")
            kept.append(assign(copy, ir.name(atom.id)))
            if atom is value:
                value = ir.name(copy)
            else:
                aux = ir.name(copy)
    if kept:
        blocks.append(Block(kept, fn.origin, "the results, before the backward pass "
                                              "replays the loops"))
    grads = [rev.bars.get(w) for w in wrt]
    tapes = set()
    for names in rev.tapes.values():
        tapes |= set(names.values()) if isinstance(names, dict) else set()
    return blocks, backward, value, aux, grads, tapes
