"""Structured control flow with JAX's ``jax.lax`` semantics, run eagerly.

Called directly, every function here is the *reference implementation*: it
runs its Python callables on NumPy values and returns NumPy values, with
JAX's signatures, results and errors.  Inside a function transformed by
tangent_x the same names are *primitives*: the transforms know them by
identity and apply their derivative and batching rules (written with the
other rules, not here), and the canonical stage rewrites Python
``if``/``for``/``while`` into calls of these functions.  Because the
canonical stage is itself runnable, these eager versions are what executes
it, so they must agree exactly with what the lowered Python source does.

Why check types at all in eager mode?  In JAX a branch or loop body has one
static type, fixed by tracing, and the derivative/batching rules (and Numba)
rely on that: a loop carry that silently turns from ``int`` into ``float``,
or a ``cond`` whose branches return different shapes, cannot be
differentiated or compiled.  Raising here, in eager mode, makes the error
appear where the user wrote the code rather than deep inside a transform.

Type policy (what counts as "the same type")
-------------------------------------------
Two leaves match when their shapes are equal and their dtypes are equal.
Python ``int``/``float``/``complex`` scalars are *weak*, as in JAX: a weak
leaf matches any leaf of the same category (integer, floating, complex), so
``cond(p, lambda: 1.0, lambda: np.float32(2))`` is accepted, while ``1`` vs
``1.0`` is not (JAX rejects that too).  A Python ``bool`` is strong ``bool``
(as in JAX).  For loop carries a weak *initial* value may also be promoted,
as JAX promotes it before tracing: ``fori_loop(0, 3, lambda i, x: x + 0.5,
0)`` is accepted (int -> float), but a strong ``int32`` carry that comes
back as ``float32`` is a ``TypeError``.  NumPy arrays and NumPy scalars are
always strong, so ``float32`` vs ``float64`` is a mismatch, like JAX with
64-bit mode on.  Values are returned as NumPy computed them: no weak-type
promotion is applied to results (a Python ``float`` carry stays a ``float``).

Branches: both evaluated, on purpose
------------------------------------
JAX traces *both* branches of ``cond`` (all of ``switch``) and raises when
their output types differ, even if the bad branch is never taken.  To give
the same error eagerly we evaluate the untaken branches too (set
``CHECK_UNTAKEN_BRANCHES = False`` to skip this).  The cost is one extra
evaluation of each untaken branch per call, which is acceptable for a
reference implementation (the lowered ``python`` stage emits a plain ``if``
and pays nothing).  Three safeguards keep this sound:

* the untaken branch runs under ``np.errstate(all="ignore")``, because
  ``cond(x > 0, lambda: np.log(x), ...)`` must not warn for the branch the
  predicate ruled out;
* if the untaken branch *raises* (``1 / d`` with ``d == 0``, an index the
  predicate guarded against), its type is unknowable and the check is
  skipped: the taken branch's value is still the right answer.  JAX would
  report a genuine type error in such a branch; we cannot tell one apart
  from a guarded value error, so we stay silent;
* while an untaken branch is being evaluated, nested ``cond``/``switch``
  calls evaluate only their taken branch, so the extra cost is at most one
  level deep and recursive functions whose base case is a ``cond`` still
  terminate.

Branches must be pure functions (JAX requires it; its arrays are immutable):
a branch that mutates its operands in place will see the untaken branch's
mutation too.

Other deliberate differences from JAX
-------------------------------------
* ``fori_loop`` passes ``i`` as a Python ``int`` when both bounds are
  Python ints (a NumPy integer of the bounds' dtype otherwise), since that is
  what NumPy indexing wants; JAX passes an ``int32`` array.
* ``scan`` ignores ``unroll`` (there is nothing to unroll eagerly) and checks
  that the per-step outputs ``y`` keep one type across steps, which JAX gets
  for free from tracing.  With ``length == 0`` the body is called once on
  zeros, as JAX traces it once, to learn the shapes of the empty outputs.
* The collectives raise ``NameError`` outside ``pmap`` exactly as JAX does;
  inside an eager ``pmap`` they dispatch to the handler that ``pmap`` binds
  with :func:`_bind_axis` (see there).
"""
import collections
import contextlib
import contextvars
import operator
import threading

import numpy as np

from .tree_util import tree_flatten, tree_unflatten

__all__ = [
    "all_gather",
    "axis_index",
    "cond",
    "fori_loop",
    "pmax",
    "pmean",
    "pmin",
    "psum",
    "scan",
    "select",
    "stop_gradient",
    "switch",
    "while_loop",
]

#: Evaluate the branches ``cond``/``switch`` did not take, to report output
#: type mismatches the way JAX does.  Set to False to halve the cost.
CHECK_UNTAKEN_BRANCHES = True


# ---------------------------------------------------------------------------
# Abstract types of leaves: (shape, dtype, weak)
# ---------------------------------------------------------------------------

_WEAK_DTYPES = {int: np.dtype(np.int_), float: np.dtype(np.float64),
                complex: np.dtype(np.complex128)}
_BOOL = np.dtype(bool)
# Category order used for promoting a weak loop carry: int -> float -> complex.
_CATEGORY = {"i": 0, "u": 0, "f": 1, "c": 2}


class _Aval:
    """Shape, dtype and weakness of one leaf: all that typing needs."""

    __slots__ = ("shape", "dtype", "weak")

    def __init__(self, shape, dtype, weak):
        self.shape, self.dtype, self.weak = shape, dtype, weak

    def __str__(self):
        text = f"{self.dtype}[{','.join(map(str, self.shape))}]"
        if self.weak:
            text += f" (a Python {_python_name(self.dtype)})"
        return text


def _python_name(dtype):
    return {"i": "int", "u": "int", "f": "float", "c": "complex"}[dtype.kind]


def _aval(leaf):
    t = type(leaf)
    if t is bool:
        return _Aval((), _BOOL, False)
    weak = _WEAK_DTYPES.get(t)
    if weak is not None:
        return _Aval((), weak, True)
    if isinstance(leaf, (np.ndarray, np.generic)):
        return _Aval(leaf.shape, leaf.dtype, False)
    arr = np.asarray(leaf)
    return _Aval(arr.shape, arr.dtype, False)


def _fast_signature(leaves):
    """Cheap exact type signature: equal signatures imply equal avals.

    Loops compare each iteration's signature with the previous one and only
    do the full (slower) compatibility check when it changes.
    """
    return tuple((type(l), getattr(l, "shape", None), getattr(l, "dtype", None))
                 for l in leaves)


def _type_mismatch(a, b):
    """Why avals ``a`` and ``b`` differ ("shapes"/"dtypes"), or None."""
    if a.shape != b.shape:
        return "shapes"
    if a.dtype == b.dtype:
        return None
    if (a.weak or b.weak) and a.dtype.kind in _CATEGORY and (
            _CATEGORY[a.dtype.kind] == _CATEGORY.get(b.dtype.kind)):
        return None
    return "dtypes"


def _carry_mismatch(inp, out):
    """Like _type_mismatch, but a weak input carry may be promoted upward."""
    why = _type_mismatch(inp, out)
    if why == "dtypes" and inp.weak and out.dtype.kind in _CATEGORY and (
            _CATEGORY[out.dtype.kind] >= _CATEGORY[inp.dtype.kind]):
        return None
    return why


# ---------------------------------------------------------------------------
# Pytree structure, for error messages (public tree_util API only)
# ---------------------------------------------------------------------------

def _dict_keys(treedef):
    """The keys of a dict-like node (dict, OrderedDict, defaultdict), else None."""
    nodetype, aux = treedef.node_data()
    if not issubclass(nodetype, dict):
        return None
    keys = aux[1] if issubclass(nodetype, collections.defaultdict) else aux
    keys = list(keys)
    return keys if len(keys) == len(treedef.children()) else None


def _child_keys(treedef):
    """Key-path fragments (``[0]``, ``['w']``, ``.field``) of a node's children."""
    nodetype, _ = treedef.node_data()
    keys = _dict_keys(treedef)
    if keys is not None:
        return [f"[{k!r}]" for k in keys]
    if issubclass(nodetype, tuple) and hasattr(nodetype, "_fields"):
        return [f".{name}" for name in nodetype._fields]
    return [f"[{i}]" for i in range(len(treedef.children()))]


def _leaf_paths(treedef):
    """Key path of every leaf, in flattening order ("" for a lone leaf)."""
    paths = []

    def walk(td, prefix):
        if td.is_leaf():
            paths.append(prefix)
        else:
            for key, child in zip(_child_keys(td), td.children()):
                walk(child, prefix + key)

    walk(treedef, "")
    return paths


def _describe_node(td):
    if td.is_leaf():
        return "a leaf"
    nodetype, _ = td.node_data()
    n = len(td.children())
    if nodetype is type(None):
        return "None"
    if issubclass(nodetype, tuple) and hasattr(nodetype, "_fields"):
        return f"a NamedTuple {nodetype.__name__}"
    if nodetype in (tuple, list):
        return f"a {nodetype.__name__} of length {n}"
    keys = _dict_keys(td)
    if keys is not None:
        return f"a {nodetype.__name__} with keys {keys}"
    return f"a {nodetype.__name__}"


def _structure_difference(a, b, path=""):
    """First place where treedefs ``a`` and ``b`` differ.

    Returns ``(path, why, subtree of a, subtree of b)``, or None if equal.
    """
    if a == b:
        return None
    if a.is_leaf() or b.is_leaf():
        return path, "one is a leaf and the other is not", a, b
    if a.node_data()[0] is not b.node_data()[0]:
        return path, "their Python types differ", a, b
    ca, cb = a.children(), b.children()
    if len(ca) != len(cb):
        return path, "the lengths do not match", a, b
    ka, kb = _child_keys(a), _child_keys(b)
    if ka != kb:
        return path, "the keys do not match", a, b
    for key, x, y in zip(ka, ca, cb):
        found = _structure_difference(x, y, path + key)
        if found is not None:
            return found
    return path, "their node metadata differs", a, b


def _structure_error(intro, name_a, def_a, name_b, def_b, fix):
    path, why, sub_a, sub_b = _structure_difference(def_a, def_b)
    where = f" at {path}" if path else ""
    return TypeError(
        f"{intro}, but {name_a}{where} is {_describe_node(sub_a)} while "
        f"{name_b}{where} is {_describe_node(sub_b)}, so {why}.\n"
        f"  {name_a}: {def_a}\n  {name_b}: {def_b}\n{fix}")


def _leaf_path(treedef, i):
    paths = _leaf_paths(treedef)
    return paths[i] if len(paths) == treedef.num_leaves else f"<leaf {i}>"


# ---------------------------------------------------------------------------
# cond / switch
# ---------------------------------------------------------------------------

_branch_state = threading.local()
_SKIPPED = object()      # an untaken branch whose output type is unknown
_NO_OPERAND = object()   # JAX's ``operand=`` keyword was not given


def _call_untaken(fun, operands):
    """Evaluate an untaken branch only to learn its output type.

    Returns ``_SKIPPED`` when nested inside another untaken branch or when the
    branch raises (see the module docstring for why that is not an error).
    """
    if getattr(_branch_state, "checking", False):
        return _SKIPPED
    _branch_state.checking = True
    try:
        with np.errstate(all="ignore"):
            return fun(*operands)
    except Exception:
        return _SKIPPED
    finally:
        _branch_state.checking = False


def _check_branch_outputs(what, name_a, out_a, name_b, out_b):
    leaves_a, def_a = tree_flatten(out_a)
    leaves_b, def_b = tree_flatten(out_b)
    if def_a != def_b:
        raise _structure_error(
            f"{what} branches must return the same pytree structure",
            f"the output of {name_a}", def_a, f"the output of {name_b}", def_b,
            f"Make {name_a} and {name_b} return the same kind of containers.")
    for i, (la, lb) in enumerate(zip(leaves_a, leaves_b)):
        ta, tb = _aval(la), _aval(lb)
        why = _type_mismatch(ta, tb)
        if why is not None:
            path = _leaf_path(def_a, i)
            where = f" at {path}" if path else ""
            raise TypeError(
                f"{what} branches must return identical types (JAX traces every "
                f"branch), but the output of {name_a}{where} has type {ta} while "
                f"the output of {name_b}{where} has type {tb}, so the {why} do "
                f"not match. Make every branch return the same shapes and dtypes "
                f"(cast with .astype or np.asarray(..., dtype)).")


def _scalar_dtype(value, what, none_message):
    """dtype of cond's ``pred`` / switch's ``index``, which must be scalars."""
    if value is None:
        raise TypeError(none_message)
    if isinstance(value, (list, tuple)) or np.ndim(value) != 0:
        raise TypeError(f"{what} must be a scalar, got {value!r} of "
                        + (f"type {type(value)}." if isinstance(value, (list, tuple))
                           else f"shape {np.shape(value)}."))
    try:
        return np.result_type(value)
    except TypeError:
        raise TypeError(f"{what} must be a number, got {value!r}.") from None


def _operands(operands, operand):
    if operand is _NO_OPERAND:
        return operands
    if operands:
        raise TypeError("if 'operand' keyword is passed then no positional "
                        "operands can be passed")
    return (operand,)


def cond(pred, true_fun, false_fun, *operands, operand=_NO_OPERAND):
    """``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)``.

    ``pred`` is a scalar bool or number (nonzero is true), as in JAX.  Both
    branches must return the same pytree structure, shapes and dtypes; see
    the module docstring for why the untaken branch is also evaluated.
    """
    if not (callable(true_fun) and callable(false_fun)):
        raise TypeError("lax.cond: true_fun and false_fun arguments should be "
                        "callable.")
    operands = _operands(operands, operand)
    if type(pred) is not bool:
        dtype = _scalar_dtype(pred, "Pred", "cond predicate is None")
        if dtype.kind not in "biuf":
            raise TypeError(f"Pred type must be either boolean or number, got "
                            f"{dtype}.")
        pred = bool(pred != 0)
    taken, untaken = (true_fun, false_fun) if pred else (false_fun, true_fun)
    out = taken(*operands)
    if CHECK_UNTAKEN_BRANCHES:
        other = _call_untaken(untaken, operands)
        if other is not _SKIPPED:
            true_out, false_out = (out, other) if pred else (other, out)
            _check_branch_outputs("cond", "true_fun", true_out,
                                  "false_fun", false_out)
    return out


def switch(index, branches, *operands, operand=_NO_OPERAND):
    """``branches[clamp(0, index, len(branches) - 1)](*operands)``.

    Out-of-range indices are clamped, as in JAX: ``-5`` selects branch 0 and
    ``100`` the last one.  All branches must return the same types.
    """
    operands = _operands(operands, operand)
    dtype = _scalar_dtype(index, "Branch index", "switch index is None")
    if dtype.kind not in "iu":
        raise TypeError(f"Index type must be an integer, got {index!r} as {dtype}")
    branches = tuple(branches)
    if not all(callable(b) for b in branches):
        raise TypeError("lax.switch: branches argument should be a sequence of "
                        "callables.")
    if not branches:
        raise ValueError("Empty branch sequence")
    k = min(max(int(index), 0), len(branches) - 1)
    out = branches[k](*operands)
    if CHECK_UNTAKEN_BRANCHES and len(branches) > 1:
        outs = {k: out}
        for j, branch in enumerate(branches):
            if j != k:
                other = _call_untaken(branch, operands)
                if other is not _SKIPPED:
                    outs[j] = other
        first = min(outs)
        for j in sorted(outs):
            if j != first:
                _check_branch_outputs("switch", f"branch {first}", outs[first],
                                      f"branch {j}", outs[j])
    return out


# ---------------------------------------------------------------------------
# Loops
# ---------------------------------------------------------------------------

class _CarryChecker:
    """Checks that a loop body returns a carry of its input carry's type.

    The full check runs against the *initial* carry (the loop's static type in
    JAX) whenever the output's exact signature changes; an unchanged
    signature is accepted at the cost of one tuple comparison per iteration.
    """

    def __init__(self, what, init):
        self.what = what
        leaves, self.treedef = tree_flatten(init)
        self.avals = [_aval(l) for l in leaves]
        self.last = None

    def check(self, out):
        leaves, treedef = tree_flatten(out)
        signature = (treedef, _fast_signature(leaves))
        if signature == self.last:
            return
        if treedef != self.treedef:
            raise _structure_error(
                f"{self.what} carry input and carry output must have the same "
                f"pytree structure", "the input carry", self.treedef,
                "the output carry", treedef,
                "Return a carry with exactly the containers of the initial one.")
        for i, (inp, leaf) in enumerate(zip(self.avals, leaves)):
            got = _aval(leaf)
            why = _carry_mismatch(inp, got)
            if why is not None:
                path = _leaf_path(treedef, i)
                name = f"carry{path}" if path else "carry"
                raise TypeError(
                    f"{self.what} carry input and carry output must have "
                    f"identical types, but the input {name} has type {inp} "
                    f"while the output {name} has type {got}, so the {why} do "
                    f"not match. A loop carry keeps one type for the whole loop: "
                    f"start it with the final shape and dtype (e.g. "
                    f"np.zeros(shape, dtype)) or cast inside the body.")
        self.last = signature


def _loop_predicate(value):
    """``cond_fun``'s result as a Python bool; JAX wants a boolean scalar."""
    t = type(value)
    if t is bool:
        return value
    if t is np.bool_ or (isinstance(value, np.ndarray) and value.shape == ()
                         and value.dtype == _BOOL):
        return bool(value)
    try:
        got = str(_aval(value))
    except Exception:
        got = type(value).__name__
    raise TypeError(
        f"while_loop cond_fun must return a boolean scalar, but got {got}. "
        f"Use a comparison (x < n), np.all/np.any to reduce an array, or "
        f"bool-cast a number explicitly.")


def while_loop(cond_fun, body_fun, init_val):
    """``val = init_val; while cond_fun(val): val = body_fun(val)``.

    ``cond_fun`` must return a boolean scalar and ``body_fun`` a carry of the
    same structure, shapes and dtypes as ``init_val`` (JAX's rules).
    """
    checker = _CarryChecker("while_loop body_fun", init_val)
    val = init_val
    while _loop_predicate(cond_fun(val)):
        val = body_fun(val)
        checker.check(val)
    return val


def _bound_avals(lower, upper):
    avals = []
    for name, bound in (("lower", lower), ("upper", upper)):
        if np.ndim(bound) != 0:
            raise TypeError(f"fori_loop {name} bound must be a scalar, got shape "
                            f"{np.shape(bound)}.")
        aval = _aval(bound)
        if aval.dtype.kind not in "iuf":
            raise TypeError(f"fori_loop {name} bound must be an integer, got "
                            f"{bound!r} of type {aval}.")
        avals.append(aval)
    lo, hi = avals
    if not lo.weak and not hi.weak and lo.dtype != hi.dtype:
        raise TypeError(f"lower and upper arguments to fori_loop must have equal "
                        f"types, got {lo.dtype} and {hi.dtype}")
    return lo, hi


def fori_loop(lower, upper, body_fun, init_val, *, unroll=None):
    """``val = init_val; for i in range(lower, upper): val = body_fun(i, val)``.

    ``i`` is a Python int when both bounds are Python ints, else a NumPy
    scalar of the bounds' dtype.  ``unroll`` is accepted and ignored.
    """
    lo, hi = _bound_avals(lower, upper)
    checker = _CarryChecker("fori_loop body_fun", init_val)
    val = init_val
    if lo.dtype.kind == "f" or hi.dtype.kind == "f":
        i = lower                     # JAX allows float bounds: i, i + 1, ...
        while i < upper:
            val = body_fun(i, val)
            checker.check(val)
            i = i + 1
        return val
    counter = (int if lo.weak and hi.weak
               else np.result_type(lower, upper).type)
    for i in range(int(lower), int(upper)):
        val = body_fun(counter(i), val)
        checker.check(val)
    return val


def _scan_length(xs_leaves, length):
    if length is not None:
        try:
            length = operator.index(length)
        except TypeError:
            if not float(length).is_integer():
                raise TypeError(f"scan length must be an integer, got "
                                f"{length!r}.") from None
            length = int(length)
        if length < 0:
            raise ValueError(f"scan length must be non-negative, got {length}.")
    for leaf in xs_leaves:
        if np.ndim(leaf) == 0:
            raise ValueError(f"scan got value with no leading axis to scan over: "
                             f"{leaf!r}.")
    sizes = [np.shape(leaf)[0] for leaf in xs_leaves]
    if len(set(sizes)) > 1:
        raise ValueError("scan got values with different leading axis sizes: "
                         + ", ".join(map(str, sizes)) + ".")
    if length is None:
        if not sizes:
            raise ValueError("scan got no values to scan over and `length` not "
                             "provided.")
        return sizes[0]
    if sizes and sizes[0] != length:
        raise ValueError(f"scan got `length` argument of {length} which disagrees "
                         f"with leading axis sizes {sizes[:1]}.")
    return length


def _scan_step(f, carry, x):
    out = f(carry, x)
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        raise TypeError(f"scan body output must be a pair (carry, y), got "
                        f"{type(out).__name__}"
                        + (f" of length {len(out)}" if isinstance(out, (tuple, list))
                           else "") + ".")
    return out


def scan(f, init, xs=None, length=None, reverse=False, unroll=1):
    """Loop ``carry, y = f(carry, x)`` over the leading axis of ``xs``.

    Returns ``(final carry, ys)`` where ``ys`` stacks the per-step ``y`` along
    a new leading axis (``ys[i]`` is the output for ``xs[i]``, also when
    ``reverse=True`` runs the steps from last to first).  ``xs`` may be any
    pytree of arrays with equal leading sizes, or None with ``length``.
    """
    xs_leaves, xs_def = tree_flatten(xs)
    xs_leaves = [l if isinstance(l, np.ndarray) else np.asarray(l)
                 for l in xs_leaves]
    n = _scan_length(xs_leaves, length)
    checker = _CarryChecker("scan body function", init)

    if n == 0:
        # Like JAX's trace: run the body once on zeros to learn ys' types.
        x = tree_unflatten(xs_def, [np.zeros(l.shape[1:], l.dtype)
                                    for l in xs_leaves])
        with np.errstate(all="ignore"):
            new_carry, y = _scan_step(f, init, x)
        checker.check(new_carry)
        y_leaves, y_def = tree_flatten(y)
        empty = [np.zeros((0,) + np.shape(l), np.asarray(l).dtype)
                 for l in y_leaves]
        return init, tree_unflatten(y_def, empty)

    carry = init
    steps = range(n - 1, -1, -1) if reverse else range(n)
    ys, y_def, y_avals, y_last = [], None, None, None
    for i in steps:
        x = tree_unflatten(xs_def, [l[i] for l in xs_leaves])
        carry, y = _scan_step(f, carry, x)
        checker.check(carry)
        y_leaves, treedef = tree_flatten(y)
        if y_def is None:
            y_def, y_avals = treedef, [_aval(l) for l in y_leaves]
            y_last = (treedef, _fast_signature(y_leaves))
        elif (treedef, _fast_signature(y_leaves)) != y_last:
            _check_ys(y_def, y_avals, treedef, y_leaves, i)
        ys.append(y_leaves)
    if reverse:
        ys.reverse()
    stacked = [np.stack(column) for column in zip(*ys)]
    return carry, tree_unflatten(y_def, stacked)


def _check_ys(y_def, y_avals, treedef, leaves, step):
    if treedef != y_def:
        raise _structure_error(
            "scan body outputs y must have the same pytree structure at every "
            "step", "the first y", y_def, f"y at step {step}", treedef,
            "Return the same containers from every step.")
    for i, (first, leaf) in enumerate(zip(y_avals, leaves)):
        got = _aval(leaf)
        why = _type_mismatch(first, got)
        if why is not None:
            path = _leaf_path(treedef, i)
            raise TypeError(
                f"scan body outputs y must have one type for all steps (they "
                f"are stacked), but y{path} has type {first} at the first step "
                f"and {got} at step {step}, so the {why} do not match.")


# ---------------------------------------------------------------------------
# select, stop_gradient
# ---------------------------------------------------------------------------

def select(pred, on_true, on_false):
    """Elementwise ``on_true if pred else on_false``, strict like ``lax.select``.

    Unlike ``np.where`` it does not promote or broadcast: the cases must have
    one shape and dtype, and ``pred`` must be a scalar or have that shape.
    """
    p, t, f = _aval(pred), _aval(on_true), _aval(on_false)
    if p.dtype.kind not in "biu":
        raise TypeError(f"select `pred` must be boolean (or integer), got "
                        f"{p.dtype}.")
    if t.shape != f.shape:
        raise TypeError(f"select cases must have the same shapes, got "
                        f"[{t.shape}, {f.shape}].")
    if _type_mismatch(t, f) is not None:
        raise TypeError(f"lax.select requires arguments to have the same dtypes, "
                        f"got {t} and {f}. (np.where promotes; lax.select does "
                        f"not.)")
    if p.shape not in ((), t.shape):
        raise TypeError(f"select `pred` must be scalar or have the same shape as "
                        f"cases, got `pred` shape {p.shape} but case shape "
                        f"{t.shape}.")
    return np.where(pred, on_true, on_false)


def stop_gradient(x):
    """Identity on values (any pytree); its derivative is zero.

    Eagerly there is nothing to stop; the derivative rule lives with the
    other rules.  The containers are rebuilt, as ``tree_map`` would.
    """
    leaves, treedef = tree_flatten(x)
    return tree_unflatten(treedef, leaves)


# ---------------------------------------------------------------------------
# Collectives
# ---------------------------------------------------------------------------

# name -> handler(op, x, axis_name, **params), bound by an eager pmap worker.
_axis_env = contextvars.ContextVar("tangent_x_axis_env", default={})


@contextlib.contextmanager
def _bind_axis(axis_name, handler):
    """Bind ``axis_name`` for the collectives in this context (used by pmap).

    ``handler(op, x, axis_name, **params)`` performs collective ``op`` (one
    of ``"psum", "pmean", "pmax", "pmin", "all_gather", "axis_index"``).
    Context variables are per thread, so each pmap worker binds its own.
    """
    token = _axis_env.set({**_axis_env.get(), axis_name: handler})
    try:
        yield
    finally:
        _axis_env.reset(token)


def _collective(op, x, axis_name, **params):
    env = _axis_env.get()
    names = axis_name if isinstance(axis_name, (tuple, list)) else (axis_name,)
    for name in names:
        if name not in env:
            raise NameError(
                f"unbound axis name: {name}. Collectives such as lax.{op} only "
                f"work inside a function mapped by tangent_x.pmap (or another "
                f"transform) that binds axis_name={name!r}.")
    return env[names[0]](op, x, axis_name, **params)


def psum(x, axis_name, *, axis_index_groups=None):
    """Sum of ``x`` (any pytree) over the mapped axis ``axis_name``."""
    return _collective("psum", x, axis_name, axis_index_groups=axis_index_groups)


def pmean(x, axis_name, *, axis_index_groups=None):
    """Mean of ``x`` over the mapped axis ``axis_name``."""
    return _collective("pmean", x, axis_name, axis_index_groups=axis_index_groups)


def pmax(x, axis_name, *, axis_index_groups=None):
    """Maximum of ``x`` over the mapped axis ``axis_name``."""
    return _collective("pmax", x, axis_name, axis_index_groups=axis_index_groups)


def pmin(x, axis_name, *, axis_index_groups=None):
    """Minimum of ``x`` over the mapped axis ``axis_name``."""
    return _collective("pmin", x, axis_name, axis_index_groups=axis_index_groups)


def all_gather(x, axis_name, *, axis_index_groups=None, axis=0, tiled=False):
    """Every worker's ``x``, stacked along ``axis`` (concatenated if ``tiled``)."""
    return _collective("all_gather", x, axis_name,
                       axis_index_groups=axis_index_groups, axis=axis, tiled=tiled)


def axis_index(axis_name):
    """This worker's index along the mapped axis ``axis_name``."""
    return _collective("axis_index", None, axis_name)
