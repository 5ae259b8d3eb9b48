"""Run a canonical function on one example and record what each name holds.

vmap's rules need a little static knowledge that generic code does not
have: the per-example *rank* of each value (is ``W @ x`` a matrix times a
vector?  does ``x`` need a new axis to line up with ``y``?) and whether a
value is an array or a container.  JAX gets this by tracing with abstract
values; here the canonical code is itself runnable Python, so vmap runs it
once, at first call, on the first example of the batch (``x[0]``), and
records a ``Shape`` per name.  That is what "specialise at first call on the
structure of the arguments" means for vmap; results are cached per
structure (treedef, ranks, dtypes) of the arguments.

A name a loop assigns arrays of different ranks in different iterations
(a loop over a pytree's leaves) has no one rank: it stays unknown.

Both branches of every ``if`` outside loops are run (on copies of the state,
errors ignored in the branch the example does not take), since with a
batched condition vmap evaluates both; an output the example's branch leaves
unassigned takes the other branch's value, as ``select_lanes`` gives it.  The
branch the example does not take may never end on it (a ``while`` that
only its guard makes finish): its loops stop after ``TRIAL_TURNS`` turns
in all, what they assigned after that point staying unknown.  A name
the example never reaches (a loop that ran zero times, a branch inside a
loop) stays unknown, and the rules fall back to the per-example loop there.
"""
import gast
import numpy as np

from ..core import ir, primitives as P
from ..core import lower
from .. import runtime, tree_util


class Shape:
    """What the probe saw in one name: an array-like of rank ``ndim``, or a
    container of such (``items``: a list, or a dict for dicts)."""

    __slots__ = ("ndim", "dtype", "items", "kind", "value", "fields", "ndarray")

    def __init__(self, ndim=None, dtype=None, items=None, kind="array", value=None,
                 fields=None, ndarray=None):
        self.fields = fields   # a namedtuple's field names
        self.ndarray = ndarray     # an ndarray (0-d ones too), not a number
        self.ndim = ndim
        self.dtype = dtype
        self.items = items
        self.kind = kind
        self.value = value   # small Python constants (ints, tuples of ints, strings)

    def __repr__(self):
        if self.kind == "array":
            return f"Shape(ndim={self.ndim})"
        return f"Shape({self.kind}, {self.items})"


def describe(value):
    if isinstance(value, (tuple, list)):
        small = value if all(isinstance(v, (int, type(None), slice)) for v in value) \
            and len(value) <= 8 else None
        return Shape(items=[describe(v) for v in value], kind=type(value).__name__
                     if type(value) in (tuple, list) else "tuple", value=small,
                     fields=getattr(value, "_fields", None))
    if isinstance(value, dict):
        return Shape(items={k: describe(v) for k, v in value.items()}, kind="dict")
    if isinstance(value, (np.ndarray, np.generic, int, float, complex, bool)):
        small = value if isinstance(value, (int, bool)) else None
        return Shape(np.ndim(value), np.result_type(value), value=small,
                     ndarray=isinstance(value, np.ndarray))
    if isinstance(value, (str, slice, type(None), tree_util.PyTreeDef)):
        return Shape(kind="other", value=value)
    return Shape(kind="other")


def _module_env(fn):
    env = {"np": np}
    env.update({k: getattr(runtime, k) for k in runtime.__all__})
    for alias, module in P.MODULE_ALIASES.items():
        import importlib
        env[alias] = importlib.import_module(module)
    env.update(fn.env)
    env["print"] = _silent     # the probe is not the user's run: it prints nothing
    return env


_STEP = "__tangent_x_probe_step__"
_TURN = "__tangent_x_probe_turn__"
TRIAL_TURNS = 1000      # loop turns, at most, in a branch the example does not take


class _OverBudget(Exception):
    """A branch the example does not take ran ``TRIAL_TURNS`` loop turns."""


def _no_limit():
    return None


def _turn_counter():
    turns = [0]

    def turn():
        turns[0] += 1
        if turns[0] > TRIAL_TURNS:
            raise _OverBudget()
    return turn


def _watch_loops(stmts):
    """Each loop body of ``stmts`` ends by calling ``_STEP`` with the names
    it assigns, so that the probe sees every iteration, not just the last,
    and starts by calling ``_TURN`` (which bounds a trial's turns)."""
    for node in stmts:
        for loop in ir.walk(node):
            if isinstance(loop, (gast.For, gast.While)):
                loop.body.insert(0, gast.Expr(value=gast.Call(
                    func=gast.Name(id=_TURN, ctx=gast.Load(), annotation=None,
                                   type_comment=None), args=[], keywords=[])))
                names = sorted({n.id for b in loop.body for n in ir.walk(b)
                                if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)})
                if names:
                    loop.body.append(gast.Expr(value=gast.Call(
                        func=gast.Name(id=_STEP, ctx=gast.Load(), annotation=None,
                                       type_comment=None),
                        args=[gast.Constant(value=tuple(names), kind=None)], keywords=[])))
    return stmts


def _step_recorder(namespace, seen, varying):
    """Records, per name assigned in a loop, the rank of the array it holds
    in each iteration (``seen``); a name holding arrays of different ranks
    (a loop over a pytree's leaves: a matrix, then a vector) is ``varying``."""
    def step(names):
        for name in names:
            value = namespace.get(name)
            rank = np.ndim(value) if isinstance(value, (np.ndarray, np.generic, float, int,
                                                        complex, bool)) else "other"
            if seen.setdefault(name, rank) != rank:
                varying.add(name)
    return step


def _silent(*args, **kwargs):
    return None


def _run(stmts, namespace):
    if not stmts:
        return
    stmts = _watch_loops(stmts)
    module = gast.Module(body=stmts, type_ignores=[])
    code = compile(gast.gast_to_ast(gast.fix_missing_locations(module)), "<tangent_x probe>",
                   "exec")
    exec(code, namespace)


def probe(fn, example_args):
    """{name: Shape} for the canonical function ``fn`` run on ``example_args``
    (one example: the batched arguments already sliced).  Returns the
    shapes seen, possibly partial: a failure part-way leaves later names unknown."""
    namespace = _module_env(fn)
    params = fn.positional
    for p, a in zip(params, example_args):
        namespace[p] = a
    missing = params[len(example_args):]
    defaults = fn.defaults[len(fn.defaults) - len(missing):] if missing else []
    for p, d in list(zip(missing, defaults)) + list(fn.kw_defaults.items()):
        expression = gast.fix_missing_locations(gast.Expression(body=ir.clone(d)))
        namespace[p] = eval(compile(gast.gast_to_ast(expression), "<default>", "eval"),
                            namespace)
    state = _State()
    namespace[_STEP] = _step_recorder(namespace, state.seen, state.varying)
    namespace[_TURN] = _no_limit
    with np.errstate(all="ignore"):
        try:
            _run_eqns(fn.eqns, namespace, state)
        except Exception:   # noqa: BLE001 - what ran is recorded; the rest is unknown
            pass
    shapes, varying = state.shapes, state.varying
    defined = set(params)
    for eqn in ir.all_eqns(fn.eqns):
        defined.update(eqn.outs)
        if "index" in eqn.params:
            defined.add(eqn.params["index"])
        for body in eqn.bodies():
            defined |= body.defined()
    _record(namespace, defined, shapes, overwrite=True)
    for name in varying:      # no one rank: the rules run it per example
        shapes.pop(name, None)
    return shapes


class _State:
    """What one probe run gathers: the shapes seen, and the ranks each loop
    variable held per iteration (``seen``; ``varying``: more than one)."""

    def __init__(self):
        self.shapes, self.seen, self.varying = {}, {}, set()


def _run_eqns(eqns, namespace, state):
    """Run ``eqns`` in ``namespace``, each ``if`` outside loops by
    ``_run_cond`` (at any depth), the rest as the lowered Python."""
    pending = []
    for eqn in eqns:
        if eqn.prim.kind != "cond":
            pending += lower.lower([eqn])
            continue
        _run(pending, namespace)
        pending = []
        _run_cond(eqn, namespace, state)
    _run(pending, namespace)


def _run_cond(eqn, namespace, state):
    """Both branches of the ``if`` ``eqn``, each on a copy of the state, as
    vmap runs both where the condition differs between examples (errors and
    endless loops of the branch the example does not take are cut off).
    The example's branch then becomes the state (its errors raised), and the
    outputs it leaves unassigned are joined as lanes."""
    pred = eqn.args[0]
    taken = 0 if (namespace[pred.id] if isinstance(pred, gast.Name) else pred.value) else 1
    trials, failure = [], None
    for i, body in enumerate(eqn.params["branches"]):
        trial = dict(namespace)
        trial[_STEP] = _step_recorder(trial, state.seen, state.varying)
        trial[_TURN] = namespace[_TURN] if i == taken else _turn_counter()
        try:
            _run_eqns(body.eqns, trial, state)
            _run(lower.assign_many(eqn.outs, body.results), trial)
        except Exception as error:    # noqa: BLE001 - the untaken branch may fail
            if i == taken:
                failure = error
        _record(trial, body.defined(), state.shapes)
        trials.append(trial)
    namespace.update((k, v) for k, v in trials[taken].items() if k not in (_STEP, _TURN))
    if failure is not None:
        raise failure
    _join_as_lanes(eqn, trials, namespace)


def _join_as_lanes(eqn, trials, namespace):
    """After the example's branch of ``eqn``: an output its branch left
    unassigned (an ``Unbound`` placeholder) takes the other branch's value,
    as ``select_lanes`` gives it in the batched code (where both branches
    run), so that what is computed from it later (the zero cotangent of a
    value only one branch assigns) has the rank it has in the batch."""
    for i, out in enumerate(eqn.outs):
        if not isinstance(namespace.get(out), runtime.Unbound):
            continue
        for body, trial in zip(eqn.params["branches"], trials):
            result = body.results[i]
            if isinstance(result, gast.Name) and result.id in trial \
                    and not isinstance(trial[result.id], runtime.Unbound):
                namespace[out] = trial[result.id]
                break


def _record(namespace, names, shapes, overwrite=False):
    """Shapes of ``names`` as ``namespace`` holds them; an ``Unbound``
    placeholder (a branch the example did not take) says nothing."""
    for name in names:
        if name in namespace and not isinstance(namespace[name], runtime.Unbound) \
                and (overwrite or name not in shapes):
            shapes[name] = describe(namespace[name])
