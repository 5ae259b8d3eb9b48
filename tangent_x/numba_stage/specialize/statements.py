"""The walk over a function's statements: the entry (arguments in, a flat
result out), assignments, in-place accumulation and stores into items."""
import ast
import copy
import numbers

import numpy as np

from ... import runtime
from .signals import NeedUnroll, SpecializationError
from .splitting import split_tails
from .syntax import is_boolean_expr, target_hint
from .values import Const, Dyn, Expr, Tape, Zero, as_av, av_leaves, children, describe, \
    is_container, mentions, rebuild


class Statements:
    """Mixin of ``Specializer``: the walk and the simple statements."""

    def run(self, arg_avs):
        for a, av in zip(self.func.args.args, arg_avs):
            self.env[a.arg] = self.env_of_params[a.arg] = av
            self.arguments.update(leaf.name for leaf in av_leaves(av) if isinstance(leaf, Dyn))
        result = Const(None)
        if self.split_lines:
            # paths split at the ifs of refused joins (splitting.py)
            self.func.body = split_tails(self.func.body, self.split_lines) or self.func.body
        try:
            for stmt in self.func.body:
                if isinstance(stmt, ast.Return):
                    self.current = stmt
                    result = self.eval(stmt.value) if stmt.value is not None else Const(None)
                    break
                self.stmt(stmt)
        except NeedUnroll as exc:
            raise SpecializationError(
                f"'{exc.name}' is a Python container indexed by a value known only at run "
                "time", exc.where or self.where(),
                "mark the index static (static_argnums/static_argnames), make the "
                "container an array, or run without jit (tx.disable_jit())") from None
        out = self.finish(result)
        self.drop_unread_int_flags()
        return out

    def finish(self, result):
        """Flatten the result: compiled leaves are returned as a tuple, a
        single leaf as itself (see ``Plan.bare``)."""
        values = []

        def plan(av, hint):
            if is_container(av):
                keys = list(av.keys()) if isinstance(av, dict) else range(len(av))
                return rebuild(av, [plan(c, f"{hint}_{k}") for k, c in
                                    zip(keys, children(av))])
            if isinstance(av, Const) and isinstance(av.value, runtime.Unbound):
                self.fail_unbound(av.value)
            if isinstance(av, Const) and not isinstance(av.value, np.ndarray):
                return av
            if isinstance(av, Zero):
                return av
            if isinstance(av, Tape):
                self.fail("a list built in a loop cannot be returned from compiled code")
            values.append(self.render(self.materialize(av, hint), hint))
            return Dyn(f"#{len(values) - 1}")

        out = plan(result, "out")
        # one leaf is returned as it is: no tuple to build, box and unpack
        self.emit(ast.Return(value=values[0] if len(values) == 1 else
                             ast.Tuple(elts=values, ctx=ast.Load())))
        return out

    def body(self, stmts):
        for stmt in stmts:
            self.stmt(stmt)

    def stmt(self, stmt):
        previous, self.current = self.current, stmt
        try:
            method = getattr(self, "stmt_" + type(stmt).__name__, None)
            if method is None:
                self.fail(f"{type(stmt).__name__} statements cannot be compiled")
            method(stmt)
        finally:
            self.current = previous

    def stmt_Pass(self, stmt):
        pass

    def stmt_Expr(self, stmt):
        node = stmt.value
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                isinstance(node.func.value, ast.Name) and node.func.attr in ("append", "pop"):
            target = node.func.value.id
            if target in self.env and isinstance(self.env[target], (list, Tape)):
                popped = self.list_method(target, node.func.attr, node.args)
                if isinstance(popped, Expr) and isinstance(popped.node, ast.Call):
                    # ``lst.pop()`` for its effect (``lst[:-1]`` of a list read
                    # no more is spelled so): the call is the statement (it
                    # was dropped, and the item stayed: fuzz seed 320001)
                    self.emit(ast.Expr(value=popped.node))
                return
        value = self.eval(node)
        if isinstance(value, Expr):
            self.emit(ast.Expr(value=value.node))

    def stmt_Assign(self, stmt):
        if len(stmt.targets) != 1:
            self.fail("chained assignment cannot be compiled")
        target = stmt.targets[0]
        self.append_in_place = id(stmt.value) in self.in_place_appends
        call = stmt.value
        self.append_source = call.args[0].id if isinstance(call, ast.Call) and call.args and \
            isinstance(call.args[0], ast.Name) else None
        try:
            value = self.eval(stmt.value, hint=target_hint(target))
        finally:
            self.append_in_place = False
            self.append_source = None
        self.store(target, value)

    def stmt_AugAssign(self, stmt):
        """``a += b``: the python stage writes it only for an accumulator no
        other name can reach (``inplace.accumulate_in_place``), so where
        ``a`` is still that compiled variable alone, the addition happens in
        place -- through the helper's accumulating form when it has one
        (``numba_runtime.ACCUMULATING``: a rank-one update written into the
        buffer, no temporary).  Otherwise it is ``a = a + b``."""
        target = stmt.target
        if isinstance(target, ast.Name) and isinstance(stmt.op, ast.Add) and \
                self.owns(target.id):
            value = self.eval(stmt.value)
            if isinstance(value, Zero):
                return
            if isinstance(value, (Dyn, Expr)) or isinstance(value, Const) and \
                    isinstance(value.value, numbers.Number):
                self.add_into(target.id, value)
            else:
                self.store(target, self.binop(self.env[target.id], stmt.op, value))
            return
        load = copy.deepcopy(target)
        for n in ast.walk(load):
            if hasattr(n, "ctx"):
                n.ctx = ast.Load()
        value = self.eval(ast.BinOp(left=load, op=stmt.op, right=stmt.value))
        self.store(target, value)

    def owns(self, name):
        """Whether the compiled variable ``name`` holds ``name``'s value and
        nothing else reads it (no other variable, container or loop entry):
        an in-place update of it is then invisible elsewhere."""
        if self.env.get(name) != Dyn(name) or name in self.arguments:
            return False
        if any(k != name and mentions(v, name) for k, v in self.env.items()):
            return False
        return not any(k != name and mentions(v, name)
                       for carried in self.loops for k, v in carried.entry.items())

    def add_into(self, name, value):
        from .. import numba_runtime  # local import: heavy (Numba), loaded at the first use
        node = value.node if isinstance(value, Expr) else self.render(value)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                not node.keywords:
            into = numba_runtime.ACCUMULATING.get(self.bound.get(node.func.id))
            if into is not None:
                call = ast.Call(func=self.global_name(into, into.__name__),
                                args=[ast.Name(name, ast.Load())] + node.args, keywords=[])
                self.emit(ast.Assign(targets=[ast.Name(name, ast.Store())], value=call,
                                     lineno=0))
                return
        self.emit(ast.AugAssign(target=ast.Name(name, ast.Store()), op=ast.Add(), value=node,
                                lineno=0))

    def store(self, target, value):
        if isinstance(target, ast.Name):
            self.bind_name(target.id, value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            if isinstance(value, (Expr, Dyn)):
                names = [t.id for t in target.elts if isinstance(t, ast.Name)]
                if len(names) != len(target.elts):
                    self.fail("nested unpacking of a run-time value cannot be compiled")
                node = value.node if isinstance(value, Expr) else self.render(value)
                for n in names:
                    self.clobber(n)
                self.emit(ast.Assign(targets=[ast.Tuple(
                    elts=[ast.Name(n, ast.Store()) for n in names], ctx=ast.Store())],
                    value=node, lineno=0))
                for n in names:
                    self.env[n] = Dyn(n)
                return
            if isinstance(value, Const) and isinstance(value.value, (tuple, list)):
                value = type(value.value)(Const(v) for v in value.value)
            if not isinstance(value, (tuple, list)) or len(value) != len(target.elts):
                self.fail(f"cannot unpack {describe(value)} into {len(target.elts)} names")
            items = [self.materialize(v) for v in value]
            # Python reads every item before it binds a target: in ``w, y =
            # w_new, w`` (a loop's carries), ``y`` gets ``w`` as it was.  The
            # items wait in the environment, under keys no variable can
            # have, so that binding a target first saves the old value for
            # the items still to be stored that read it (``clobber``);
            # stored one after another, ``y`` read the new ``w`` (fuzz seed
            # 700089: a silently wrong value under jit).
            held = [f"<item {i} of an unpacking>" for i in range(len(items))]
            self.env.update(zip(held, items))
            try:
                for t, key in zip(target.elts, held):
                    self.store(t, self.env.pop(key))
            finally:
                for key in held:
                    self.env.pop(key, None)
        elif isinstance(target, ast.Subscript):
            self.store_item(target, value)
        else:
            self.fail(f"assignment to {ast.unparse(target)} cannot be compiled")

    def bind_name(self, name, value):
        if isinstance(value, Expr):
            self.assign(name, value.node)
            self.env[name] = Dyn(name)
            if is_boolean_expr(value.node, self.masks):
                self.masks.add(name)
            else:
                self.masks.discard(name)
            if isinstance(value.node, ast.Call) and isinstance(value.node.func, ast.Name) and \
                    value.node.func.id == "range":
                self.ranges[name] = value.node.args
            else:
                self.ranges.pop(name, None)
        elif isinstance(value, Dyn):
            if value.name != name:
                self.assign(name, ast.Name(value.name, ast.Load()))
                if value.name in self.ranks and not self.dynamic_ifs and not self.loops:
                    # ``pb = p['b']`` in straight-line code: the argument's
                    # rank, so ``is_array(pb)`` is known (a 0-d array enters
                    # compiled code as its number; a change in place of it
                    # was lost: fuzz seed 510792).  (``emit`` forgets it
                    # when ``pb`` is assigned again.)
                    self.ranks[name] = self.ranks[value.name]
            self.env[name] = Dyn(name)
        elif isinstance(value, Const) and isinstance(value.value, np.ndarray):
            # an array computed from constants: a compiled variable (it may be
            # written into in place later)
            self.assign(name, ast.Call(func=ast.Attribute(value=self.global_name(np, "np"),
                                                          attr="copy", ctx=ast.Load()),
                                       args=[self.render(value, name)], keywords=[]))
            self.env[name] = Dyn(name)
        else:
            if is_container(value):
                value = rebuild(value, [self.materialize(c, name) for c in children(value)])
            self.env[name] = value

    def store_item(self, target, value):
        base = target.value
        if not isinstance(base, ast.Name) or base.id not in self.env:
            self.fail(f"assignment to {ast.unparse(target)} cannot be compiled")
        current = self.env[base.id]
        index = self.eval(target.slice)
        if is_container(current) or (isinstance(current, Const) and
                                     isinstance(current.value, (list, dict))):
            if isinstance(current, Const):
                current = as_av(current.value)
            if not isinstance(index, Const):
                raise NeedUnroll(base.id, self.where())
            updated = copy.copy(current)
            if isinstance(updated, tuple):
                self.fail("a tuple cannot be assigned into")
            updated[index.value] = self.materialize(value)
            self.env[base.id] = updated
            return
        if not isinstance(current, Dyn):
            self.fail(f"cannot assign into {describe(current)}")
        if isinstance(index, Dyn) and index.name in self.masks:
            from .. import numba_runtime  # local import: heavy (Numba), loaded at the first use
            self.emit(ast.Expr(value=ast.Call(
                func=self.global_name(numba_runtime.mask_assign, "mask_assign"),
                args=[ast.Name(current.name, ast.Load()), self.checked(current, index),
                      self.render(value)], keywords=[])))
            return
        self.emit(ast.Assign(targets=[ast.Subscript(value=ast.Name(current.name, ast.Load()),
                                                    slice=self.checked(current, index),
                                                    ctx=ast.Store())],
                             value=self.render(value), lineno=0))
