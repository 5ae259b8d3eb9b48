"""``cond``, ``switch`` and ``select``, with JAX's signatures, results and
errors, and ``stop_gradient``, run eagerly.

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
"""
import threading

import numpy as np

from ..tree_util import tree_flatten, tree_unflatten
from .avals import aval, first_mismatch, structure_error, type_mismatch

#: Evaluate the branches ``cond``/``switch`` did not take, to report output
#: type mismatches the way JAX does.  Set to False to halve the cost.
CHECK_UNTAKEN_BRANCHES = True

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
        raise structure_error(
            f"{what} branches must return the same pytree structure",
            f"the output of {name_a}", def_a, f"the output of {name_b}", def_b,
            f"Make {name_a} and {name_b} return the same kind of containers.")
    found = first_mismatch(def_a, map(aval, leaves_a), map(aval, leaves_b), type_mismatch)
    if found is not None:
        path, ta, tb, why = found
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


def select(pred, on_true, on_false):
    """Elementwise ``on_true if pred else on_false``, strict like ``lax.select``.

    Unlike ``np.where`` it does not promote or broadcast: the cases must have
    one shape and dtype, and ``pred`` must be a scalar or have that shape.
    """
    p, t, f = aval(pred), aval(on_true), aval(on_false)
    if p.dtype.kind not in "biu":
        raise TypeError(f"select `pred` must be boolean (or integer), got "
                        f"{p.dtype}.")
    if t.shape != f.shape:
        raise TypeError(f"select cases must have the same shapes, got "
                        f"[{t.shape}, {f.shape}].")
    if type_mismatch(t, f) is not None:
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
