"""Python's loops in canonical form: ``for`` and ``while`` each become one
compound equation over explicit carried state, found by a simple liveness
analysis (``names``):

- ``for_range``: ``for index in range(start, stop, step)`` over carried
  variables (assigned in the body and either read in it or read after it);
- ``while``: a condition body and a loop body over carried variables.

Loops over arrays, ``zip`` and ``enumerate`` become index loops whose body
starts by fetching the items (``iteration``); ``break``/``continue``/early
``return`` were already removed by ``exits``.  The loop's outputs are its
carry names: in a loop body they mean the value at the start of the
iteration, after the loop the final value (a phi, as in SSA).  Arrays the
loop changes in place carry their aliases and views along.  Mixed into
``converter.Converter``."""
import copy

import gast

from ..core import ir, primitives as P
from .names import aug_assigned, exposed_reads, loaded_names, stored_names
from .scope import CarryMore, Static


class Loops:
    """Mixed into ``converter.Converter``."""

    def carried(self, scope, stmts, extra_reads, live_after, changed=()):
        """Variables a loop carries: assigned in it, and read in it or after it.

        A name changed in place (``y[i] = v``, ``ys.append(v)``) changes every
        alias of its value too (after ``y = a``, ``a`` is the same array), so
        those aliases are carried as well.  Rebinding (``y = 0.5 * y``) leaves
        the old value alone: after ``y = a`` a loop that only rebinds ``y``
        does not carry ``a``, which stays loop-invariant (a reverse pass then
        need not tape it every iteration)."""
        assigned = stored_names(stmts)
        augmented = aug_assigned(stmts)      # ``y += v`` reads ``y`` too
        mutated = stored_names(stmts, binds=False) | augmented | set(changed)
        atoms = self.sharing_atoms({v.id for n, v in scope.locals.items()
                                    if n in mutated and ir.is_name(v)})
        assigned |= {n for n, v in scope.locals.items()      # aliases and views change too
                     if ir.is_name(v) and v.id in atoms}
        reads = loaded_names(stmts) | extra_reads | augmented
        # (read before bound in a turn: carried from unbound, fuzz 481437)
        exposed = exposed_reads(stmts) | extra_reads
        own = _own_functions(scope, stmts)
        names = []
        for n in sorted(assigned - own):
            bound = n in scope.locals and not isinstance(scope.locals[n], Static)
            if (bound and (n in reads or n in live_after)) or \
                    (not bound and (n in live_after or n in exposed)):
                names.append(n)
        return names

    def body_reads(self, scope, body):
        """Names a loop body may read before binding them (the next
        iteration's): every name it reads where a local function may read
        them later (``exposed_reads``)."""
        return loaded_names(body) if self.local_functions(scope) else exposed_reads(body)

    def peeled_range(self, scope, stmt, live_after):
        """``for i in range(a, b, s)`` peeled as ``if a < b: i = a; body;
        for i in range(a + s, b, s): body`` where ``sharing_changes``, and
        the range's arguments can be read again (names the body does not
        rebind, ``len``, attributes, items, operators; ``s`` a constant);
        None otherwise (the loop then refuses as before)."""
        it = stmt.iter
        if not (isinstance(stmt.target, gast.Name) and isinstance(it, gast.Call)
                and not it.keywords and 1 <= len(it.args) <= 3):
            return None
        func = self.expr(scope, it.func)
        if not (isinstance(func, Static) and func.obj is range):
            return None
        args = list(it.args)
        step = args[2] if len(args) == 3 else gast.Constant(value=1, kind=None)
        if not (isinstance(step, gast.Constant) and type(step.value) is int and step.value):
            return None
        rebound = stored_names(stmt.body) | {stmt.target.id}
        if not all(_rereadable(a, rebound) for a in args):
            return None
        carry = self.carried(scope, stmt.body, set(), live_after)
        if not self.sharing_changes(scope, carry, stmt.body):
            return None
        start = args[0] if len(args) > 1 else gast.Constant(value=0, kind=None)
        stop = args[1] if len(args) > 1 else args[0]
        rest = gast.For(target=stmt.target, iter=gast.Call(
            func=it.func, args=[gast.BinOp(left=copy.deepcopy(start), op=gast.Add(),
                                           right=copy.deepcopy(step)),
                                copy.deepcopy(stop), copy.deepcopy(step)], keywords=[]),
            body=stmt.body, orelse=[], type_comment=None)
        rest.peeled = True
        test = gast.Compare(left=copy.deepcopy(start),
                            ops=[gast.Lt() if step.value > 0 else gast.Gt()],
                            comparators=[copy.deepcopy(stop)])
        first_index = gast.Assign(targets=[gast.Name(id=stmt.target.id, ctx=gast.Store(),
                                                     annotation=None, type_comment=None)],
                                  value=copy.deepcopy(start), type_comment=None)
        first = gast.If(test=test, body=[first_index] + copy.deepcopy(stmt.body) + [rest],
                        orelse=[])
        for node in ir.walk(first):        # new nodes: the ``for`` line's
            if node is not rest and not hasattr(node, "lineno") or \
                    getattr(node, "lineno", None) is None:
                gast.copy_location(node, stmt)
        return gast.copy_location(first, stmt)

    def first_values(self, atom_ids):
        """``atom_ids`` and, for a loop's carry-in names among them, the
        values they start from (transitively, for nested loops): in the
        first turn a carry-in is its first value, so changing it in place
        there is checked as changing that value would be (``acc = x`` on
        one path of an ``if``, then ``x *= v`` in a loop)."""
        out = []
        for a in atom_ids:
            while a is not None and a not in out:
                out.append(a)
                init = self._carry_inits.get(a)
                a = init.id if ir.is_name(init) else None
        return out

    def carried_from(self, atom_ids):
        """``atom_ids`` and the carry-in names of loops that start from one
        of them (transitively): in a loop's first turn, the name that
        carries a value is that value."""
        found = list(atom_ids)
        grew = True
        while grew:
            grew = False
            for c, init in self._carry_inits.items():
                if ir.is_name(init) and init.id in found and c not in found:
                    found.append(c)
                    grew = True
        return found

    def loop_body_carrying(self, scope, carry, body_fn, body_stmts, changed=()):
        """``loop_body``, again with the names a call in the body changed
        in place carried too (``CarryMore``); ``carry`` is extended in
        place, so the caller binds them after the loop."""
        held, names = set(), set(self.namer.taken)     # (before any attempt)
        for _ in range(10):
            try:
                return self.loop_body(scope, carry, body_fn, body_stmts, held, names, changed)
            except CarryMore as more:
                carry += [n for n in more.names if n not in carry]
                # (changed in place by a call: aliases among them stay one array)
                changed = tuple(changed) + tuple(n for n in more.names if n not in changed)
            except HeldMore as more:
                held |= more.pairs
        try:
            return self.loop_body(scope, carry, body_fn, body_stmts, held, names, changed)
        except HeldMore:
            raise self.error("what this loop's lists hold does not settle from one turn to "
                             "the next (arrays appended and changed in place)", None,
                             "append copies (xs.append(v.copy())), or make new arrays "
                             "instead of changing them in place") from None

    def loop_body(self, scope, carry, body_fn, body_stmts=(), held=frozenset(),
                  names_before=None, changed=()):
        """Bind carry-in names, run ``body_fn`` nested; return the pieces.
        ``held``: pairs (item, container) of carry names, each held in the
        other at a place known at run time only, as a turn leaves them
        (``members``): the body is converted again until its start has them."""
        before = dict(scope.locals)
        if names_before is None:
            names_before = set(self.namer.taken)
        carry_names = [self.namer.fresh(n) for n in carry]
        inits = [before[n] if n in before else self.enclosing_value(scope, n)
                 or self.unbound_eqn(n, self.eqns) for n in carry]
        shared, guarded = self.shared_carry(scope, carry, body_stmts, changed)
        view_pairs, view_guarded = self.view_carry(scope, carry, body_stmts, changed)
        for n, others in view_guarded.items():
            guarded[n] = guarded.get(n, []) + [m for m in others if m not in guarded.get(n, [])]
        outer_guard = self._carry_guard
        self._carry_guard = dict(outer_guard)
        for n, c, init in zip(carry, carry_names, inits):
            self._carry_inits[c] = init
            if ir.is_name(init) and init.id in self._containers:
                # a dict or list carried: its item updates in the body copy
                # it as the container it is (not as an array)
                self._containers[c] = self._containers[init.id]
            if n in shared:      # aliases of one array: one object in the body too
                self.bind(scope, n, ir.name(carry_names[carry.index(shared[n])]))
            else:
                self.bind(scope, n, ir.name(c))
            if n in guarded:
                self._carry_guard[c] = (n, guarded[n])
        self.link_views(scope, view_pairs)
        turn_start = self.turn_starts(carry, carry_names, inits, held, names_before)
        self._loop_levels[len(self._branch_scopes)] = carry
        outer_live = self._live_carries
        self._live_carries = self.followed_carries(scope, carry, inits, body_stmts)
        try:
            eqns, extra = self.nested(body_fn, scope=scope)
        except CarryMore:
            scope.locals = before
            raise
        finally:
            self._loop_levels.pop(len(self._branch_scopes), None)
            self._live_carries = outer_live
            self._carry_guard = outer_guard
            for c in carry_names:       # after the loop the names are its results
                self._carry_inits.pop(c, None)
        # a name the loop's code does not assign, changed by a call inside
        # it (a helper writing into its argument: ``helper(z)`` with ``z -=
        # ...`` in the helper), was dropped with the body's bindings (a
        # wrong value, fuzz seed 440845): the caller converts the loop
        # again carrying it
        assigned = stored_names(list(body_stmts))
        missed = sorted(n for n, v in scope.locals.items()
                        if n not in carry and n not in assigned and n in before
                        and not isinstance(v, Static) and gast.dump(v) != gast.dump(before[n]))
        if missed:
            scope.locals = before
            raise CarryMore(missed)
        results = []
        for n in carry:
            v = scope.locals.get(n)
            if isinstance(v, Static):
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
        more = self.turn_ends(turn_start, results)
        if more:
            raise HeldMore(more)
        self.exit_views = view_pairs      # for the caller, once the loop's outputs are bound
        return carry_names, inits, eqns, results, extra

    def bind_outputs(self, scope, carry, carry_names, inits, results):
        """After a loop its names are its outputs -- but one whose turns
        all leave it as it came in (rebound only in code a ``break`` or a
        known test skips) is its first value itself: ``acc = x`` before
        it, ``acc`` still shares ``x``'s array, and ``x += v`` after the
        loop changes it (fuzz seed 740601: a new name hid that)."""
        for n, c, init, r in zip(carry, carry_names, inits, results):
            unchanged = ir.is_name(r, c) and ir.is_name(init)
            self.bind(scope, n, init if unchanged else ir.name(c))

    def stmt_While(self, scope, stmt, live_after=frozenset()):
        origin = scope.parsed.origin(stmt)
        self.origin = origin
        runs = self.first_test(scope, stmt.test) is True
        body_live = self.body_reads(scope, stmt.body) | loaded_names([stmt.test]) | set(live_after)
        carry = self.carried(scope, stmt.body, loaded_names([stmt.test]), live_after)
        if not getattr(stmt, "peeled", False) and not stmt.orelse \
                and self.sharing_changes(scope, carry, stmt.body):
            return self.stmt_If(scope, _peeled(stmt), live_after)

        def body():
            cond_eqns, pred = self.nested(self.atom, scope, stmt.test)
            self.block(scope, stmt.body, body_live)
            return cond_eqns, pred

        carry_names, inits, eqns, results, (cond_eqns, pred) = \
            self.loop_body_carrying(scope, carry, body, stmt.body)
        view_pairs = self.exit_views
        self.origin = origin
        self.eqns.append(ir.Eqn(carry_names, P.get("while"), inits, params={
            "carry": tuple(carry_names), "cond": ir.Body(cond_eqns, [pred]),
            "body": ir.Body(eqns, results)}, origin=origin))
        self.bind_outputs(scope, carry, carry_names, inits, results)
        self.link_views(scope, view_pairs)
        self.changed_outside(scope, carry, inits, stmt.body, live_after)
        if not runs:
            self.note_first_values(carry_names, inits, results)   # may run no turn

    def stmt_For(self, scope, stmt, live_after=frozenset()):
        origin = scope.parsed.origin(stmt)
        self.origin = origin
        if isinstance(stmt.iter, (gast.List, gast.Tuple)) and stmt.iter.elts and all(
                isinstance(e, gast.Constant) and isinstance(e.value, str)
                for e in stmt.iter.elts):
            # ``for key in ("a", "b")``: keys, written out (so that ``d[key]``
            # reads and updates a dict at a key known when transforming)
            return self.unroll(scope, stmt, [e.value for e in stmt.iter.elts], live_after)
        if isinstance(stmt.iter, (gast.Name, gast.List, gast.Tuple, gast.Attribute)):
            seq = self.expr(scope, stmt.iter)
            if isinstance(seq, Static) and isinstance(seq.obj, (list, tuple)):
                return self.unroll(scope, stmt, seq.obj, live_after)
        items = self.held_items(scope, stmt)
        if items is not None:       # ``for p in [a, b]: p *= 2``: each array itself
            return self.unroll_items(scope, stmt, items, live_after)
        if not getattr(stmt, "peeled", False) and not stmt.orelse:
            first = self.peeled_range(scope, stmt, live_after)
            if first is not None:
                return self.stmt_If(scope, first, live_after)
        if stmt.orelse:
            stmt.body, orelse = stmt.body, stmt.orelse   # no break here: else always runs
        else:
            orelse = []
        stmt = self.named_sequences(scope, stmt)
        start, stop, step, fetch = self.loop_bounds(scope, stmt)
        body_live = self.body_reads(scope, stmt.body) | set(live_after)
        viewed = self.iterated_in_place(scope, stmt, fetch)
        through_items = self.sequences_changed(scope, stmt, fetch, viewed)
        body_live |= set(through_items)
        carry = self.carried(scope, stmt.body, set(through_items), live_after, through_items)
        index = self.namer.fresh(stmt.target.id if fetch is None else "k")

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

        carry_names, inits, eqns, results, _ = self.loop_body_carrying(
            scope, carry, body, stmt.body, through_items)
        view_pairs = self.exit_views
        self.origin = origin
        self.eqns.append(ir.Eqn(carry_names, P.get("for_range"), [start, stop, step] + inits,
                                params={"carry": tuple(carry_names), "index": index,
                                        "body": ir.Body(eqns, results)}, origin=origin))
        self.bind_outputs(scope, carry, carry_names, inits, results)
        self.link_views(scope, view_pairs)
        self.changed_outside(scope, carry, inits, stmt.body, live_after)
        bounds = [b.value if isinstance(b, gast.Constant) and type(b.value) is int else None
                  for b in (start, stop, step)]
        if None in bounds or bounds[2] == 0 or not len(range(*bounds)):
            # may run no turn: whether it ran, for a constant step
            up = step.value > 0 if isinstance(step, gast.Constant) and \
                type(step.value) is int and step.value else None

            def ran():
                return self.emit(P.get("lt" if up else "gt"), [start, stop], base="ran")
            self.note_first_values(carry_names, inits, results, None if up is None else ran)
        if orelse:
            self.block(scope, orelse, live_after)


class HeldMore(Exception):
    """What a loop's turn leaves held in its carried containers, which its
    start did not have (``loop_body``)."""

    def __init__(self, pairs):
        super().__init__(pairs)
        self.pairs = pairs


def _peeled(loop):
    """``while test: body`` as ``if test: body; while test: body``, the
    loop inside the ``if`` (it runs only where the first turn did), marked
    so that it is not peeled again."""
    rest = gast.While(test=loop.test, body=loop.body, orelse=[])
    rest.peeled = True
    gast.copy_location(rest, loop)
    first = gast.If(test=copy.deepcopy(loop.test), body=copy.deepcopy(loop.body) + [rest],
                    orelse=[])
    return gast.copy_location(first, loop)


_REREADABLE = (gast.Name, gast.Constant, gast.BinOp, gast.UnaryOp, gast.Attribute,
               gast.Subscript, gast.Load, gast.operator, gast.unaryop, gast.Slice, gast.Tuple)


def _rereadable(node, rebound):
    """Whether evaluating ``node`` again gives the same value: names not in
    ``rebound``, constants, operators, attributes, items and ``len``."""
    for n in ir.walk(node):
        if isinstance(n, gast.Call):
            if not (isinstance(n.func, gast.Name) and n.func.id == "len" and not n.keywords):
                return False
        elif isinstance(n, gast.Name):
            if n.id in rebound:
                return False
        elif not isinstance(n, _REREADABLE):
            return False
    return True


def _own_functions(scope, stmts):
    """Functions a loop body defines for itself: ``def g`` at the body's
    top level, ``g`` read nowhere in the function but after it in the body.
    Each turn makes it anew before reading it, so it is not carried (with
    local functions about, liveness counts every name read, and a function
    carried is refused)."""
    own = set()
    for i, stmt in enumerate(stmts):
        if not isinstance(stmt, gast.FunctionDef):
            continue
        n = stmt.name
        inside = [x for s in stmts[i + 1:] for x in ir.walk(s)
                  if isinstance(x, gast.Name) and x.id == n]
        everywhere = [x for x in ir.walk(scope.node)
                      if isinstance(x, gast.Name) and x.id == n]
        if len(inside) == len(everywhere) and not any(
                isinstance(x, gast.Name) and x.id == n
                for s in stmts[:i] for x in ir.walk(s)) and \
                sum(isinstance(s, gast.FunctionDef) and s.name == n for s in stmts) == 1:
            own.add(n)
    return own
