"""Lists in compiled code: a known Python list pushed and popped now, and
a ``Tape`` (one growable list per leaf) that a loop fills, kept with its
size where it is used only as a stack (``Specializer.sizes``)."""
import ast
import copy
import re

from .values import Const, Dyn, Expr, Tape, av_leaves, children, is_container, rebuild


class Tapes:
    """Mixin of ``Specializer``: list methods and the layout of tapes."""

    def list_method(self, target, method, args):
        lst = self.env[target]
        if method == "append":
            item = self.materialize(self.eval(args[0]), f"{target}_item")
            if isinstance(lst, Tape):
                self.tape_push(lst, item)
            else:
                self.env[target] = list(lst) + [item]
            return None
        if args:
            self.fail("list.pop(i) with an index cannot be compiled")
        if isinstance(lst, Tape):
            return self.tape_pop(lst, target)
        if not lst:
            self.fail(f"pop from the empty list {target}")
        self.env[target] = list(lst[:-1])
        return lst[-1]

    def eval_test(self, node):
        """The test of an ``if``/``while``: a list a loop fills is true while
        it holds items (its size, not its items rebuilt as a value)."""
        value = self.eval(node)
        if isinstance(value, Tape):
            n = self.tape_size(value)
            if n is None:
                self.fail("testing a list filled by a loop with items that hold no value")
            return Expr(n)
        return value

    def tape_size(self, tape):
        """The number of items of ``tape``: its size variable, or its first
        leaf list's length (None when no leaf holds a value)."""
        leaves = [leaf for leaf in av_leaves(tape.template) if isinstance(leaf, Dyn)]
        if not leaves:
            return None
        size = self.sizes.get(leaves[0].name)
        return ast.Name(size, ast.Load()) if size else ast.Call(
            func=ast.Name("len", ast.Load()), args=[ast.Name(leaves[0].name, ast.Load())],
            keywords=[])

    def tape_item(self, tape, index, in_range=False):
        """Item ``index`` of a list filled by a loop (``items[i]``, or the
        item of ``for a, b in items``): the item's structure, each leaf read
        from its own list at the same position.  ``in_range``: the index is a
        loop's counter below the size; else it is checked and a negative one
        counts from the end (``position``)."""
        self.check_plain(tape)
        n = self.tape_size(tape)
        if n is None:
            self.fail("indexing a list filled by a loop with items that hold no value")
        if in_range:
            at = self.render(index, "index")
        else:
            from .. import numba_runtime  # local import: heavy (Numba), loaded at the first use
            at = self.render(self.materialize(Expr(ast.Call(
                func=self.global_name(numba_runtime.position, "position"),
                args=[self.render(index, "index"), n], keywords=[])), "at"), "at")

        def leaf(template):
            if isinstance(template, Dyn):
                return Expr(ast.Subscript(value=ast.Name(template.name, ast.Load()),
                                          slice=copy.deepcopy(at), ctx=ast.Load()))
            return template
        return self.tape_map(tape.template, leaf)

    def tape_slice(self, tape, sl):
        """``items[a:b:c]`` of a list filled by a loop with containers: a new
        tape, each leaf's list sliced the same way, so its items keep their
        structure (``t[0]`` of an item stays a static index into a tuple of
        an array and a number, which Numba cannot index at run time)."""
        self.check_plain(tape)
        def leaf(template):
            if not isinstance(template, Dyn):
                return template
            lst = ast.Name(template.name, ast.Load())
            size = self.sizes.get(template.name)
            if size:
                lst = ast.Subscript(value=lst, slice=ast.Slice(upper=ast.Name(size, ast.Load())),
                                    ctx=ast.Load())
            bounds = [None if v is None else ast.Constant(v) for v in (sl.start, sl.stop, sl.step)]
            node = ast.Subscript(value=lst, slice=ast.Slice(*bounds), ctx=ast.Load())
            return self.materialize(Expr(node), f"{template.name}_sliced")
        return Tape(self.tape_map(tape.template, leaf))

    def tape_map(self, template, fn):
        if is_container(template):
            return rebuild(template, [self.tape_map(c, fn) for c in children(template)])
        return fn(template)

    def version_length(self, lengths, value):
        """What a tape of a list's versions keeps of ``value`` (the list as
        a turn starts): its length.  The list only grows (a pop of it is
        refused, ``pop_node``; nothing assigns into a tape), so the version
        is the list's first items when it is read back (``pop_version``)."""
        if isinstance(value, list) and not value:
            return Const(0)
        if not isinstance(value, Tape):
            self.fail_list_versions(Tape(Dyn(lengths)))
        n = self.tape_size(value)
        if n is None:
            self.fail_list_versions(value)
        self.version_lengths[lengths] = value
        if self.emitting:       # (what a trial pass pushes is not the code's)
            self.versioned.update(leaf.name for leaf in av_leaves(value.template)
                                  if isinstance(leaf, Dyn))
        return Expr(n)

    def pop_version(self, lengths):
        """A version of a list popped from its tape: the list's first
        ``n`` items, ``n`` the length kept (``version_length``)."""
        n = self.materialize(Expr(self.pop_node(lengths)), "length")
        tape = self.version_lengths[lengths]
        if tape is None:        # only empty lists were pushed
            return []

        def leaf(template):
            if not isinstance(template, Dyn):
                return template
            node = ast.Subscript(value=ast.Name(template.name, ast.Load()),
                                 slice=ast.Slice(upper=self.render(n)), ctx=ast.Load())
            return self.materialize(Expr(node), f"{template.name}_version")
        return Tape(self.tape_map(tape.template, leaf))

    def copy_tape(self, tape):
        """A copy of a list a loop filled: each leaf's list copied (a copy of
        a list whose versions are kept is kept from pops too)."""
        def copy(template):
            if is_container(template):
                return rebuild(template, [copy(c) for c in children(template)])
            if not isinstance(template, Dyn):
                return template
            if template.name in self.sizes:
                self.fail("copying a list used as a stack cannot be compiled")
            name = self.fresh(f"{template.name.replace('_tape', '')}_copy")
            self.assign(name, ast.Call(func=ast.Name("list", ast.Load()),
                                       args=[ast.Name(template.name, ast.Load())], keywords=[]))
            if template.name in self.versioned:
                self.versioned.add(name)
            return Dyn(name)
        return Tape(copy(tape.template))

    def check_plain(self, tape):
        """A tape read other than by push and pop: none of its leaves may
        hold versions' lengths."""
        if any(isinstance(leaf, Dyn) and leaf.name in self.version_lengths
               for leaf in av_leaves(tape.template)):
            self.fail_list_versions(tape)

    def fail_list_versions(self, tape):
        """A list a loop grows in place (a tape), of which an earlier version
        is still read: pushed whole on another list (the gradient keeps each
        turn's version for its backward pass), or appended to into a copy."""
        names = [leaf.name for leaf in av_leaves(tape.template) if isinstance(leaf, Dyn)]
        name = re.sub(r"(_\d+)*(_tape)?(_\d+)*$", "", names[0]) if names else "?"
        self.fail(f"the list '{name}' is kept in each of its versions as a loop changes it "
                  "(the gradient's backward pass reads them back, or a copy is appended "
                  "to): a compiled list grows in place and cannot keep them",
                  "fill an array instead of a list (preallocate it and write items[i] = "
                  "...; np.where(test, value, 0.0) for an item an if would skip), or take "
                  "the gradient without jit (with tx.disable_jit(): ...)")

    def tape_push(self, tape, item):
        def push(template, value):
            if isinstance(template, Dyn) and template.name in self.version_lengths:
                value = self.version_length(template.name, value)
            elif isinstance(value, Tape) and not isinstance(template, Dyn):
                # an empty list pushed first (``[]`` before a loop fills
                # it), then the list the loop fills
                self.fail_list_versions(value)
            if is_container(template):
                if not is_container(value) or len(children(value)) != len(children(template)):
                    self.fail("a loop pushes values of different structures on one list")
                for t, v in zip(children(template), children(value)):
                    push(t, v)
                return
            if isinstance(template, Const):
                if not (isinstance(value, Const) and value.value is None):
                    self.fail("a loop pushes values of different structures on one list")
                return
            item = self.render(value)
            node = ast.Call(func=ast.Attribute(value=ast.Name(template.name, ast.Load()),
                                               attr="append", ctx=ast.Load()),
                            args=[item], keywords=[])
            size = self.sizes.get(template.name)
            if size is None:
                self.emit(ast.Expr(value=node))
                return
            # if y_tape is None or y_tape_size == len(y_tape):
            #     y_tape = grown(y_tape, y)
            # y_tape[y_tape_size] = y
            # (numba_runtime.grown: the tape allocated at the first push,
            # grown when full; otherwise a push is a store)
            from .. import numba_runtime  # local import: heavy (Numba), loaded at the first use
            tape_name = template.name
            self.emit(ast.If(
                test=ast.BoolOp(op=ast.Or(), values=[
                    ast.Compare(left=ast.Name(tape_name, ast.Load()), ops=[ast.Is()],
                                comparators=[ast.Constant(None)]),
                    ast.Compare(left=ast.Name(size, ast.Load()), ops=[ast.Eq()],
                                comparators=[ast.Call(func=ast.Name("len", ast.Load()),
                                                      args=[ast.Name(tape_name, ast.Load())],
                                                      keywords=[])])]),
                body=[ast.Assign(
                    targets=[ast.Name(tape_name, ast.Store())],
                    value=ast.Call(func=self.global_name(numba_runtime.grown, "grown"),
                                   args=[ast.Name(tape_name, ast.Load()), copy.deepcopy(item)],
                                   keywords=[]),
                    lineno=0)],
                orelse=[]))
            self.emit(ast.Assign(targets=[ast.Subscript(
                value=ast.Name(tape_name, ast.Load()),
                slice=ast.Name(size, ast.Load()), ctx=ast.Store())],
                value=item, lineno=0))
            self.emit(ast.AugAssign(target=ast.Name(size, ast.Store()), op=ast.Add(),
                                    value=ast.Constant(1)))
        push(tape.template, item)

    def tape_pop(self, tape, target):
        if isinstance(tape.template, Dyn) and tape.template.name not in self.version_lengths:
            return Expr(self.pop_node(tape.template.name))   # one list: `h = h_tape.pop()`

        def pop(template):
            if is_container(template):
                return rebuild(template, [pop(t) for t in children(template)])
            if isinstance(template, Const):
                return template
            if template.name in self.version_lengths:
                return self.pop_version(template.name)
            name = self.fresh(template.name.replace("_tape", "") + "_item")
            self.assign(name, self.pop_node(template.name))
            return Dyn(name)
        return pop(tape.template)

    def pop_node(self, lst):
        """``lst.pop()``, or for a sized tape ``lst[size]`` after the size
        went down by one (emitted here)."""
        if lst in self.versioned:         # its earlier versions are read as its prefixes
            self.fail_list_versions(Tape(Dyn(lst)))
        size = self.sizes.get(lst)
        if size is None:
            return ast.Call(func=ast.Attribute(value=ast.Name(lst, ast.Load()), attr="pop",
                                               ctx=ast.Load()), args=[], keywords=[])
        self.emit(ast.AugAssign(target=ast.Name(size, ast.Store()), op=ast.Sub(),
                                value=ast.Constant(1)))
        return ast.Subscript(value=ast.Name(lst, ast.Load()), slice=ast.Name(size, ast.Load()),
                             ctx=ast.Load())

    def tape_template(self, item, hint, fresh=True):
        """``item``'s structure with each leaf a new list variable (``fresh``
        False: a placeholder, to compare structures)."""
        if isinstance(item, list) and not item and fresh and hint in self.stacks:
            # an empty list pushed on a stack (a derivative's tape of
            # ``items = []`` before a loop that fills it, pushed as each turn
            # starts): each version's length.  (A list the code reads by
            # index keeps its items: ``rows.append([])``.)
            name = self.fresh(f"{hint.removesuffix('_tape')}_lengths")
            self.sizes[name] = self.fresh(f"{name}_size")
            self.version_lengths[name] = None
            return Dyn(name)
        if is_container(item):
            keys = list(item.keys()) if isinstance(item, dict) else range(len(item))
            return rebuild(item, [self.tape_template(c, f"{hint}_{k}", fresh)
                                  for k, c in zip(keys, children(item))])
        if isinstance(item, Const) and item.value is None:
            return item
        if not fresh:
            return Dyn(None)
        return Dyn(self.fresh(hint if hint.endswith("_tape") else f"{hint}_tape"))
