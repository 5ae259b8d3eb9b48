"""Parse stage -> canonical stage.

Turns a user function into ``ir.Function``: every name resolved to what it
means (a local, a NumPy primitive, a user function, a constant, a global
array), every expression flattened to one primitive per equation (ANF),
every variable bound once (SSA-like names ``h``, ``h_1``...), subscript and
augmented assignment rewritten to functional updates, and calls to user
functions inlined.

Why inline user functions rather than transform each separately: the
derivative of a model split over small helpers is then one straight-line
backward pass that reads like hand-written backprop, and later stages
(simplification, Numba) see the whole computation.  Recursion is therefore
unrolled, as JAX traces it: numbers known when transforming fold (``n - 1``,
``n == 0``) and decide ``if``/``else``, so a recursion on them ends
(``inlining.check_recursion`` refuses one decided at run time).  Comprehensions
are inlined too, as the small functions Python 3 makes of them
(``comprehensions``); ``assert`` and ``if bad: raise`` become checks
(``checks``).

This module holds the ``Converter``'s own state and bookkeeping (emitting
equations, nested equation lists, CSE) and the entry points
``canonicalize`` and ``deps_current``; the conversion itself is in its
mixins, one per concern: ``expressions``, ``statements``, ``calls``,
``inlining``, ``checks``, ``mutation``, ``branches``, ``loops``,
``iteration``, ``lax_calls``, ``trees``.  The values and scopes they share are
``scope``'s, the name analysis ``names``'.
"""
import sys
import types

import gast

from . import parser
from ..core import ir, primitives as P
from ..core.naming import Namer
from ..errors import TransformError
from .branches import Branches
from .calls import Calls
from .checks import Checks
from .expressions import Expressions
from .inlining import Inlining
from .iteration import Iteration
from .known_values import KnownValues
from .lax_calls import LaxCalls
from .held import Held
from .loop_sharing import LoopSharing
from .loops import Loops
from .members import Members
from .mutation import Mutation
from .pullbacks import Pullbacks
from .rejoins import Rejoins
from .scope import MAX_RECURSION, Scope, Static
from .statements import Statements
from .trees import Trees

# Names the generated module defines itself; user names are renamed around them.
RESERVED = {"np", "slice", "float", "len", "int", "range", "bool", "print",
            "isinstance", "str", "tuple", "list", "dict", "None", "True", "False",
            "min", "reversed"} | set(P.RUNTIME_NAMES) | set(P.MODULE_ALIASES)


class Converter(Expressions, Statements, Calls, Inlining, Checks, Mutation, Members, Held,
                Rejoins, Branches, Loops, LoopSharing, KnownValues, Iteration, LaxCalls,
                Trees, Pullbacks):
    """One canonicalisation: the equations emitted so far and the state
    the mixins share (bindings, views, aliases, CSE)."""

    def __init__(self, namer=None):
        self.namer = namer or Namer(RESERVED)
        self.env = {}
        self._env_ids = {}
        self.eqns = []
        self.origin = None
        self.temps = set()
        self._inlining = []
        self._bindings = {}   # atom name -> [(scope, user name)] bound to it
        self._may_alias = {}  # a branch's result -> values from before it it may be
        self._lengths = set()  # atoms known to be lengths (len(...) results)
        self._tuple_lengths = {}  # atom name -> length of a tuple built in the code
        self._tuple_roots = {}  # env name of a constant tuple's slice -> (root, start, step)
        self._run_time_slices = {}  # atom name -> the user's text of what it slices
        self._containers = {}  # atom name -> "dict" | "list" for packed containers
        self._members = {}    # container atom -> (kind, keys, items) it holds (members.py)
        self._holders = {}    # atom name -> [(container atom, key)] holding it
        self._somewhere = {}  # container atom -> atom names it holds at places not known
        self._held_marks = set()  # (item, container, key) in ``_holders``, for no repeats
        self._moving = None   # values a change in place reached (``propagate``)
        self._choosing = False  # ``update_if_array`` emits its choice (members.py)
        self._held_checks = 0  # ``check_held`` calls so far (a loop converts again if any)
        self._dict_keys = {}  # atom name of a dict -> its keys, known when transforming
        self._local_functions = {}  # id of a function node -> whether it defines any
        self._view_children = {}  # base atom name -> names of views taken from it
        self._carry_guard = {}  # loop carry-in atom -> (name, its aliases) not shared
        self._carry_inits = {}  # loop carry-in atom -> the atom it starts from
        self._joins = {}      # a cond's output -> (predicate, its results, the block)
        self._rejoin_next = None  # a plan to follow an in-place change (rejoins.py)
        self._outer_blocks = []   # (the enclosing blocks' equations, whether an if's body)
        self._branch_scopes = []  # scopes whose branch or loop body is being converted
        self._joining = set()     # their positions whose body joins its callers' names too
        self._loop_levels = {}    # their positions whose body is a Python loop's -> its carry
        self._live_carries = {}   # in loop bodies: a carried array's first value -> (scope, name)
        self._lax_loop_bodies = 0  # lax loop bodies being inlined (``Branches.pure_loop_body``)
        self._views = {}      # atom name -> (base atom, index): x = base[index]
        # (or a views.ViewCall: x = base.T, base.reshape(-1) ...)
        self._quiet_views = 0   # > 0: views emitted are not recorded (they rebuild known ones)
        self._live_after = frozenset()  # user names read after the current statement
        self._stmt = None               # the statement being converted
        self._cse = {}   # pure equations already emitted: reuse, don't recompute
        self._raised = False  # the block being converted ended in a `raise`
        self.deps = []   # (kind, holder, name, value): what the code was built from
        self.function_name = None   # the function canonicalised (its generated code's name)

    # --- bookkeeping ----------------------------------------------------

    def error(self, message, node=None, hint=None, scope=None):
        origin = self.origin
        if node is not None and scope is not None and getattr(node, "lineno", None):
            origin = scope.parsed.origin(node)
        return TransformError(message, origin, hint)

    def env_name(self, obj, base):
        key = id(obj)
        if key in self._env_ids:
            return self._env_ids[key]
        name_ = self.namer.fresh(base)
        self.env[name_] = obj
        self._env_ids[key] = name_
        return name_

    def emit(self, prim, args, kwargs=None, params=None, target=None, base="t"):
        key = _cse_key(prim, args, kwargs, params)
        # Reuse an equal earlier value only for anonymous temporaries, and
        # only if no user name holds it: two names must stay two objects,
        # or a later x[i] = v would be seen through both.
        if key is not None and target is None and key in self._cse \
                and not self._bindings.get(self._cse[key]):
            return ir.name(self._cse[key])
        if target is None:
            out = self.namer.fresh(base)
            self.temps.add(out)
        else:
            out = self.namer.fresh(target)
        self.eqns.append(ir.Eqn([out], prim, args, kwargs, params, self.origin))
        if key is not None:
            self._cse[key] = out
        self.note_view(self.eqns[-1])
        self.note_shared_items(self.eqns[-1])
        return ir.name(out)

    def nested(self, fn, *args, scope=None, branch=False):
        """Run ``fn`` collecting its equations in a fresh list; CSE entries
        made inside do not leak out (the body may not run).  A branch or
        loop body of ``scope`` (by default a scope passed first) joins that
        scope's names after it: ``bind`` refuses to rebind, inside it, a
        name of a scope that called ``scope`` (nothing would join it).
        ``branch``: the body of an ``if`` statement, whose names the ``if``
        joins after it (``rejoins`` follows a change made in it)."""
        if scope is None and args and hasattr(args[0], "caller") and hasattr(args[0], "locals"):
            scope = args[0]
        saved_eqns, saved_cse = self.eqns, dict(self._cse)
        self._outer_blocks.append((saved_eqns, branch))
        self.eqns = []
        if scope is not None:
            self._branch_scopes.append(scope)
        try:
            result = fn(*args)
            return self.eqns, result
        finally:
            self.eqns, self._cse = saved_eqns, saved_cse
            self._outer_blocks.pop()
            if scope is not None:
                self._branch_scopes.pop()


_NOT_CSE = {"opaque", "effect", "index_set", "custom_vjp_call", "custom_jvp_call", "copy", "array", "print", "zeros",
            "ones", "empty", "full"}


def _cse_key(prim, args, kwargs, params):
    """Equations with equal primitive and atoms compute equal values (SSA)."""
    if prim.name in _NOT_CSE or prim.kind in ("opaque", "effect"):
        return None
    try:
        return (prim.name, tuple(gast.dump(a) for a in args),
                tuple((k, gast.dump(v)) for k, v in sorted((kwargs or {}).items())),
                tuple(sorted((k, repr(v)) for k, v in (params or {}).items())))
    except Exception:
        return None


def canonicalize(fn, static=None):
    """The canonical form of a user function (not transformed).  ``static``
    ({parameter: ("value", number), ("tuple" | "list", n) or ("kind",
    "tuple" | "list" | "dict")}): parameters whose Python int/bool value,
    or whose tuple/list length, this form is specialised on (as jit's
    static arguments are), so a recursion or a loop they decide unrolls;
    and the containers the arguments are, whose items a write changes as
    a container's (``api.specialised``)."""
    # inlining nests Python calls (~10 frames per inlined call): recursion
    # unrolled ``MAX_RECURSION`` calls deep needs room beyond the default
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 20 * MAX_RECURSION + 2000))
    try:
        return _canonicalize(fn, static or {})
    finally:
        sys.setrecursionlimit(limit)


def _canonicalize(fn, static):
    parsed = parser.parse(fn)
    conv = Converter()
    conv.deps.append(parsed.code_dep)
    node = parsed.node
    conv.function_name = getattr(node, "name", None)     # (a lambda has none)
    scope = Scope(parsed, node)
    a = node.args
    if a.vararg is not None or a.kwarg is not None:
        raise TransformError("functions with *args or **kwargs cannot be transformed "
                             "directly", parsed.origin(node),
                             "give the function explicit parameters")
    params = [p.id for p in a.posonlyargs + a.args + a.kwonlyargs]
    if parsed.self_obj is not None:
        scope.locals[params.pop(0)] = Static(parsed.self_obj)
    for p in params:
        conv.namer.reserve(p)
        kind, value = static.get(p, (None, None))
        if kind == "value":     # a Python number this form is specialised on
            conv.bind(scope, p, ir.const(value))
            continue
        conv.bind(scope, p, ir.name(p))     # an alias made later (d = p) is seen through p
        if kind in ("tuple", "list"):   # a tuple or list of this length
            conv._tuple_lengths[p] = value
            conv._containers[p] = kind
        if kind == "kind":      # a tuple, list or dict (its items written as such)
            conv._containers[p] = value
    # the defaults of the function parsed (a bound method's, the one-line
    # function a functools.partial stands for)
    fn = parsed.fn
    defaults = [conv.value_atom(v, "default") for v in (fn.__defaults__ or ())] \
        if isinstance(fn, types.FunctionType) else []
    kwonly = [p.id for p in a.kwonlyargs]
    kw_defaults = {k: conv.value_atom(v, "default")
                   for k, v in (getattr(fn, "__kwdefaults__", None) or {}).items()} \
        if isinstance(fn, types.FunctionType) else {}
    conv.origin = parsed.origin(node)
    scope.inlined = (id(node), ((None,) * len(params), ()))
    conv._inlining.append(scope.inlined)   # a call back to it is recursion
    if isinstance(node, gast.Lambda):
        result = conv.as_atom(scope, conv.expr(scope, node.body), node.body)
    else:
        result = conv.block(scope, conv.rewrite_exits(node, parsed).body)
    fn_ir = ir.Function(parsed.name, params, defaults, conv.eqns, result, conv.env,
                        parsed.origin(node), parsed.filename, kwonly, kw_defaults)
    fn_ir.deps = conv.deps
    return fn_ir, conv.namer


_MISSING = object()


def deps_current(deps):
    """True while every global, closure cell and attribute the code was
    built from still holds the same object (else the code is stale)."""
    for kind, holder, name_, value in deps:
        if kind == "specialised":
            # a structure-specialised transform inlined here: current while
            # what it was built from is (its structure is the caller's key:
            # api.transformed's ``structure_dependent``)
            if not deps_current(getattr(value, "deps", ())):
                return False
            continue
        if kind == "global":
            current = holder.get(name_, _MISSING)
        elif kind == "cell":
            try:
                current = holder.cell_contents
            except ValueError:
                return False
        else:
            current = getattr(holder, name_, _MISSING)
        if current is not value:
            if kind == "attr" and callable(value) and current == value:
                continue   # bound methods are new objects on every access
            return False
    return True
