"""The numba stage: python-stage source specialised for one call signature.

``jit`` hands Numba the same generated source that eager mode runs, after
one more source-to-source pass.  The python stage is generic: it indexes
pytrees (``params[0]['W']``), builds cotangent containers (``unindex``,
``tree_add``), tests Python values (``if config['relu']``) and keeps
symbolic zeros (``None``).  Numba can type none of that.  This pass is a
small *partial evaluator*: it walks the generated function once with an
abstract value for every variable,

* ``Dyn(name)``  a value only known at run time, held in a compiled variable
  (an array or a number): the only thing Numba ever sees;
* ``Const(v)``   a value known now: static arguments, literals, shapes of
  containers, functions and modules;
* ``Zero(like)`` a symbolic zero cotangent shaped like ``like``;
* ``Tape(t)``    a growable list (per leaf) filled by a loop (see
  ``Specializer.sizes`` for how it is kept);
* Python ``dict``/``list``/``tuple``/namedtuple of abstract values: a
  pytree whose structure is known and whose leaves are any of the above.

Container operations and anything computed from constants are evaluated
away (``params[0]['W']`` becomes the leaf ``params_0_W``; an ``if`` on a
static value keeps only the branch taken); everything else is re-emitted
as it was.  Control flow stays real: an ``if`` on a run-time value keeps
both branches (values that differ between them are joined into one
variable), and loops keep running in compiled code, their carried pytrees
split into one variable per leaf.  *Why source, not tracing:* a tracer
would see one path through value-dependent ``if``/``while`` and one shape
of ``x[x < 0]``; a source pass keeps every path, so those compile.

The result is the ``numba`` stage: a function of the arguments' leaves,
returning a flat tuple of leaves, and a ``Plan`` telling the Python wrapper
how to flatten arguments and rebuild the result.
"""
import ast
import copy
import linecache
import math
import numbers
import re
import types as pytypes

import numpy as np

from .. import runtime
from ..errors import TransformError
from ..core.naming import Namer


class SpecializationError(TransformError):
    """Code that cannot be specialised for Numba (located at the user's line)."""


# --------------------------------------------------------------------------
# Abstract values
# --------------------------------------------------------------------------

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


class Expr:
    """A run-time value not yet bound to a name: the expression ``node``."""
    __slots__ = ("node",)

    def __init__(self, node):
        self.node = node

    def __repr__(self):
        return f"Expr({ast.unparse(self.node)})"


LEAVES = (Dyn, Const, Zero, Tape, Expr)


class Steps(__import__("collections").namedtuple("Steps", "g n length reverse")):
    """``unstack_steps(g, items, reverse)``: the per-step slices of a scan's
    stacked cotangent ``g`` (a pytree), as a list of ``n`` items of which
    item ``j`` is ``g[j]`` (``reverse``: ``g[length - 1 - j]``).  A container
    of its parts, so a loop carries ``n`` (it drops by one per step,
    ``steps[:-1]``) and keeps ``g`` and ``length``."""

    def item(self, s, j):
        """Item ``j`` (a Const int, negative from the end)."""
        if _none(self.g):
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
        if not sl.stop or _none(self.g):
            return self
        n = s.materialize(Expr(ast.BinOp(left=s.render(self.n, "n"), op=ast.Sub(),
                                         right=ast.Constant(-sl.stop))), "n")
        return self._replace(n=n)


def _none(av):
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


def _covers(canon, new):
    """Whether the carried structure ``canon`` already holds ``new`` (a
    value after one more iteration): same containers, and where ``canon``
    has a compiled variable, any leaf that is not a list.  A carried tuple's
    leaves come back under other names (``c = plus_c_0, times_c_1``); the
    variables ``c_0``, ``c_1`` hold them all the same."""
    if is_container(canon) or is_container(new):
        if type(canon) is not type(new) or len(canon) != len(new) or (
                isinstance(canon, dict) and list(canon) != list(new)):
            return False
        return all(_covers(a, b) for a, b in zip(children(canon), children(new)))
    if isinstance(canon, Dyn):
        return not isinstance(new, Tape)
    return same(canon, new)


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


def depends_on(func, names, params):
    """The parameters of ``func`` (among ``params``) that ``names`` are
    computed from, following its assignments and loop targets."""
    sources = {}
    for node in ast.walk(func):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and node.value:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            value = node.value
        elif isinstance(node, (ast.For, ast.comprehension)):
            targets, value = [node.target], node.iter
        else:
            continue
        reads = {n.id for n in ast.walk(value) if isinstance(n, ast.Name)}
        for target in targets:
            for n in ast.walk(target):
                if isinstance(n, ast.Name):
                    sources.setdefault(n.id, set()).update(reads)
    seen, todo = set(), list(names)
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(sources.get(name, ()))
    return [p for p in params if p in seen]


def _could_be_static(av, ranks):
    """Whether an argument could be marked static: known at the call as a
    run-time number or string (an array cannot be: it is not hashable)."""
    if av is None or isinstance(av, Const):
        return False
    leaves = [leaf for leaf in av_leaves(av) if isinstance(leaf, Dyn)]
    return bool(leaves) and not any(leaf.name in (ranks or {}) for leaf in leaves)


def static_hint(params):
    """The hint for code that cannot be compiled, naming the arguments
    (numbers or strings) it depends on, if any."""
    if params:
        names = ", ".join(repr(p) for p in params)
        return (f"if {names} {'is' if len(params) == 1 else 'are'} fixed per call, mark "
                f"{'it' if len(params) == 1 else 'them'} static (static_argnums/"
                "static_argnames); or run without jit (with tx.disable_jit(): ...)")
    return ("write it with arrays, numbers and the NumPy functions Numba compiles, "
            "or run without jit (with tx.disable_jit(): ...)")


def _unassigned(name, origin, function_origin):
    """The variable an unbound placeholder stands for: by its name if the
    user's function has a variable of that name (not a name tangent_x made
    up, like pow_x_i)."""
    text = getattr(origin, "text", "") or ""
    if function_origin is not None:
        lines = linecache.getlines(function_origin.filename)[function_origin.lineno - 1:]
        if lines:
            indent = len(lines[0]) - len(lines[0].lstrip())
            body = [lines[0]]
            for line in lines[1:]:
                if line.strip() and len(line) - len(line.lstrip()) <= indent:
                    break
                body.append(line)
            text += "\n" + "".join(body)
    if re.search(r"(?<![\w.])" + re.escape(name) + r"\s*(=|\+=|-=|\*=|/=)", text):
        return f"the variable '{name}'"
    return "a variable assigned only on some paths (of an if, or of a loop that may run no step)"


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


# --------------------------------------------------------------------------
# Signals
# --------------------------------------------------------------------------

class _NeedUnroll(Exception):
    """A container was indexed by a run-time integer: the loop producing it
    must be unrolled (its trip count is then static)."""

    def __init__(self, name, where=None):
        self.name = name
        self.where = where


class _LoopExit(Exception):
    pass


class _StaticBreak(Exception):
    """A ``break`` reached in a loop being unrolled (``unroll_while``)."""


class _NoStaticUnroll(Exception):
    """A ``while`` loop cannot be unrolled: it is compiled as a loop."""


_LITERAL_TYPES = (bool, int, float, complex, str, type(None))

# A loop with a static trip count up to this long is unrolled when a Python
# number in it becomes a run-time value (``Specializer.number_becomes_value``).
_UNROLL_NUMBERS_BECOMING_VALUES = 16

# Calls evaluated now when every argument is known (none touches memory
# the compiled code could later write into: results must not be arrays).
_FOLD_BUILTINS = {len, int, float, bool, abs, min, max, isinstance, tuple, list, dict, range,
                  slice, sum, str, round, divmod, pow, getattr, hasattr, type, zip, enumerate,
                  reversed, sorted, any, all}


class Plan:
    """How the Python wrapper talks to the compiled function.

    ``out``: the result's structure, its compiled leaves replaced by their
    position in the returned tuple (``Dyn('#3')``); ``hidden``: constants
    passed as extra arguments (arrays read from globals or static values),
    so no array is frozen into Numba's on-disk cache.  ``bare``: the
    compiled function returns its only leaf itself, not a 1-tuple."""

    def __init__(self, out, hidden, params, bound=None):
        self.out = out
        self.hidden = hidden
        self.params = params
        self.bound = bound or {}
        leaves = av_leaves(out)
        self.has_zeros = any(isinstance(leaf, Zero) or (isinstance(leaf, Const) and
                                                        leaf.value is None)
                             for leaf in leaves)
        self.bare = sum(isinstance(leaf, Dyn) for leaf in leaves) == 1

    def unflatten(self, values):
        return _unflatten(self.out, values)


def _unflatten(av, values):
    """The result structure ``av`` with the compiled function's ``values``.
    A plain recursive function, not a closure: a closure that calls itself
    is a reference cycle, which kept every call's result arrays alive until
    Python's cycle collector ran (the heap grew by the results on every
    call, and each call page-faulted on fresh memory: ~150 us a call for
    the MLP gradient's 400 KB of results)."""
    if is_container(av):
        return rebuild(av, [_unflatten(c, values) for c in children(av)])
    if isinstance(av, Dyn):
        return values[int(av.name[1:])]
    if isinstance(av, Const):
        return av.value
    if isinstance(av, Zero):
        return None
    raise AssertionError(av)


# --------------------------------------------------------------------------
# The specialiser
# --------------------------------------------------------------------------

class Specializer:
    """Partial evaluation of one generated function (see the module doc).

    ``func``: the ``ast.FunctionDef`` of the python stage; ``globals_``: its
    module's namespace; ``linemap``: python-stage line -> the user's Origin;
    ``args``: one abstract value per parameter."""

    def __init__(self, func, globals_, linemap, origin=None):
        self.func = func
        self.globals = globals_
        self.linemap = linemap or {}
        self.origin = origin
        # the function's own variable names: a leaf of a joined or carried
        # container is never named like one of them (``return_value_1``
        # for leaf 1 of ``return_value`` may be another variable)
        self.source_names = {n.id for n in ast.walk(func) if isinstance(n, ast.Name)} | \
            {a.arg for a in func.args.args}
        self.namer = Namer(self.source_names | set(globals_))
        self.bound = {}          # name in the numba module -> object
        self.unbound_starts = set()  # variables started as None before a loop (optional.py)
        self.static_loops = []   # while loops being unrolled: dynamic_ifs at their start
        self.dynamic_ifs = 0     # depth of ifs on run-time tests being specialised
        self.hidden = []         # (parameter name, value)
        self.hidden_ids = {}
        self.env = {}
        self.code = []           # statements being emitted (a stack of bodies)
        self.current = None      # the python-stage statement being specialised
        self.loops = []          # carried state of the enclosing dynamic loops
        self.joined_lists = {}   # per if-join: lists already joined, by (id, id)
        self.arguments = set()   # compiled variables holding the arguments (never updated)
        self.env_of_params = {}  # parameter -> its abstract value at the call
        self.emitting = True
        self.masks = set()       # variables holding boolean arrays (from comparisons)
        self.ranges = {}         # variables holding range(...): name -> its arguments
        # A tape that is only pushed, popped and measured keeps its size in
        # a variable of its own (list name -> size variable): a pop lowers
        # the size and reads, a push writes at the size (the tape starts
        # as None, allocated by the first push and grown when full by
        # numba_runtime.grown: numbers in a NumPy array, other values in a
        # list), and the tape never shrinks.  Numba's list.pop gives memory back as the
        # list empties, and a push after it takes it again: on a short loop
        # those reallocations cost as much as the arithmetic, and so do a
        # list's own allocations next to a single array's.
        self.stacks = _stack_lists(func)
        self.scan_outputs = _scan_output_lists(func)
        self.in_place_appends = _in_place_appends(func)
        self.append_in_place = False
        self.sizes = {}
        # Ranks of the argument arrays (part of the call signature): ``x.ndim``
        # is a constant, so ``(1,) * (x.ndim - 1)`` is a tuple Numba can type.
        # A name's entry lasts until code assigning that name is emitted (a
        # compiled variable keeps one rank in loops: Numba's types demand it).
        self.ranks = {}
        # Size-1 axes of arrays, for np.squeeze without axis (see unit_axes):
        # None unless the signature is specialised on them.
        self.units = None
        self.units_used = {}     # variables whose facts a squeeze read -> where
        self.units_history = {}  # variable -> the fact of each of its assignments
        self.param_units = {}

    # -- names ------------------------------------------------------------

    @property
    def taken(self):
        """Names in use (saved and restored around trial specialisations)."""
        return self.namer.taken

    @taken.setter
    def taken(self, names):
        self.namer.taken = names

    def fresh(self, hint):
        return self.namer.fresh(str(hint))

    # -- errors -----------------------------------------------------------

    def where(self, stmt=None):
        stmt = stmt if stmt is not None else self.current
        if stmt is not None:
            origin = self.linemap.get(getattr(stmt, "lineno", None))
            if origin is not None:
                return origin
        return self.origin

    def fail(self, message, hint=None):
        raise SpecializationError(message, self.where(), hint or self.static_hint())

    def fail_unbound(self, placeholder):
        """A variable the path taken never assigned reaches compiled code."""
        name = _unassigned(placeholder._name, self.where(), self.origin)
        self.fail(f"{name} is used here, but the "
                  "path taken does not assign it (Python raises UnboundLocalError)",
                  "assign it on every path before this line")

    def static_hint(self):
        """Advice for what cannot be compiled: marking an argument static
        only when the failing statement reads a value derived from an
        argument that could be static (a number or string, not an array)."""
        params = [a.arg for a in self.func.args.args
                  if _could_be_static(self.env_of_params.get(a.arg), self.ranks)]
        reads = [] if self.current is None else \
            [n.id for n in ast.walk(self.current) if isinstance(n, ast.Name)]
        return static_hint(depends_on(self.func, reads, params))

    # -- emitting -----------------------------------------------------------

    def emit(self, stmt):
        if self.emitting:
            stmt._tx_src = getattr(self.current, "lineno", None)
            self.code.append(stmt)
            if self.ranks:
                for node in ast.walk(stmt):
                    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                        self.ranks.pop(node.id, None)
            if self.units is not None:
                from . import unit_axes
                unit_axes.record(self, stmt)

    def assign(self, name, value_node):
        self.clobber(name)
        self.emit(ast.Assign(targets=[ast.Name(name, ast.Store())], value=value_node,
                             lineno=0))

    def clobber(self, name):
        """Before ``name`` is rebound, keep its old value under another name
        for every other variable (or container leaf) still reading it."""
        readers = [k for k, v in self.env.items() if k != name and mentions(v, name)]
        readers += [k for k, v in self.env.items() if k == name and is_container(v)
                    and mentions(v, name)]
        if not readers:
            return
        saved = self.fresh(f"{name}_saved")
        self.emit(ast.Assign(targets=[ast.Name(saved, ast.Store())],
                             value=ast.Name(name, ast.Load()), lineno=0))
        if name in self.sizes:
            self.sizes[saved] = self.fresh(f"{saved}_size")
            self.emit(ast.Assign(targets=[ast.Name(self.sizes[saved], ast.Store())],
                                 value=ast.Name(self.sizes[name], ast.Load()), lineno=0))
        for k in readers:
            self.env[k] = substitute(self.env[k], name, saved)
        for carried in self.loops:
            for k in list(carried.entry):
                if mentions(carried.entry[k], name) and k != name:
                    carried.entry[k] = substitute(carried.entry[k], name, saved)

    # -- rendering abstract values as expressions ---------------------------

    def render(self, av, hint="value", as_tuple=False):
        """An ast expression computing ``av`` in compiled code (``as_tuple``:
        a list as a tuple, which is what Numba's NumPy takes)."""
        if isinstance(av, Expr):
            return av.node
        if isinstance(av, Dyn):
            return ast.Name(av.name, ast.Load())
        if isinstance(av, Zero):
            return ast.Call(func=self.global_name(runtime.zeros_like, "zeros_like"),
                            args=[self.render(av.like)], keywords=[])
        if isinstance(av, Const):
            return self.render_const(av, hint)
        if isinstance(av, Tape):
            return self.render(av.template, hint)
        if isinstance(av, dict):
            self.fail(f"a dict ({describe(av)}) would have to be passed into compiled "
                      "code as a value")
        if is_container(av):
            if isinstance(av, list) and av and all(
                    isinstance(c, Const) and isinstance(c.value, (int, np.integer))
                    and not isinstance(c.value, bool) for c in av):
                return ast.Name(self.hidden_arg(np.asarray([c.value for c in av]), "indices"),
                                ast.Load())
            elts = [self.render(self.materialize(c, hint), hint) for c in children(av)]
            if isinstance(av, list) and not as_tuple:
                return ast.List(elts=elts, ctx=ast.Load())
            return ast.Tuple(elts=elts, ctx=ast.Load())
        raise AssertionError(av)

    def render_const(self, av, hint):
        value = av.value
        # Only functions, modules and classes keep their global spelling: a
        # number read from a global is written as a literal, so the module's
        # text (and Numba's on-disk cache keyed by it) changes with the value.
        if av.node is not None and (callable(value) or isinstance(value, pytypes.ModuleType)) \
                and not isinstance(value, np.ndarray) and self.spelled_by_globals(av.node):
            return copy.deepcopy(av.node)
        if isinstance(value, bool) or value is None or isinstance(value, str):
            return ast.Constant(value)
        if isinstance(value, (int, float)) and type(value) in (int, float):
            if isinstance(value, float) and not math.isfinite(value):
                return ast.parse(f"np.{'nan' if value != value else 'inf'}", mode="eval").body \
                    if value != -math.inf else ast.parse("-np.inf", mode="eval").body
            return ast.Constant(value)
        if isinstance(value, complex):
            return ast.Call(func=ast.Name("complex", ast.Load()),
                            args=[ast.Constant(value.real), ast.Constant(value.imag)],
                            keywords=[])
        if isinstance(value, np.generic) and value.dtype.kind in "biufc" and value.ndim == 0:
            inner = self.render_const(Const(value.item()), hint)
            return ast.Call(func=ast.Attribute(value=self.global_name(np, "np"),
                                               attr=value.dtype.name, ctx=ast.Load()),
                            args=[inner], keywords=[])
        if isinstance(value, tuple) and not is_namedtuple(value):
            return ast.Tuple(elts=[self.render_const(Const(v), hint) for v in value],
                             ctx=ast.Load())
        if isinstance(value, list) and value and all(
                isinstance(v, (int, bool, np.integer, np.bool_)) for v in value):
            return ast.Name(self.hidden_arg(np.asarray(value), hint), ast.Load())
        if isinstance(value, list) and all(isinstance(v, _LITERAL_TYPES) for v in value):
            return ast.List(elts=[self.render_const(Const(v), hint) for v in value],
                            ctx=ast.Load())
        if isinstance(value, range):
            return _range_node(value.start, value.stop, value.step)
        if isinstance(value, slice):
            return ast.Call(func=ast.Name("slice", ast.Load()),
                            args=[self.render_const(Const(v), hint)
                                  for v in (value.start, value.stop, value.step)], keywords=[])
        if isinstance(value, np.ndarray):
            return ast.Name(self.hidden_arg(value, hint), ast.Load())
        if value is Ellipsis:
            return ast.Constant(Ellipsis)
        if callable(value) or isinstance(value, pytypes.ModuleType) or isinstance(value, type):
            return self.global_name(value, getattr(value, "__name__", hint))
        if isinstance(value, runtime.Unbound):
            self.fail_unbound(value)
        self.fail(f"the value {_short(value)} of type {type(value).__name__} cannot be "
                  "used in compiled code")

    def spelled_by_globals(self, node):
        """Whether ``node`` (``np.linalg.norm``) reads only module globals
        that mean the same object here."""
        import builtins
        names = [n.id for n in ast.walk(node) if isinstance(n, ast.Name)]
        values = []
        for n in names:
            if n in self.env:
                return False
            if n in self.globals:
                values.append(self.globals[n])
            elif hasattr(builtins, n):
                values.append(getattr(builtins, n))
            else:
                return False
        return all(self.bind(n, v) for n, v in zip(names, values))

    def bind(self, name, obj):
        if name in self.bound and self.bound[name] is not obj:
            return False
        self.bound[name] = obj
        return True

    def global_name(self, obj, hint):
        for name, bound in self.bound.items():
            if bound is obj:
                return ast.Name(name, ast.Load())
        if obj is np:
            hint = "np"
        for name, value in self.globals.items():
            if value is obj and name not in self.env and self.bind(name, obj):
                return ast.Name(name, ast.Load())
        name = hint if hint not in self.taken and hint not in self.bound else self.fresh(hint)
        self.taken.add(name)
        self.bind(name, obj)
        return ast.Name(name, ast.Load())

    def hidden_arg(self, value, hint):
        if id(value) in self.hidden_ids:
            return self.hidden_ids[id(value)]
        name = self.fresh(hint if hint != "value" else "const")
        self.hidden.append((name, value))
        self.hidden_ids[id(value)] = name
        return name

    def outside_array(self, value, hint):
        """An array the function reads from outside (a global, a closure
        cell, an attribute, an item of a global container) as the run-time
        value it is: passed to every call, never folded into the code, so
        that a write into it between calls is seen as eager code sees it.
        Its rank is known (the array object is fixed while the code is:
        ``canonical.deps_current``)."""
        name = self.hidden_arg(value, hint)
        self.ranks[name] = value.ndim
        return Dyn(name)

    def materialize(self, av, hint="v"):
        """``av`` as something a container may hold: an Expr is bound to a
        fresh variable (so it is computed once), named after the tape an
        item comes from when no better hint is given."""
        if isinstance(av, Expr):
            if hint == "v":
                hint = _popped_from(av.node) or hint
            name = self.fresh(hint)
            self.assign(name, av.node)
            return Dyn(name)
        return av

    # -- the walk -----------------------------------------------------------

    def run(self, arg_avs):
        for a, av in zip(self.func.args.args, arg_avs):
            self.env[a.arg] = self.env_of_params[a.arg] = av
            self.arguments.update(leaf.name for leaf in av_leaves(av) if isinstance(leaf, Dyn))
        result = Const(None)
        try:
            for stmt in self.func.body:
                if isinstance(stmt, ast.Return):
                    self.current = stmt
                    result = self.eval(stmt.value) if stmt.value is not None else Const(None)
                    break
                self.stmt(stmt)
        except _NeedUnroll as exc:
            raise SpecializationError(
                f"'{exc.name}' is a Python container indexed by a value known only at run "
                "time", exc.where or self.where(),
                "mark the index static (static_argnums/static_argnames), make the "
                "container an array, or run without jit (tx.disable_jit())") from None
        return self.finish(result)

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
                self.list_method(target, node.func.attr, node.args)
                return
        value = self.eval(node)
        if isinstance(value, Expr):
            self.emit(ast.Expr(value=value.node))

    def stmt_Assign(self, stmt):
        if len(stmt.targets) != 1:
            self.fail("chained assignment cannot be compiled")
        target = stmt.targets[0]
        self.append_in_place = id(stmt.value) in self.in_place_appends
        try:
            value = self.eval(stmt.value, hint=_target_hint(target))
        finally:
            self.append_in_place = False
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
        from . import numba_runtime
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
            for t, v in zip(target.elts, items):
                self.store(t, v)
        elif isinstance(target, ast.Subscript):
            self.store_item(target, value)
        else:
            self.fail(f"assignment to {ast.unparse(target)} cannot be compiled")

    def bind_name(self, name, value):
        if isinstance(value, Expr):
            self.assign(name, value.node)
            self.env[name] = Dyn(name)
            if _is_boolean_expr(value.node, self.masks):
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
                current = _as_av(current.value)
            if not isinstance(index, Const):
                raise _NeedUnroll(base.id, self.where())
            updated = copy.copy(current)
            if isinstance(updated, tuple):
                self.fail("a tuple cannot be assigned into")
            updated[index.value] = self.materialize(value)
            self.env[base.id] = updated
            return
        if not isinstance(current, Dyn):
            self.fail(f"cannot assign into {describe(current)}")
        if isinstance(index, Dyn) and index.name in self.masks:
            from . import numba_runtime
            self.emit(ast.Expr(value=ast.Call(
                func=self.global_name(numba_runtime.mask_assign, "mask_assign"),
                args=[ast.Name(current.name, ast.Load()), self.checked(current, index),
                      self.render(value)], keywords=[])))
            return
        self.emit(ast.Assign(targets=[ast.Subscript(value=ast.Name(current.name, ast.Load()),
                                                    slice=self.checked(current, index),
                                                    ctx=ast.Store())],
                             value=self.render(value), lineno=0))

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

    def tape_push(self, tape, item):
        def push(template, value):
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
            from . import numba_runtime
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
        if isinstance(tape.template, Dyn):       # one list: `h = h_tape.pop()`
            return Expr(self.pop_node(tape.template.name))

        def pop(template):
            if is_container(template):
                return rebuild(template, [pop(t) for t in children(template)])
            if isinstance(template, Const):
                return template
            name = self.fresh(template.name.replace("_tape", "") + "_item")
            self.assign(name, self.pop_node(template.name))
            return Dyn(name)
        return pop(tape.template)

    def pop_node(self, lst):
        """``lst.pop()``, or for a sized tape ``lst[size]`` after the size
        went down by one (emitted here)."""
        size = self.sizes.get(lst)
        if size is None:
            return ast.Call(func=ast.Attribute(value=ast.Name(lst, ast.Load()), attr="pop",
                                               ctx=ast.Load()), args=[], keywords=[])
        self.emit(ast.AugAssign(target=ast.Name(size, ast.Store()), op=ast.Sub(),
                                value=ast.Constant(1)))
        return ast.Subscript(value=ast.Name(lst, ast.Load()), slice=ast.Name(size, ast.Load()),
                             ctx=ast.Load())

    # -- control flow -------------------------------------------------------

    def stmt_If(self, stmt):
        test = self.eval(stmt.test)
        if isinstance(test, Const) or is_container(test):
            taken = _truth(test)
            self.body(stmt.body if taken else stmt.orelse)
            return
        test_node = self.render(self.materialize(test, "test"))
        before = self.env
        branches = []
        self.dynamic_ifs += 1
        try:
            for part in (stmt.body, stmt.orelse):
                self.env = dict(before)
                saved, self.code = self.code, []
                self.body(part)
                branches.append((self.env, self.code))
                self.code = saved
        finally:
            self.dynamic_ifs -= 1
        (env_a, code_a), (env_b, code_b) = branches
        self.env = self.join(env_a, code_a, env_b, code_b)
        self.emit(ast.If(test=test_node, body=code_a or [ast.Pass()], orelse=code_b))

    def join(self, env_a, code_a, env_b, code_b):
        """One environment after an ``if``: values that differ between the
        branches are assigned to one variable (per leaf) at the end of each."""
        env = {}
        self.joined_lists = {}
        for name in list(env_a) + [n for n in env_b if n not in env_a]:
            if name not in env_a or name not in env_b:
                env[name] = env_a.get(name, env_b.get(name))
                continue
            a, b = env_a[name], env_b[name]
            if same(a, b):
                env[name] = a
                continue
            env[name] = self.merge(a, b, name, [(code_a, env_a), (code_b, env_b)])
        return env

    def merge(self, a, b, hint, sides, root=None):
        """A value that is ``a`` on one side and ``b`` on the other (each
        side: its code and env), with new variables where they differ.
        ``root`` is the variable being joined (``hint`` names one of its
        leaves, ``return_value_1``, which may be another variable's name)."""
        root = hint if root is None else root
        if same(a, b):
            return a
        if isinstance(a, list) and isinstance(b, list) and len(a) != len(b):
            return self.merge_lists(a, b, hint, sides)
        if (_none(a) and is_container(b) or is_container(a) and _none(b)) and \
                hint.startswith("return_value"):
            # an early return's value, None until the return ran (a flag
            # says whether it did): one optional variable per leaf
            like = b if _none(a) else a
            nones = rebuild(like, [Const(None)] * len(children(like)))
            return self.merge(nones if _none(a) else a, nones if _none(b) else b, hint, sides,
                              root)
        if is_container(a) or is_container(b):
            if type(a) is not type(b) or len(a) != len(b) or (
                    isinstance(a, dict) and list(a) != list(b)):
                self.fail(f"'{hint}' holds {describe(a)} on one path and {describe(b)} "
                          "on another: a compiled variable needs one structure",
                          "make the paths agree, or mark the value deciding the path static")
            keys = list(a.keys()) if isinstance(a, dict) else range(len(a))
            return rebuild(a, [self.merge(x, y, f"{hint}_{k}", sides, root)
                               for k, x, y in zip(keys, children(a), children(b))])
        if isinstance(a, Tape) or isinstance(b, Tape):
            self.fail(f"the list '{hint}' is filled differently on two paths")
        name = self._join_name(hint, sides, root)
        for (code, _), value in zip(sides, (a, b)):
            if isinstance(value, Dyn) and value.name == name:
                continue
            if _is_unbound(value):      # never assigned on this path: assign nothing
                continue
            code.append(_tag(ast.Assign(targets=[ast.Name(name, ast.Store())],
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
                    _has_jump(stmt.body):
                return self.loop(stmt, None, static_range=iterable)
            if isinstance(iterable, Const) and isinstance(iterable.value, range) and \
                    len(items) <= _UNROLL_NUMBERS_BECOMING_VALUES and \
                    self.number_becomes_value(stmt, iterable):
                return self.unroll(stmt, items)
            state = self.snapshot()
            try:
                return self.loop(stmt, None, static_range=iterable)
            except _NeedUnroll:
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
        return self.loop(stmt, iterable)

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
            after = self.trial(stmt, None, iterable, _Carry())
        except (_NeedUnroll, SpecializationError):
            return False
        for name in _assigned(stmt):
            old, new = entry.get(name), after.get(name)
            if isinstance(old, Const) and isinstance(old.value, (bool, int, float, complex)) \
                    and isinstance(new, Dyn):
                return True
        return False

    def unroll(self, stmt, items):
        if _has_jump(stmt.body):
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
        if isinstance(self.eval(stmt.test), Const) and self.number_becomes_value(stmt, None):
            state = self.snapshot()
            try:
                return self.unroll_while(stmt)
            except _NoStaticUnroll:
                self.restore(state)
        self.loop(stmt, None)

    def unroll_while(self, stmt):
        """A ``while`` whose test and exits are known at each step (a counter
        against a bound: ``i = 0; while i < 8: i += 1 ...``), run here, the
        body emitted once per iteration, for the reason given in
        ``number_becomes_value``.  Raises _NoStaticUnroll when a test or a
        ``break`` depends on run-time values, or past the length limit."""
        self.static_loops.append(self.dynamic_ifs)
        try:
            for n in range(_UNROLL_NUMBERS_BECOMING_VALUES + 1):
                test = self.eval(stmt.test)
                if not isinstance(test, Const):
                    raise _NoStaticUnroll()
                if not _truth(test):
                    return
                if n == _UNROLL_NUMBERS_BECOMING_VALUES:
                    raise _NoStaticUnroll()
                start = len(self.code)
                try:
                    self.body(stmt.body)
                except _StaticBreak:
                    return
                if len(self.code) > start:
                    self.code[start]._tx_iteration = f"iteration {n}"
            raise _NoStaticUnroll()
        finally:
            self.static_loops.pop()

    def stmt_Break(self, stmt):
        if self.static_loops:
            if self.dynamic_ifs > self.static_loops[-1]:
                raise _NoStaticUnroll()     # a break under a run-time test
            raise _StaticBreak()
        self.restore_carry()
        self.emit(ast.Break())

    def stmt_Continue(self, stmt):
        if self.static_loops:
            raise _NoStaticUnroll()
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

    def _loop(self, stmt, iterable, static_range=None):
        """A loop running in compiled code.  Every variable the body assigns
        and whose abstract value changes across an iteration is carried: a
        fixed point finds, for each, one structure with a compiled variable
        per changing leaf (constants that change become variables, symbolic
        zeros become zeros, lists that grow become tapes)."""
        assigned = _assigned(stmt)
        carried = _Carry()
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
                if name in carried.names and _covers(carried.names[name], new):
                    continue
                if isinstance(old, list) and not old and isinstance(new, list) and \
                        new and _none(new[-1]) and name not in carried.names:
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
        self.env = dict(carried.entry)
        if isinstance(stmt, ast.For):
            self.env[stmt.target.id] = Dyn(stmt.target.id)

    def loop_header(self, stmt, iterable, static_range):
        if isinstance(stmt, ast.While):
            test = self.eval(stmt.test)
            if isinstance(test, Const):
                node = ast.Constant(bool(_truth(test)))
            else:
                node = self.render(test)
            return ast.While(test=node, body=[], orelse=[])
        if static_range is not None:
            value = static_range.value if isinstance(static_range, Const) else None
            if not isinstance(value, range):
                raise _NeedUnroll(stmt.target.id)
            iter_node = _range_node(value.start, value.stop, value.step)
        else:
            iter_node = self.render(iterable, "items")
        self.env[stmt.target.id] = Dyn(stmt.target.id)
        return ast.For(target=ast.Name(stmt.target.id, ast.Store()), iter=iter_node, body=[],
                       orelse=[], lineno=0)

    def snapshot(self):
        return (dict(self.env), list(self.code), self.emitting, set(self.taken),
                dict(self.bound), list(self.hidden), dict(self.hidden_ids))

    def restore(self, state):
        (self.env, self.code, self.emitting, self.taken, self.bound,
         self.hidden, self.hidden_ids) = state

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
            except _LoopExit:
                pass
            return self.env
        finally:
            self.loops.pop()
            self.restore(state)

    def carry(self, name, old, new, carried):
        """Make ``name`` a carried variable, general enough for ``old`` (its
        value before the loop) and ``new`` (after one iteration)."""
        if _none(old) and is_container(new) and name.startswith("return_value"):
            # an early return inside the loop (see ``merge``): None per leaf
            old = rebuild(new, [Const(None)] * len(children(new)))
        canon = self.canonical(old, new, name)
        carried.names[name] = canon
        self.initialize(canon, old, sized=name in self.stacks)
        self.env[name] = canon

    def canonical(self, old, new, hint, leaf=False):
        if isinstance(old, list) and isinstance(new, list) and len(new) > len(old) and \
                all(same(a, b) for a, b in zip(old, new)):
            if old:
                self.fail(f"the list '{hint}' is filled before a loop and inside it")
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

    def tape_template(self, item, hint, fresh=True):
        """``item``'s structure with each leaf a new list variable (``fresh``
        False: a placeholder, to compare structures)."""
        if is_container(item):
            keys = list(item.keys()) if isinstance(item, dict) else range(len(item))
            return rebuild(item, [self.tape_template(c, f"{hint}_{k}", fresh)
                                  for k, c in zip(keys, children(item))])
        if isinstance(item, Const) and item.value is None:
            return item
        if not fresh:
            return Dyn(None)
        return Dyn(self.fresh(hint if hint.endswith("_tape") else f"{hint}_tape"))

    def initialize(self, canon, old, sized=False):
        """Before the loop: the carried variables of ``canon`` hold ``old``
        (``sized``: a tape kept with its size, see ``sizes``)."""
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
            if _is_unbound(old):
                # first assigned inside the loop: None before it, so Numba
                # types it as an optional value (a read while still None
                # raises, as Python's UnboundLocalError would)
                self.assign(canon.name, ast.Constant(None))
                self.unbound_starts.add(canon.name)
            else:
                self.assign(canon.name, self.render(old, canon.name))

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
            return
        if is_container(canon):
            if not is_container(value) or len(children(value)) != len(children(canon)):
                self.fail("a loop variable changes structure inside the loop")
            for c, v in zip(children(canon), children(value)):
                self._pairs(c, v, targets, values)
            return
        if isinstance(canon, Dyn):
            if isinstance(value, Dyn) and value.name == canon.name or _is_unbound(value):
                return
            targets.append(canon.name)
            values.append(self.render(value, canon.name))
        elif not same(canon, value):
            self.fail("a loop variable changes value in a way that cannot be compiled")

    # -- expressions --------------------------------------------------------

    def eval(self, node, hint="value"):
        method = getattr(self, "eval_" + type(node).__name__, None)
        if method is None:
            self.fail(f"the expression {ast.unparse(node)} cannot be compiled")
        return method(node)

    def eval_Constant(self, node):
        return Const(node.value)

    def eval_Name(self, node):
        if node.id in self.env:
            return self.env[node.id]
        if node.id in self.globals:
            value = self.globals[node.id]
            if isinstance(value, (dict, list, tuple)):
                return Const(value)
            if _numeric_array(value):
                return self.outside_array(value, node.id)
            return Const(value, node)
        import builtins
        if hasattr(builtins, node.id):
            return Const(getattr(builtins, node.id), node)
        self.fail(f"the name {node.id} is not defined")

    def eval_Tuple(self, node):
        return tuple(self.materialize(self.eval(e)) for e in node.elts)

    def eval_List(self, node):
        return [self.materialize(self.eval(e)) for e in node.elts]

    def eval_Dict(self, node):
        out = {}
        for k, v in zip(node.keys, node.values):
            key = self.eval(k)
            if not isinstance(key, Const):
                self.fail("a dict key computed at run time cannot be compiled")
            out[key.value] = self.materialize(self.eval(v))
        return out

    def eval_Slice(self, node):
        parts = [self.eval(p) if p is not None else Const(None)
                 for p in (node.lower, node.upper, node.step)]
        if all(isinstance(p, Const) for p in parts):
            return Const(slice(*(p.value for p in parts)))
        return Expr(ast.Slice(*[None if (isinstance(p, Const) and p.value is None)
                                else self.render(p) for p in parts]))

    def eval_Attribute(self, node):
        base = self.eval(node.value)
        if isinstance(base, tuple) and is_namedtuple(base):
            return getattr(base, node.attr)
        if isinstance(base, Const):
            try:
                value = getattr(base.value, node.attr)
            except AttributeError:
                self.fail(f"{describe(base)} has no attribute {node.attr}")
            if isinstance(value, np.ndarray):
                return Const(value)
            return Const(value, node if base.node is not None else None)
        if is_container(base):
            self.fail(f"{describe(base)} has no attribute {node.attr}")
        if node.attr == "ndim" and isinstance(base, Dyn) and base.name in self.ranks:
            return Const(self.ranks[base.name])
        return Expr(ast.Attribute(value=self.render(base), attr=node.attr, ctx=ast.Load()))

    def eval_Subscript(self, node):
        base = self.eval(node.value)
        index = self.eval(node.slice)
        if isinstance(base, Steps):
            if isinstance(index, Const) and isinstance(index.value, slice):
                return base.sliced(self, index.value)
            if isinstance(index, Const) and isinstance(index.value, int):
                return base.item(self, index.value)
            self.fail("indexing a scan's per-step cotangents with a run-time index cannot "
                      "be compiled")
        if is_container(base) or (isinstance(base, Const) and
                                  isinstance(base.value, (dict, list, tuple))):
            if not isinstance(index, Const):
                raise _NeedUnroll(getattr(node.value, "id", "?"), self.where())
            container = base.value if isinstance(base, Const) else base
            try:
                item = container[index.value]
            except (KeyError, IndexError, TypeError) as exc:
                self.fail(f"{describe(base)}[{index.value!r}] fails: {exc}")
            if isinstance(base, Const):
                if _numeric_array(item):
                    return self.outside_array(item, getattr(node.value, "id", "item"))
                return _as_av(item)
            return item
        if isinstance(base, Zero):
            return Zero(Expr(ast.Subscript(value=self.render(base.like), slice=self.render(index),
                                           ctx=ast.Load())))
        if isinstance(base, Const) and isinstance(index, Const) and \
                not isinstance(base.value, np.ndarray):
            try:
                return _as_av(base.value[index.value])
            except (KeyError, IndexError, TypeError) as exc:
                self.fail(f"{describe(base)}[{index.value!r}] fails: {exc}",
                          "this index is out of range for the static values given")
        if isinstance(index, list) and index and all(
                isinstance(c, Const) and isinstance(c.value, (int, np.integer)) for c in index):
            index = Const([c.value for c in index])
        if isinstance(index, Const) and isinstance(index.value, list):
            index = Const(np.asarray(index.value))        # x[[0, 2, 2]]: an index array
        if isinstance(index, Const) and index.value is Ellipsis:
            return Expr(ast.Call(func=self.global_name(_ellipsis_view(), "whole"),
                                 args=[self.render(base)], keywords=[]))
        if isinstance(base, Const) and isinstance(base.value, range):
            r = base.value
            return Expr(ast.parse(f"{r.start} + ({ast.unparse(self.render(index))}) * {r.step}",
                                  mode="eval").body)
        if isinstance(base, Dyn) and base.name in self.ranges:
            from .structural import HANDLERS
            return HANDLERS[runtime.iteration_item](self, [base, index], {})
        if isinstance(base, Expr) and not _simple(base.node):
            base = self.materialize(base, "indexed")
        if isinstance(index, Dyn) and index.name in self.masks:
            from . import numba_runtime
            return Expr(ast.Call(func=self.global_name(numba_runtime.mask_select,
                                                       "mask_select"),
                                 args=[self.render(base), self.checked(base, index)],
                                 keywords=[]))
        return Expr(ast.Subscript(value=self.render(base), slice=self.checked(base, index),
                                  ctx=ast.Load()))

    def checked(self, base, index):
        """The index node of ``base[index]``, wrapped in
        ``checked(base, index)`` (see bounds.py: compiled code reads past
        an array's end without a word) unless every part of it is a slice,
        ``None`` or ``...``, which select nothing out of range."""
        node = self.render(index, "index")
        parts = list(index) if isinstance(index, tuple) else [index]
        if isinstance(index, Const) and isinstance(index.value, tuple):
            parts = [Const(v) for v in index.value]
        if all(isinstance(p, Const) and (p.value is None or p.value is Ellipsis or
                                         isinstance(p.value, slice)) or
               isinstance(p, Expr) and isinstance(p.node, ast.Slice) for p in parts):
            return node
        from . import numba_runtime
        return ast.Call(func=self.global_name(numba_runtime.checked, "checked"),
                        args=[self.render(base), node], keywords=[])

    def eval_Index(self, node):     # pragma: no cover - Python < 3.9
        return self.eval(node.value)

    def eval_BinOp(self, node):
        return self.binop(self.eval(node.left), node.op, self.eval(node.right))

    def binop(self, a, op, b):
        if isinstance(a, Const) and isinstance(b, Const):
            return self.fold(lambda x, y: _BINOPS[type(op)](x, y), [a, b])
        if isinstance(op, ast.Add) and (is_container(a) or is_container(b)):
            if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
                return a + b
        for side in (a, b):
            if isinstance(side, dict):
                self.fail(f"arithmetic on the container {describe(side)}")
        if isinstance(op, ast.MatMult):
            # ``a @ b`` as numba_runtime.matmul: matrix products in our kernel
            from . import numba_runtime
            return Expr(ast.Call(func=self.global_name(numba_runtime.matmul, "matmul"),
                                 args=[self.render(a), self.render(b)], keywords=[]))
        return Expr(ast.BinOp(left=self.render(a), op=op, right=self.render(b)))

    def eval_UnaryOp(self, node):
        a = self.eval(node.operand)
        if isinstance(a, Const):
            return self.fold(lambda x: _UNARY[type(node.op)](x), [a])
        if isinstance(node.op, ast.Not) and is_container(a):
            return Const(not a)
        return Expr(ast.UnaryOp(op=node.op, operand=self.render(a)))

    def eval_Compare(self, node):
        values = [self.eval(node.left)] + [self.eval(c) for c in node.comparators]
        if all(isinstance(v, Const) for v in values):
            def compare(*vs):
                for op, x, y in zip(node.ops, vs, vs[1:]):
                    if not _COMPARE[type(op)](x, y):
                        return False
                return True
            return self.fold(compare, values)
        if len(node.ops) == 1 and isinstance(node.ops[0], (ast.Is, ast.IsNot)):
            a, b = values
            if isinstance(b, Const) and b.value is None:
                result = isinstance(a, Const) and a.value is None
                return Const(result if isinstance(node.ops[0], ast.Is) else not result)
        if any(is_container(v) for v in values):
            self.fail("comparison of containers cannot be compiled")
        return Expr(ast.Compare(left=self.render(values[0]), ops=node.ops,
                                comparators=[self.render(v) for v in values[1:]]))

    def eval_BoolOp(self, node):
        values = []
        for v in node.values:
            value = self.eval(v)
            if isinstance(value, Const):
                truth = bool(value.value)
                if isinstance(node.op, ast.And) and not truth:
                    return value if not values else self._boolop(node, values + [value])
                if isinstance(node.op, ast.Or) and truth:
                    return value if not values else self._boolop(node, values + [value])
                continue
            values.append(value)
        if not values:
            return self.eval(node.values[-1])
        return self._boolop(node, values)

    def _boolop(self, node, values):
        if len(values) == 1:
            return values[0]
        return Expr(ast.BoolOp(op=node.op, values=[self.render(v) for v in values]))

    def eval_IfExp(self, node):
        test = self.eval(node.test)
        if isinstance(test, Const) or is_container(test):
            return self.eval(node.body if _truth(test) else node.orelse)
        return Expr(ast.IfExp(test=self.render(test), body=self.render(self.eval(node.body)),
                              orelse=self.render(self.eval(node.orelse))))

    def eval_Call(self, node):
        if isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) and \
                node.func.attr in ("append", "pop") and \
                isinstance(self.env.get(node.func.value.id), (list, Tape)):
            return self.list_method(node.func.value.id, node.func.attr, node.args)
        func = self.eval(node.func)
        args = []
        for a in node.args:
            if isinstance(a, ast.Starred):
                value = self.eval(a.value)
                if isinstance(value, Const):
                    value = _as_av(value.value)
                if not isinstance(value, (tuple, list)):
                    self.fail("*args of a run-time value cannot be compiled")
                args += list(value)
            else:
                args.append(self.eval(a))
        kwargs = {}
        for k in node.keywords:
            if k.arg is None:
                self.fail("**kwargs cannot be compiled")
            kwargs[k.arg] = self.eval(k.value)
        return self.call(func, args, kwargs, node)

    def call(self, func, args, kwargs, node):
        from . import structural
        if not isinstance(func, Const):
            if is_container(func):
                self.fail(f"{describe(func)} is not callable")
            return Expr(ast.Call(func=self.render(func), args=[self.render(a) for a in args],
                                 keywords=[ast.keyword(arg=k, value=self.render(v))
                                           for k, v in kwargs.items()]))
        fn = func.value
        if isinstance(fn, type) and issubclass(fn, tuple) and hasattr(fn, "_fields"):
            items = [self.materialize(a) for a in args]
            fields = list(fn._fields)
            values = dict(zip(fields, items))
            values.update({k: self.materialize(v) for k, v in kwargs.items()})
            defaults = getattr(fn, "_field_defaults", {})
            return fn(*[values[f] if f in values else _as_av(defaults[f]) for f in fields])
        handler = structural.HANDLERS.get(_key(fn))
        if handler is not None:
            result = handler(self, args, kwargs)
            if result is not NotImplemented:
                return result
        values = list(args) + list(kwargs.values())
        if all(isinstance(v, Const) for v in values) and _foldable(fn):
            return self.fold(lambda *a: fn(*a[:len(args)], **dict(zip(kwargs, a[len(args):]))),
                             values)
        for v in values:
            if is_container(v) and isinstance(v, dict):
                self.fail(f"{getattr(fn, '__name__', fn)}() would receive the dict "
                          f"{describe(v)} in compiled code")
        rewrite = structural.REWRITES.get(_key(fn))
        if rewrite is not None:
            result = rewrite(self, args, kwargs)
            if result is not NotImplemented:
                return result
        numpy_call = (getattr(fn, "__module__", None) or "").startswith("numpy")
        return Expr(ast.Call(func=self.render(func, getattr(fn, "__name__", "f")),
                             args=[self.render(self.materialize(a), as_tuple=numpy_call)
                                   for a in args],
                             keywords=[ast.keyword(arg=k, value=self.render(v))
                                       for k, v in kwargs.items()]))

    def fold(self, fn, values):
        """``fn`` applied to known values now (an error stays a run-time
        error, raised where Python would raise it)."""
        try:
            result = fn(*[v.value for v in values])
        except Exception as exc:
            self.fail(f"{type(exc).__name__}: {exc}", "this fails for the static values given")
        if hasattr(result, "__next__"):      # zip, enumerate, reversed: iterate once
            result = list(result)
        return Const(result)

    def eval_JoinedStr(self, node):
        return Const("")


class _Carry:
    def __init__(self):
        self.names = {}
        self.entry = {}


def _key(fn):
    try:
        hash(fn)
        return fn
    except TypeError:
        return id(fn)


def _foldable(fn):
    if fn in _FOLD_BUILTINS:
        return True
    module = getattr(fn, "__module__", None) or ""
    if isinstance(fn, np.ufunc) or module.startswith("numpy"):
        return True
    if module.startswith("math"):
        return True
    return False


def _truth(av):
    if is_container(av):
        return len(av) > 0
    value = av.value
    try:
        return bool(value)
    except Exception:
        raise SpecializationError(f"the truth of {_short(value)} is ambiguous")


def _as_av(value):
    """A known Python value as an abstract value (containers opened up)."""
    if isinstance(value, dict):
        return {k: _as_av(v) for k, v in value.items()}
    if is_namedtuple(value):
        return type(value)(*[_as_av(v) for v in value])
    if isinstance(value, (list, tuple)):
        return type(value)(_as_av(v) for v in value)
    return Const(value)


def _in_place_appends(func):
    """The calls of ``xs = appended(xs, item)`` (one name, never copied to
    another): the old list is not read again, so a loop's list (a
    ``Tape``) may take the item in place (a scan's outputs)."""
    copied = {node.value.id for node in ast.walk(func)
              if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name)}
    return {id(node.value) for node in ast.walk(func)
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and
            isinstance(node.targets[0], ast.Name) and isinstance(node.value, ast.Call) and
            isinstance(node.value.func, ast.Name) and node.value.func.id == "appended" and
            node.value.args and isinstance(node.value.args[0], ast.Name) and
            node.value.args[0].id == node.targets[0].id and
            node.targets[0].id not in copied}


def _scan_output_lists(func):
    """Names of lists a scan's loop fills (``ys = appended(ys, y)``): one
    structure per step, so a step's ``None`` makes a list of Nones (a list
    whose first item is None elsewhere may hold other values later, as a
    loop's early-return value does)."""
    return {node.args[0].id for node in ast.walk(func)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and
            node.func.id == "appended" and node.args and isinstance(node.args[0], ast.Name)}


def _stack_lists(func):
    """Names of the python stage's lists used only as stacks: bound to
    ``[]``, pushed (``xs.append(v)``), popped (``xs.pop()``) and measured
    (``len(xs)``), nothing else (no indexing, iterating or passing on)."""
    parents = {}
    for node in ast.walk(func):
        for child in ast.iter_child_nodes(node):
            parents[child] = node
    ok, bad = set(), set()
    for node in ast.walk(func):
        if not isinstance(node, ast.Name):
            continue
        parent = parents.get(node)
        grand = parents.get(parent)
        if isinstance(node.ctx, ast.Store):
            use = isinstance(parent, ast.Assign) and len(parent.targets) == 1 and \
                parent.targets[0] is node and isinstance(parent.value, ast.List) and \
                not parent.value.elts
        elif isinstance(parent, ast.Attribute) and parent.value is node and \
                isinstance(grand, ast.Call) and grand.func is parent:
            use = (parent.attr == "append" and len(grand.args) == 1 and
                   isinstance(parents.get(grand), ast.Expr)) or \
                (parent.attr == "pop" and not grand.args)
        elif isinstance(parent, ast.Call) and node in parent.args:
            use = isinstance(parent.func, ast.Name) and parent.func.id == "len" and \
                len(parent.args) == 1 and not parent.keywords
        else:
            use = False
        (ok if use else bad).add(node.id)
    return ok - bad


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


def _tag(stmt, source):
    stmt._tx_src = getattr(source, "lineno", None)
    return stmt


def _target_hint(target):
    return target.id if isinstance(target, ast.Name) else "value"


def _assigned(stmt):
    names = set()
    for node in ast.walk(stmt):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr in ("append", "pop") and isinstance(node.func.value, ast.Name):
            names.add(node.func.value.id)
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store) and \
                isinstance(node.value, ast.Name):
            names.add(node.value.id)
    if isinstance(stmt, ast.For):
        names.discard(stmt.target.id) if isinstance(stmt.target, ast.Name) else None
    return sorted(names)


def _has_jump(stmts):
    """Whether a ``break``/``continue`` in ``stmts`` leaves this loop (one in
    a nested loop leaves only that one)."""
    for stmt in stmts:
        if isinstance(stmt, (ast.Break, ast.Continue)):
            return True
        if isinstance(stmt, (ast.For, ast.While)):
            continue
        for field in ("body", "orelse"):
            if _has_jump(getattr(stmt, field, []) or []):
                return True
    return False


def _range_node(start, stop, step):
    args = [ast.Constant(stop)] if (start == 0 and step == 1) else \
        ([ast.Constant(start), ast.Constant(stop)] if step == 1 else
         [ast.Constant(start), ast.Constant(stop), ast.Constant(step)])
    return ast.Call(func=ast.Name("range", ast.Load()), args=args, keywords=[])


def _short(value, limit=60):
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


import operator as _op  # noqa: E402

_BINOPS = {ast.Add: _op.add, ast.Sub: _op.sub, ast.Mult: _op.mul, ast.Div: _op.truediv,
           ast.FloorDiv: _op.floordiv, ast.Mod: _op.mod, ast.Pow: _op.pow,
           ast.MatMult: _op.matmul, ast.BitAnd: _op.and_, ast.BitOr: _op.or_,
           ast.BitXor: _op.xor, ast.LShift: _op.lshift, ast.RShift: _op.rshift}
_UNARY = {ast.USub: _op.neg, ast.UAdd: _op.pos, ast.Not: _op.not_, ast.Invert: _op.invert}
_COMPARE = {ast.Eq: _op.eq, ast.NotEq: _op.ne, ast.Lt: _op.lt, ast.LtE: _op.le, ast.Gt: _op.gt,
            ast.GtE: _op.ge, ast.Is: _op.is_, ast.IsNot: _op.is_not,
            ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b}


def _ellipsis_view():
    from . import numba_runtime
    return numba_runtime.whole


_BOOLEAN_CALLS = {"logical_and", "logical_or", "logical_not", "logical_xor", "isnan",
                  "isfinite", "isinf", "signbit"}


def _is_boolean_expr(node, masks):
    """Whether ``node`` computes a boolean array (a mask) by its spelling:
    comparisons, ``~``/``&``/``|`` of masks, ``np.logical_*``."""
    if isinstance(node, ast.Compare):
        return True
    if isinstance(node, ast.Name):
        return node.id in masks
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Invert, ast.Not)):
        return _is_boolean_expr(node.operand, masks)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.BitAnd, ast.BitOr, ast.BitXor)):
        return _is_boolean_expr(node.left, masks) and _is_boolean_expr(node.right, masks)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.attr in _BOOLEAN_CALLS
    return False


def _numeric_array(value):
    return isinstance(value, np.ndarray) and value.dtype.kind in "biufc"


def _simple(node):
    """Whether ``node`` is a name or an attribute of one (``x.shape``):
    cheap to spell twice."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


def _is_unbound(av):
    return isinstance(av, Const) and isinstance(av.value, runtime.Unbound)


def _popped_from(node):
    """``h`` for an item of the tape ``h_tape`` (``h_tape.pop()`` or, for a
    sized tape, ``h_tape[size]``), else None."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
            node.func.attr == "pop" and not node.args:
        node = node.func.value
    elif isinstance(node, ast.Subscript):
        node = node.value
    else:
        return None
    if isinstance(node, ast.Name) and node.id.endswith("_tape"):
        return node.id[:-len("_tape")]
    return None
