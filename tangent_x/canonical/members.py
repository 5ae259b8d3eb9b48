"""Arrays held in tuples, lists and dicts: Python's sharing, followed.

``t = (x, y)`` holds the arrays ``x`` and ``y`` themselves, not copies: a
later change in place of ``x`` is seen through ``t[0]``, and a change made
through ``t[0]`` is seen through ``x``.  The converter records what a
container built in the code holds at each key (``_members``: kind, keys,
items) and, for each value, the containers holding it (``_holders``).

- A read ``t[0]`` of a known member is that member: the same atom, so an
  alias of it (``member_at``, read by ``static_item``).
- A change in place of a member rebuilds each container holding it that is
  still in use (``follow_members``, called by ``propagate`` for every value
  a change reaches), and that container's change goes on from there.
- ``xs[k] = v`` at a constant key gives a container whose members are
  known again; ``xs.append(v)`` to a list whose members are known too.

A read ``t[0]`` of an item nothing else names stays ``t[0]`` (a view of
``t``): the user's names for it are kept.  Where the key is known at run
time only, ``held`` takes over.  Mixed into ``converter.Converter``."""
import gast

from ..core import ir, primitives as P
from ..core.naming import base_name
from . import views
from .mutation import read_later_in

HELD_SOMEWHERE = object()     # the key of a value held at a place known at run time only
# primitives whose result, given a container, holds the objects it holds
# (a slice of a list: ``item_of``; an item set or appended: ``members_after_*``)
_SHARES_ITEMS = frozenset(("list_copy", "dict_copy", "list_to_tuple", "add", "mul",
                           "builtins.list", "inplace_result"))


class Members:
    """Mixed into ``converter.Converter``."""

    def list_pop(self, scope, name_node, target):
        """``v = xs.pop()``: the last item, and ``xs`` rebound without it."""
        old = self.atom(scope, name_node)
        item = self.member_at(old, ir.const(-1))     # (the array itself, if known)
        if item is None:
            item = self.emit(P.get("getitem"), [old, ir.const(-1)], target=target, base="last")
        rest = self.emit(P.get("getitem"), [old, ir.slice_call(None, ir.const(-1), None)],
                         target=name_node.id)
        self.members_after_pop(old, rest)
        self.propagate(old, rest)
        self.bind(scope, name_node.id, rest)
        return item

    def augmented_item(self, scope, target, base, idx, value, binop):
        """``base[idx] op= value`` of a list or dict: the item after ``op=``."""
        old = self.item_of(base, idx, None)
        label = ir.ast_text(target)
        shared = self.check_shared(scope, self._stmt, label, old, self._live_after)
        new = self.emit(P.get(binop), [old, value], base=base_name("", old) or "item")
        new = self.emit(P.get("inplace_result"), [new, old], base=new.id)
        if shared:
            self.update_if_array(scope, label, old, new,
                                 read_later_in(scope, self._live_after))
        return new

    def detach_items(self, scope, target, base, idx):
        """``xs[k] = v`` into a list or dict puts another object at ``k``: a
        name that read the item there before (``a = xs[k]``, recorded as a
        view of ``xs``) keeps the old object, no longer in ``xs`` -- its
        view relation ends (an array's ``x[k] = v`` writes into memory
        instead, which its views see).  At a run-time key, which item is
        replaced is not known when transforming: refused where such a name
        is read later."""
        children = [c for c in self._view_children.get(base.id, [])
                    if not isinstance(self._views[c][1], views.ViewCall)]
        if not isinstance(idx, gast.Constant):
            names = self.read_later_names(scope, self._live_after)
            if children and names(children):
                raise self.error(
                    f"this puts a new item into a list or dict at a key known only at run "
                    f"time, while '{names(children)[0]}' names an item read from it before "
                    f"(Python keeps the old object there; which one is replaced is decided "
                    f"at run time)", target,
                    "read the item again after the assignment, or copy it when reading it", scope)
            return
        for c in children:
            k = self._views[c][1]
            if isinstance(k, gast.Constant) and k.value == idx.value:
                del self._views[c]
                self._view_children[base.id].remove(c)

    def note_members(self, out, kind, keys, items, read=True):
        """``out`` is a ``kind`` ("tuple", "list", "dict") holding ``items``
        at ``keys``.  ``read``: a read ``out[k]`` may be the item itself;
        False where that holds only if the items are arrays (a change
        followed where it may have been a number's: ``update_if_array``),
        so only a later change of an item is followed."""
        if not ir.is_name(out):
            return
        self._members[out.id] = (kind, tuple(keys), tuple(items), read)
        for key, item in zip(keys, items):
            self.note_holder(item, out, key)

    def note_holder(self, item, container, key):
        if ir.is_name(item) and item.id not in self.env:
            mark = (item.id, container.id, key)
            if mark not in self._held_marks:
                self._held_marks.add(mark)
                self._holders.setdefault(item.id, []).append((container, key))
                if key is HELD_SOMEWHERE:       # (``items_of`` reads it back)
                    self._somewhere.setdefault(container.id, []).append(item.id)

    def rename_container(self, old, new):
        """The value ``old``, made by the last equation, is now named ``new``
        (that equation's output renamed): what it holds goes with it (no
        later equation can hold it yet)."""
        items = [i.id for i in self._members.get(old.id, (None, (), ()))[2] if ir.is_name(i)]
        items += self._somewhere.get(old.id, [])
        for item in set(items):
            self._holders[item] = [(new if c.id == old.id else c, k)
                                   for c, k in self._holders.get(item, [])]
        if old.id in self._members:
            self._members[new.id] = self._members.pop(old.id)
        if old.id in self._somewhere:
            self._somewhere[new.id] = self._somewhere.pop(old.id)

    def member_at(self, base, idx):
        """The value the container ``base`` built in the code holds at the
        constant key ``idx`` (an alias of it), else None."""
        if not (ir.is_name(base) and base.id in self._members
                and isinstance(idx, gast.Constant)):
            return None
        kind, keys, items, read = self._members[base.id]
        if not read:
            return None
        key = idx.value
        if kind == "dict":
            found = [i for i, k in enumerate(keys) if type(k) is type(key) and k == key]
            return self._shared_elsewhere(items[found[-1]], base) if found else None
        if type(key) is not int or not -len(items) <= key < len(items):
            return None             # (Python's IndexError, at run time)
        return self._shared_elsewhere(items[key % len(items)], base)

    def _shared_elsewhere(self, item, container):
        """``item`` where some other name, view or container also holds it
        (a change through the one is then seen through the others); else
        None: the item is read as ``container[key]``, as written (``gW, gb
        = grads(...)`` keeps the user's names), a view of the container."""
        if not ir.is_name(item) or item.id in self.env:
            return item
        named = any(not s.finished and ir.is_name(s.locals.get(n)) and s.locals[n].id == item.id
                    for s, n in self._bindings.get(item.id, []))
        if named or item.id in self._views or \
                self._view_children.get(item.id) or item.id in self._members or any(
                    c.id != container.id for c, _ in self._holders.get(item.id, [])):
            return item
        return None

    def members_sliced(self, base, idx, target, kind=None):
        """A constant slice of a tuple or list built in the code: a new one
        of the members kept (``kind``: as that kind, a starred target's
        list), else None."""
        known = self._members.get(base.id) if ir.is_name(base) else None
        window = _constant_window(idx)
        if known is None or not known[3] or known[0] == "dict" or window is None:
            return None
        kept = list(known[2][window])
        kind = kind or known[0]
        out = self.emit(P.get(kind), kept, target=target, base="rest")
        if kind == "list":
            self._containers[out.id] = "list"
        else:
            self._tuple_lengths[out.id] = len(kept)
        self.note_members(out, kind, range(len(kept)), kept)
        return out

    def members_after_set(self, base, idx, value, out):
        """``out`` is ``base`` with ``value`` at ``idx`` (``base[idx] = value``)."""
        if not (ir.is_name(base) and ir.is_name(out) and out.id in self._containers):
            return                  # an array: it holds copies of numbers
        known = self._members.get(base.id)
        if known is not None and isinstance(idx, gast.Constant):
            kind, keys, items, read = known
            key = idx.value
            if kind == "dict":
                hit = [i for i, k in enumerate(keys) if type(k) is type(key) and k == key]
                if hit:
                    items = items[:hit[0]] + (value,) + items[hit[0] + 1:]
                else:
                    keys, items = keys + (key,), items + (value,)
                self.note_members(out, kind, keys, items, read)
                return
            if type(key) is int and -len(items) <= key < len(items):
                k = key % len(items)
                self.note_members(out, kind, keys, items[:k] + (value,) + items[k + 1:], read)
                return
        self.held_somewhere(base, out)
        self.note_holder(value, out, HELD_SOMEWHERE)

    def members_after_append(self, base, value, out):
        known = self._members.get(base.id) if ir.is_name(base) else None
        if known is not None and known[0] == "list":
            _, keys, items, read = known
            self.note_members(out, "list", keys + (len(keys),), items + (value,), read)
            return
        self.held_somewhere(base, out)
        self.note_holder(value, out, HELD_SOMEWHERE)

    def members_written_back(self, base, idx, item, updated):
        """An item of the list or dict ``base`` changed in place (now
        ``item``), written back at ``idx``.  At a constant key, ``updated``
        holds the other members as they were.  At a run-time key (``a =
        xs[i]; a *= 2``) the item at each known key of ``updated`` is the
        member that was there -- changed if it was that item -- so every
        member is read again (the changed item itself is followed as a
        view of ``updated``)."""
        known = self._members.get(base.id) if ir.is_name(base) else None
        if known is None or not (ir.is_name(updated) and updated.id in self._containers):
            return
        if isinstance(idx, gast.Constant):
            self.members_after_set(base, idx, item, updated)
            return
        kind, keys, items, read = known
        if not read and any(ir.is_name(i) and self._in_use(i.id) for i in items):
            raise self.error(
                "this changes in place an item of a list or dict at a key known only at run "
                "time, and the list holds values that an earlier 'op=' may have changed as "
                "arrays or rebound as numbers: tangent_x cannot follow which", None,
                "make the values arrays before putting them in the list (np.asarray(v)), "
                "or index the list with a constant")
        fresh = tuple(self.emit(P.get("getitem"), [updated, ir.const(k)],
                                base=f"{_base(updated)}_{k}") if ir.is_name(item) else item
                      for k, item in zip(keys, items))
        self.note_members(updated, kind, keys, fresh)
        for member, now in zip(items, fresh):
            if ir.is_name(member) and self._in_use(member.id):
                self.propagate(member, now)

    def items_chosen(self, pairs):
        """For ``update_if_array``: (item in the array case, item in the
        number case) at each key where a container ``after`` (of
        (``before``, ``after``) ``pairs``) holds another value than
        ``before`` -- the changed value, or a view of it refreshed inside.
        Each becomes an output of the choice, so the container's items stay
        known whichever case ran."""
        found, seen = [], set()
        for before, after in pairs:
            a_known = self._members.get(after.id) if ir.is_name(after) else None
            b_known = self._members.get(before.id) if ir.is_name(before) else None
            if a_known is None or b_known is None or a_known[1] != b_known[1]:
                continue
            for a, b in zip(a_known[2], b_known[2]):
                if ir.is_name(a) and gast.dump(a) != gast.dump(b) and a.id not in seen:
                    seen.add(a.id)
                    found.append((a, b))
        return found

    def members_after_choice(self, before, after, out, chosen, outer, inner):
        """``out`` is ``after`` if a value was an array, else ``before``
        (``update_if_array``): it holds, at each key, the output the choice
        gave for that key's item (``chosen``), or the item both hold;
        where neither is known, its items are held somewhere."""
        known = self._members.get(after.id) if ir.is_name(after) else None
        b_known = self._members.get(before.id) if ir.is_name(before) else None
        if known is None or b_known is None or known[1] != b_known[1]:
            self.held_somewhere(before, out)
            self.held_somewhere(after, out)
            return
        kind, keys, items, read = known
        mapped = []
        for item, old in zip(items, b_known[2]):
            if ir.is_name(item) and item.id in chosen:
                item = chosen[item.id]
            elif gast.dump(item) != gast.dump(old) or (ir.is_name(item) and item.id in inner):
                self.held_somewhere(before, out)
                self.held_somewhere(after, out)
                return
            mapped.append(item)
        self.note_members(out, kind, keys, mapped, read and b_known[3])

    def members_after_pop(self, base, out):
        known = self._members.get(base.id) if ir.is_name(base) else None
        if known is not None and known[0] == "list" and known[2]:
            _, keys, items, read = known
            self.note_members(out, "list", keys[:-1], items[:-1], read)

    def slice_of_container(self, base, idx, out):
        """``out = base[a:b]`` of a list or tuple the code built: a new
        container holding the same objects, not a view -- True; False
        where ``base`` may be an array."""
        if not ir.is_name(base) or (base.id not in self._members
                                    and self._containers.get(base.id) != "list"):
            return False
        known = self._members.get(base.id)
        window = _constant_window(idx)
        if known is not None and known[0] != "dict" and window is not None:
            kind, keys, items, read = known
            kept = items[window]
            self.note_members(out, kind, range(len(kept)), kept, read)
        else:
            for item in self.items_of(base):
                self.note_holder(item, out, HELD_SOMEWHERE)
        return True

    def note_shared_items(self, eqn):
        """An equation making a container from another holds the same
        objects (``list(xs)``, ``xs[1:]``, ``xs + ys``, ``tuple(xs)``):
        what they hold is held by its result too, at places not followed."""
        if eqn.prim.name not in _SHARES_ITEMS or len(eqn.outs) != 1 or eqn.out in self._members:
            return
        out = ir.name(eqn.out)
        for a in eqn.args:
            if ir.is_name(a) and a.id != eqn.out:
                for item in self.items_of(a):
                    self.note_holder(item, out, HELD_SOMEWHERE)

    def follow_members(self, old, new):
        """``old`` became ``new`` in place: each container in use holding
        ``old`` at a known key is rebuilt with ``new`` there, and changes
        in turn (``propagate``)."""
        for container, key in list(self._holders.get(old.id, [])):
            if key is HELD_SOMEWHERE or not self._in_use(container.id):
                continue
            kind, keys, items, read = self._members[container.id]
            at = keys.index(key)
            if not (ir.is_name(items[at]) and items[at].id == old.id):
                continue
            items = items[:at] + (new,) + items[at + 1:]
            view = self._views.get(new.id) if ir.is_name(new) else None
            if view is not None and view[0].id == container.id and \
                    isinstance(view[1], gast.Constant) and view[1].value == key:
                # ``new`` was read from this container at this key (a view
                # refreshed after it changed): it holds it already
                self.note_members(container, kind, keys, items, read)
                continue
            params = {"keys": keys} if kind == "dict" else None
            rebuilt = self.emit(P.get(kind), list(items), params=params,
                                base=_base(container))
            for known in (self._containers, self._dict_keys, self._tuple_lengths):
                if container.id in known:
                    known[rebuilt.id] = known[container.id]
            self.note_members(rebuilt, kind, keys, items, read)
            self.propagate(container, rebuilt)

    def _in_use(self, atom_id, seen=None):
        """Bound to a name, or held in a container in use."""
        if self._is_bound(atom_id):
            return True
        seen = seen or set()
        seen.add(atom_id)
        return any(c.id not in seen and self._in_use(c.id, seen)
                   for c, _ in self._holders.get(atom_id, []))


def _constant_window(idx):
    if isinstance(idx, gast.Call) and ir.is_name(idx.func, "slice") and all(
            isinstance(a, gast.Constant) and (a.value is None or type(a.value) is int)
            for a in idx.args):
        return slice(*[a.value for a in idx.args])
    return None


def _base(container):
    return container.id.rstrip("_0123456789") or "items"
