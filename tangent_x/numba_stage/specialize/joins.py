"""An ``if`` on a run-time test: both branches specialised, and the
values that differ between them joined into one variable per leaf."""
import ast

import numpy as np

from .signals import DeadPath
from .splitting import RESULT
from .syntax import tagged
from .values import Const, Dyn, Stale, Tape, av_leaves, children, describe, is_container, \
    is_none, is_unbound, mentions, rebuild, same, truth_of


class Joins:
    """Mixin of ``Specializer``: ifs on run-time tests and their joins."""

    def stmt_If(self, stmt):
        test = self.eval_test(stmt.test)
        if isinstance(test, Const) or is_container(test):
            taken = truth_of(test)
            self.body(stmt.body if taken else stmt.orelse)
            return
        test_node = self.render(self.materialize(test, "test"))
        before = self.env
        branches = []
        dead = []
        self.dynamic_ifs += 1
        self.if_loops.append(len(self.loops))
        try:
            for part, known in ((stmt.body, True), (stmt.orelse, False)):
                self.env = dict(before)
                if getattr(stmt, "tx_split", False) and isinstance(stmt.test, ast.Name):
                    # the rest of the function runs inside this branch
                    # (splitting.py): a later ``if`` on the test takes it
                    self.env[stmt.test.id] = Const(np.bool_(known))
                saved, self.code = self.code, []
                try:
                    self.body(part)
                except DeadPath:         # this path raises: the other's values go on
                    dead.append(len(branches))
                branches.append((self.env, self.code))
                self.code = saved
        finally:
            self.dynamic_ifs -= 1
            self.if_loops.pop()
        (env_a, code_a), (env_b, code_b) = branches
        if not dead:
            # a split if's result: the same names on both paths may hold
            # values of two types, so it is joined into fresh variables
            forced = (RESULT,) if getattr(stmt, "tx_split", False) else ()
            self.env = self.join(env_a, code_a, env_b, code_b, forced)
        else:
            self.env = dict(branches[1 - dead[0]][0] if len(dead) == 1 else before)
            if len(dead) == 1 and isinstance(stmt.test, ast.Name):
                # past this ``if`` its test has the live path's value: a
                # later ``if`` on it (the adjoint's) takes that path only
                self.env[stmt.test.id] = Const(np.bool_(dead[0] == 1))
        self.emit(ast.If(test=test_node, body=code_a or [ast.Pass()], orelse=code_b))
        if len(dead) == 2:
            raise DeadPath()

    def join(self, env_a, code_a, env_b, code_b, forced=()):
        """One environment after an ``if``: values that differ between the
        branches are assigned to one variable (per leaf) at the end of each
        (``forced``: names joined into fresh variables even where both
        paths hold the same)."""
        env = {}
        self.joined_lists = {}
        for name in list(env_a) + [n for n in env_b if n not in env_a]:
            if name not in env_a or name not in env_b:
                env[name] = env_a.get(name, env_b.get(name))
                continue
            a, b = env_a[name], env_b[name]
            if same(a, b) and name not in forced:
                env[name] = a
                continue
            env[name] = self.merge(a, b, name, [(code_a, env_a), (code_b, env_b)],
                                   force=name in forced)
        return env

    def merge(self, a, b, hint, sides, root=None, force=False):
        """A value that is ``a`` on one side and ``b`` on the other (each
        side: its code and env), with new variables where they differ.
        ``root`` is the variable being joined (``hint`` names one of its
        leaves, ``return_value_1``, which may be another variable's name);
        ``force``: every variable leaf joined into a fresh one."""
        root = hint if root is None else root
        if same(a, b) and not (force and any(isinstance(v, Dyn) for v in av_leaves(a))):
            return a
        if isinstance(a, Stale) or isinstance(b, Stale):
            return a if isinstance(a, Stale) else b     # stale on one path: read, refused
        if isinstance(a, list) and isinstance(b, list) and len(a) != len(b):
            return self.merge_lists(a, b, hint, sides)
        if (is_none(a) and is_container(b) or is_container(a) and is_none(b)) and \
                hint.startswith("return_value"):
            # an early return's value, None until the return ran (a flag
            # says whether it did): one optional variable per leaf
            like = b if is_none(a) else a
            nones = rebuild(like, [Const(None)] * len(children(like)))
            return self.merge(nones if is_none(a) else a, nones if is_none(b) else b, hint, sides,
                              root)
        if is_container(a) or is_container(b):
            if type(a) is not type(b) or len(a) != len(b) or (
                    isinstance(a, dict) and list(a) != list(b)):
                self.fail(f"'{hint}' holds {describe(a)} on one path and {describe(b)} "
                          "on another: a compiled variable needs one structure",
                          "make the paths agree, or mark the value deciding the path static")
            keys = list(a.keys()) if isinstance(a, dict) else range(len(a))
            return rebuild(a, [self.merge(x, y, f"{hint}_{k}", sides, root, force)
                               for k, x, y in zip(keys, children(a), children(b))])
        if isinstance(a, Tape) or isinstance(b, Tape):
            self.fail(f"the list '{hint}' is filled differently on two paths")
        name = self.fresh(hint) if force else self._join_name(hint, sides, root)
        for (code, _), value in zip(sides, (a, b)):
            if isinstance(value, Dyn) and value.name == name:
                continue
            if is_unbound(value):
                # never assigned on this path: None, so Numba types the
                # variable as optional, and each read of it checks
                # (``assigned``: UnboundLocalError, as Python raises); left
                # unassigned, Numba would read it as zero
                code.append(tagged(ast.Assign(targets=[ast.Name(name, ast.Store())],
                                              value=ast.Constant(None), lineno=0),
                                   self.current))
                self.unbound_starts.add(name)
                continue
            code.append(tagged(ast.Assign(targets=[ast.Name(name, ast.Store())],
                                        value=self.render(value, name), lineno=0),
                             self.current))
        return Dyn(name)

    def merge_lists(self, a, b, hint, sides):
        """Lists of different lengths on two paths (``[]`` where one path
        pushed nothing, ``[*]`` where it pushed a run-time value: a tape
        filled under an ``if``) join as one run-time list per leaf of the
        element structure.  The lists are made empty before the ``if`` and
        each path appends its items: Numba types an empty list only from
        the appends that follow it, not from an ``[]`` on one path joined
        with ``[x]`` on the other."""
        key = (id(a), id(b))
        if key in self.joined_lists:        # `t_2 = t` on both paths: one list
            return self.joined_lists[key][2]
        items = a + b
        template = self.tape_template(items[0], hint)
        for item in items[1:]:
            if not same(self.tape_template(item, hint, fresh=False),
                        self.tape_template(items[0], hint, fresh=False)):
                self.fail(f"'{hint}' holds {describe(a)} on one path and {describe(b)} "
                          "on another, with elements of different structures: a compiled "
                          "list needs one element structure",
                          "make the paths agree, or mark the value deciding the path static")
        tape = Tape(template)
        for leaf in av_leaves(template):
            if isinstance(leaf, Dyn):
                self.emit(ast.Assign(targets=[ast.Name(leaf.name, ast.Store())],
                                     value=ast.List(elts=[], ctx=ast.Load()), lineno=0))
        saved = self.code
        try:
            for (code, _), value in zip(sides, (a, b)):
                self.code = code
                for item in value:
                    self.tape_push(tape, item)
        finally:
            self.code = saved
        self.joined_lists[key] = (a, b, tape)     # holds a, b: their ids stay theirs
        return tape

    def _join_name(self, hint, sides, root):
        """The variable joining two paths: the source name itself when that
        name is not read by anything else, else a fresh one.  A leaf's hint
        (``return_value_bar_1`` for leaf 1 of ``return_value_bar``) that is
        another variable's name is never reused: the join would overwrite
        that variable."""
        if hint != root and hint in self.source_names:
            return self.fresh(hint)
        if hint.isidentifier() and not any(mentions(v, hint) for _, env in sides
                                           for k, v in env.items() if k != hint):
            self.taken.add(hint)
            return hint
        return self.fresh(hint)
