"""A loop running in compiled code: the fixed point that finds its carried
variables (one compiled variable per changing leaf), their values before
the loop, and their update at the end of each iteration."""
import ast

import numpy as np

from .signals import LoopExit, NeedUnroll
from .syntax import assigned_names, range_node
from .values import Const, Dyn, Expr, Stale, Tape, av_leaves, children, covers, describe, is_container, \
    is_none, is_unbound, rebuild, same, truth_of


class Carry:
    def __init__(self, assigned=()):
        self.assigned = set(assigned)   # the names the loop's body assigns
        self.names = {}
        self.entry = {}
        self.int_flags = {}     # carried variable started as a Python int -> its flag


class Carries:
    """Mixin of ``Specializer``: compiled loops and their carried state."""

    def _loop(self, stmt, iterable, static_range=None):
        """A loop running in compiled code.  Every variable the body assigns
        and whose abstract value changes across an iteration is carried: a
        fixed point finds, for each, one structure with a compiled variable
        per changing leaf (constants that change become variables, symbolic
        zeros become zeros, lists that grow become tapes)."""
        assigned = assigned_names(stmt)
        carried = Carry(assigned)
        for _ in range(8):
            entry = dict(self.env)
            trial = self.trial(stmt, iterable, static_range, carried)
            widened = False
            pending = []
            for name in assigned:
                if name not in trial:
                    continue
                old = entry.get(name)
                new = trial[name]
                if old is None:
                    continue
                if same(old, new) and name not in carried.names:
                    continue
                if name in carried.names and covers(carried.names[name], new):
                    continue
                if isinstance(old, list) and not old and isinstance(new, list) and \
                        new and is_none(new[-1]) and name not in carried.names:
                    # a tape that got None: the value pushed may be None only
                    # before another carry widens it (an early return's value,
                    # None until the return, then a tuple): the tape's
                    # element structure is decided once the others settle
                    pending.append((name, old, new))
                    continue
                self.carry(name, old, new, carried)
                widened = True
            if not widened:
                for name, old, new in pending:
                    self.carry(name, old, new, carried)
                    widened = True
            if not widened:
                break
        else:
            changing = sorted(n for n in assigned if n in self.env and n in carried.names)
            self.fail("the structure of a loop's variables does not settle"
                      + (f" ({', '.join(changing[:4])} change kind from one iteration to "
                         "the next)" if changing else ""),
                      "give each loop variable one kind before the loop (start a float "
                      "accumulator at 0.0, not 0; a list or tuple at its final length), or "
                      "run without jit (tx.disable_jit())")
        # the real pass
        self.loops.append(carried)
        saved, self.code = self.code, []
        carried.entry = dict(self.env)
        try:
            header = self.loop_header(stmt, iterable, static_range)
            self.body(stmt.body)
            self.restore_carry()
        finally:
            self.loops.pop()
        body, self.code = self.code, saved
        header.body = body or [ast.Pass()]
        self.emit(header)
        if self.emitting:
            self.int_starts.update(carried.int_flags)
        self.env = dict(carried.entry)
        if isinstance(stmt, ast.For):
            self.env[stmt.target.id] = Dyn(stmt.target.id)

    def loop_header(self, stmt, iterable, static_range):
        if isinstance(stmt, ast.While):
            test = self.eval_test(stmt.test)
            if isinstance(test, Const):
                node = ast.Constant(bool(truth_of(test)))
            else:
                node = self.render(test)
            return ast.While(test=node, body=[], orelse=[])
        if static_range is not None:
            value = static_range.value if isinstance(static_range, Const) else None
            if not isinstance(value, range):
                raise NeedUnroll(stmt.target.id)
            iter_node = range_node(value.start, value.stop, value.step)
        else:
            iter_node = self.render(iterable, "items")
        self.env[stmt.target.id] = Dyn(stmt.target.id)
        return ast.For(target=ast.Name(stmt.target.id, ast.Store()), iter=iter_node, body=[],
                       orelse=[], lineno=0)

    def trial(self, stmt, iterable, static_range, carried):
        """The environment after one iteration, emitting nothing."""
        state = self.snapshot()
        self.code, self.emitting = [], False
        carried.entry = dict(self.env)
        self.loops.append(carried)
        try:
            self.loop_header(stmt, iterable, static_range)
            try:
                self.body(stmt.body)
            except LoopExit:
                pass
            return self.env
        finally:
            self.loops.pop()
            self.restore(state)

    def carry(self, name, old, new, carried):
        """Make ``name`` a carried variable, general enough for ``old`` (its
        value before the loop) and ``new`` (after one iteration)."""
        if is_none(old) and is_container(new) and name.startswith("return_value"):
            # an early return inside the loop (see ``merge``): None per leaf
            old = rebuild(new, [Const(None)] * len(children(new)))
        canon = self.canonical(old, new, name)
        carried.names[name] = canon
        self.initialize(canon, old, sized=name in self.stacks)
        self.env[name] = canon
        if isinstance(canon, Dyn) and isinstance(old, Const) and type(old.value) is int \
                and not self.loops and not self.dynamic_ifs and self.emitting:
            # ``acc = 0`` before ``for ...: acc = acc + x``: Python's int
            # while the loop has not run, a float after (grad of it is
            # JAX's TypeError only in the first case; see check_grad_output)
            flag = carried.int_flags.get(canon.name) or self.fresh(f"{canon.name}_is_int")
            carried.int_flags[canon.name] = flag
            self.int_flag_names.add(flag)
            self.assign(flag, ast.Constant(True))

    def canonical(self, old, new, hint, leaf=False):
        if isinstance(new, Stale):      # a name for the list before an item went in
            self.fail_list_versions(new.tape)
        if isinstance(old, list) and isinstance(new, list) and len(new) > len(old) and \
                all(same(a, b) for a, b in zip(old, new)):
            if old and not self.peeled:
                self.fail(f"the list '{hint}' is filled before a loop and inside it")
            # (filled before it too: by the first iteration of a loop run
            # apart, ``Loops.peel``; ``initialize`` pushes those items)
            if isinstance(new[-1], Const) and new[-1].value is None and \
                    hint in self.scan_outputs:
                return Tape(new[-1])            # a scan step's outputs are all None
            if not is_container(new[-1]):
                return Tape(Dyn(hint))          # the list keeps its name
            return Tape(self.tape_template(new[-1], f"{hint}"))
        if isinstance(old, list) and old and isinstance(new, Tape):
            self.fail(f"the list '{hint}' is filled before a loop and inside it")
        if isinstance(old, list) and not old and isinstance(new, Tape):
            # filled under an ``if`` in the body (``merge_lists``): the
            # tape's variables made there belong to the trial pass
            if isinstance(new.template, Dyn):
                return Tape(Dyn(hint))
            return Tape(self.tape_template(new.template, hint))
        if isinstance(old, Tape) and isinstance(old.template, Dyn) and \
                isinstance(new, Dyn) and old.template.name not in self.sizes:
            # a list a loop filled, rebound here to new lists (``lst =
            # lst[:-1]``, as the python stage writes a pop it cannot do in
            # place): a list variable, which starts as the filled list
            return self.canonical(old.template, new, hint, leaf)
        if isinstance(old, Tape) or isinstance(new, Tape):
            if isinstance(old, Tape):
                return old
            return new
        if is_container(old) and is_container(new) and type(old) is type(new) and \
                len(old) == len(new) and (not isinstance(old, dict) or list(old) == list(new)):
            keys = list(old.keys()) if isinstance(old, dict) else range(len(old))
            return rebuild(old, [self.canonical(a, b, f"{hint}_{k}", leaf=True)
                                 for k, a, b in zip(keys, children(old), children(new))])
        if is_container(old) or is_container(new):
            self.fail(f"'{hint}' changes structure in a loop ({describe(old)} becomes "
                      f"{describe(new)})", "keep one structure per loop variable, or "
                      "mark the value deciding it static")
        if same(old, new):
            return old
        if isinstance(old, Dyn) and old.name == hint:
            return old
        if not hint.isidentifier() or (leaf and hint in self.source_names):
            return Dyn(self.fresh(hint))
        self.taken.add(hint)
        return Dyn(hint)

    def initialize(self, canon, old, sized=False):
        """Before the loop: the carried variables of ``canon`` hold ``old``
        (``sized``: a tape kept with its size, see ``sizes``)."""
        if isinstance(canon, Tape) and isinstance(old, list) and old:
            self.initialize(canon, [])
            for item in old:
                self.tape_push(canon, self.peeled_start(item))
            return
        if isinstance(canon, Tape) and isinstance(old, Tape) and same(old, canon):
            return      # its list variables hold it already (a list's versions read back)
        if isinstance(canon, Tape):
            for leaf in av_leaves(canon.template):
                if isinstance(leaf, Dyn):
                    if sized or leaf.name in self.sizes:
                        # allocated by its first push (numba_runtime.grown)
                        self.assign(leaf.name, ast.Constant(None))
                        size = self.sizes.setdefault(leaf.name,
                                                     self.fresh(f"{leaf.name}_size"))
                        self.assign(size, ast.Constant(0))
                    else:
                        self.assign(leaf.name, ast.List(elts=[], ctx=ast.Load()))
            return
        if is_container(canon):
            for c, o in zip(children(canon), children(old)):
                self.initialize(c, o)
            return
        if isinstance(canon, Dyn) and not (isinstance(old, Dyn) and old.name == canon.name):
            if is_unbound(old):
                # first assigned inside the loop: None before it, so Numba
                # types it as an optional value (a read while still None
                # raises, as Python's UnboundLocalError would)
                self.assign(canon.name, ast.Constant(None))
                self.unbound_starts.add(canon.name)
            else:
                self.assign(canon.name, self.render(old, canon.name))

    def peeled_start(self, item):
        """An item a loop's first iteration, run apart (``Loops.peel``),
        pushed on a list the loop fills: the Python number a variable
        started at is pushed as an array of that number shaped as the
        variable after that iteration (the loop pushes arrays; a
        derivative reads the number's value, elementwise, or its shape
        for a cotangent that goes nowhere)."""
        if not isinstance(item, Const) or isinstance(item.value, bool) or \
                not isinstance(item.value, (int, float)):
            return item
        for after, start in self.peel_values.values():
            if same(start, item):
                return self.materialize(Expr(ast.Call(
                    func=ast.Attribute(value=self.global_name(np, "np"), attr="full_like",
                                       ctx=ast.Load()),
                    args=[self.render(after), ast.Constant(item.value)], keywords=[])),
                    "start")
        return item

    def drop_unread_int_flags(self):
        """The flags of ``int_starts`` that no ``check_grad_output`` reads
        (jit of a function rather than of its gradient) leave the code."""
        read = {n.id for stmt in self.code for n in ast.walk(stmt)
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        unread = self.int_flag_names - read
        if unread:
            self.code = _without_stores(self.code, unread)

    def restore_carry(self):
        """At the end of an iteration (or at break/continue): carried
        variables get this iteration's values, all at once."""
        if not self.loops:
            return
        carried = self.loops[-1]
        targets, values = [], []
        for name, canon in carried.names.items():
            if name not in self.env:
                continue
            self._pairs(canon, self.env[name], targets, values)
        if not targets:
            return
        if len(targets) == 1:
            self.emit(ast.Assign(targets=[ast.Name(targets[0], ast.Store())], value=values[0],
                                 lineno=0))
        else:
            self.emit(ast.Assign(
                targets=[ast.Tuple(elts=[ast.Name(t, ast.Store()) for t in targets],
                                   ctx=ast.Store())],
                value=ast.Tuple(elts=values, ctx=ast.Load()), lineno=0))

    def _pairs(self, canon, value, targets, values):
        if isinstance(canon, Tape):
            if isinstance(value, Tape) and value is not canon:
                # a version of the list read back (``Tapes.pop_version``):
                # the carried list variables take its lists
                for c, v in zip(av_leaves(canon.template), av_leaves(value.template)):
                    if isinstance(c, Dyn) and isinstance(v, Dyn) and c.name != v.name:
                        if c.name in self.sizes or v.name in self.sizes:
                            self.fail("a list used as a stack is rebound in a loop")
                        targets.append(c.name)
                        values.append(ast.Name(v.name, ast.Load()))
                        self.version_rebinds.add(c.name)
            return
        if is_container(canon):
            if not is_container(value) or len(children(value)) != len(children(canon)):
                self.fail("a loop variable changes structure inside the loop")
            for c, v in zip(children(canon), children(value)):
                self._pairs(c, v, targets, values)
            return
        if isinstance(canon, Dyn):
            if isinstance(value, Dyn) and value.name == canon.name or is_unbound(value):
                return
            targets.append(canon.name)
            values.append(self.render(value, canon.name))
        elif not same(canon, value):
            self.fail("a loop variable changes value in a way that cannot be compiled")


def _without_stores(stmts, names):
    """``stmts`` less the assignments of a constant to one of ``names``."""
    out = []
    for stmt in stmts:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and \
                isinstance(stmt.targets[0], ast.Name) and stmt.targets[0].id in names:
            continue
        for field in ("body", "orelse"):
            if isinstance(getattr(stmt, field, None), list) and getattr(stmt, field):
                setattr(stmt, field, _without_stores(getattr(stmt, field), names) or
                        [ast.Pass()])
        out.append(stmt)
    return out
