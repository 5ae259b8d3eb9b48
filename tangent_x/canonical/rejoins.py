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

A branch may also have given a view of the changed value (``b = y[::2]``
on one path, a basic index of constants): there the join takes the view
again from the new value (``ViewOf``), and a change of ``b`` writes back
into ``y`` on that path.  Such a write-back is not followed a second
time: a later change of either is refused.

Followed only where it is plain: the change in the ``if``'s block or in
the body of a later ``if`` inside it (whose own join then joins the names
rebound; a loop body in between would have to carry ``b``), each branch's
result the changed value, a view of it or unrelated to it, no other views
of either.  Elsewhere ``check_joined`` and ``check_shared`` refuse as
before.  Mixed into ``converter.Converter``; ``emit_cond`` records the
joins."""
import gast

from ..core import ir, primitives as P
from ..core.naming import item_name
from .mutation import always_array


class ViewOf:
    """A branch's flag (``_passed_through``): it gave the view
    ``value[chain[0]][chain[1]]...`` of the changed value (``atoms``: the
    views taken, the last one the branch's; ``always``: an array whatever
    the rank; else, ``value[0]`` of a 1-d value, a number that shares
    nothing)."""

    def __init__(self, chain, atoms, always):
        self.chain, self.atoms, self.always = chain, atoms, always


# a branch's result after a change written back into the array it viewed:
# not followed again (``_passed_through`` gives None)
_UNFOLLOWED = ir.const(None)


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
        if first[0] != old.id or {a for a in first[1:] if not self._unused(a)} \
                - set(self._view_children.get(old.id, ())) - self._spare_base(old.id):
            return False        # (a view of ``old``: one a branch gave, see rejoin_plan)
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
        if old.id in self._views and not self._spare_base(old.id) or \
                old.id in self._containers or old.id in self._carry_inits:
            return None
        plan, views = [], set()
        for joined in others:
            flags = self._passed_through(joined, old.id)
            if flags is None:
                return None
            plan.append((joined, flags, joined))
            views |= _flag_views(flags)
        if self._views_in_use(old.id) - views:
            return None
        for source in sources:
            flags = self._passed_through(old.id, source)
            if flags is None or source in self._views or \
                    self._views_in_use(source) - _flag_views(flags):
                return None
            plan.append((source, flags, old.id))
        return plan

    def _passed_through(self, joined, value, depth=0, outer=None):
        """Per branch of the join ``joined``: True where it gave ``value``
        itself, ``ViewOf`` where a view of it, False where something
        unrelated, the same list for a nested join that may give it (an
        ``if`` inside a branch of the join ``outer``, or one whose result
        an outer ``if`` passed on); None where it cannot be followed
        (another block, other views, a value that may be ``value``
        otherwise)."""
        record = self._joins.get(joined)
        if record is None or joined in self._views or self._views_in_use(joined) \
                or depth > 20 or any(r is _UNFOLLOWED for r in record[1]):
            return None
        if not (self._reaches(record[2]) and not callable(record[0]) or
                record[2] is self.eqns) and not (depth and self._visible(record[0])):
            # the outer join in this block or one an ``if``'s body here is
            # in (its names are rebound here, and joined by that ``if``); a
            # nested one inside a branch, if its test is computed here or
            # can be given out by the outer ``if`` (``_exported``)
            pred = self._exported(outer, record[0]) if depth else None
            if pred is None:
                return None
            record = self._joins[joined] = (pred, record[1], record[2])
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
            elif self._view_of(r.id, value) is not None:
                flags.append(self._view_of(r.id, value))
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
                inner = self._passed_through(r.id, value, depth + 1, joined)
                if inner is None:
                    return None
                flags.append(inner)
            elif r.id in self._may_alias.get(value, ()):
                return None
            else:
                flags.append(False)
        return flags if any(f is not False for f in flags) else None

    def _visible(self, pred):
        """Whether ``pred`` is a constant or computed in the current block
        (or one an ``if``'s body here is in)."""
        if callable(pred):
            return False
        return not ir.is_name(pred) or any(pred.id in e.outs for block in self._reached()
                                           for e in block)

    def _exported(self, outer, pred):
        """The test ``pred`` of an ``if`` nested in one branch of the join
        ``outer``'s (a comparison computed at that branch's top level),
        made one more output of ``outer``'s ``cond``: ``pred`` on that
        branch, False on the others, which never read it.  None where
        ``outer``'s ``cond`` is not in a block reached from here."""
        record = self._joins.get(outer)
        if record is None or not ir.is_name(pred) or not self._reaches(record[2]):
            return None
        eqn = next((e for e in record[2] if outer in e.outs and e.prim.name == "cond"), None)
        if eqn is None:
            return None
        branches = eqn.params["branches"]
        makes = [any(pred.id in e.outs and e.prim.kind == "compare" for e in b.eqns)
                 for b in branches]
        if makes.count(True) != 1:
            return None
        out = self.namer.fresh(f"{pred.id}_there")
        eqn.outs.append(out)
        for b, made in zip(branches, makes):
            b.results.append(pred if made else ir.const(False))
        return ir.name(out)

    def _reached(self):
        """The current block, and those it is in through ``if`` bodies only."""
        yield self.eqns
        for block, branch in reversed(self._outer_blocks):
            if not branch:
                return
            yield block

    def _reaches(self, block):
        return any(b is block for b in self._reached())

    def _if_array(self, flag, value, if_array, otherwise, base):
        """``if_array()``, or where the view ``flag`` may be a number,
        ``if_array()`` where ``value`` is an array and ``otherwise`` where a
        number (``choose_if_array``)."""
        if flag.always:
            return if_array()
        return self.choose_if_array(value, if_array, otherwise, base)

    def _spare_base(self, atom_id):
        """{the array ``atom_id`` is a view of}, where that array is a
        temporary (``(2 * x)[::-1]``) no name, container or join may hold,
        so a change of the view reaches nothing else; else {}."""
        view = self._views.get(atom_id)
        if view is None or not ir.is_name(view[0]):
            return set()
        base = view[0].id
        if base in self._views or self._in_use(base) or \
                self._views_in_use(base) - {atom_id} or \
                not all(self._through_view(k, atom_id, base)
                        for k, sources in self._may_alias.items() if base in sources):
            return set()
        return {base}

    def _through_view(self, joined, view, base, depth=0):
        """Whether every result of the join ``joined`` that shares ``base``
        does so through ``view`` (is it, or a view of it), nested joins
        alike."""
        record = self._joins.get(joined)
        if record is None or depth > 20:
            return False
        for r in record[1]:
            if not ir.is_name(r) or r.id == view or base not in self.sharing_atoms({r.id}):
                continue
            spec = self._views.get(r.id)
            if spec is not None and ir.is_name(spec[0]) and spec[0].id == view:
                continue
            if r.id in self._joins and self._through_view(r.id, view, base, depth + 1):
                continue
            return False
        return True

    def _unused(self, atom_id):
        """Whether nothing holds the atom ``atom_id`` (a temporary list
        ``np.stack`` read), nor may be it, nor a view of it."""
        return not self._in_use(atom_id) and not self._views_in_use(atom_id) and \
            not any(atom_id in sources for sources in self._may_alias.values())

    def _views_in_use(self, atom_id):
        """The views of ``atom_id`` a name holds (or a view of them does);
        not temporaries (``y[0]`` read once), which nothing reads again."""
        return {v for v in self._view_children.get(atom_id, ()) if self.view_in_use(v)}

    def _view_of(self, view, value):
        """``ViewOf`` where the atom ``view`` is recorded as a view of
        ``value`` taken with basic indexes of constants (``value[::2]``,
        ``value[1:, 0]``, ``value[-1]``, ``value[::-1][-1]`` through a
        temporary), else None."""
        if self._views_in_use(view):
            return None
        chain, atoms, current = [], [], view
        for _ in range(4):
            spec = self._views.get(current)
            if spec is None or not ir.is_name(spec[0]) or not isinstance(spec[1], gast.AST) \
                    or any(isinstance(n, gast.Name) and not _slice_call(spec[1], n)
                           for n in ir.walk(spec[1])):
                return None
            chain.insert(0, spec[1])
            atoms.insert(0, current)
            if spec[0].id == value:
                return ViewOf(chain, atoms, always_array(chain[-1]))
            current = spec[0].id
            if self._in_use(current):       # (a temporary between: x[::-1] of x[::-1][-1])
                return None
        return None

    def rejoin(self, plan, old, new, maybe_number):
        """Apply ``plan`` after ``old`` became ``new``: every name bound to a
        planned atom is rebound to its join on the recorded predicates."""
        for target, flags, joined in plan:
            changed = new
            if maybe_number:        # ``y op= v`` of a number shares nothing
                changed = self.choose_if_array(old, lambda: new, ir.name(target), target)
            out = self._joined_again(joined, flags, target, changed, new, target != joined,
                                     ir.name(joined))
            self._rebind(ir.name(target), out)

    def _joined_again(self, joined, flags, target, changed, new, back, top):
        """``cond(pred, ...)`` of the join ``joined``'s predicate: ``changed``
        where a branch passed the changed value through, ``target`` where
        it gave something else, nested joins built the same way; where it
        gave a view of the changed value, that view of ``new`` (``back``:
        the join changed, ``target`` the value it viewed there: ``new``
        written back into it).  ``top``: the outermost join, the view
        itself on a path where a branch gave one (a view that may be a
        number, ``y[0]``, shares something only where it is an array)."""
        pred, branch_results, block = self._joins[joined]
        if callable(pred):      # a loop's "it ran a turn", emitted when first needed
            pred = pred()
            self._joins[joined] = (pred, branch_results, block)
        results, logical, bodies = [], [], []
        for f, r in zip(flags, branch_results):
            eqns = []
            if f is True:
                results.append(changed)
                logical.append(new)
            elif f is False:
                results.append(ir.name(target))
                logical.append(ir.name(target))
            elif isinstance(f, ViewOf) and back:
                def put(f=f):
                    bases = [ir.name(target)]
                    for idx in f.chain[:-1]:
                        bases.append(self.quietly(self.emit, P.get("getitem"), [bases[-1], idx],
                                                  None, None, None, item_name(bases[-1], idx)))
                    put = new
                    for base, idx in reversed(list(zip(bases, f.chain))):
                        put = self.quietly(self.index_update, base, idx, put, None, target)
                    return put
                eqns, put = self.nested(self._if_array, f, top, put, ir.name(target), target)
                results.append(put)
                logical.append(_UNFOLLOWED)
            elif isinstance(f, ViewOf):
                last_base = []

                def take(f=f):
                    view = new
                    for idx in f.chain:
                        base = view
                        view = self.emit(P.get("getitem"), [base, idx], base=item_name(base, idx))
                        self._add_view(view, base, idx)
                    last_base.append(base)
                    return view
                eqns, view = self.nested(self._if_array, f, top, take, top, target)
                if view.id not in self._views:      # (is_array's choice of the last view)
                    self._add_view(view, last_base[0], f.chain[-1])
                results.append(view)
                logical.append(view)
            else:
                inner = self._joined_again(r.id, f, target, changed, new, back, top)
                results.append(inner)
                logical.append(inner)
            bodies.append(eqns)
        out = self.namer.fresh(target)
        self.emit_cond(pred, [out], [[r] for r in results], bodies, self.origin)
        self._may_alias[out] = {new.id}
        # recorded as giving ``new`` where the branch passed the value
        # through (if ``old`` was a number, nothing shares it, and the next
        # change chooses by ``is_array`` again)
        self.note_join(out, pred, logical)
        return ir.name(out)


def _flag_views(flags):
    """The view atoms ``_passed_through``'s flags name (nested ones too)."""
    found = set()
    for f in flags:
        if isinstance(f, ViewOf):
            found |= set(f.atoms)
        elif isinstance(f, list):
            found |= _flag_views(f)
    return found


def _slice_call(idx, name_node):
    """Whether ``name_node`` is the ``slice`` a slice of ``idx`` calls."""
    return any(isinstance(n, gast.Call) and n.func is name_node and ir.is_name(n.func, "slice")
               for n in ir.walk(idx))
