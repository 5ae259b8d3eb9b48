"""In-place changes of a value an ``if`` passed through on one path.

After ``b = y`` in one branch only, ``b`` is ``y``'s very array on that
path and another value on the other, decided at run time.  ``y *= v`` (or
``y[i] = v``) then changes ``b`` on that path only; ``b -= v`` changes
``y`` on that path only.  The ``if`` knows which path ran: its predicate.
So the change is followed by a join on that same predicate, written where
the change is:

    b = cond(pred, [y_new if the branch passed y through else b, ...])

(and for ``b -= v``: ``y = cond(pred, [b_new where b was y, else y])``).
The join records what it may be again, so a second change is followed the
same way.  Where ``y`` may be a number (``y op= v`` rebinds a number and
shares nothing), the passed-through case is chosen by ``is_array(y)`` at
run time too.

Followed only where it is plain: the ``if`` and the change in one block
(a loop body in between would have to carry ``b``), each branch's result
either exactly the changed value or unrelated to it, no views of either.
Elsewhere ``check_joined`` and ``check_shared`` refuse as before.  Mixed
into ``converter.Converter``; ``emit_cond`` records the joins."""
from ..core import ir


class Rejoins:
    """Mixed into ``converter.Converter``."""

    def note_join(self, out, pred, results):
        """``out`` is ``cond(pred, results...)``, emitted in the current block."""
        self._joins[out] = (pred, list(results), self.eqns)

    def plan_rejoin(self, old, first, names):
        """Plan to follow the change of ``old`` (``first``: it and what it
        starts from in a loop; ``names(atom ids)``: the user names bound to
        them that are read later); kept for ``rejoin_pending``.  Whether
        it can be followed."""
        if first != [old.id]:
            return False
        others = [a for a in self._joined_aliases(first) if names([a])]
        sources = [a for a in self._joined_sources(first) if names([a])]
        plan = self.rejoin_plan(old, others, sources)
        self._rejoin_next = None if plan is None else (plan, old)
        return plan is not None

    def _joined_aliases(self, atom_ids):
        """Values an ``if`` chose that may be one of ``atom_ids`` (on the path
        where a branch passed it through)."""
        ids = set(atom_ids)
        # and its siblings: after ``if c: x = 2 * x else: b = x``, the joins
        # ``x`` and ``b`` may both be the first ``x``, so changing one in
        # place changes the other on that path (fuzz seed 491467); a view
        # kept through the ``if`` is followed as a view instead
        siblings = {src for a in atom_ids for src in self._may_alias.get(a, ())} - ids
        return sorted(out for out, sources in self._may_alias.items()
                      if out not in ids and (sources & ids or (
                          sources & siblings and out not in self._views)))

    def _joined_sources(self, atom_ids):
        """The other way round: values from before an ``if`` that the values
        it chose (``atom_ids``) may be (``b = x`` on one path, then ``b -= v``
        changes ``x`` on that path only)."""
        return sorted({src for a in atom_ids for src in self._may_alias.get(a, ())})

    def rejoin_pending(self, new, maybe_number):
        """Apply the plan the last check made, now that the changed value is
        ``new``."""
        pending, self._rejoin_next = self._rejoin_next, None
        if pending is not None:
            plan, old = pending
            self.rejoin(plan, old, new, maybe_number)

    def rejoin_plan(self, old, others, sources):
        """How to follow an in-place change of ``old`` (an atom): ``others``
        are joins that may be ``old``, ``sources`` values ``old`` (a join)
        may be.  A list of (join or source atom id, predicate, per-branch
        flags: the branch passed the changed value through, the join's atom
        id), or None where it cannot be followed."""
        if old.id in self._views or self._view_children.get(old.id) \
                or old.id in self._containers or old.id in self._carry_inits:
            return None
        plan = []
        for joined in others:
            flags = self._passed_through(joined, old.id)
            if flags is None:
                return None
            plan.append((joined, flags, joined))
        for source in sources:
            flags = self._passed_through(old.id, source)
            if flags is None or source in self._views or self._view_children.get(source):
                return None
            plan.append((source, flags, old.id))
        return plan

    def _passed_through(self, joined, value, depth=0):
        """Per branch of the join ``joined``: True where it gave ``value``
        itself, False where it gave something unrelated, the same list
        for a nested join that may give it (an ``if`` inside a branch, or
        one whose result an outer ``if`` passed on); None where it cannot
        be followed (another block, views, a value that may be ``value``
        otherwise)."""
        record = self._joins.get(joined)
        if record is None or joined in self._views or self._view_children.get(joined) \
                or depth > 20:
            return None
        if record[2] is not self.eqns and not (depth and self._visible(record[0])):
            # the outer join in this block (its names are rebound here); a
            # nested one inside a branch, if its test is computed here
            return None
        sibling = self._joins.get(value)
        if sibling is not None and not depth and (
                sibling[0] is not record[0] or len(sibling[1]) != len(record[1])):
            sibling = None      # (a join of another ``if``: see below)
        flags = []
        for i, r in enumerate(record[1]):
            if not ir.is_name(r):
                flags.append(False)
            elif r.id == value:
                flags.append(True)
            elif sibling is not None and r.id in self._may_alias.get(value, ()):
                # the changed value is a join of the same ``if``: on this
                # path it is that branch's result, which ``r`` is or is not
                v = sibling[1][i]
                if ir.is_name(v) and v.id == r.id:
                    flags.append(True)
                elif ir.is_name(v) and (v.id in self._may_alias.get(r.id, ()) or
                                        r.id in self._may_alias.get(v.id, ())):
                    return None
                else:
                    flags.append(False)
            elif value in self._may_alias.get(r.id, ()):
                inner = self._passed_through(r.id, value, depth + 1)
                if inner is None:
                    return None
                flags.append(inner)
            elif r.id in self._may_alias.get(value, ()):
                return None
            else:
                flags.append(False)
        return flags if any(f is not False for f in flags) else None

    def _visible(self, pred):
        """Whether ``pred`` is a constant or computed in the current block."""
        if callable(pred):
            return False
        return not ir.is_name(pred) or any(pred.id in e.outs for e in self.eqns)

    def rejoin(self, plan, old, new, maybe_number):
        """Apply ``plan`` after ``old`` became ``new``: every name bound to a
        planned atom is rebound to its join on the recorded predicates."""
        for target, flags, joined in plan:
            changed = new
            if maybe_number:        # ``y op= v`` of a number shares nothing
                changed = self.choose_if_array(old, lambda: new, ir.name(target), target)
            out = self._joined_again(joined, flags, target, changed, new)
            self._rebind(ir.name(target), out)

    def _joined_again(self, joined, flags, target, changed, new):
        """``cond(pred, ...)`` of the join ``joined``'s predicate: ``changed``
        where a branch passed the changed value through, ``target`` where
        it gave something else, nested joins built the same way."""
        pred, branch_results, block = self._joins[joined]
        if callable(pred):      # a loop's "it ran a turn", emitted when first needed
            pred = pred()
            self._joins[joined] = (pred, branch_results, block)
        results, logical = [], []
        for f, r in zip(flags, branch_results):
            if f is True:
                results.append(changed)
                logical.append(new)
            elif f is False:
                results.append(ir.name(target))
                logical.append(ir.name(target))
            else:
                inner = self._joined_again(r.id, f, target, changed, new)
                results.append(inner)
                logical.append(inner)
        out = self.namer.fresh(target)
        self.emit_cond(pred, [out], [[r] for r in results], [[] for _ in flags], self.origin)
        self._may_alias[out] = {new.id}
        # recorded as giving ``new`` where the branch passed the value
        # through (if ``old`` was a number, nothing shares it, and the next
        # change chooses by ``is_array`` again)
        self.note_join(out, pred, logical)
        return ir.name(out)
