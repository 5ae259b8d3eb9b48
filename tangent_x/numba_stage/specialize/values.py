"""The abstract values of the specialiser (see the package doc) and the
functions reading them: leaves, containers, structural identity."""
import ast
from collections import namedtuple

import numpy as np

from ... import runtime
from .signals import SpecializationError


class Dyn:
    """A run-time value held in the compiled variable ``name``."""
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __eq__(self, other):
        return type(other) is Dyn and other.name == self.name

    def __hash__(self):
        return hash(("dyn", self.name))

    def __repr__(self):
        return f"Dyn({self.name})"


class Const:
    """A value known at specialisation time; ``node`` spells it, if it has
    a spelling in the source (``np.tanh``)."""
    __slots__ = ("value", "node")

    def __init__(self, value, node=None):
        self.value = value
        self.node = node

    def __eq__(self, other):
        if type(other) is not Const:
            return False
        a, b = self.value, other.value
        if a is b:
            return True
        if type(a) is not type(b) or isinstance(a, np.ndarray):
            return False
        try:
            return bool(a == b)
        except Exception:
            return False

    def __hash__(self):
        return hash(id(self.value))

    def __repr__(self):
        return f"Const({self.value!r})"


class Zero:
    """A symbolic zero cotangent shaped like the abstract value ``like``."""
    __slots__ = ("like",)

    def __init__(self, like):
        self.like = like

    def __eq__(self, other):
        return type(other) is Zero and same(other.like, self.like)

    def __hash__(self):
        return 0

    def __repr__(self):
        return f"Zero({self.like!r})"


class Tape:
    """A growable per-leaf list: ``template`` is the element structure with
    each leaf replaced by ``Dyn(list name)``."""
    __slots__ = ("template",)

    def __init__(self, template):
        self.template = template

    def __eq__(self, other):
        return type(other) is Tape and same(other.template, self.template)

    def __hash__(self):
        return 0

    def __repr__(self):
        return f"Tape({self.template!r})"


class Stale:
    """A name that held a list a loop fills, before an item was pushed into
    that list in place (``new = appended(old, y)``): the list it named no
    longer exists, so reading the name is refused (``eval_Name``)."""
    __slots__ = ("tape",)

    def __init__(self, tape):
        self.tape = tape

    def __eq__(self, other):
        return type(other) is Stale

    def __hash__(self):
        return 1

    def __repr__(self):
        return "Stale()"


class Expr:
    """A run-time value not yet bound to a name: the expression ``node``."""
    __slots__ = ("node",)

    def __init__(self, node):
        self.node = node

    def __repr__(self):
        return f"Expr({ast.unparse(self.node)})"


LEAVES = (Dyn, Const, Zero, Tape, Expr)


class Steps(namedtuple("Steps", "g n length reverse")):
    """``unstack_steps(g, items, reverse)``: the per-step slices of a scan's
    stacked cotangent ``g`` (a pytree), as a list of ``n`` items of which
    item ``j`` is ``g[j]`` (``reverse``: ``g[length - 1 - j]``).  A container
    of its parts, so a loop carries ``n`` (it drops by one per step,
    ``steps[:-1]``) and keeps ``g`` and ``length``."""

    def item(self, s, j):
        """Item ``j`` (a Const int, negative from the end)."""
        if is_none(self.g):
            return self.g
        n, length = s.render(self.n, "n"), s.render(self.length, "length")
        k = ast.BinOp(left=n, op=ast.Add(), right=ast.Constant(j)) if j < 0 else ast.Constant(j)
        if self.reverse.value:
            k = ast.BinOp(left=ast.BinOp(left=length, op=ast.Sub(), right=ast.Constant(1)),
                          op=ast.Sub(), right=k)
        index = s.materialize(Expr(k), "step")

        def take(g):
            if is_container(g):
                return rebuild(g, [take(c) for c in children(g)])
            if isinstance(g, Const) and g.value is None:
                return g
            if isinstance(g, Zero):
                return Zero(s.materialize(Expr(ast.Subscript(
                    value=s.render(g.like), slice=s.render(index), ctx=ast.Load())), "like"))
            return s.materialize(Expr(ast.Subscript(value=s.render(g), slice=s.render(index),
                                                    ctx=ast.Load())), "g")
        return take(self.g)

    def sliced(self, s, sl):
        """``steps[:stop]`` for a Const slice with a negative or no stop."""
        if sl.start not in (None, 0) or sl.step not in (None, 1) or \
                sl.stop is not None and sl.stop > 0:
            s.fail(f"slicing a scan's per-step cotangents with {sl} cannot be compiled")
        if not sl.stop or is_none(self.g):
            return self
        n = s.materialize(Expr(ast.BinOp(left=s.render(self.n, "n"), op=ast.Sub(),
                                         right=ast.Constant(-sl.stop))), "n")
        return self._replace(n=n)


def is_none(av):
    return isinstance(av, Const) and av.value is None


def is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def is_container(av):
    return isinstance(av, (dict, list, tuple))


def rebuild(like, items):
    """A container of ``like``'s type holding ``items`` (dict: same keys)."""
    if isinstance(like, dict):
        return type(like)(zip(like.keys(), items)) if type(like) is dict else dict(
            zip(like.keys(), items))
    if is_namedtuple(like):
        return type(like)(*items)
    return type(like)(items)


def children(av):
    return list(av.values()) if isinstance(av, dict) else list(av)


def same(a, b):
    """Structural identity of abstract values."""
    if is_container(a) or is_container(b):
        if type(a) is not type(b) or len(a) != len(b):
            return False
        if isinstance(a, dict) and list(a) != list(b):
            return False
        return all(same(x, y) for x, y in zip(children(a), children(b)))
    return a == b


def covers(canon, new):
    """Whether the carried structure ``canon`` already holds ``new`` (a
    value after one more iteration): same containers, and where ``canon``
    has a compiled variable, any leaf that is not a list.  A carried tuple's
    leaves come back under other names (``c = plus_c_0, times_c_1``); the
    variables ``c_0``, ``c_1`` hold them all the same."""
    if is_container(canon) or is_container(new):
        if type(canon) is not type(new) or len(canon) != len(new) or (
                isinstance(canon, dict) and list(canon) != list(new)):
            return False
        return all(covers(a, b) for a, b in zip(children(canon), children(new)))
    if isinstance(canon, Dyn):
        return not isinstance(new, Tape)
    if isinstance(canon, Tape) and isinstance(new, Tape):
        # a version of the list read back (``Tapes.pop_version``): the
        # carried list variables take its lists at the turn's end
        return same(_skeleton(canon.template), _skeleton(new.template))
    return same(canon, new)


def _skeleton(template):
    """A tape's element structure, its list variables left out."""
    if is_container(template):
        return rebuild(template, [_skeleton(c) for c in children(template)])
    return None if isinstance(template, Dyn) else template


def av_leaves(av):
    if is_container(av):
        out = []
        for c in children(av):
            out += av_leaves(c)
        return out
    return [av]


def mentions(av, name):
    """Whether ``av`` reads the compiled variable ``name``."""
    for leaf in av_leaves(av):
        if isinstance(leaf, Dyn) and leaf.name == name:
            return True
        if isinstance(leaf, Zero) and mentions(leaf.like, name):
            return True
        if isinstance(leaf, Tape) and mentions(leaf.template, name):
            return True
    return False


def substitute(av, old, new):
    if is_container(av):
        return rebuild(av, [substitute(c, old, new) for c in children(av)])
    if isinstance(av, Dyn) and av.name == old:
        return Dyn(new)
    if isinstance(av, Zero):
        return Zero(substitute(av.like, old, new))
    if isinstance(av, Tape):
        return Tape(substitute(av.template, old, new))
    return av


def as_av(value):
    """A known Python value as an abstract value (containers opened up)."""
    if isinstance(value, dict):
        return {k: as_av(v) for k, v in value.items()}
    if is_namedtuple(value):
        return type(value)(*[as_av(v) for v in value])
    if isinstance(value, (list, tuple)):
        return type(value)(as_av(v) for v in value)
    return Const(value)


def describe(av):
    """A short, readable structure for messages: ``{'W': *, 'b': *}``."""
    if isinstance(av, dict):
        return "{" + ", ".join(f"{k!r}: {describe(v)}" for k, v in av.items()) + "}"
    if isinstance(av, list):
        return "[" + ", ".join(describe(v) for v in av) + "]"
    if isinstance(av, tuple):
        inner = ", ".join(describe(v) for v in av)
        if is_namedtuple(av):
            return f"{type(av).__name__}({inner})"
        return f"({inner}{',' if len(av) == 1 else ''})"
    if isinstance(av, Const):
        return repr(av.value)
    if isinstance(av, Zero):
        return "0"
    return "*"


def truth_of(av):
    if is_container(av):
        return len(av) > 0
    value = av.value
    try:
        return bool(value)
    except Exception:
        raise SpecializationError(f"the truth of {short(value)} is ambiguous")


def short(value, limit=60):
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def is_unbound(av):
    return isinstance(av, Const) and isinstance(av.value, runtime.Unbound)


def is_numeric_array(value):
    return isinstance(value, np.ndarray) and value.dtype.kind in "biufc"
