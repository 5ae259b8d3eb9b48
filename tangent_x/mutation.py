"""Python's mutation semantics, kept in a functional form.

``x[i] = v`` becomes a copy plus an update bound to a new name; every other
name bound to the old value (an alias), every basic-index view taken from it
(``row = x[0]``) and the array it is itself a view of are rebound too, so
the transformed function computes what Python computes -- while the
caller's arrays are never touched.  ``xs.append(v)`` and ``xs.pop()`` on
lists are the same kind of update.  Mixed into ``canonical.Converter``.
"""
import gast

from . import ir, primitives as P
from .naming import base_name, item_name

_AT_UPDATES = {"set": None, "add": "index_add", "multiply": "mul",
               "min": "minimum", "max": "maximum"}


class Mutation:
    """Mixed into ``canonical.Converter``."""

    def list_pop(self, scope, name_node, target):
        """``v = xs.pop()``: the last item, and ``xs`` rebound without it."""
        old = self.atom(scope, name_node)
        item = self.emit(P.get("getitem"), [old, ir.const(-1)], target=target, base="last")
        rest = self.emit(P.get("getitem"), [old, ir.slice_call(None, ir.const(-1), None)],
                         target=name_node.id)
        self.propagate(old, rest)
        self.bind(scope, name_node.id, rest)
        return item


    def at_update(self, scope, node, at, target):
        """``x.at[idx].set(v)`` (JAX's functional update): copy plus update."""
        base_node, index_node, op = at
        base = self.atom(scope, base_node)
        idx = self.index_atom(scope, index_node)
        (value,), _ = self.call_args(scope, node)
        return self.index_update(base, idx, value, _AT_UPDATES[op], target)

    def index_update(self, base, idx, value, binop, target):
        params = {}
        if ir.is_name(base) and base.id in self._containers:
            params["container"] = self._containers[base.id]
        if binop == "index_add":     # x.at[idx].add(v): repeated indices accumulate
            return self.emit(P.get("index_add"), [base, idx, value], params=params,
                             target=target, base=base_name("", base) or "updated")
        if binop is not None:
            old = self.emit(P.get("getitem"), [base, idx], base=base_name("", base) or "item")
            value = self.emit(P.get(binop), [old, value], base=base_name("", old))
        out = self.emit(P.get("index_set"), [base, idx, value], params=params,
                        target=target, base=base_name("", base) or "updated")
        if params:
            self._containers[out.id] = params["container"]
        return out


    def bind(self, scope, name_, value):
        """Bind a user name; names bound to the same atom are aliases."""
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
        self.check_joined(scope, base_node, base, self._live_after)
        idx = self.index_atom(scope, target.slice)
        name_ = base_node.id if isinstance(base_node, gast.Name) else None
        new = self.index_update(base, idx, value, binop, name_ or "updated")
        if isinstance(base_node, gast.Subscript):
            self.assign_subscript(scope, base_node, new)
            return
        self.propagate(base, new)
        self.bind(scope, name_, new)

    def propagate(self, old, new):
        """Python semantics of mutation: after ``old`` became ``new``, its
        aliases, the views taken from it (``row = y[0]``), and the array it
        is itself a view of all see the change."""
        if not ir.is_name(old):
            return
        if old.id in self._carry_guard:
            name_, others = self._carry_guard[old.id]
            raise self.error(
                f"'{name_}' is changed in place in this loop while '{others[0]}' names the "
                f"same array, and the loop also rebinds one of them", None,
                f"copy before the loop ({others[0]} = {name_}.copy()) or do not rebind "
                f"'{name_}' or '{others[0]}' inside it")
        self._rebind(old, new)
        self._refresh_views(old, new, skip=None)
        view = self._views.get(old.id)
        while view is not None:
            base, idx = view
            updated = self.index_update(base, idx, new, None, base.id)
            self._add_view(new, updated, idx)
            self._rebind(base, updated)
            self._refresh_views(base, updated, skip=old.id)
            old, new, view = base, updated, self._views.get(base.id)

    def _add_view(self, view, base, idx):
        self._views[view.id] = (base, idx)
        self._view_children.setdefault(base.id, []).append(view.id)

    def _rebind(self, old, new):
        for s, n in list(self._bindings.get(old.id, [])):
            current = s.locals.get(n)
            if ir.is_name(current) and current.id == old.id:
                self.bind(s, n, new)

    def _is_bound(self, atom_id):
        return any(ir.is_name(s.locals.get(n)) and s.locals[n].id == atom_id
                   for s, n in self._bindings.get(atom_id, []))

    def _refresh_views(self, old_base, new_base, skip):
        for view_id in list(self._view_children.get(old_base.id, [])):
            if view_id == skip or not self._is_bound(view_id):
                continue
            _, idx = self._views[view_id]
            fresh = self.emit(P.get("getitem"), [new_base, idx],
                              base=item_name(new_base, idx))
            self._add_view(fresh, new_base, idx)
            self._rebind(ir.name(view_id), fresh)
            self._refresh_views(ir.name(view_id), fresh, skip=None)

    def stmt_AugAssign(self, scope, stmt):
        prim = P.BINOP_BY_AST.get(type(stmt.op))
        target = stmt.target
        if isinstance(target, gast.Name):
            live = self._live_after      # before inlining calls in the value resets it
            old = self.atom(scope, target)
            value = self.atom(scope, stmt.value)
            self.check_shared(scope, stmt, target.id, old, live)
            new = self.emit(prim, [old, value], target=target.id)
            if not (isinstance(value, gast.Constant) and
                    isinstance(value.value, (bool, int, float))):
                # an array keeps its dtype (a Python number is weak: it cannot change it)
                new = self.emit(P.get("inplace_result"), [new, old], target=target.id)
            self.bind(scope, target.id, new)
        elif isinstance(target, gast.Subscript):
            self.assign_subscript(scope, target, self.atom(scope, stmt.value), prim.name)
        else:
            raise self.error("augmented assignment to this target is not supported",
                             stmt, "assign to a local name or x[index]", scope)




    def check_shared(self, scope, stmt, name_, old, live):
        """``y += v`` mutates an array in place but rebinds a number, and
        which one ``y`` holds is not known when transforming.  A functional
        rebind is right unless a name read later (``live``) shares ``y``'s
        array -- an alias (``z = y``), a view taken from it (``row = y[0]``)
        or the array ``y`` is a view of: NumPy would change that one too, so
        say so instead of silently computing something else."""
        if not ir.is_name(old):
            return
        related = [old.id] + self._view_children.get(old.id, [])
        if old.id in self._views:
            related.append(self._views[old.id][0].id)
        related += self._joined_aliases(related)
        read_later = _read_later(scope, live)
        others = sorted({n for atom_id in related for s, n in self._bindings.get(atom_id, [])
                         if n != name_ and ir.is_name(s.locals.get(n)) and not s.finished
                         and s.locals[n].id == atom_id and read_later(s, n)})
        if others:
            op = _AUG_SYMBOLS.get(type(stmt.op), "op")
            raise self.error(
                f"'{name_} {op}= ...' would change in place the array that '{others[0]}' "
                f"also names (NumPy semantics), but tangent_x cannot tell whether "
                f"'{name_}' is an array or a number here",
                stmt, f"write '{name_} = {name_} {op} ...' to change only '{name_}', "
                f"'{name_}[...] {op}= ...' to change the shared array, or copy first "
                f"('{others[0]} = {name_}.copy()')", scope)


    def _joined_aliases(self, atom_ids):
        """Values an ``if`` chose that may be one of ``atom_ids`` (on the path
        where a branch passed it through)."""
        ids = set(atom_ids)
        return sorted(out for out, sources in self._may_alias.items() if sources & ids)

    def check_joined(self, scope, node, base, live):
        """``y[i] = v`` changes an array a name bound after an ``if`` may
        also be (``l = y`` on one path only): which one holds depends on the
        path taken at run time, which a functional form cannot follow."""
        if not ir.is_name(base):
            return
        joined = set(self._joined_aliases([base.id]))
        read_later = _read_later(scope, live)
        others = sorted({n for atom_id in joined for s, n in self._bindings.get(atom_id, [])
                         if ir.is_name(s.locals.get(n)) and s.locals[n].id == atom_id
                         and not s.finished and read_later(s, n)})
        if others:
            name_ = node.id if isinstance(node, gast.Name) else "the array"
            raise self.error(
                f"this changes in place the array '{name_}', which '{others[0]}' also names "
                f"on one path of an earlier branch only (NumPy semantics decided at run time)",
                node, f"copy where the branch binds it ('{others[0]} = {name_}.copy()')", scope)


def _read_later(scope, live):
    """``read_later(s, n)``: whether the name ``n`` of scope ``s`` may be read
    after the current statement -- ``live`` for ``scope``; for the scopes
    calling it (inlined calls), what each read after its call; any other
    scope (a closure's), conservatively yes."""
    known = {id(scope): live}
    s = scope
    while s.caller is not None:
        known.setdefault(id(s.caller), s.caller_live)
        s = s.caller

    def read_later(s, n):
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


