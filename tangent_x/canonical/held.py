"""Values held at places known at run time only, and what holds what
across a branch's join or a loop's carry (``members`` follows the places
known when transforming).

``xs.append(v)`` to a list grown in a loop, ``xs[i] = v`` at a run-time
``i``, a container that crossed a join or a carry: which item holds a
value is decided at run time.  The value is then held "somewhere"
(``HELD_SOMEWHERE``), and a later change in place of it -- or of an item
of that container -- while the other is still read is refused where it is
made (``check_held``), rather than computed wrongly.  A loop's turn may
leave its carried containers holding what its start did not: the body is
converted again with them (``loops.HeldMore``) when it asked
``check_held`` anything.  Mixed into ``converter.Converter``."""
import gast

from ..core import ir
from .members import HELD_SOMEWHERE
from .mutation import read_later_in


class Held:
    """Mixed into ``converter.Converter``."""

    def held_somewhere(self, before, after):
        """``after`` may hold what ``before`` held (a container, or a value
        held in containers), at places known at run time only."""
        if not (ir.is_name(before) and ir.is_name(after)) or before.id == after.id:
            return
        for item in self.items_of(before):
            self.note_holder(item, after, HELD_SOMEWHERE)
        for container, _ in self._holders.get(before.id, []):
            self.note_holder(after, container, HELD_SOMEWHERE)

    def items_of(self, container):
        """Every value ``container`` is known to hold, at a known key or not."""
        found = []
        if container.id in self._members:
            found += [i for i in self._members[container.id][2] if ir.is_name(i)]
        found += [ir.name(a) for a in self._somewhere.get(container.id, ())]
        return found

    def check_held(self, scope, node, atom, names, what):
        """Before changing ``atom`` in place: refuse where a value sharing
        it is held in a container in use at a place known at run time only
        (``names(atom ids)``: the user names bound to them read later)."""
        if not ir.is_name(atom):
            return
        self._held_checks += 1
        for a in self.sharing_atoms({atom.id}):
            for container, key in self._holders.get(a, []):
                if key is not HELD_SOMEWHERE:
                    continue
                holders = names(self._holding_names(container.id))
                if holders:
                    raise self.error(
                        f"this changes in place {what}, which the container "
                        f"'{holders[0]}' also holds at a place known only at run time "
                        f"(appended in a loop, stored at a run-time index, kept through a "
                        f"branch or loop, or a view of it on one path of a branch): NumPy "
                        f"would change it there too", node,
                        f"store a copy ('{holders[0]}.append(v.copy())'), or make a new "
                        f"array instead of changing this one ('v = v * ...')", scope)
            if a == atom.id and self._containers.get(a) in ("list", "dict"):
                continue        # ``xs[i] = v`` replaces an item: none changes
            for item in self.items_of(ir.name(a)):
                somewhere = any(c.id == a and k is HELD_SOMEWHERE
                                for c, k in self._holders.get(item.id, []))
                others = names(self.sharing_atoms({item.id})) if somewhere else []
                if others:
                    raise self.error(
                        f"this changes in place {what}, an item of a container that may "
                        f"be the array '{others[0]}' (held at a place known only at run "
                        f"time): NumPy would change '{others[0]}' too", node,
                        f"put a copy in the container ('{others[0]}.copy()'), or make a "
                        f"new array instead of changing this one", scope)

    def cross(self, mapping, defined=frozenset(), skip=frozenset()):
        """What is held where, carried across a branch's join or a loop's
        carry: ``mapping`` {atom id inside: the atom outside standing for
        it}, ``defined`` the atoms that mean nothing outside.  Returns the
        pairs (item atom, container atom) outside, each held at a place
        known at run time only; ``skip``: outputs whose items are known."""
        def outside(a):
            if a.id in mapping:
                return mapping[a.id]
            return None if a.id in defined or a.id in self.env else a
        pairs = set()
        for r_id, out in mapping.items():
            if out.id not in skip:
                for item in self.items_of(ir.name(r_id)):
                    there = outside(item)
                    if there is not None and there.id != out.id:
                        pairs.add((there.id, out.id))
            for container, _ in self._holders.get(r_id, []):
                there = outside(container)
                if there is not None and there.id not in skip and there.id != out.id:
                    pairs.add((out.id, there.id))
        return pairs

    def turn_starts(self, carry, carry_names, inits, held, names_before):
        """A loop's body starts: its carry-in names hold what their first
        values hold, and what a turn leaves (``held``: pairs naming a
        carried value by ("carried", name), any other by ("atom", id)).
        Returns what ``turn_ends`` needs."""
        entry = {init.id: ir.name(c) for init, c in zip(inits, carry_names) if ir.is_name(init)}
        by_name = {("carried", n): c for n, c in zip(carry, carry_names)}
        self.note_held(self.cross(entry) | {(by_name.get(i, i[1]), by_name.get(c, c[1]))
                                             for i, c in held})
        return carry_names, held, by_name, names_before, self._held_checks

    def turn_ends(self, start, results):
        """A loop's body was converted (its ``results``): what a turn leaves
        held that its start did not.  Noted when the body asked
        ``check_held`` nothing (a second conversion would change nothing);
        else returned, for ``loops.HeldMore``: the body is converted again
        with them."""
        carry_names, held, by_name, names_before, checks = start
        turn = {r.id: ir.name(c) for r, c in zip(results, carry_names) if ir.is_name(r)}
        inside = self.namer.taken - names_before      # (the test's values too)
        more = {p for p in self.cross(turn, inside - set(turn)) if not self.is_held(*p)}
        if not more or self._held_checks == checks:
            self.note_held(more)
            return None
        named = {c: n for n, c in by_name.items()}
        return set(held) | {(named.get(i, ("atom", i)), named.get(c, ("atom", c)))
                            for i, c in more}

    def note_held(self, pairs):
        for item, container in pairs:
            self.note_holder(ir.name(item), ir.name(container), HELD_SOMEWHERE)

    def is_held(self, item_id, container_id):
        """Whether ``item_id`` is noted as held somewhere in ``container_id``."""
        return any(c.id == container_id and k is HELD_SOMEWHERE
                   for c, k in self._holders.get(item_id, []))

    def join_members(self, outs, branches):
        """What the outputs of a ``cond`` hold: the members a container
        result has on every path, at the same keys, each the same output
        (or the same value from before the branch); else, conservatively,
        its items held at places known at run time only."""
        known = set()
        for i, out in enumerate(outs):
            shape, mapped, read = None, None, True
            for body in branches:
                r = body.results[i]
                m = self._members.get(r.id) if ir.is_name(r) else None
                if m is None or (shape is not None and shape != m[:2]):
                    break
                read = read and m[3]
                defined = body.defined()
                here = []
                for item in m[2]:
                    j = next((j for j, b in enumerate(body.results)
                              if ir.is_name(item) and ir.is_name(b) and b.id == item.id), None)
                    if j is None and ir.is_name(item):
                        # an alias of a result (``update_if_array``'s choice of
                        # an item: that result if an array, else the number it
                        # was): followed, but a read of the item not folded
                        root = self._alias_root(item)
                        j = next((j for j, b in enumerate(body.results)
                                  if ir.is_name(b) and b.id == root.id), None)
                        read = read and j is None
                    if j is not None:
                        here.append(("out", j))
                    elif ir.is_name(item) and item.id in defined:
                        break
                    else:
                        here.append(("same", gast.dump(item)))
                else:
                    if mapped is not None and mapped != here:
                        break
                    shape, mapped = m[:2], here
                    continue
                break
            else:
                if shape is not None:
                    first = self._members[branches[0].results[i].id][2]
                    items = [ir.name(outs[v]) if kind == "out" else item
                             for (kind, v), item in zip(mapped, first)]
                    self.note_members(ir.name(out), shape[0], shape[1], items, read)
                    known.add(out)
        for body in branches:
            mapping = {}
            for r, out in zip(body.results, outs):
                if ir.is_name(r):
                    mapping.setdefault(r.id, ir.name(out))
            self.note_held(self.cross(mapping, body.defined(), skip=known))

    def _alias_root(self, atom):
        """The value ``atom`` is recorded as all of (``x[...]``), transitively."""
        seen = set()
        while atom.id in self._views and atom.id not in seen:
            seen.add(atom.id)
            base, idx = self._views[atom.id]
            if not (isinstance(idx, gast.Constant) and idx.value is Ellipsis):
                break
            atom = base
        return atom

    def _holding_names(self, atom_id, seen=None):
        """``atom_id`` and the containers holding it, transitively."""
        seen = seen if seen is not None else []
        if atom_id in seen:
            return seen
        seen.append(atom_id)
        for c, _ in self._holders.get(atom_id, []):
            self._holding_names(c.id, seen)
        return seen

    def read_later_names(self, scope, live, skip=None):
        """``names(atom ids)``: the user names bound to those values that are
        read after the current statement (``live``: the scope's), but
        ``skip`` in ``scope`` itself."""
        read_later = read_later_in(scope, live)

        def names(atom_ids):
            return sorted({n for atom_id in atom_ids for s, n in self._bindings.get(atom_id, [])
                           if (s is not scope or n != skip)
                           and ir.is_name(s.locals.get(n)) and s.locals[n].id == atom_id
                           and not s.finished and read_later(s, n)})
        return names
