"""Python's branches in canonical form: ``if`` statements, conditional
expressions and short-circuit ``and``/``or`` each become one ``cond``
equation, ``outs = branch0 if pred else branch1``, where each branch is an
``ir.Body`` whose results are the values of the variables the ``if``
assigns that are read later (a simple liveness: ``Statements.block``'s).
A test known when transforming decides the branch now; ``if bad: raise``
is a check (``checks``).  Mixed into ``converter.Converter``."""
import gast

from ..core import ir, primitives as P
from . import views
from .members import HELD_SOMEWHERE
from .names import always_returns
from .scope import Static


class Branches:
    """Mixed into ``converter.Converter``."""

    def static_test(self, scope, pred):
        """The truth of an ``if``'s converted test when it is known now (a
        number, string, None or function), else None."""
        if isinstance(pred, gast.Constant) and type(pred.value) in (bool, int, float, str,
                                                                      type(None)):
            return bool(pred.value)
        length = self.tuple_length(pred)
        if length is not None:      # `if layers:` of a tuple of known length
            return length > 0
        return None

    def stmt_If(self, scope, stmt, live_after=frozenset()):
        pred = self.atom(scope, stmt.test)
        known = self.static_test(scope, pred)
        if known is not None:     # decided now: only the branch taken is code
            taken = stmt.body if known else stmt.orelse
            self._raised = False
            result = self.block(scope, taken, live_after)
            return result if always_returns(taken) or self._raised else None
        handled, result = self.raising_if(scope, stmt, pred, live_after)
        if handled:
            return result
        returns = always_returns([stmt])
        before = dict(scope.locals)
        callers = _callers(scope)       # an inlined function's: what they bind joins too
        before_callers = [dict(c.locals) for c, _ in callers]
        branches, caller_branches = [], []
        for body in (stmt.body, stmt.orelse):
            scope.locals = dict(before)
            for (c, _), b in zip(callers, before_callers):
                c.locals = dict(b)
            self._joining.add(len(self._branch_scopes))
            try:
                eqns, result = self.nested(self.block, scope, body, live_after,
                                           branch=True)
            finally:
                self._joining.discard(len(self._branch_scopes))
            branches.append((eqns, dict(scope.locals), result))
            caller_branches.append([dict(c.locals) for c, _ in callers])
        scope.locals = dict(before)
        for (c, _), b in zip(callers, before_callers):
            c.locals = dict(b)
        origin = scope.parsed.origin(stmt)
        self.origin = origin
        joined = self.caller_joins(callers, before_callers, caller_branches, branches)
        if returns:
            out = self.namer.fresh("result")
            self.emit_cond(pred, [out] + [o for _, _, o, _ in joined],
                           [[b[2]] + [vs[k] for _, _, _, vs in joined]
                            for k, b in enumerate(branches)],
                           [b[0] for b in branches], origin)
            self.bind_joined(joined)
            return ir.name(out)
        names = sorted(n for n in set(branches[0][1]) | set(branches[1][1])
                       if n in live_after and any(_differs(b[1].get(n), before.get(n))
                                                  for b in branches))
        values, outs = [[], []], []
        for n in names:
            per_branch = [b[1].get(n, before.get(n)) for b in branches]
            if any(isinstance(v, Static) for v in per_branch):
                # A function bound on one path only (e.g. defined after a
                # `continue`): the other path never calls it -- in Python
                # that call would fail -- so the one function stands.
                bound = [v for v in per_branch if v is not None]
                if len(bound) == 1:
                    per_branch = bound * 2
                if _differs(*per_branch):
                    raise self.error(f"'{n}' is bound to different functions in the two "
                                     "branches of this `if`", stmt,
                                     "choose the function before the `if`", scope)
                scope.locals[n] = per_branch[0]
                continue
            if per_branch[0] is not None and not _differs(*per_branch):
                # the same value from before on both paths (``b = y`` in each
                # branch): ``b`` is ``y`` whichever runs, no join
                self.bind(scope, n, per_branch[0])
                continue
            for k, v in enumerate(per_branch):
                if v is None:    # not assigned on this path: using it must fail
                    v = self.unbound_eqn(n, branches[k][0])
                values[k].append(v)
            outs.append(n)
        out_names = [self.namer.fresh(n) for n in outs]
        for k in range(2):
            values[k] += [vs[k] for _, _, _, vs in joined]
        if out_names or joined or any(not eqn.outs for b in branches
                                      for eqn in ir.all_eqns(b[0])):
            # (a branch that binds nothing may still print, or check)
            self.emit_cond(pred, out_names + [o for _, _, o, _ in joined], values,
                           [b[0] for b in branches], origin)
        for n, o in zip(outs, out_names):
            self.bind(scope, n, ir.name(o))
        self.bind_joined(joined)
        return None

    def pure_branches(self, scope, node, branches):
        """Run each of two ``branches`` of a ``lax.cond``/``lax.switch``
        (functions of no argument giving (equations, result), run nested)
        from the same names of ``scope`` and of the scopes calling it.
        Returns (bodies, results).  A branch must be pure, as in JAX: one
        that changes in place an array of the code around it (a helper it
        calls does) is refused at ``node`` where that array is read after
        it.  NumPy would see the change whichever branch is taken (eager
        ``lax.cond`` runs the untaken branch too, to check its types) and
        JAX never (its arrays are immutable); before, the name was left
        bound to a value made inside the branch (fuzz seed 640190)."""
        scopes = [(scope, self._live_after)] + _callers(scope)
        befores = [dict(c.locals) for c, _ in scopes]
        bodies, results, per = [], [], []
        try:
            for branch in branches:
                for (c, _), before in zip(scopes, befores):
                    c.locals = dict(before)
                eqns, result = branch()
                bodies.append(eqns)
                results.append(result)
                per.append([dict(c.locals) for c, _ in scopes])
        finally:
            for (c, _), before in zip(scopes, befores):
                c.locals = dict(before)
        changed = self.caller_joins(scopes, befores, per, None)
        if changed:
            name_ = changed[0][1]
            raise self.error(
                f"a branch of this lax.cond or lax.switch changes in place the array "
                f"'{name_}' of the code around it: branches must be pure functions, as in "
                "JAX (NumPy would see the change whichever branch runs)", node,
                "let the branch change a copy (a = a.copy() first, in the function that "
                "changes it), or write an if statement", scope)
        return bodies, results

    def pure_loop_body(self, scope, node, what, run):
        """``run()`` (a ``lax.fori_loop``/``while_loop``/``scan`` body or
        ``while_loop``'s test, inlined once and run nested), refused at
        ``node`` if it changes in place an array of the code around it (a
        helper it calls does): loop bodies must be pure, as in JAX.  The
        loop runs the body every step and NumPy would see the change at
        every step, which the carry does not hold: the body was followed as
        if it ran once (fuzz seed 721728: a silently wrong value in every
        mode).  Any such change is refused, read after the loop or not:
        the body's own next step reads it."""
        scopes = [(scope, None)] + [(c, None) for c, _ in _callers(scope)]
        befores = [dict(c.locals) for c, _ in scopes]
        self._lax_loop_bodies += 1
        try:
            result = run()
        finally:
            self._lax_loop_bodies -= 1
        afters = [dict(c.locals) for c, _ in scopes]
        changed = self.caller_joins(scopes, befores, [afters, befores], None)
        if changed:
            raise self.error(
                f"the {what} of this lax.{node_name(node)} changes in place the array "
                f"'{changed[0][1]}' of the code around it: loop bodies must be pure "
                "functions, as in JAX (NumPy would see the change at every step, which the "
                "loop's carry does not hold)", node,
                "pass the array through the loop's carry, let the body change a copy "
                "(a = a.copy() first, in the function that changes it), or write a "
                "for loop", scope)
        return result

    def caller_joins(self, callers, before_callers, caller_branches, branches):
        """The names of the scopes calling an inlined function that a branch
        of its ``if`` rebound (a caller's array it changed in place) and
        that are read after the call: [(scope, name, output, per-branch
        values)]."""
        joined = []
        for i, ((c, live), before) in enumerate(zip(callers, before_callers)):
            per = [cb[i] for cb in caller_branches]
            for n in sorted(set(per[0]) | set(per[1])):
                if live is not None and n not in live:
                    continue
                vals = [p.get(n, before.get(n)) for p in per]
                if any(isinstance(v, Static) or v is None for v in vals) or \
                        not any(_differs(v, before.get(n)) for v in vals):
                    continue
                joined.append((c, n, self.namer.fresh(n), vals))
        return joined

    def bind_joined(self, joined):
        for c, n, o, _ in joined:
            self.bind(c, n, ir.name(o))

    def emit_choice(self, pred, outs, results, bodies):
        """A ``cond`` this module makes to follow a change (array or number,
        view or copy): what its outputs hold is said by the caller, which
        rebinds every name and container that changed."""
        self._choosing = True
        try:
            self.emit_cond(pred, outs, results, bodies, self.origin)
        finally:
            self._choosing = False

    def unbound_eqn(self, name_, eqns):
        out = self.namer.fresh(f"{name_}_unbound")
        eqns.append(ir.Eqn([out], P.get("unbound"), [ir.const(name_)], origin=self.origin))
        return ir.name(out)

    def emit_cond(self, pred, outs, results, bodies, origin):
        branches = tuple(ir.Body(e, r) for e, r in zip(bodies, results))
        self.eqns.append(ir.Eqn(outs, P.get("cond"), [pred], params={"branches": branches},
                                origin=origin))
        # a result that is a value from before the branch (``l = y`` on one
        # path) may be that very array: Python's aliasing, decided at run time;
        # so may a result a nested ``if`` chose from such values
        for i, out in enumerate(outs):
            self.note_join(out, pred, [b.results[i] for b in branches])
        kept = self.join_views(outs, branches)
        for i, out in enumerate(outs):
            # what every path knows of the value (a list, a dict of these keys)
            for facts in (self._containers, self._dict_keys, self._tuple_lengths):
                seen = [facts.get(b.results[i].id) if ir.is_name(b.results[i]) else None
                        for b in branches]
                if seen[0] is not None and all(s == seen[0] for s in seen):
                    facts[out] = seen[0]
        if not self._choosing:      # (``update_if_array`` says what its outputs hold)
            self.join_members(outs, branches)
        for body in branches:
            defined = body.defined()
            for out, r in zip(outs, body.results):
                if ir.is_name(r):
                    sources = {a for a in self._may_alias.get(r.id, set()) | {r.id}
                               if a not in defined}
                    if out not in kept:
                        # a view of an array from before the branch (``row =
                        # x[1]`` on one path): a later change in place of
                        # either is refused, as for a value passed through
                        sources |= {a for a in self.sharing_atoms({r.id}) - {r.id}
                                    if a not in defined}
                    if sources:
                        self._may_alias.setdefault(out, set()).update(sources)

    def join_views(self, outs, branches):
        """A view relation between two results that holds on every path
        (``row = x[0]`` before an ``if`` that changes ``x`` in place on one
        path) holds between the outputs: recorded, so a later change of
        either is seen through the other.  Returns the outputs it holds for."""
        kept, pairs = set(), set()
        for i, out in enumerate(outs):
            relation = None
            for body in branches:
                r = body.results[i]
                view = self._views.get(r.id) if ir.is_name(r) else None
                if view is None:
                    break
                base, idx = view
                j = next((j for j, b in enumerate(body.results)
                          if ir.is_name(b) and b.id == base.id and j != i), None)
                if j is None:
                    break
                key = (j, idx if isinstance(idx, views.ViewCall) else gast.dump(idx))
                if relation is not None and relation != key:
                    break
                relation = key
            else:
                if relation is not None:
                    j, _ = relation
                    self._add_view(ir.name(out), ir.name(outs[j]),
                                   self._views[branches[0].results[i].id][1])
                    kept.add(out)
                    pairs |= {(i, j), (j, i)}
        for i, out in enumerate(outs):
            if out in kept or self._choosing:   # (a choice says what its outputs share)
                continue
            for body in branches:
                # shares memory with another result on this path only (``b =
                # y[1]`` in one branch, a new array in the other): a later
                # change in place of either is refused (``held.check_held``)
                r = body.results[i]
                shared = self.sharing_atoms({r.id}) - {r.id} if ir.is_name(r) else set()
                for j, b in enumerate(body.results):
                    if j != i and (i, j) not in pairs and ir.is_name(b) and b.id in shared:
                        self.note_holder(ir.name(out), ir.name(outs[j]), HELD_SOMEWHERE)
        return kept

    def expr_IfExp(self, scope, node, target):
        pred = self.atom(scope, node.test)
        known = self.static_test(scope, pred)
        if known is not None:
            return self.expr(scope, node.body if known else node.orelse, target)
        bodies, results = [], []
        for branch in (node.body, node.orelse):
            eqns, atom = self.nested(self.atom, scope, branch)
            bodies.append(eqns)
            results.append([atom])
        if not any(bodies) and not _differs(results[0][0], results[1][0]):
            return results[0][0]        # ``y if c else y``: ``y`` whichever is taken
        out = self.namer.fresh(target or "choice")
        self.emit_cond(pred, [out], results, bodies, self.origin)
        return ir.name(out)

    def expr_BoolOp(self, scope, node, target):
        """``a and b`` evaluates ``b`` only when ``a`` is true (short circuit)."""
        value = self.atom(scope, node.values[0])
        for operand in node.values[1:]:
            eqns, other = self.nested(self.atom, scope, operand)
            keep = ([[other], [value]] if isinstance(node.op, gast.And)
                    else [[value], [other]])
            bodies = [eqns, []] if isinstance(node.op, gast.And) else [[], eqns]
            out = self.namer.fresh(target or ("both" if isinstance(node.op, gast.And)
                                              else "either"))
            self.emit_cond(value, [out], keep, bodies, self.origin)
            value = ir.name(out)
        return value


def _differs(a, b):
    if a is b:
        return False
    if a is None or b is None:
        return True
    try:
        return gast.dump(a) != gast.dump(b)
    except Exception:
        return True


def node_name(node):
    """The called function's name of a call node (``fori_loop`` of
    ``lax.fori_loop(...)``)."""
    func = getattr(node, "func", None)
    return getattr(func, "attr", None) or getattr(func, "id", None) or "loop"


def _callers(scope):
    """[(scope calling it, the names read there after the call)], from the
    nearest out, for an inlined function's ``scope``."""
    out = []
    while scope.caller is not None:
        out.append((scope.caller, scope.caller_live))
        scope = scope.caller
    return out
