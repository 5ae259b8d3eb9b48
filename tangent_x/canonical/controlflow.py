"""Canonical form of Python control flow: ``if``, ``for``, ``while``,
conditional expressions and short-circuit ``and``/``or``.

Each becomes one compound equation with explicit state, found by a simple
liveness analysis:

- ``cond``: ``outs = branch0 if pred else branch1``; each branch is an
  ``ir.Body`` whose results are the values of the variables the ``if``
  assigns that are read later;
- ``for_range``: ``for index in range(start, stop, step)`` over carried
  variables (assigned in the body and either read in it or read after it);
- ``while``: a condition body and a loop body over carried variables.

Loops over arrays, ``zip`` and ``enumerate`` become index loops whose body
starts by fetching the items; ``break``/``continue``/early ``return`` were
already removed by ``exits``.  The loop's outputs are its carry names: in a
loop body they mean the value at the start of the iteration, after the
loop the final value (a phi, as in SSA).
"""
import builtins

import gast

from ..core import ir, primitives as P


def loaded_names(nodes):
    found = set()
    for node in nodes:
        for n in ir.walk(node):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
                found.add(n.id)
    return found


def stored_names(stmts, updates=True, binds=True):
    """Names the statements bind (not looking inside nested functions).

    With ``updates``, also the names they change in place -- ``x[i] = v``,
    ``xs.append(v)``, ``xs.pop()`` -- which a loop must carry; without, just
    what Python counts as local assignments.  Without ``binds``, only the
    names changed in place."""
    found = set()

    def visit(n):
        if isinstance(n, (gast.FunctionDef, gast.Lambda, gast.ClassDef)):
            if binds and not isinstance(n, gast.Lambda):
                found.add(n.name)
            return
        if binds and isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
            found.add(n.id)
        if updates and isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute) \
                and n.func.attr in ("append", "pop") and isinstance(n.func.value, gast.Name):
            found.add(n.func.value.id)     # xs.append(v) / xs.pop() rebind xs
        if updates and isinstance(n, gast.Subscript) and isinstance(n.ctx, gast.Store):
            root = n.value                 # x[i] = v and x[i][j] += v change x
            while isinstance(root, gast.Subscript):
                root = root.value
            if isinstance(root, gast.Name):
                found.add(root.id)
        for child in gast.iter_child_nodes(n):
            visit(child)

    for s in stmts:
        visit(s)
    return found


def aug_assigned(stmts):
    """Names the statements change with ``y op= v``: in place if ``y`` holds
    an array, so the loop must carry (and follow) the names sharing it."""
    return {n.target.id for s in stmts for n in gast.walk(s)
            if isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name)}


def changed_names(stmts):
    """(names changed in place -- maybe, for ``y op= v`` --, names rebound)."""
    return (stored_names(stmts, binds=False) | aug_assigned(stmts),
            stored_names(stmts, updates=False))


def always_returns(stmts):
    """After ``exits`` ran, an ``if`` holding a return returns (or raises)
    on every path."""
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, (gast.Return, gast.Raise)):    # a raise never falls through
        return True
    if isinstance(last, gast.If):
        return always_returns(last.body) and always_returns(last.orelse)
    return False


class ControlFlow:
    """Mixed into ``canonical.Converter``."""

    # --- nested equation lists ----------------------------------------------

    def nested(self, fn, *args, scope=None):
        """Run ``fn`` collecting its equations in a fresh list; CSE entries
        made inside do not leak out (the body may not run).  A branch or
        loop body of ``scope`` (by default a scope passed first) joins that
        scope's names after it: ``bind`` refuses to rebind, inside it, a
        name of a scope that called ``scope`` (nothing would join it)."""
        if scope is None and args and hasattr(args[0], "caller") and hasattr(args[0], "locals"):
            scope = args[0]
        saved_eqns, saved_cse = self.eqns, dict(self._cse)
        self.eqns = []
        if scope is not None:
            self._branch_scopes.append(scope)
        try:
            result = fn(*args)
            return self.eqns, result
        finally:
            self.eqns, self._cse = saved_eqns, saved_cse
            if scope is not None:
                self._branch_scopes.pop()

    # --- if -----------------------------------------------------------------

    def static_test(self, scope, pred):
        """The truth of an ``if``'s converted test when it is known now (a
        number, string, None or function), else None."""
        if isinstance(pred, gast.Constant) and type(pred.value) in (bool, int, float, str,
                                                                      type(None)):
            return bool(pred.value)
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
        branches = []
        for body in (stmt.body, stmt.orelse):
            scope.locals = dict(before)
            eqns, result = self.nested(self.block, scope, body, live_after)
            branches.append((eqns, dict(scope.locals), result))
        scope.locals = dict(before)
        origin = scope.parsed.origin(stmt)
        self.origin = origin
        if returns:
            out = self.namer.fresh("result")
            self.emit_cond(pred, [out], [[b[2]] for b in branches],
                           [b[0] for b in branches], origin)
            return ir.name(out)
        names = sorted(n for n in set(branches[0][1]) | set(branches[1][1])
                       if n in live_after and any(_differs(b[1].get(n), before.get(n))
                                                  for b in branches))
        values, outs = [[], []], []
        for n in names:
            per_branch = [b[1].get(n, before.get(n)) for b in branches]
            if any(isinstance(v, self.Static) for v in per_branch):
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
            for k, v in enumerate(per_branch):
                if v is None:    # not assigned on this path: using it must fail
                    v = self.unbound_eqn(n, branches[k][0])
                values[k].append(v)
            outs.append(n)
        out_names = [self.namer.fresh(n) for n in outs]
        if out_names:
            self.emit_cond(pred, out_names, values, [b[0] for b in branches], origin)
        for n, o in zip(outs, out_names):
            self.bind(scope, n, ir.name(o))
        return None

    def unbound_eqn(self, name_, eqns):
        out = self.namer.fresh(f"{name_}_unbound")
        eqns.append(ir.Eqn([out], P.get("unbound"), [ir.const(name_)], origin=self.origin))
        return ir.name(out)

    def emit_cond(self, pred, outs, results, bodies, origin):
        branches = tuple(ir.Body(e, r) for e, r in zip(bodies, results))
        self.eqns.append(ir.Eqn(outs, P.get("cond"), [pred], params={"branches": branches},
                                origin=origin))
        # a result that is a value from before the branch (``l = y`` on one
        # path) may be that very array: Python's aliasing, decided at run time
        for body in branches:
            defined = body.defined()
            for out, r in zip(outs, body.results):
                if ir.is_name(r) and r.id not in defined:
                    self._may_alias.setdefault(out, set()).update(
                        {r.id} | self._may_alias.get(r.id, set()))

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

    # --- loops ----------------------------------------------------------------

    def carried(self, scope, stmts, extra_reads, live_after):
        """Variables a loop carries: assigned in it, and read in it or after it.

        A name changed in place (``y[i] = v``, ``ys.append(v)``) changes every
        alias of its value too (after ``y = a``, ``a`` is the same array), so
        those aliases are carried as well.  Rebinding (``y = 0.5 * y``) leaves
        the old value alone: after ``y = a`` a loop that only rebinds ``y``
        does not carry ``a``, which stays loop-invariant (a reverse pass then
        need not tape it every iteration)."""
        assigned = stored_names(stmts)
        augmented = aug_assigned(stmts)      # ``y += v`` reads ``y`` too
        mutated = stored_names(stmts, binds=False) | augmented
        atoms = self.sharing_atoms({v.id for n, v in scope.locals.items()
                                    if n in mutated and ir.is_name(v)})
        assigned |= {n for n, v in scope.locals.items()      # aliases and views change too
                     if ir.is_name(v) and v.id in atoms}
        reads = loaded_names(stmts) | extra_reads | augmented
        names = []
        for n in sorted(assigned):
            bound = n in scope.locals and not isinstance(scope.locals[n], self.Static)
            if (bound and (n in reads or n in live_after)) or (not bound and n in live_after):
                names.append(n)
        return names

    def sharing_atoms(self, atom_ids):
        """``atom_ids`` and every value sharing memory with one of them by a
        recorded view relation (the array a view was taken from, the views
        taken from it), transitively."""
        found, todo = set(), list(atom_ids)
        while todo:
            a = todo.pop()
            if a in found:
                continue
            found.add(a)
            if a in self._views:
                todo.append(self._views[a][0].id)
            todo += self._view_children.get(a, [])
        return found

    def view_carry(self, scope, carry, stmts):
        """Carried names one of which is a view of another (``row = x[0]``
        before a loop that changes ``row`` or ``x`` in place): the relation
        holds in every iteration while neither is rebound in the loop, so the
        body's carry-in names get it too (``link_views``); if one is
        rebound, which array the view is of changes between iterations:
        ``guarded``, as for aliases.  Returns ([(view name, base name,
        index)], {name: [names it shares with]})."""
        mutated, rebound = changed_names(stmts)
        by_atom = {}
        for n in carry:
            v = scope.locals.get(n)
            if ir.is_name(v):
                by_atom.setdefault(v.id, []).append(n)
        pairs, guarded = [], {}
        for n in carry:
            v = scope.locals.get(n)
            if not ir.is_name(v) or v.id not in self._views:
                continue
            base, idx = self._views[v.id]
            for m in by_atom.get(base.id, []):
                if not mutated & (self.sharing_names(scope, carry, v.id)):
                    continue
                if rebound & {n, m}:
                    guarded.setdefault(n, []).append(m)
                    guarded.setdefault(m, []).append(n)
                else:
                    pairs.append((n, m, idx))
        return pairs, guarded

    def sharing_names(self, scope, carry, atom_id):
        atoms = self.sharing_atoms({atom_id})
        return {n for n in carry if ir.is_name(scope.locals.get(n))
                and scope.locals[n].id in atoms}

    def link_views(self, scope, pairs):
        for n, m, idx in pairs:
            self._add_view(scope.locals[n], scope.locals[m], idx)

    def shared_carry(self, scope, carry, stmts):
        """Carried names that alias one array the loop changes in place.

        After ``z = y``, ``y[i] = v`` in a loop must change ``z`` in every
        iteration, so inside the body both names are bound to one carry-in
        name (a mutation then rebinds both, as in straight-line code).  That
        holds while neither name is rebound in the loop; if one is
        (``y = np.copy(y)``), each keeps its own carry, and changing the
        carried-in array in place is reported (``guarded``) rather than
        computed wrongly.  Returns ({name: first carried name sharing its
        value}, {name: the other names of its group})."""
        mutated, rebound = changed_names(stmts)
        groups = {}
        for n in carry:
            v = scope.locals.get(n)
            if ir.is_name(v):
                groups.setdefault(gast.dump(v), []).append(n)
        shared, guarded = {}, {}
        for names in groups.values():
            if len(names) < 2 or not mutated & set(names):
                continue
            if rebound & set(names):
                guarded.update({n: [m for m in names if m != n] for n in names})
            else:
                shared.update({n: names[0] for n in names[1:]})
        return shared, guarded

    def loop_body(self, scope, carry, body_fn, body_stmts=()):
        """Bind carry-in names, run ``body_fn`` nested; return the pieces."""
        before = dict(scope.locals)
        carry_names = [self.namer.fresh(n) for n in carry]
        inits = [before[n] if n in before else self.unbound_eqn(n, self.eqns)
                 for n in carry]
        shared, guarded = self.shared_carry(scope, carry, body_stmts)
        view_pairs, view_guarded = self.view_carry(scope, carry, body_stmts)
        for n, others in view_guarded.items():
            guarded[n] = guarded.get(n, []) + [m for m in others if m not in guarded.get(n, [])]
        outer_guard = self._carry_guard
        self._carry_guard = dict(outer_guard)
        for n, c in zip(carry, carry_names):
            if n in shared:      # aliases of one array: one object in the body too
                self.bind(scope, n, ir.name(carry_names[carry.index(shared[n])]))
            else:
                self.bind(scope, n, ir.name(c))
            if n in guarded:
                self._carry_guard[c] = (n, guarded[n])
        self.link_views(scope, view_pairs)
        try:
            eqns, extra = self.nested(body_fn, scope=scope)
        finally:
            self._carry_guard = outer_guard
        results = []
        for n in carry:
            v = scope.locals.get(n)
            if isinstance(v, self.Static):
                raise self.error(f"'{n}' is bound to a function inside a loop",
                                 None, "bind functions outside loops")
            results.append(v)
        for n, first in shared.items():
            if gast.dump(results[carry.index(n)]) != gast.dump(results[carry.index(first)]):
                raise self.error(        # a rebind shared_carry did not see (del?)
                    f"'{n}' and '{first}' name the same array, which this loop "
                    f"changes in place, but they part inside it", None,
                    f"copy before the loop ({n} = {first}.copy())")
        scope.locals = before
        self.exit_views = view_pairs      # for the caller, once the loop's outputs are bound
        return carry_names, inits, eqns, results, extra

    def stmt_While(self, scope, stmt, live_after=frozenset()):
        origin = scope.parsed.origin(stmt)
        self.origin = origin
        body_live = loaded_names(stmt.body) | loaded_names([stmt.test]) | set(live_after)
        carry = self.carried(scope, stmt.body, loaded_names([stmt.test]), live_after)

        def body():
            cond_eqns, pred = self.nested(self.atom, scope, stmt.test)
            self.block(scope, stmt.body, body_live)
            return cond_eqns, pred

        carry_names, inits, eqns, results, (cond_eqns, pred) = \
            self.loop_body(scope, carry, body, stmt.body)
        view_pairs = self.exit_views
        self.origin = origin
        self.eqns.append(ir.Eqn(carry_names, P.get("while"), inits, params={
            "carry": tuple(carry_names), "cond": ir.Body(cond_eqns, [pred]),
            "body": ir.Body(eqns, results)}, origin=origin))
        for n, c in zip(carry, carry_names):
            self.bind(scope, n, ir.name(c))
        self.link_views(scope, view_pairs)

    def stmt_For(self, scope, stmt, live_after=frozenset()):
        origin = scope.parsed.origin(stmt)
        self.origin = origin
        if isinstance(stmt.iter, (gast.Name, gast.List, gast.Tuple, gast.Attribute)):
            seq = self.expr(scope, stmt.iter)
            if isinstance(seq, self.Static) and isinstance(seq.obj, (list, tuple)):
                return self.unroll(scope, stmt, seq.obj, live_after)
        if stmt.orelse:
            stmt.body, orelse = stmt.body, stmt.orelse   # no break here: else always runs
        else:
            orelse = []
        start, stop, step, fetch = self.loop_bounds(scope, stmt)
        body_live = loaded_names(stmt.body) | set(live_after)
        carry = self.carried(scope, stmt.body, set(), live_after)
        index = self.namer.fresh(stmt.target.id if fetch is None else "k")
        viewed = self.iterated_in_place(scope, stmt, fetch)
        if viewed is not None and viewed not in carry:
            carry = carry + [viewed]

        def body():
            if fetch is None:
                scope.locals[stmt.target.id] = ir.name(index)
            elif viewed is not None:     # ``row`` is ``x[k]``: a view of x's row, or a number
                base = scope.locals[viewed]
                item = self.emit(P.get("getitem"), [base, ir.name(index)], target=stmt.target.id)
                self.bind(scope, stmt.target.id, item)
                self._add_view(item, base, ir.name(index))
            else:
                self.bind_atom(scope, stmt.target, fetch(ir.name(index)))
            self.block(scope, stmt.body, body_live)

        carry_names, inits, eqns, results, _ = self.loop_body(scope, carry, body, stmt.body)
        view_pairs = self.exit_views
        self.origin = origin
        self.eqns.append(ir.Eqn(carry_names, P.get("for_range"), [start, stop, step] + inits,
                                params={"carry": tuple(carry_names), "index": index,
                                        "body": ir.Body(eqns, results)}, origin=origin))
        for n, c in zip(carry, carry_names):
            self.bind(scope, n, ir.name(c))
        self.link_views(scope, view_pairs)
        if orelse:
            self.block(scope, orelse, live_after)

    def unroll(self, scope, stmt, items, live_after):
        """A loop over functions known when transforming runs once per item,
        written out (``for f in [np.sin, np.cos]``)."""
        live = loaded_names(stmt.body) | set(live_after)
        for item in items:
            self.bind_static(scope, stmt.target, item)
            self.block(scope, stmt.body, live)
        if stmt.orelse:
            self.block(scope, stmt.orelse, live_after)

    def bind_static(self, scope, target, item):
        """Bind a loop target to an item known when transforming; a tuple
        target takes a tuple item apart, so its parts stay constants."""
        if isinstance(target, (gast.Tuple, gast.List)) and isinstance(item, (tuple, list)) \
                and len(item) == len(target.elts) \
                and not any(isinstance(t, gast.Starred) for t in target.elts):
            for t, part in zip(target.elts, item):
                self.bind_static(scope, t, part)
            return
        self.bind_atom(scope, target, self.classify(item, "item"))

    def iterated_in_place(self, scope, stmt, fetch):
        """``for row in x: row *= 2`` (or ``row[i] = v``) changes ``x`` when
        ``row`` is a view (``x`` 2-d): the name ``x``, which the loop then
        carries and whose row ``row`` is in each step; None otherwise."""
        if fetch is None or not isinstance(stmt.iter, gast.Name) or \
                not isinstance(stmt.target, gast.Name) or \
                not ir.is_name(scope.locals.get(stmt.iter.id)):
            return None
        changed = stored_names(stmt.body, binds=False) | aug_assigned(stmt.body)
        return stmt.iter.id if stmt.target.id in changed else None

    def loop_bounds(self, scope, stmt):
        """(start, stop, step, fetch): ``fetch(k)`` gives the item of step ``k``
        (``fetch`` None: a plain ``range`` loop whose index is the target)."""
        it = stmt.iter
        if isinstance(stmt.target, gast.Name):
            rng = self.range_args(scope, it)
            if rng is not None:
                return rng + (None,)
        length, fetch = self.iteration(scope, it, _target_bases(stmt.target))
        return ir.const(0), length, ir.const(1), fetch

    def range_args(self, scope, node):
        if isinstance(node, gast.Call) and not node.keywords:
            func = self.expr(scope, node.func)
            if isinstance(func, self.Static) and func.obj is builtins.range:
                args = [self.atom(scope, a) for a in node.args]
                if len(args) == 1:
                    return ir.const(0), args[0], ir.const(1)
                if len(args) == 2:
                    return args[0], args[1], ir.const(1)
                return tuple(args)
        return None

    def iteration(self, scope, it, base=None):
        """(length atom, fetch(k) -> atom of item k) for any iterable:
        ``range``, ``zip``, ``enumerate``, ``reversed``, ``d.items()`` and
        friends, nested; anything else is indexed item by item.  ``base``:
        the loop target's name (or a list, for a tuple target), which the
        items are named after."""
        rng = self.range_args(scope, it)
        if rng is not None:
            start, stop, step = rng
            length = self.emit(P.get("builtins.len"), [
                self.emit(P.get("builtins.range"), [start, stop, step], base="steps")],
                base="n")
            return length, lambda k: self.emit(P.get("add"), [start, self.emit(
                P.get("mul"), [k, step], base="offset")],
                base=base if isinstance(base, str) else "index")
        if isinstance(it, gast.Call) and not it.keywords:
            func = self.expr(scope, it.func)
            obj = func.obj if isinstance(func, self.Static) else None
            if obj is builtins.zip:
                bases = base if isinstance(base, list) and len(base) == len(it.args) \
                    else [None] * len(it.args)
                parts = [self.iteration(scope, a, b) for a, b in zip(it.args, bases)]
                length = self.shortest_of([p[0] for p in parts])
                return length, lambda k: self.emit(
                    P.get("tuple"), [fetch(k) for _, fetch in parts], base="items")
            if obj is builtins.enumerate:
                inner = base[1] if isinstance(base, list) and len(base) == 2 else None
                length, fetch = self.iteration(scope, it.args[0], inner)
                return length, lambda k: self.emit(P.get("tuple"), [k, fetch(k)],
                                                   base="pair")
            if obj is builtins.reversed:
                length, fetch = self.iteration(scope, it.args[0], base)
                last = self.emit(P.get("sub"), [length, ir.const(1)], base="last")
                return length, lambda k: fetch(self.emit(P.get("sub"), [last, k],
                                                         base="back"))
            if isinstance(it.func, gast.Attribute) and it.func.attr in ("items", "keys",
                                                                         "values") \
                    and not it.args and not isinstance(func, self.Static):
                return self.dict_iteration(scope, it)
        seq = self.atom(scope, it)
        length = self.shortest_of([seq])
        return length, lambda k: self.emit(P.get("iteration_item"), [seq, k],
                                           base=base if isinstance(base, str) else "item")

    def dict_iteration(self, scope, it):
        mapping = self.atom(scope, it.func.value)
        keys = self.emit(P.get("builtins.list"), [mapping], base="keys")
        length = self.emit(P.get("builtins.len"), [keys], base="n")
        kind = it.func.attr

        def fetch(k):
            key = self.emit(P.get("getitem"), [keys, k], base="key")
            if kind == "keys":
                return key
            value = self.emit(P.get("getitem"), [mapping, key], base="value")
            if kind == "values":
                return value
            return self.emit(P.get("tuple"), [key, value], base="entry")
        return length, fetch

    def shortest_of(self, lengths_or_seqs):
        lengths = [a if (ir.is_name(a) and a.id in self._lengths) else
                   self.emit(P.get("builtins.len"), [a], base="n")
                   for a in lengths_or_seqs]
        for a in lengths:
            self._lengths.add(a.id)
        if len(lengths) == 1:
            return lengths[0]
        return self.emit(P.get("int_min"), lengths, base="n")

def _target_bases(target):
    """A loop target's name, or a list of them for a tuple target."""
    if isinstance(target, gast.Name):
        return target.id
    if isinstance(target, (gast.Tuple, gast.List)):
        return [_target_bases(t) for t in target.elts]
    return None


def _differs(a, b):
    if a is b:
        return False
    if a is None or b is None:
        return True
    try:
        return gast.dump(a) != gast.dump(b)
    except Exception:
        return True
