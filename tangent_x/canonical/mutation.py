"""Python's mutation semantics, kept in a functional form.

``x[i] = v`` becomes a copy plus an update bound to a new name; every other
name bound to the old value (an alias), every basic-index view taken from it
(``row = x[0]``) and the array it is itself a view of are rebound too, so
the transformed function computes what Python computes -- while the
caller's arrays are never touched.  ``xs.append(v)`` and ``xs.pop()`` on
lists are the same kind of update.  Mixed into ``converter.Converter``.
"""
import gast

from ..core import ir, primitives as P
from . import views
from ..core.naming import base_name

_AT_UPDATES = {"set": None, "add": "index_add", "multiply": "index_mul",
               "min": "index_min", "max": "index_max"}
# updates that combine every value written at a repeated index (JAX's
# scatter-add/mul/min/max): one primitive each, spelled ``np.<ufunc>.at``
_COMBINING = frozenset(("index_add", "index_mul", "index_min", "index_max"))


class Mutation:
    """Mixed into ``converter.Converter``."""

    def at_update(self, scope, node, at, target):
        """``x.at[idx].set(v)`` (JAX's functional update): copy plus update."""
        base_node, index_node, op = at
        base = self.atom(scope, base_node)
        idx = self.index_atom(scope, index_node)
        (value,), _ = self.call_args(scope, node)
        return self.index_update(base, idx, value, _AT_UPDATES[op], target)

    def index_update(self, base, idx, value, binop, target, replaces=False):
        """``base`` with ``value`` written (``binop``: combined) at ``idx``;
        ``replaces``: the user's ``base[idx] = value``, whose container
        then holds the value written (``members``)."""
        params = {}
        if ir.is_name(base) and base.id in self._containers:
            params["container"] = self._containers[base.id]
        if binop in _COMBINING:     # x.at[idx].add(v): repeated indices accumulate
            return self.emit(P.get(binop), [base, idx, value], params=params,
                             target=target, base=base_name("", base) or "updated")
        if binop is not None:
            old = self.emit(P.get("getitem"), [base, idx], base=base_name("", base) or "item")
            value = self.emit(P.get(binop), [old, value], base=base_name("", old))
        out = self.emit(P.get("index_set"), [base, idx, value], params=params,
                        target=target, base=base_name("", base) or "updated")
        if params:
            self._containers[out.id] = params["container"]
        if replaces:
            self.members_after_set(base, idx, value, out)
        keys = self._dict_keys.get(base.id) if ir.is_name(base) else None
        if keys is not None and isinstance(idx, gast.Constant):
            # d[k] = v at a constant key: the same keys, k last if new
            self._dict_keys[out.id] = tuple(dict.fromkeys(keys + (idx.value,)))
        return out

    def bind(self, scope, name_, value):
        """Bind a user name; names bound to the same atom are aliases."""
        if self._branch_scopes and len(self._branch_scopes) - 1 not in self._joining:
            # (the innermost body is a branch of an ``if``, which joins the
            # names of the scopes calling its function too: ``stmt_If``)
            callee = self._branch_scopes[-1]
            while callee.caller is not None:
                if callee.caller is scope:  # a caller's array changed in a helper's branch or loop
                    if callee.caller_live is not None and name_ not in callee.caller_live:
                        return              # not read after the call: nothing to follow
                    self.carry_sharing(scope, name_)
                    raise self.error(
                        f"this changes in place the array '{name_}' of the code calling this "
                        f"function, inside a branch or loop of the function: tangent_x follows "
                        f"such a change only in the function's straight-line code", None,
                        f"return the new value and assign it in the caller "
                        f"('{name_} = ...(...)'), or copy the argument first")
                callee = callee.caller
        scope.locals[name_] = value
        if ir.is_name(value):
            self._bindings.setdefault(value.id, []).append((scope, name_))

    def assign_subscript(self, scope, target, value, binop=None):
        """``base[idx] = value`` (or ``op=``): a functional update, then every
        alias of ``base`` -- and the array ``base`` is a view of -- sees it.
        ``x[i][j] = v`` updates ``x[i]`` and writes it back into ``x``."""
        base_node = target.value
        if not isinstance(base_node, (gast.Name, gast.Subscript)):
            raise self.error("assignment into this kind of target is not supported",
                             target, "assign into a local variable: x[i] = v", scope)
        base = self.atom(scope, base_node)
        self.check_joined(scope, base_node, base, self._live_after,
                          can_rejoin=isinstance(base_node, gast.Name))
        idx = self.index_atom(scope, target.slice)
        name_ = base_node.id if isinstance(base_node, gast.Name) else None
        if binop is not None and ir.is_name(base) and self._containers.get(base.id) in (
                "list", "dict"):
            # ``d[k] += v``: NumPy's ``+=`` on the item (an array changes in
            # place, and every name sharing it sees that), then the item set
            value = self.augmented_item(scope, target, base, idx, value, binop)
            binop = None
            base = self.atom(scope, base_node)      # (as the change left it)
        if ir.is_name(base) and self._containers.get(base.id) in ("list", "dict"):
            self.detach_items(scope, target, base, idx)
        new = self.index_update(base, idx, value, binop, name_ or "updated", replaces=True)
        if isinstance(base_node, gast.Subscript):
            if ir.is_name(base) and (base.id in self._views or base.id in self._holders):
                # ``v[0][1] = w``: the item (a view, or a value the container
                # holds) changed in place, and every name sharing it sees it
                self.propagate(base, new)
            else:
                self.assign_subscript(scope, base_node, new)
            return
        pending = self._rejoin_next
        self.propagate(base, new)
        self.bind(scope, name_, new)
        self._rejoin_next = pending
        self.rejoin_pending(new, maybe_number=False)

    def propagate(self, old, new):
        """Python semantics of mutation: after ``old`` became ``new``, its
        aliases, the views taken from it (``row = y[0]``), and the array it
        is itself a view of all see the change."""
        if not ir.is_name(old):
            return
        if old.id in self._carry_guard:
            name_, others = self._carry_guard[old.id]
            # ``loop_items``: what ``exits`` names the array a ``for`` iterates over
            others = [f"the array the loop iterates over ('{o}')" if o.startswith("loop_items")
                      else o for o in others]
            copy = ("iterate over a copy" if others[0].startswith("the array")
                    else f"copy before the loop ({others[0]} = {name_}.copy())")
            raise self.error(
                f"'{name_}' is changed in place in this loop (an item update, or 'op=' on "
                f"an array) while {_quoted(others[0])} names the same array, and the loop also "
                f"rebinds one of them: which names share the array then changes from one "
                f"iteration to the next", None,
                f"{copy}, or write '{name_} = {name_} + ...' instead of '{name_} += ...'")
        outermost = self._moving is None
        if outermost:
            self._moving = []
        try:
            self._rebind(old, new)
            self._refresh_views(old, new, skip=None)
            view = self._views.get(old.id)
            while view is not None:
                base, idx = view
                if _whole(idx):         # an alias recorded as ``base[...]``: the same array
                    updated = new
                else:
                    if isinstance(idx, views.ViewCall):
                        updated = self.written_back(base, idx, new)
                    else:
                        updated = self.index_update(base, idx, new, None, base.id)
                        self.members_written_back(base, idx, new, updated)
                    self._add_view(new, updated, idx)
                self._rebind(base, updated)
                self._refresh_views(base, updated, skip=old.id)
                old, new, view = base, updated, self._views.get(base.id)
            if outermost:
                # the containers holding what changed (``members``)
                while self._moving:
                    self.follow_members(*self._moving.pop(0))
        finally:
            if outermost:
                self._moving = None

    def note_view(self, eqn):
        """``v = x.T`` (``x.reshape(-1)``, ``np.swapaxes(x, 0, 1)`` ...): ``v``
        is a view of ``x``, as ``row = x[0]`` is.  Where NumPy may copy
        instead (``reshape``, ``ravel``, ``np.asarray``), which one it did is
        computed here (removed as dead code if nothing writes)."""
        if self._quiet_views or not views.of_call(eqn):
            return
        base, out = eqn.args[0], ir.name(eqn.out)
        flag = None
        if views.may_copy(eqn):
            flag = self.quietly(self.emit, P.get("is_view_of"), [out, base], None, None, None,
                                f"{eqn.out}_is_view")
        self._add_view(out, base, views.ViewCall(eqn, flag, self.eqns))

    def quietly(self, fn, *args):
        """``fn(*args)``, the views it takes not recorded (they rebuild known ones)."""
        self._quiet_views += 1
        try:
            return fn(*args)
        finally:
            self._quiet_views -= 1

    def written_back(self, base, spec, view):
        """``base`` after its view ``spec`` became ``view`` (and, where NumPy
        may have copied, ``base`` unchanged in that case)."""
        if spec.flag is None:
            return self.quietly(spec.put_back, self, base, view)
        return self.choose(spec.flag, lambda: self.quietly(spec.put_back, self, base, view),
                           base, base.id)

    def taken_again(self, view, spec, new_base):
        """The view ``spec`` taken from ``new_base`` (``view`` itself where
        NumPy copied instead)."""
        if spec.flag is None:
            return self.quietly(spec.take, self, new_base)
        return self.choose(spec.flag, lambda: self.quietly(spec.take, self, new_base),
                           view, view.id)

    def choose(self, pred, if_true, otherwise, base):
        """``if_true()`` where ``pred`` holds at run time, else ``otherwise``."""
        eqns, result = self.nested(if_true)
        out = self.namer.fresh(base)
        self.emit_choice(pred, [out], [[result], [otherwise]], [eqns, []])
        self._may_alias.pop(out, None)    # one array in both cases: every alias follows
        return ir.name(out)

    def _add_view(self, view, base, idx):
        self._views[view.id] = (base, idx)
        self._view_children.setdefault(base.id, []).append(view.id)

    def _rebind(self, old, new):
        if self._moving is not None and old.id in self._holders:
            self._moving.append((old, new))
        for s, n in list(self._bindings.get(old.id, [])):
            current = s.locals.get(n)
            if ir.is_name(current) and current.id == old.id:
                self.bind(s, n, new)

    def _is_bound(self, atom_id):
        return any(ir.is_name(s.locals.get(n)) and s.locals[n].id == atom_id
                   for s, n in self._bindings.get(atom_id, []))

    def view_in_use(self, view_id):
        """Whether a name or container holds the view or a view of it (not a temporary)."""
        return self._in_use(view_id) or any(
            self._is_bound(d) for d in view_descendants(self._view_children, view_id))

    def _refresh_views(self, old_base, new_base, skip):
        for view_id in list(self._view_children.get(old_base.id, [])):
            if view_id == skip or not self.view_in_use(view_id):
                continue        # (a temporary whose view is named: x[::-1][0], 521058)
            _, idx = self._views[view_id]
            fresh = self.view_again(ir.name(view_id), idx, new_base)   # (loop_sharing)
            if fresh is not new_base:
                self._add_view(fresh, new_base, idx)
            self._rebind(ir.name(view_id), fresh)
            self._refresh_views(ir.name(view_id), fresh, skip=None)

    def choose_if_array(self, value, if_array, otherwise, base):
        """``if_array()`` where ``value`` is an array, ``otherwise`` where it is
        a number: NumPy's sharing depends on which, and that is known only at
        run time -- a ``cond`` on ``is_array(value)``, which every transform
        follows (the numba stage folds it from the type)."""
        pred = self.emit(P.get("is_array"), [value], base=f"{base_name('', value) or 'value'}_is_array")
        eqns, result = self.nested(if_array)
        out = self.namer.fresh(base)
        self.emit_choice(pred, [out], [[result], [otherwise]], [eqns, []])
        self._may_alias.pop(out, None)    # a number is shared with nothing
        return ir.name(out)

    def stmt_AugAssign(self, scope, stmt):
        prim = P.BINOP_BY_AST.get(type(stmt.op))
        target = stmt.target
        if isinstance(target, gast.Name):
            live = self._live_after      # before inlining calls in the value resets it
            # the value first: ``y -= h(y)`` changes the array ``y`` holds by
            # what ``h`` writes into it (NumPy's ``__isub__`` reads the array
            # when it runs); a number cannot change, so reading it after is the same
            value = self.atom(scope, stmt.value)
            old = self.atom(scope, target)
            shared = self.check_shared(scope, stmt, target.id, old, live)
            new = self.emit(prim, [old, value], target=target.id)
            if not (isinstance(value, gast.Constant) and
                    isinstance(value.value, (bool, int, float))):
                # an array keeps its dtype (a Python number is weak: it cannot change it)
                new = self.emit(P.get("inplace_result"), [new, old], target=target.id)
            if shared:
                self.update_if_array(scope, target.id, old, new, read_later_in(scope, live))
            self.bind(scope, target.id, new)
            self.rejoin_pending(new, maybe_number=True)
        elif isinstance(target, gast.Subscript):
            self.assign_subscript(scope, target, self.atom(scope, stmt.value), prim.name)
        else:
            raise self.error("augmented assignment to this target is not supported",
                             stmt, "assign to a local name or x[index]", scope)

    def check_shared(self, scope, stmt, name_, old, live):
        """``y += v`` changes an array in place but rebinds a number.  Whether
        a name read later (``live``) shares ``y``'s array -- an alias
        (``z = y``), a view taken from it (``row = y[0]``) or the array ``y``
        is a view of -- decides whether that name sees the change: returns
        whether one does (``update_if_array`` then decides at run time).  A
        name that holds ``y`` on one path of an earlier branch only cannot
        be followed that way: say so instead of computing something else."""
        if not ir.is_name(old):
            return False
        self._rejoin_next = None
        if old.id in self._carry_guard:      # ``propagate`` says why this cannot be followed
            return True
        related, first = [], []
        for a in self.first_values([old.id]):       # (a carry-in: as its first value too)
            near = [a] + view_descendants(self._view_children, a)     # (views of views: 521058)
            near += _bases(self._views, a, near)   # (and theirs: ``b = m[::-1][-1]``)
            # the containers holding it or a view of it (``t = [y[1]]``)
            near += [c for b in list(near) for c in self._holding_names(b)[1:]]
            related = related or near
            first += near
        # (a caller's own 'y' too, but not this name)
        names = self.read_later_names(scope, live, skip=name_)
        self.check_held(scope, stmt, old, names, f"the array '{name_}'")
        joined = names(self.carried_from(self._joined_aliases(first)))
        sources = names(self.carried_from(self._joined_sources(first)))
        if (joined or sources) and self.plan_rejoin(old, first, names):
            joined = sources = None        # followed by a join on the if's predicate
        if joined or sources:
            op = _AUG_SYMBOLS.get(type(stmt.op), "op")
            other = (joined or sources)[0]
            copy = f"{other} = {name_}.copy()" if joined else f"{name_} = {other}.copy()"
            shared = (f"the array that '{other}' also names on one path only (of an earlier "
                      f"branch, or of a loop that may run no turn)")
            if other.startswith("loop_items"):      # what ``exits`` names a loop's array
                shared = ("the array the loop iterates over, which an earlier branch passed "
                          "through on one path only")
                copy = None
            raise self.error(
                f"'{name_} {op}= ...' would change in place {shared} "
                f"(NumPy semantics decided at run time)", stmt,
                f"write '{name_} = {name_} {op} ...' to change only '{name_}', or " +
                (f"copy where it is bound ('{copy}')" if copy else "iterate over a copy"),
                scope)
        return bool(names(related))

    def update_if_array(self, scope, name_, old, new, read_later):
        """After ``y op= v`` (``old`` -> ``new``): if ``old`` is an array,
        every name sharing it sees ``new`` (``propagate``); if a number, none
        does.  Both are built, and ``is_array(old)`` chooses at run time --
        a ``cond`` like any other, so every transform follows it.

        What the array case knows afterwards (``z`` is ``y``, ``row`` is a
        view of ``y``) is kept: ``z`` is recorded as a view ``y[...]``, so
        a later ``y[i] = w`` still reaches it.  That is right in both cases,
        since only an array can be written into."""
        tracked = {}
        for pairs in self._bindings.values():
            for s, n in pairs:
                if (s is not scope or n != name_) and n in s.locals and not s.finished:
                    tracked.setdefault((id(s), n), (s, n, s.locals[n]))
        views, children = dict(self._views), {k: list(v) for k, v in self._view_children.items()}
        pred = self.emit(P.get("is_array"), [old], base=f"{name_}_is_array")
        eqns, _ = self.nested(self.propagate, old, new)
        changed = [(s, n, before, s.locals[n]) for s, n, before in tracked.values()
                   if s.locals.get(n) is not before]
        inner_views = {k: v for k, v in self._views.items() if views.get(k) != v}
        self._views, self._view_children = views, children
        for s, n, before, _ in changed:
            s.locals[n] = before
        changed = [c for c in changed if read_later(c[0], c[1])]
        if not changed:
            return
        inner = {o for eqn in ir.all_eqns(eqns) for o in eqn.outs}
        # the values a changed container holds that only it names (a view
        # refreshed inside): chosen too, so the container's items stay known
        held = self.items_chosen([(c[2], c[3]) for c in changed]) + \
            _views_between(changed, inner_views, views, inner, old, new)
        unique, unique_outs, outs = _one_output_per_value(changed, self.namer)
        held_outs = [self.namer.fresh(base_name("", a) or "item") for a, _ in held]
        self.emit_choice(pred, unique_outs + held_outs,
                         [[a for _, _, a in unique] + [a for a, _ in held],
                          [b for _, b, _ in unique] + [b for _, b in held]], [eqns, []])
        for o in unique_outs + held_outs:  # what they share if arrays: below; numbers none
            self._may_alias.pop(o, None)
        outer = {new.id: new}
        outer.update({c[3].id: ir.name(o) for c, o in zip(changed, outs) if ir.is_name(c[3])})
        chosen = {a.id: ir.name(o) for (a, _), o in zip(held, held_outs)}
        for (s, n, _, after), o in zip(changed + [(None, None, b, a) for a, b in held],
                                       outs + held_outs):
            if s is not None:
                self.bind(s, n, ir.name(o))
            if ir.is_name(after) and after.id == new.id:      # an alias of ``y``
                self._add_view(ir.name(o), new, ir.const(Ellipsis))
        for view_id, (base, idx) in inner_views.items():
            base = outer.get(base.id, chosen.get(base.id, base))
            for view in (outer.get(view_id), chosen.get(view_id)):
                if view is not None and base.id not in inner:
                    self._add_view(view, base, idx)
        for (_, _, before, after), o in zip(changed, outs):
            self.members_after_choice(before, after, ir.name(o), chosen, outer, inner)

    def check_joined(self, scope, node, base, live, can_rejoin=False):
        """``y[i] = v`` changes an array a name bound after an ``if`` may
        also be (``l = y`` on one path only): which one holds depends on the
        path taken at run time.  Followed by a join on the ``if``'s
        predicate where the caller applies it (``can_rejoin``: it calls
        ``rejoin_pending`` after the change) and the case is plain
        (``rejoins``); refused otherwise."""
        self._rejoin_next = None
        if not ir.is_name(base):
            return
        names = self.read_later_names(scope, live)
        self.check_held(scope, node, base, names,
                        f"the array '{node.id}'" if isinstance(node, gast.Name) else "an array")
        first = self.first_values([base.id])
        others = names(self.carried_from(self._joined_aliases(first)))
        sources = names(self.carried_from(self._joined_sources(first)))
        if (others or sources) and can_rejoin and self.plan_rejoin(base, first, names):
            return
        if others or sources:
            name_ = node.id if isinstance(node, gast.Name) else "the array"
            other = (others or sources)[0]
            copy = f"{other} = {name_}.copy()" if others else f"{name_} = {other}.copy()"
            raise self.error(
                f"this changes in place the array '{name_}', which '{other}' also names "
                f"on one path only (of an earlier branch, or of a loop that may run no "
                f"turn; NumPy semantics decided at run time)",
                node, f"copy where it is bound ('{copy}')", scope)


def _one_output_per_value(changed, namer):
    """``update_if_array``'s outputs: names of one value before and after
    (aliases ``w = z``) get one output, so they stay one array.  Returns
    the distinct (name, before, after), their outputs, each name's output."""
    pairs = {}
    for _, n, before, after in changed:
        pairs.setdefault((gast.dump(before), gast.dump(after)), (n, before, after))
    unique_outs = [namer.fresh(n) for n, _, _ in pairs.values()]
    by_pair = dict(zip(pairs, unique_outs))
    return (list(pairs.values()), unique_outs,
            [by_pair[gast.dump(c[2]), gast.dump(c[3])] for c in changed])


def read_later_in(scope, live):
    """``read_later(s, n)``: whether the name ``n`` of scope ``s`` may be read
    after the current statement -- ``live`` for ``scope``; for the scopes
    calling it (inlined calls), what each read after its call; any other
    scope (a closure's), conservatively yes -- but no name of an inlined
    call that has returned (``Scope.finished``) is read again."""
    known = {id(scope): live}
    s = scope
    while s.caller is not None:
        known.setdefault(id(s.caller), s.caller_live)
        s = s.caller

    def read_later(s, n):
        if s.finished:
            return False
        names = known.get(id(s))
        return names is None or n in names
    return read_later


_AUG_SYMBOLS = {gast.Add: "+", gast.Sub: "-", gast.Mult: "*", gast.Div: "/",
                gast.FloorDiv: "//", gast.Mod: "%", gast.Pow: "**", gast.MatMult: "@",
                gast.BitAnd: "&", gast.BitOr: "|", gast.BitXor: "^",
                gast.LShift: "<<", gast.RShift: ">>"}


def _at_update(func):
    """Match ``x.at[idx].op`` ; returns (x node, idx node, op) or None."""
    if func.attr in _AT_UPDATES and isinstance(func.value, gast.Subscript):
        holder = func.value.value
        if isinstance(holder, gast.Attribute) and holder.attr == "at":
            return holder.value, func.value.slice, func.attr
    return None



def _views_between(changed, inner_views, views, inner, old, new):
    """For ``update_if_array``: (view in the array case, view in the
    number case) for each view refreshed inside that no name holds but
    a changed name's view is taken from (``m[::-1]`` of ``b =
    m[::-1][-1]``, either one changed).  Each becomes an output of the
    choice, so ``b`` stays known as a view of a view of ``m`` (it was left
    a view of nothing: a later ``b += 1`` did not reach ``m``).  Its
    number case is the view it refreshed (``views``: the records before
    the change), which only an array ``old`` could have had."""
    befores = {new.id: old}
    befores.update({after.id: before for _, _, before, after in changed if ir.is_name(after)})
    found = []
    for _, _, _, after in changed + [(None, None, old, new)]:
        chain, a = [], after            # the unnamed views between, nearest first
        while ir.is_name(a) and a.id in inner_views:
            a = inner_views[a.id][0]
            if a.id in befores or a.id not in inner:
                break
            chain.append(a)
        for view in reversed(chain):    # from the changed array down
            up, idx = inner_views.get(view.id, (None, None))
            up_before = befores.get(up.id, up if up.id not in inner else None) \
                if ir.is_name(up) else None
            before = next((k for k, (b, i) in views.items() if ir.is_name(b) and
                           up_before is not None and b.id == up_before.id and
                           _same_index(i, idx)), None)
            if before is None:
                break
            befores[view.id] = ir.name(before)
            found.append((view, ir.name(before)))
    return found


def _bases(views_, atom_id, skip):
    """The array ``atom_id`` is a view of, the one that is a view of, and
    so on (``views_``: the converter's records), none of ``skip``."""
    found, base = [], atom_id
    while base in views_ and ir.is_name(views_[base][0]) and \
            views_[base][0].id not in skip and views_[base][0].id not in found:
        base = views_[base][0].id
        found.append(base)
    return found


def _same_index(a, b):
    """Whether two recorded view indexes (gast, or ``views.ViewCall``) are one."""
    if isinstance(a, gast.AST) and isinstance(b, gast.AST):
        return gast.dump(a) == gast.dump(b)
    return a is b


def _whole(idx):
    return isinstance(idx, gast.Constant) and idx.value is Ellipsis


def always_array(idx):
    """Whether basic indexing with ``idx`` gives an array (a view) whatever
    the rank: a slice, ``None`` or ``...`` in it.  All integers give a
    number when they index every axis."""
    if isinstance(idx, views.ViewCall):
        return True
    parts = idx.elts if isinstance(idx, gast.Tuple) else [idx]
    return any((isinstance(p, gast.Constant) and (p.value is None or p.value is Ellipsis))
               or (isinstance(p, gast.Call) and ir.is_name(p.func, "slice")) for p in parts)


def looks_basic(idx):
    """Basic indexing (ints, slices) returns a view that shares memory.

    Names are assumed to hold integers here: ``row = X[i]`` is the common
    case; an integer-array index makes a copy in NumPy, and assigning into
    that copy would (wrongly) be written back.
    """
    parts = idx.elts if isinstance(idx, gast.Tuple) else [idx]
    for p in parts:
        if isinstance(p, gast.Constant) and (p.value is None or p.value is Ellipsis
                                             or type(p.value) is int):
            continue
        if isinstance(p, gast.Call) and ir.is_name(p.func, "slice"):
            continue
        if ir.is_name(p):
            continue
        return False
    return True


def view_descendants(children, atom_id):
    """The views of ``atom_id``, of those views, and so on."""
    out, todo = [], list(children.get(atom_id, []))
    while todo:
        v = todo.pop()
        if v not in out:
            out.append(v)
            todo += children.get(v, [])
    return out


def _quoted(name_):
    return name_ if name_.startswith("the array") else f"'{name_}'"
