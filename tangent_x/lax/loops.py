"""``while_loop``, ``fori_loop`` and ``scan`` with JAX's signatures, results
and errors, run eagerly: a loop carry (and scan's per-step output) keeps one
type for the whole loop, checked at every step where its exact signature
changes.

The loops take the arrays they are given as JAX does, as values: the
first carry (and each ``x`` of ``scan``) the body receives is a copy, so a
body that changes its argument in place (``a += 1``) does not change the
caller's array, as it cannot in JAX.  Transformed code computes the same
(a change in place of a body's argument is a new value there); without the
copies the untransformed function changed ``init_val``'s array at the
first step and disagreed with every transform.  A body changing an array
of the code around it is refused by the transforms
(``canonical.branches.pure_loop_body``)."""
import operator

import numpy as np

from ..tree_util import tree_flatten, tree_unflatten
from .avals import (BOOL, aval, carry_mismatch, fast_signature, first_mismatch, leaf_path,
                    structure_error, type_mismatch)


def _own(tree):
    """``tree`` with every NumPy array leaf copied (numbers are values already)."""
    leaves, treedef = tree_flatten(tree)
    if not any(isinstance(leaf, np.ndarray) for leaf in leaves):
        return tree
    return tree_unflatten(treedef, [leaf.copy() if isinstance(leaf, np.ndarray) else leaf
                                    for leaf in leaves])


class _CarryChecker:
    """Checks that a loop body returns a carry of its input carry's type.

    The full check runs against the *initial* carry (the loop's static type in
    JAX) whenever the output's exact signature changes; an unchanged
    signature is accepted at the cost of one tuple comparison per iteration.
    """

    def __init__(self, what, init):
        self.what = what
        leaves, self.treedef = tree_flatten(init)
        self.avals = [aval(l) for l in leaves]
        self.last = None

    def check(self, out):
        leaves, treedef = tree_flatten(out)
        signature = (treedef, fast_signature(leaves))
        if signature == self.last:
            return
        if treedef != self.treedef:
            raise structure_error(
                f"{self.what} carry input and carry output must have the same "
                f"pytree structure", "the input carry", self.treedef,
                "the output carry", treedef,
                "Return a carry with exactly the containers of the initial one.")
        found = first_mismatch(treedef, self.avals, map(aval, leaves), carry_mismatch)
        if found is not None:
            path, inp, got, why = found
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
                         and value.dtype == BOOL):
        return bool(value)
    try:
        got = str(aval(value))
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
    val = _own(init_val)
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
        bound_aval = aval(bound)
        if bound_aval.dtype.kind not in "iuf":
            raise TypeError(f"fori_loop {name} bound must be an integer, got "
                            f"{bound!r} of type {bound_aval}.")
        avals.append(bound_aval)
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
    val = _own(init_val)
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

    carry = _own(init)
    xs_leaves = [l.copy() for l in xs_leaves]     # each step's x: a row of a copy
    steps = range(n - 1, -1, -1) if reverse else range(n)
    ys, y_def, y_avals, y_last = [], None, None, None
    for i in steps:
        x = tree_unflatten(xs_def, [l[i] for l in xs_leaves])
        carry, y = _scan_step(f, carry, x)
        checker.check(carry)
        y_leaves, treedef = tree_flatten(y)
        if y_def is None:
            y_def, y_avals = treedef, [aval(l) for l in y_leaves]
            y_last = (treedef, fast_signature(y_leaves))
        elif (treedef, fast_signature(y_leaves)) != y_last:
            _check_ys(y_def, y_avals, treedef, y_leaves, i)
        ys.append(y_leaves)
    if reverse:
        ys.reverse()
    stacked = [np.stack(column) for column in zip(*ys)]
    return carry, tree_unflatten(y_def, stacked)


def _check_ys(y_def, y_avals, treedef, leaves, step):
    if treedef != y_def:
        raise structure_error(
            "scan body outputs y must have the same pytree structure at every "
            "step", "the first y", y_def, f"y at step {step}", treedef,
            "Return the same containers from every step.")
    for i, (first, leaf) in enumerate(zip(y_avals, leaves)):
        got = aval(leaf)
        why = type_mismatch(first, got)
        if why is not None:
            path = leaf_path(treedef, i)
            raise TypeError(
                f"scan body outputs y must have one type for all steps (they "
                f"are stacked), but y{path} has type {first} at the first step "
                f"and {got} at step {step}, so the {why} do not match.")
