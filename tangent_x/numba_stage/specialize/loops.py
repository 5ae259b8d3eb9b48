"""Which way a loop is specialised: unrolled (over a Python container, or
a short static range whose numbers become run-time values) or compiled
as a loop (``carries``); and ``break``/``continue`` in either."""
import ast

from .carries import Carry
from .signals import EmptyLoopError, NeedUnroll, NoStaticUnroll, SpecializationError, StaticBreak
from .syntax import assigned_names, has_jump
from .values import LEAVES, Const, Dyn, Expr, children, is_container, truth_of

# A loop with a static trip count up to this long is unrolled when a Python
# number in it becomes a run-time value (``Specializer.number_becomes_value``).
_UNROLL_NUMBERS_BECOMING_VALUES = 16
# A ``while`` whose test is known at each step but whose variables change
# structure (a tuple of layers shrinking) is unrolled up to this many steps.
_UNROLL_STRUCTURE_CHANGES = 100


class Loops:
    """Mixin of ``Specializer``: for/while loops, unrolled or compiled."""

    def stmt_For(self, stmt):
        if stmt.orelse:
            self.fail("for ... else cannot be compiled")
        if not isinstance(stmt.target, ast.Name):
            self.fail("a for loop over tuples cannot be compiled")
        iterable = self.eval(stmt.iter)
        static = isinstance(iterable, Const) or is_container(iterable)
        if static:
            items = list(iterable.value) if isinstance(iterable, Const) else children(iterable)
            items = [i if isinstance(i, LEAVES) or is_container(i) else Const(i) for i in items]
            if isinstance(iterable, Const) and isinstance(iterable.value, range) and \
                    has_jump(stmt.body):
                return self.loop(stmt, None, static_range=iterable)
            if isinstance(iterable, Const) and isinstance(iterable.value, range) and \
                    len(items) <= _UNROLL_NUMBERS_BECOMING_VALUES and \
                    self.number_becomes_value(stmt, iterable):
                return self.unroll(stmt, items)
            state = self.snapshot()
            try:
                return self.loop(stmt, None, static_range=iterable)
            except NeedUnroll:
                self.restore(state)
            except SpecializationError as exc:
                # e.g. the backward loop popping a list the unrolled forward
                # loop filled: short, it is unrolled too
                if len(items) > _UNROLL_NUMBERS_BECOMING_VALUES:
                    raise
                failed = exc
                self.restore(state)
                try:
                    return self.unroll(stmt, items)
                except SpecializationError:
                    raise failed from None
            return self.unroll(stmt, items)
        if self.peeled and self.peel(stmt, iterable):
            return None
        return self.loop(stmt, iterable)

    def peel(self, stmt, iterable):
        """A loop over a run-time ``range`` whose first iteration runs apart,
        before the loop over the others, when it carries a variable of
        ``peeled`` that holds a Python number before it (``total = 0``,
        then ``total = total + item`` over a list of arrays, as ``sum``
        does): that iteration makes it an array, as Python does, and the
        loop then carries an array (Numba gives a loop variable one type).
        No iteration would leave the number, which no compiled variable
        holding arrays can be: that raises, at the user's line.  Whether
        it was done."""
        names = [n for n in assigned_names(stmt) if n in self.peeled and
                 isinstance(self.env.get(n), Const) and
                 isinstance(self.env[n].value, (bool, int, float))]
        node = getattr(iterable, "node", None)
        if isinstance(iterable, Dyn) and iterable.name in self.ranges:
            node = ast.Call(func=ast.Name("range", ast.Load()),
                            args=list(self.ranges[iterable.name]), keywords=[])
        if not names or has_jump(stmt.body) or not isinstance(stmt.target, ast.Name) or not (
                isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and
                node.func.id == "range" and 1 <= len(node.args) <= 3 and not node.keywords):
            return False
        bounds = [Const(a.value) if isinstance(a, ast.Constant) else
                  Dyn(a.id) if isinstance(a, ast.Name) else self.materialize(Expr(a), "bound")
                  for a in node.args]
        trips = ast.Call(func=ast.Name("len", ast.Load()), args=[ast.Call(
            func=ast.Name("range", ast.Load()), args=[self.render(b) for b in bounds],
            keywords=[])], keywords=[])
        if len(bounds) == 1:
            bounds.insert(0, Const(0))
        start, stop, step = (bounds + [Const(1)])[:3]
        message = (f"{self.where().where()}: a loop here ran no iteration (sum() of an "
                   "empty list?): NumPy's result is then the Python number the loop "
                   f"starts '{names[0]}' at (sum's 0), compiled code's is an array, "
                   "as each iteration makes it; start from an array (np.sum(np.stack("
                   "items), axis=0) for sum(items)), or run without jit (with "
                   "tx.disable_jit(): ...)")
        error = self.global_name(EmptyLoopError, "EmptyLoopError")
        self.emit(ast.If(test=ast.Compare(left=trips, ops=[ast.Eq()],
                                          comparators=[ast.Constant(0)]),
                         body=[ast.Raise(exc=ast.Call(func=error, args=[ast.Constant(message)],
                                                      keywords=[]), cause=None)],
                         orelse=[]))
        starts = {n: self.env[n] for n in names}
        start_code = len(self.code)
        self.store(stmt.target, start)
        self.body(stmt.body)
        # the variables' values after it: a derivative's tape of them, filled
        # by that iteration with the number, is filled in the loop with
        # arrays (``Carries.initialize``)
        values = {n: (self.env[n], old) for n, old in starts.items()
                  if isinstance(self.env.get(n), Dyn)}
        if len(self.code) > start_code:
            self.code[start_code]._tx_iteration = \
                f"{stmt.target.id} = {ast.unparse(self.render(start))}, apart"
        if isinstance(start, Const) and isinstance(step, Const):
            after = ast.Constant(start.value + step.value)
        else:
            after = ast.BinOp(left=self.render(start), op=ast.Add(), right=self.render(step))
        rest = [after, self.render(stop)] + \
            ([self.render(step)] if not (isinstance(step, Const) and step.value == 1) else [])
        saved, self.peel_values = self.peel_values, values
        try:
            self.loop(stmt, Expr(ast.Call(func=ast.Name("range", ast.Load()), args=rest,
                                          keywords=[])))
        finally:
            self.peel_values = saved
        return True

    def number_becomes_value(self, stmt, iterable):
        """Whether a variable holding a Python number before the loop holds a
        run-time value after one iteration (``s = 0.0; for i in range(5): s
        = s + x * i``).  Why: that value may be an array, and Numba gives a
        loop variable one type, so a compiled loop would fail to type where
        Python is fine; a short loop with a static trip count is unrolled
        instead (as tracing unrolls it in JAX), so each iteration's values
        have their own types."""
        entry = dict(self.env)
        try:
            after = self.trial(stmt, None, iterable, Carry())
        except (NeedUnroll, SpecializationError):
            return False
        for name in assigned_names(stmt):
            old, new = entry.get(name), after.get(name)
            if isinstance(old, Const) and isinstance(old.value, (bool, int, float, complex)) \
                    and isinstance(new, Dyn):
                return True
        return False

    def unroll(self, stmt, items):
        if has_jump(stmt.body):
            self.fail("break/continue in a loop over a Python container cannot be compiled")
        outer, self.static_loops = self.static_loops, []
        try:
            self._unroll(stmt, items)
        finally:
            self.static_loops = outer

    def _unroll(self, stmt, items):
        for item in items:
            start = len(self.code)
            self.store(stmt.target, item)
            self.body(stmt.body)
            if len(self.code) > start and isinstance(stmt.target, ast.Name):
                # a comment in the emitted code: which iteration this is
                value = repr(item.value) if isinstance(item, Const) else "..."
                self.code[start]._tx_iteration = f"{stmt.target.id} = {value}"

    def stmt_While(self, stmt):
        if stmt.orelse:
            self.fail("while ... else cannot be compiled")
        test = self.eval_test(stmt.test)
        static_test = isinstance(test, Const) or is_container(test)
        if static_test and self.number_becomes_value(stmt, None):
            state = self.snapshot()
            try:
                return self.unroll_while(stmt)
            except NoStaticUnroll:
                self.restore(state)
        if not static_test:
            return self.loop(stmt, None)
        state = self.snapshot()
        try:
            return self.loop(stmt, None)
        except SpecializationError as exc:
            # a test known at each step over a variable whose structure
            # changes (``while layers: w, layers = layers[0], layers[1:]``):
            # each iteration has its own structure, so it is unrolled, as
            # tracing unrolls it in JAX
            failed = exc
            self.restore(state)
        try:
            return self.unroll_while(stmt, _UNROLL_STRUCTURE_CHANGES)
        except (NoStaticUnroll, SpecializationError):
            raise failed from None

    def unroll_while(self, stmt, limit=_UNROLL_NUMBERS_BECOMING_VALUES):
        """A ``while`` whose test and exits are known at each step (a counter
        against a bound: ``i = 0; while i < 8: i += 1 ...``), run here, the
        body emitted once per iteration, for the reason given in
        ``number_becomes_value``.  Raises NoStaticUnroll when a test or a
        ``break`` depends on run-time values, or past ``limit`` iterations."""
        self.static_loops.append(self.dynamic_ifs)
        try:
            for n in range(limit + 1):
                test = self.eval_test(stmt.test)
                if not (isinstance(test, Const) or is_container(test)):
                    raise NoStaticUnroll()
                if not truth_of(test):
                    return
                if n == limit:
                    raise NoStaticUnroll()
                start = len(self.code)
                try:
                    self.body(stmt.body)
                except StaticBreak:
                    return
                if len(self.code) > start:
                    self.code[start]._tx_iteration = f"iteration {n}"
            raise NoStaticUnroll()
        finally:
            self.static_loops.pop()

    def stmt_Break(self, stmt):
        if self.static_loops:
            if self.dynamic_ifs > self.static_loops[-1]:
                raise NoStaticUnroll()     # a break under a run-time test
            raise StaticBreak()
        self.restore_carry()
        self.emit(ast.Break())

    def stmt_Continue(self, stmt):
        if self.static_loops:
            raise NoStaticUnroll()
        self.restore_carry()
        self.emit(ast.Continue())

    def loop(self, stmt, iterable, static_range=None):
        """A loop running in compiled code (see ``_loop``); a ``break`` in it
        is its own, not that of a ``while`` around it being unrolled."""
        outer, self.static_loops = self.static_loops, []
        try:
            return self._loop(stmt, iterable, static_range)
        finally:
            self.static_loops = outer
