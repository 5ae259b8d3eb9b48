"""What a ``for`` loop iterates over, as an index loop: its bounds and
how to fetch step ``k``'s item, for ``range``, ``zip``, ``enumerate``,
``reversed``, ``d.items()`` and friends (nested), and any sequence
indexed item by item; a loop over functions known when transforming is
written out instead (``unroll``).  Mixed into ``converter.Converter``."""
import builtins
import copy

import gast
import numpy as np

from ..core import ir, primitives as P
from .names import (aug_assigned, changed_names, loaded_names, plainly_rebound, rebinding,
                    stored_names)
from .scope import NotStatic, Static


class Iteration:
    """Mixed into ``converter.Converter``."""

    def unroll(self, scope, stmt, items, live_after):
        """A loop over functions known when transforming runs once per item,
        written out (``for f in [np.sin, np.cos]``)."""
        live = loaded_names(stmt.body) | set(live_after)
        for item in items:
            self.bind_static(scope, stmt.target, item)
            self.block(scope, stmt.body, live)
        if stmt.orelse:
            self.block(scope, stmt.orelse, live_after)

    def held_items(self, scope, stmt):
        """(Steps, each a function giving the step's item, and the names of
        the sequences) of a loop that
        changes its items in place (``for p in ps: p *= 2``, ``for p, g in
        zip(ps, gs): p -= g``) over tuples and lists built in the code, of
        known items: written out, each step's item is read when the step
        runs -- the array itself, as the steps before left it -- so a change
        is seen through every name of it.  None otherwise (a loop)."""
        targets = {n.id for n in ir.walk(stmt.target) if isinstance(n, gast.Name)}
        changed = stored_names(stmt.body, binds=False) | aug_assigned(stmt.body)
        if not targets & changed or stmt.orelse:
            return None

        def sequence(node):
            """(a name bound to the sequence, its length), or None."""
            if not isinstance(node, (gast.Name, gast.List, gast.Tuple)):
                return None
            atom = self.expr(scope, node)
            known = self._members.get(atom.id) if ir.is_name(atom) else None
            if known is None or known[0] == "dict" or len(known[2]) > 16:
                return None
            name_ = node.id if isinstance(node, gast.Name) else None
            if name_ is None:       # a literal: named, so that its items are followed
                name_ = self.namer.fresh("loop_items")
                self.bind(scope, name_, atom)
            return name_, len(known[2])

        def item(name_, j):
            return lambda: self.item_of(scope.locals[name_], ir.const(j), None)
        it = stmt.iter
        if isinstance(it, gast.Call) and not it.keywords and it.args:
            func = self.expr(scope, it.func)
            obj = func.obj if isinstance(func, Static) else None
            if obj is builtins.zip:
                seqs = [sequence(a) for a in it.args]
                if None in seqs:
                    return None
                n = min(length for _, length in seqs)
                return [lambda j=j: self.packed([item(s, j)() for s, _ in seqs], "items")
                        for j in range(n)], {s for s, _ in seqs}
            if obj is builtins.enumerate and len(it.args) == 1:
                seq = sequence(it.args[0])
                return None if seq is None else ([
                    lambda j=j: self.packed([ir.const(j), item(seq[0], j)()], "pair")
                    for j in range(seq[1])], {seq[0]})
            return None
        seq = sequence(it)
        return None if seq is None else ([item(seq[0], j) for j in range(seq[1])], {seq[0]})

    def unroll_items(self, scope, stmt, steps, live_after):
        """``held_items``' steps, written out; the sequences (``steps[1]``)
        are read again by the steps after each."""
        steps, sequences = steps
        live = loaded_names(stmt.body) | set(live_after)
        for i, step in enumerate(steps):
            self.bind_atom(scope, stmt.target, step())
            self.block(scope, stmt.body, live | (sequences if i < len(steps) - 1 else set()))

    def _iterated(self, scope, node, copy):
        """Whether ``list``/``tuple``/``sum`` of ``node`` is the loop over it:
        not of a generator, a value known now (a shape), or, for a copy
        (``list``, ``tuple``), a tuple, list or dict the code built."""
        try:
            self.static_value(scope, node)
            return False
        except (NotStatic, TypeError):
            pass
        if not isinstance(node, gast.Name):
            return not isinstance(node, (gast.GeneratorExp, gast.ListComp))
        atom = self.expr(scope, node)
        return not (copy and ir.is_name(atom) and (
            self._containers.get(atom.id) in ("list", "dict")
            or self.tuple_length(atom) is not None))

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
        ``row`` is a view (``x`` 2-d), and ``for v in x: x *= 2`` changes
        the array Python's iteration goes on reading: the name ``x``, which
        the loop then carries and whose item the target is in each step;
        None otherwise.  ``zip(x, y)``, ``enumerate(x)`` and ``reversed(x)``
        read each step's item from ``x`` as the loop carries it too.  Where
        the changed array is iterated in another way (through an alias, a
        slice), or ``x`` is also rebound in the loop (Python goes on
        iterating the old array), the loop is refused: its items would be
        read from the array as it was before the loop (a wrong value in
        every transform, fuzz seed 421282)."""
        if fetch is None:
            return None
        changed = stored_names(stmt.body, binds=False) | aug_assigned(stmt.body)
        if isinstance(stmt.iter, gast.Name) and isinstance(stmt.target, gast.Name) and \
                ir.is_name(scope.locals.get(stmt.iter.id)):
            if stmt.target.id in changed:
                return stmt.iter.id
            if stmt.iter.id in changed and stmt.iter.id not in plainly_rebound(stmt.body):
                return stmt.iter.id
        names = self.iterated_names(scope, stmt.iter)
        iterated = {scope.locals[n].id for n in names if ir.is_name(scope.locals.get(n))}
        shared = self.sharing_atoms(iterated)
        bound = rebinding(stmt.body)

        def read_by_name(n, v):
            # every sequence sharing the array is ``n`` itself, by its name
            return n not in bound and all(
                isinstance(seq, gast.Name) and seq.id == n for seq in _sequences(stmt.iter)
                if any(ir.is_name(scope.locals.get(m)) and
                       v.id in self.sharing_atoms({scope.locals[m].id})
                       for m in self.iterated_names(scope, seq)))
        for n in sorted(changed):
            v = scope.locals.get(n)
            if ir.is_name(v) and v.id in shared:
                if read_by_name(n, v):
                    # ``zip(x, y)`` whose ``x`` the body changes in place:
                    # each step's item is read from the array as the loop
                    # carries it (``iteration``), as Python's iterator does
                    # (through an alias, ``w = x; zip(w, y)``, still refused)
                    continue
                raise self.error(
                    f"this loop changes in place the array '{n}' while iterating over it: "
                    f"Python's iteration reads the changed array, which tangent_x follows "
                    f"only where the loop iterates '{n}' by its name ('for v in {n}:', "
                    f"zip({n}, ...), enumerate({n})) and does not also rebind it", stmt,
                    f"iterate over a copy (e.g. zip({n}.copy(), ...)), or index the array "
                    f"(for i in range(len({n})): ... {n}[i] ...)", scope)
        return None

    def named_sequences(self, scope, stmt):
        """``for row in z[:]: row *= 2`` changes ``z`` through items that
        are views of a view of it; Python reads each step's item from that
        view as it is then.  Such a sequence -- not a name, sharing memory
        with a named array, iterated by a loop that changes its target in
        place -- is bound to a name of its own first (``items = z[:]``), and
        the loop iterates that name: its items are then followed as views,
        as for ``for row in z:`` (``iterated_in_place``), and the view
        relation carries the change to ``z``.  Returns ``stmt``, or a copy
        of it iterating the names."""
        if not _names_in(stmt.target) & changed_names(stmt.body)[0]:
            return stmt

        def named(node):
            if isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and \
                    node.func.id in ("zip", "enumerate", "reversed") and not node.keywords:
                args = [named(a) for a in node.args]
                if all(a is b for a, b in zip(args, node.args)):
                    return node
                return gast.copy_location(gast.Call(func=node.func, args=args,
                                                    keywords=[]), node)
            if isinstance(node, (gast.Name, gast.Constant, gast.GeneratorExp, gast.ListComp)) \
                    or self.calls_range(scope, node):
                return node
            shares = [scope.locals[n] for n in self.iterated_names(scope, node)
                      if ir.is_name(scope.locals.get(n))]     # (not ``np``)
            if not shares or any(self._containers.get(v.id) or self.tuple_length(v) is not None
                                 for v in shares):
                return node     # a new array, or a list's items (``members``)
            name_ = self.namer.fresh("items")
            self.bind(scope, name_, self.atom(scope, node))
            return gast.copy_location(gast.Name(id=name_, ctx=gast.Load(), annotation=None,
                                                type_comment=None), node)
        it = named(stmt.iter)
        if it is stmt.iter:
            return stmt
        stmt = copy.copy(stmt)
        stmt.iter = it
        return stmt

    def calls_range(self, scope, node):
        """Whether ``node`` calls ``range`` (``range_args`` reads its arguments)."""
        if not isinstance(node, gast.Call) or node.keywords:
            return False
        func = self.expr(scope, node.func)
        return isinstance(func, Static) and func.obj is builtins.range

    def sequences_changed(self, scope, stmt, fetch, viewed):
        """The names a loop reads items from (``for r, s in zip(x, y)``,
        ``viewed``: ``iterated_in_place``'s) whose item its body changes in
        place (``r += s``): the loop carries them (each turn's item is read
        from the array as it is then), and the change reaches their aliases
        and the arrays they are views of."""
        if fetch is None:
            return []
        changed, bound = changed_names(stmt.body)[0], rebinding(stmt.body)
        arrays = {seq.id: scope.locals[seq.id] for _, seq in
                  _target_sequences(stmt.target, stmt.iter) if isinstance(seq, gast.Name)
                  and seq.id not in bound and ir.is_name(scope.locals.get(seq.id))
                  and not self._containers.get(scope.locals[seq.id].id)}
        through = {seq.id for target, seq in _target_sequences(stmt.target, stmt.iter)
                   if isinstance(seq, gast.Name) and seq.id in arrays
                   and changed & _names_in(target)}
        through |= {viewed} if viewed else set()
        # and the sequences sharing their memory (``zip(x[1:], x[:-1])``):
        # a later turn's item of those is read as the change left it
        shared = self.sharing_atoms({scope.locals[n].id for n in through})
        return sorted(through | {n for n, v in arrays.items() if v.id in shared})

    def iterated_names(self, scope, node):
        """The names whose arrays (or items) the sequences ``node`` gives
        may share: not those only read to compute a new array (``zip(c,
        pb + pb)`` iterates a sum, which changing ``pb`` in place leaves
        alone: fuzz seed 491098).  Conservative for calls (a view) and for
        ``+``/``*`` of a container (``xs + ys`` holds their items)."""
        if isinstance(node, gast.Name):
            return {node.id}
        if isinstance(node, (gast.Subscript, gast.Attribute, gast.Starred)):
            return self.iterated_names(scope, node.value)
        if isinstance(node, gast.IfExp):
            return self.iterated_names(scope, node.body) | \
                self.iterated_names(scope, node.orelse)
        if isinstance(node, (gast.Tuple, gast.List)):
            return set().union(*[self.iterated_names(scope, e) for e in node.elts])
        seqs = _sequences(node)
        if seqs != [node]:          # ``zip(a, b)``: what ``a`` and ``b`` give
            return set().union(*[self.iterated_names(scope, a) for a in seqs])
        if isinstance(node, gast.Constant):
            return set()
        if isinstance(node, gast.Call):
            try:
                func = self.static_value(scope, node.func)
            except (NotStatic, TypeError):
                func = None
            if isinstance(func, np.ufunc) and not node.keywords:
                return set()       # ``np.cos(x[:, 0])``: a new array
        names = loaded_names([node])
        if isinstance(node, (gast.BinOp, gast.UnaryOp, gast.Compare)) and not any(
                ir.is_name(scope.locals.get(n)) and (
                    self._containers.get(scope.locals[n].id) or
                    self.tuple_length(scope.locals[n]) is not None)
                for n in names):
            return set()     # arithmetic on arrays and numbers: a new array
        return names

    def loop_bounds(self, scope, stmt):
        """(start, stop, step, fetch): ``fetch(k)`` gives the item of step ``k``
        (``fetch`` None: a plain ``range`` loop whose index is the target)."""
        it = stmt.iter
        if isinstance(stmt.target, gast.Name):
            rng = self.range_args(scope, it)
            if rng is not None:
                return rng + (None,)
        length, fetch = self.iteration(scope, it, _target_bases(stmt.target),
                                       plainly_rebound(stmt.body))
        return ir.const(0), length, ir.const(1), fetch

    def range_args(self, scope, node):
        if not self.calls_range(scope, node):
            return None
        args = [self.atom(scope, a) for a in node.args]
        if len(args) == 1:
            return ir.const(0), args[0], ir.const(1)
        if len(args) == 2:
            return args[0], args[1], ir.const(1)
        return tuple(args)

    def iteration(self, scope, it, base=None, rebound=frozenset()):
        """(length atom, fetch(k) -> atom of item k) for any iterable:
        ``range``, ``zip``, ``enumerate``, ``reversed``, ``d.items()`` and
        friends, nested; anything else is indexed item by item.  ``base``:
        the loop target's name (or a list, for a tuple target), which the
        items are named after; ``rebound``: names the loop's body rebinds."""
        rng = self.range_args(scope, it)
        if rng is not None:
            start, stop, step = rng
            length = self.emit(P.get("builtins.len"), [
                self.emit(P.get("builtins.range"), [start, stop, step], base="steps")],
                base="n")
            self._lengths.add(length.id)    # (zip takes the shortest of lengths)
            return length, lambda k: self.emit(P.get("add"), [start, self.emit(
                P.get("mul"), [k, step], base="offset")],
                base=base if isinstance(base, str) else "index")
        if isinstance(it, gast.Call) and not it.keywords:
            func = self.expr(scope, it.func)
            obj = func.obj if isinstance(func, Static) else None
            if obj is builtins.zip:
                bases = base if isinstance(base, list) and len(base) == len(it.args) \
                    else [None] * len(it.args)
                parts = [self.iteration(scope, a, b, rebound) for a, b in zip(it.args, bases)]
                length = self.shortest_of([p[0] for p in parts])
                return length, lambda k: self.packed(
                    [fetch(k) for _, fetch in parts], "items")
            if obj is builtins.enumerate:
                inner = base[1] if isinstance(base, list) and len(base) == 2 else None
                length, fetch = self.iteration(scope, it.args[0], inner, rebound)
                return length, lambda k: self.packed([k, fetch(k)], "pair")
            if obj is builtins.reversed:
                length, fetch = self.iteration(scope, it.args[0], base, rebound)
                last = self.emit(P.get("sub"), [length, ir.const(1)], base="last")
                return length, lambda k: fetch(self.emit(P.get("sub"), [last, k],
                                                         base="back"))
            if isinstance(it.func, gast.Attribute) and it.func.attr in ("items", "keys",
                                                                         "values") \
                    and not it.args and not isinstance(func, Static):
                return self.dict_iteration(scope, it)
        seq = self.atom(scope, it)
        length = self.shortest_of([seq])
        label = base if isinstance(base, str) else "item"
        if not (isinstance(it, gast.Name) and it.id not in rebound and ir.is_name(seq)):
            return length, lambda k: self.emit(P.get("iteration_item"), [seq, k], base=label)

        def fetch(k):
            # the items of the sequence as the loop goes (a loop carrying it
            # binds it to its carry): each a view of it, so that changing
            # one in place (``for p, g in zip(params, grads): p -= lr * g``)
            # changes the sequence, and the loop carries it
            now = scope.locals.get(it.id)
            now = now if ir.is_name(now) else seq
            item = self.emit(P.get("iteration_item"), [now, k], base=label)
            if self._containers.get(now.id) != "dict":
                self._add_view(item, now, k)
            return item
        return length, fetch

    def packed(self, items, base):
        """The tuple of ``items`` (a step of ``zip``/``enumerate``), which holds
        them: unpacking it gives the items themselves."""
        out = self.emit(P.get("tuple"), items, base=base)
        self._tuple_lengths[out.id] = len(items)
        self.note_members(out, "tuple", range(len(items)), items)
        return out

    def dict_iteration(self, scope, it):
        mapping = self.atom(scope, it.func.value)
        keys = self.emit(P.get("builtins.list"), [mapping], base="keys")
        length = self.emit(P.get("builtins.len"), [keys], base="n")
        self._lengths.add(length.id)
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


def _sequences(node):
    """The sequences a ``for`` reads its items from: the arguments of
    ``zip``/``enumerate``/``reversed`` (nested), else the iterable itself.
    A name among them is read step by step (``iteration``'s lazy fetch)."""
    if isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and \
            node.func.id in ("zip", "enumerate", "reversed") and not node.keywords:
        return [s for a in node.args for s in _sequences(a)]
    return [node]


def _names_in(target):
    return {n.id for n in ir.walk(target) if isinstance(n, gast.Name)}


def _target_sequences(target, it):
    """(target part, sequence it takes its items from) pairs of a ``for``."""
    if isinstance(it, gast.Call) and isinstance(it.func, gast.Name) and not it.keywords:
        tuple_ = isinstance(target, (gast.Tuple, gast.List))
        if it.func.id == "zip" and tuple_ and len(target.elts) == len(it.args):
            return [p for t, a in zip(target.elts, it.args) for p in _target_sequences(t, a)]
        if it.func.id == "enumerate" and tuple_ and len(target.elts) == 2 and len(it.args) == 1:
            return _target_sequences(target.elts[1], it.args[0])
        if it.func.id == "reversed" and len(it.args) == 1:
            return _target_sequences(target, it.args[0])
    return [(target, it)]


def _target_bases(target):
    """A loop target's name, or a list of them for a tuple target."""
    if isinstance(target, gast.Name):
        return target.id
    if isinstance(target, (gast.Tuple, gast.List)):
        return [_target_bases(t) for t in target.elts]
    return None
