"""Which carried names of a loop share an array, and what a loop's
in-place changes mean for names it does not carry.

Python's ``y[i] = v`` and ``y += v`` change every name sharing ``y``'s
array.  A loop carries each of its scope's names separately, so before a
body is converted these analyses say which carried names must stay one
array in the body (aliases, views), which loops change that sharing
between turns (peeled or refused), and, after it, which names of the
calling scopes follow the loop's results.  Mixed into
``converter.Converter`` beside ``loops.Loops``."""
import gast

from ..core import ir, primitives as P
from ..core.naming import item_name
from . import views
from .mutation import _whole, always_array, read_later_in
from .names import changed_names, plainly_rebound, rebinding, stored_names
from .scope import CarryMore


class LoopSharing:
    """Mixed into ``converter.Converter``."""

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

    def view_carry(self, scope, carry, stmts, changed=()):
        """Carried names one of which is a view of another (``row = x[0]``
        before a loop that changes ``row`` or ``x`` in place): the relation
        holds in every iteration while neither is rebound in the loop, so the
        body's carry-in names get it too (``link_views``); if one is
        rebound, which array the view is of changes between iterations:
        ``guarded``, as for aliases.  Returns ([(view name, base name,
        index)], {name: [names it shares with]}).  ``row += v`` is no rebinding."""
        mutated, rebound = changed_names(stmts, changed)[0], rebinding(stmts)
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

    def shared_carry(self, scope, carry, stmts, changed=()):
        """Carried names that alias one array the loop changes in place.

        After ``z = y``, ``y[i] = v`` in a loop must change ``z`` in every
        iteration, so inside the body both names are bound to one carry-in
        name (a mutation then rebinds both, as in straight-line code).  That
        holds while neither name is rebound in the loop; if one is
        (``y = np.copy(y)``), each keeps its own carry, and changing the
        carried-in array in place is reported (``guarded``) rather than
        computed wrongly.  Returns ({name: first carried name sharing its
        value}, {name: the other names of its group})."""
        mutated, rebound = changed_names(stmts, set(changed))
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
        read_later = read_later_in(scope, frozenset())      # only other scopes are asked
        for n in sorted(mutated & plainly_rebound(stmts) & set(carry)):
            # a helper's parameter changed in place, then rebound, in its
            # loop: the first iteration changes the caller's array too,
            # which matters where the caller reads that name after the call
            v = scope.locals.get(n)
            callers = [m for s, m in self._bindings.get(v.id, []) if s is not scope
                       and ir.is_name(s.locals.get(m)) and s.locals[m].id == v.id
                       and read_later(s, m)] if ir.is_name(v) else []
            if callers:
                guarded[n] = guarded.get(n, []) + [m for m in callers
                                                   if m not in guarded.get(n, [])]
        return shared, guarded

    def sharing_changes(self, scope, carry, stmts):
        """Whether which carried names share an array changes between the
        loop's turns (``acc = x`` before a loop that changes ``x`` in place
        and rebinds ``acc``: they share it in the first turn only).  Such a
        loop is peeled (``_peeled``): its first turn is straight-line code
        inside an ``if``, where the sharing is followed as anywhere, and
        the loop after it starts with the names apart.  Where the turns
        after the first still differ (a rebinding on one path of the body),
        the loop left refuses as before (``loop_body``'s ``guarded``)."""
        guarded = self.shared_carry(scope, carry, stmts)[1]
        return bool(guarded or self.view_carry(scope, carry, stmts)[1])

    def changed_outside(self, scope, carry, inits, body_stmts, live_after):
        """What a loop changed in place, seen outside ``scope`` too.

        A name of ``scope`` sharing a carried array is carried itself
        (``carried``), but a calling scope's is not: after ``helper(y)``
        whose loop does ``q[0] += v`` (or ``q += v``), ``y`` is the loop's
        result for ``q``, as after straight-line code (``propagate``), as
        are the views of it, the array it is a view of and the containers
        holding it (fuzz seed 730217).  Only for names the loop changes
        without rebinding (a rebinding loop is peeled or refused:
        ``shared_carry``); ``op=`` alone changes an array only
        (``update_if_array``)."""
        rebound = rebinding(body_stmts)
        written = stored_names(body_stmts, binds=False)
        read_later = read_later_in(scope, live_after)
        done = set()        # (aliases carried alike: one array, followed once)
        for n, init in zip(carry, inits):
            new = scope.locals.get(n)
            if n in rebound or not ir.is_name(init) or not ir.is_name(new) \
                    or new.id == init.id or init.id in done \
                    or not self._seen_outside(scope, init.id):
                continue
            done.add(init.id)
            if n in written:
                self.propagate(init, new)
            else:
                self.update_if_array(scope, n, init, new, read_later)

    def followed_carries(self, scope, carry, inits, body_stmts):
        """For a loop body: the first values of the carried names the loop
        changes only in place (never rebinds), each -> (``scope``, name),
        added to the enclosing loops'.  Such a name is one array in every
        turn, so another name bound to its first value -- a caller's, or
        one of ``scope`` the loop does not carry, read by a function
        called in the body -- is that array as the turn has it
        (``live_value``)."""
        live = dict(self._live_carries)
        rebound = rebinding(body_stmts)
        for n, init in zip(carry, inits):
            if n not in rebound and ir.is_name(init):
                live.setdefault(init.id, (scope, n))
        return live

    def live_value(self, s, name_, node, scope):
        """``name_`` of scope ``s`` read inside a loop body (``lookup``):
        where it names the first value of an array the loop changes in
        place, the array as the turn has it (fuzz seed 741525: a helper
        reading its caller's array through a closure saw the first
        turn's); where it names a view of that value, or the array that
        value is a view of, the view taken again or written back (as
        ``propagate`` does).  Further relations are refused, located."""
        v = s.locals[name_]
        if not ir.is_name(v):
            return v
        live = self._live_carries
        current = self.current_of(v)
        if current is not None:
            return current
        view = self._views.get(v.id)
        if view is not None and view[0].id in live:         # a view of it
            return self.view_again(v, view[1], self.current_of(view[0]))
        for a, (base, idx) in self._views.items():
            if base.id == v.id and a in live:                 # the array it is a view of
                new = self.current_of(ir.name(a))
                if isinstance(idx, views.ViewCall):
                    return self.written_back(v, idx, new)
                return v if _whole(idx) else self.index_update(v, idx, new, None, v.id)
        for a in self.sharing_atoms({v.id}) - {v.id}:
            if a in live:
                raise self.error(
                    f"'{name_}' shares memory with '{live[a][1]}', which this loop changes "
                    f"in place, through views tangent_x does not follow inside the loop: "
                    f"it would read '{name_}' as it was before the loop", node,
                    f"take '{name_}' again inside the loop, or pass it as an argument", scope)
        return v

    def current_of(self, atom):
        """The array ``atom`` is the first value of, as the innermost loop's
        turn has it: through the loops nested in one another, each carrying
        the one around it's carried name (``g(p): for ...: h(p)`` with
        ``h(q): for ...: q[0] = ...``: ``p``'s value in ``h``'s turn is
        ``q``'s, fuzz seed 760155); None where no loop carries it."""
        live, found, seen = self._live_carries, None, set()
        while ir.is_name(atom) and atom.id in live and atom.id not in seen:
            seen.add(atom.id)
            loop_scope, n = live[atom.id]
            atom = found = loop_scope.locals.get(n, atom)
        return found

    def view_again(self, view, idx, base):
        """The view ``idx`` of ``base`` (``view`` where NumPy copied): for
        a loop's turn here, and for ``Mutation._refresh_views``."""
        def taken():
            return self.emit(P.get("getitem"), [base, idx], base=item_name(base, idx))
        if _whole(idx):         # an alias recorded as ``base[...]``: the same array
            return base
        if isinstance(idx, views.ViewCall):
            return self.taken_again(view, idx, base)
        if always_array(idx):
            return taken()
        # ``x[0]`` of a 1-d array is a number: a copy, not a view
        return self.choose_if_array(view, taken, view, item_name(base, idx))

    def _seen_outside(self, scope, atom_id):
        """Whether a value sharing memory with ``atom_id`` is bound in a
        scope other than ``scope`` (a caller's) or held in a container."""
        return any(a in self._holders or any(s is not scope and not s.finished
                                             for s, _ in self._bindings.get(a, []))
                   for a in self.sharing_atoms({atom_id}))

    def carry_sharing(self, scope, name_):
        """A caller's ``name_`` changed inside the innermost loop body, of
        a function it called: where a name of the loop's own scope the
        loop does not carry named the same array (``p`` of ``def g(p):
        for ...: h(p)``), the loop is converted again carrying it
        (``CarryMore``), and after the loop the caller's name follows
        (``changed_outside``).  Otherwise ``bind`` refuses."""
        level = len(self._branch_scopes) - 1
        carry, old = self._loop_levels.get(level), scope.locals.get(name_)
        if carry is None or not ir.is_name(old):
            return
        own = self._branch_scopes[level]
        names = sorted({n for a in self.sharing_atoms({old.id})
                        for s, n in self._bindings.get(a, [])
                        if s is own and n not in carry and n in own.locals})
        if names:
            raise CarryMore(names)
        if name_ not in carry and _sees(own, scope, name_):
            # the loop's function reads ``name_`` from ``scope`` (a closure,
            # ``helper(x)`` in a loop of a function nested in the one
            # binding ``x``): carried under that name, from its value there
            raise CarryMore([name_])

    def enclosing_value(self, scope, name_):
        """The array a function's enclosing scopes bind to ``name_`` (as a
        loop body reads it: ``live_value``), for a loop carrying a name
        its function does not bind (``carry_sharing``); None otherwise."""
        if name_ in scope.assigned:
            return None
        s = scope.parent
        while s is not None and name_ not in s.locals:
            s = None if name_ in s.assigned else s.parent
        if s is None or not ir.is_name(s.locals[name_]):
            return None
        return self.live_value(s, name_, None, scope) if self._live_carries \
            else s.locals[name_]


def _sees(own, scope, name_):
    """Whether code of ``own`` reading ``name_`` reads ``scope``'s: ``scope``
    encloses ``own`` and nothing between binds the name."""
    s = own
    while s is not None and s is not scope:
        if name_ in s.locals or name_ in s.assigned:
            return False
        s = s.parent
    return s is scope
