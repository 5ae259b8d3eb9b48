"""Helpers that generated code imports by name.

These are the few operations a derivative rule needs that NumPy does not
spell in one call: summing a cotangent back to a broadcast operand's shape,
spreading a reduction's cotangent back over the reduced axes, scattering a
cotangent into zeros at an index.  Keeping them here, one job each, lets
every rule stay a one-line template.  Each is also registered as a
primitive, so generated code can itself be transformed again.
"""
import numbers
import string

import numpy as np

__all__ = ["unbroadcast", "unreduce", "unindex", "unattr", "zeros_like",
           "tree_add", "check_grad_output", "stop_gradient", "index_zero",
           "last_writes",
           "matmul_adjoint_lhs", "matmul_adjoint_rhs", "custom_jvp_cotangents",
           "unbound", "iteration_item", "cotangent_item", "dense", "add_at",
           "broadcast_like", "item_cotangent", "attr_cotangent", "rejoin", "with_item",
           "shaped", "inplace_result", "is_array", "is_view_of",
           # assert / if ...: raise, and f-strings
           "check", "check_lanes", "formatted",
           # lax.scan inside transformed functions
           "scan_length", "scan_slice", "scan_unslice", "appended", "stack_steps",
           "unstack_steps",
           # reductions
           "prod_others",
           # has_aux=True: the function returns a pair
           "check_aux_pair",
           # x.at[i].min/max/multiply(v)
           "extremum_share_x", "extremum_share_v", "product_others_at",
           # shape ops
           "unconcatenate", "unhstack", "unstack", "untile", "unrepeat", "undiagonal",
           # contractions
           "dot_adjoint_lhs", "dot_adjoint_rhs", "inner_adjoint_lhs", "inner_adjoint_rhs",
           "tensordot_adjoint_lhs", "tensordot_adjoint_rhs", "einsum_adjoint",
           # linear algebra
           "solve_transposed", "solve_adjoint_lhs", "norm_adjoint", "solve_matvec"]

_BASIC_INDEX = (int, np.integer, slice, type(None), type(Ellipsis))


def _is_array_like(x):
    return isinstance(x, (np.ndarray, np.generic, numbers.Number))


def unbroadcast(g, x):
    """Sum ``g`` down to the shape of ``x`` (undo NumPy broadcasting)."""
    if isinstance(x, (list, tuple, dict)):
        # a container: leaf by leaf where ``g`` has the same structure (a
        # container shared by every lane of vmapped code, its cotangent
        # batched: ``broadcast_lanes``), else nothing was broadcast
        return _unbroadcast_items(g, x)
    if isinstance(x, Unbound) or x is None:
        return g          # a value never assigned (a lane's side of ``select_lanes``
                          # not taken yet): its cotangent is never read
    shape = np.shape(x)
    g_shape = np.shape(g)
    if g_shape == shape:
        return g
    if len(g_shape) < len(shape) or any(
            a != b and b != 1 for a, b in zip(g_shape[len(g_shape) - len(shape):], shape)):
        return np.broadcast_to(g, shape)      # a scalar cotangent of a folded seed
    lead = len(g_shape) - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(shape) if n == 1 and g_shape[lead + i] != 1)
    total = np.sum(g, axis=axes, keepdims=False)
    return np.reshape(total, shape)


def _unbroadcast_items(g, x):
    if isinstance(g, dict) and isinstance(x, dict):
        return {k: _unbroadcast_item(v, x[k]) if k in x else v for k, v in g.items()}
    if isinstance(g, (list, tuple)) and isinstance(x, (list, tuple)) and len(g) == len(x):
        items = [_unbroadcast_item(u, v) for u, v in zip(g, x)]
        return type(g)(*items) if hasattr(g, "_fields") else type(g)(items)
    return g


def _unbroadcast_item(g, x):
    return None if g is None else unbroadcast(g, x)


def unreduce(g, x, axis=None, keepdims=False):
    """Broadcast the cotangent of a reduction over ``axis`` back to ``x``'s shape."""
    shape = np.shape(x)
    if axis is not None and not keepdims:
        axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
        axes = sorted(a % len(shape) for a in axes)
        g = np.expand_dims(g, tuple(axes))
    return np.broadcast_to(g, shape)


def _is_basic(index):
    parts = index if isinstance(index, tuple) else (index,)
    return all(isinstance(p, _BASIC_INDEX) for p in parts)


def unindex(x, index, g):
    """Zeros shaped like ``x`` with ``g`` added at ``x[index]``.

    Repeated integer indices accumulate (np.add.at), as the chain rule wants.
    ``x`` may be a container (list, tuple, dict, namedtuple): the result is
    then the same container holding ``g`` in the indexed slot and ``None``
    (a symbolic zero) in the others, so touching one layer of a parameter
    list never allocates zeros for all of them.
    """
    if isinstance(x, (list, tuple, dict)):
        if isinstance(x, dict):
            out = dict.fromkeys(x)
            out[index] = g
            return out
        items = [None] * len(x)
        items[index] = g
        if hasattr(x, "_fields"):
            return type(x)(*items)
        return tuple(items) if isinstance(x, tuple) else items
    dtype = np.result_type(np.asarray(x).dtype, np.asarray(g).dtype)
    z = np.zeros(np.shape(x), dtype=dtype)
    if _is_basic(index):
        z[index] = g
    else:
        np.add.at(z, index, g)
    return z


def _float_dtype(*arrays):
    dtype = np.result_type(*[np.asarray(a).dtype for a in arrays])
    return dtype if np.issubdtype(dtype, np.inexact) else np.dtype(np.float64)


def _extremum_winners(x, index, v, ans):
    """Which entries of ``x`` and of the updates ``v`` produced the result
    ``ans`` of ``x.at[index].min(v)`` (or ``.max``), and how many tie there."""
    ans = np.asarray(ans)
    dtype = _float_dtype(ans, v)
    won_x = (np.asarray(x) == ans).astype(dtype)
    chosen = np.asarray(ans[index])
    won_v = (np.broadcast_to(v, chosen.shape) == chosen).astype(dtype)
    count = np.array(won_x)
    np.add.at(count, index, won_v)
    count[count == 0] = 1           # a NaN result: no entry wins, no gradient
    return won_x, won_v, count


def extremum_share_x(x, index, v, ans):
    """The derivative of ``x.at[index].min(v)`` (or ``.max``) along ``x``,
    entry by entry: 1 where ``x`` kept its value alone, 0 where an update
    won, and 1/k where ``x`` ties with k-1 updates (ties split the gradient
    evenly, as JAX's scatter_min/max and ``np.minimum``'s rules do)."""
    won_x, _, count = _extremum_winners(x, index, v, ans)
    return won_x / count


def extremum_share_v(x, index, v, ans):
    """The same along the updates: shaped like ``ans[index]`` (``v``
    broadcast), 1 for the update that won its slot, 1/k for k ties."""
    _, won_v, count = _extremum_winners(x, index, v, ans)
    return won_v / np.asarray(count[index])


def product_others_at(x, index, v):
    """The derivative of ``x.at[index].multiply(v)`` along each update:
    shaped like ``x[index]`` (``v`` broadcast), entry k is ``x[j]`` times the
    product of the other updates written to the same slot ``j``.  Counted
    with the zeros apart (not ``ans / v``), so zero updates are exact."""
    x = np.asarray(x)
    dtype = _float_dtype(x, v)
    chosen_shape = np.shape(x[index])
    vb = np.broadcast_to(np.asarray(v, dtype=dtype), chosen_shape)
    zero = vb == 0
    zeros = np.zeros(x.shape, dtype=np.int64)
    np.add.at(zeros, index, zero.astype(np.int64))
    nonzero_product = np.ones(x.shape, dtype=dtype)
    np.multiply.at(nonzero_product, index, np.where(zero, 1, vb))
    base = np.asarray((x * nonzero_product)[index])
    n_zero = np.asarray(zeros[index])
    safe = np.where(zero, 1, vb)
    return np.where(zero, np.where(n_zero == 1, base, 0),
                    np.where(n_zero == 0, base / safe, 0)).astype(dtype)


def unattr(x, attr, g):
    """The record ``x`` with ``g`` as field ``attr``, symbolic zeros (None)
    elsewhere."""
    return type(x)(*[None] * len(x))._replace(**{attr: g})


def index_zero(g, index):
    """A copy of ``g`` with ``g[index]`` zeroed: the cotangent that flows
    past ``x[index] = v`` to the old ``x``."""
    if isinstance(g, (list, dict)):
        out = type(g)(g)
        if isinstance(g, dict) and index not in g:
            return out
        out[index] = None
        return out
    out = np.array(g, copy=True)
    out[index] = 0
    return out


def last_writes(items, index, like):
    """``items`` (shaped like ``like[index]``) with zeros where a later write
    of ``like[index] = items`` lands on the same position: the cotangent of
    the values an assignment writes.  NumPy keeps the last of the values
    written to a repeated index, so only that one reaches the result.
    Indices without an integer array (ints, slices, masks) never repeat and
    return ``items`` as they are."""
    if isinstance(index, np.ndarray) and index.ndim == 1 and index.dtype.kind in "iu":
        order = np.arange(index.size)   # the common case: rows along the first axis
        last = np.empty(np.shape(like)[:1], dtype=np.intp)
    elif _may_repeat(index):
        order = np.arange(np.size(items)).reshape(np.shape(items))
        last = np.empty(np.shape(like), dtype=np.intp)
    else:
        return items
    items = np.asarray(items)
    last[index] = order             # only the positions written here are read back
    survived = last[index] == order
    if np.count_nonzero(survived) == survived.size:
        return items
    survived = survived.reshape(survived.shape + (1,) * (items.ndim - survived.ndim))
    return np.where(survived, items, np.zeros((), items.dtype))


def _may_repeat(index):
    """Whether ``index`` holds an integer array (a position may repeat)."""
    parts = index if isinstance(index, tuple) else (index,)
    return any(isinstance(p, (list, np.ndarray)) and np.asarray(p).dtype != np.bool_
               and np.size(p) > 1 for p in parts)


def with_item(items, key, value):
    """A copy of the list or dict ``items`` with ``value`` at ``key``: how
    generated code spells ``items[key] = value`` on a container (the
    caller's container is never mutated)."""
    out = type(items)(items)
    out[key] = value
    return out


def zeros_like(x):
    """Zeros with the structure of ``x`` (a pytree of arrays and numbers)."""
    from .. import tree_util
    if x is None or tree_util._node_kind(x) is not None:
        return tree_util.tree_map(_leaf_zeros, x)
    return _leaf_zeros(x)


def _leaf_zeros(x):
    if isinstance(x, (np.ndarray, np.generic)):
        return np.zeros_like(x)
    if isinstance(x, numbers.Number):
        return 0.0 * x
    if isinstance(x, str):
        return None     # a dict key (``for key in d``): no cotangent, a symbolic zero
    return 0.0          # e.g. an Unbound placeholder: its cotangent is never read


def tree_add(a, b):
    """Leafwise ``a + b`` for cotangents of containers; ``None`` is zero."""
    if a is None:
        return b
    if b is None:
        return a
    if isinstance(a, dict):
        return {k: tree_add(a.get(k), b.get(k)) for k in a}
    if isinstance(a, (list, tuple)):
        items = [tree_add(u, v) for u, v in zip(a, b)]
        if hasattr(a, "_fields"):
            return type(a)(*items)
        return type(a)(items)
    return a + b


def add_at(acc, index, g):
    """``acc[index] += g`` in place, returning ``acc``.

    Generated code uses it only on accumulators it allocated itself (the
    zeros a loop's backward pass adds into), so indexing one element per
    iteration costs O(1) instead of a full-size temporary."""
    if g is None:           # a symbolic zero
        return acc
    if isinstance(acc, np.ndarray):
        if _is_basic(index):
            acc[index] += g
        else:
            np.add.at(acc, index, g)
        return acc
    if isinstance(acc, (list, dict)):
        acc[index] = tree_add(acc[index], g)
        return acc
    return tree_add(acc, unindex(acc, index, g))


def broadcast_like(t, ans):
    """A tangent broadcast to its result's shape (an operand without a
    tangent may have been the larger one)."""
    if isinstance(ans, (list, tuple, dict)) or np.shape(t) == np.shape(ans):
        return t
    return np.broadcast_to(t, np.shape(ans))


def shaped(shape):
    """A stand-in for a value only the shape of which is read (``x`` in
    ``unbroadcast(g, x)`` in a backward loop, where the loop taped
    ``np.shape(x)`` instead of recomputing ``x``): zeros of that shape as a
    read-only broadcast view, no memory per element; ``0.0`` for ``()``,
    so that a scalar stays a scalar."""
    if len(shape) == 0:
        return 0.0
    return np.broadcast_to(0.0, shape)


def inplace_result(new, old):
    """What ``old op= v`` leaves in ``old`` given ``new = old op v``: NumPy
    writes an array's result into that array, in its dtype (a float32 array
    += a float64 array stays float32); a number is rebound to ``new``."""
    if isinstance(old, np.ndarray) and np.asarray(new).dtype != old.dtype:
        return np.asarray(new).astype(old.dtype, casting="same_kind")
    return new


def is_array(x):
    """Whether ``x op= v`` changes ``x`` in place (an ``ndarray``, 0-d ones
    included) rather than rebinding it (a Python or NumPy number): which
    one decides whether the other names holding ``x`` see the change."""
    return isinstance(x, np.ndarray)


def is_view_of(view, base):
    """Whether ``view`` (``base.reshape(...)``, ``np.ravel(base)``) shares
    ``base``'s memory: NumPy copies instead where the layout does not allow
    a view, and then a write into one is not seen through the other."""
    return isinstance(view, np.ndarray) and isinstance(base, np.ndarray) and \
        np.may_share_memory(view, base)


def item_cotangent(g, key, like):
    """The cotangent of ``g`` in ``cotangent_item(g, key, like)``: ``g`` is a
    container (or a symbolic zero) and only its item ``key`` was read."""
    if g is None:
        return None
    return unindex(g, key, like)


def attr_cotangent(ct, attr, like):
    """The cotangent of the field ``attr`` of a record's cotangent ``ct``."""
    item = None if ct is None else getattr(ct, attr)
    return zeros_like(like) if item is None else item


def dense(items, like):
    """A list of cotangents with symbolic zeros (None) made real, for rules
    that hand the whole list to NumPy (np.stack of the slices' cotangents)."""
    return [zeros_like(x) if g is None else g for g, x in zip(items, like)]


def cotangent_item(g, key, like):
    """``g[key]``, or zeros like ``like`` where ``g`` holds a symbolic zero."""
    item = None if g is None else g[key]
    return zeros_like(like) if item is None else item


def check_grad_output(y):
    """grad differentiates scalar-output functions only (as JAX)."""
    if not _is_array_like(y):
        raise TypeError(f"grad requires real-valued outputs, but the function returned "
                        f"{type(y).__name__} {y!r}" if isinstance(y, (str, bytes, type(None)))
                        else "Gradient only defined for scalar-output functions. "
                        f"Output had shape: {np.shape(y)}.")
    shape = np.shape(y)
    if shape != ():
        raise TypeError("Gradient only defined for scalar-output functions. "
                        f"Output had shape: {shape}.")
    if np.iscomplexobj(y):
        raise TypeError("grad requires real-valued outputs (output dtype that is a "
                        f"sub-dtype of np.floating), but got {np.result_type(y)}; tangent_x "
                        "differentiates real values only (see tangent_x.complex_values)")


def aux_pair_message(got):
    """JAX's words for a has_aux function that does not return (out, aux);
    ``got`` says what it returned."""
    return (f"expected function with aux output to return a two-element tuple, but got "
            f"{got} (has_aux=True: the function must return a pair (out, aux))")


def check_aux_pair(out):
    """With has_aux=True the function returns a pair (out, aux): raise
    JAX's TypeError otherwise (rather than drop items or fail later)."""
    if not isinstance(out, (list, tuple)) or len(out) != 2:
        raise TypeError(aux_pair_message(f"type {type(out)} with value {out!r}"))


def check(ok, error, template, *parts):
    """``assert ok, f"..."`` and ``if not ok: raise error(f"...")``: a check
    on values, kept in the primal code.  ``template`` is the message as a
    ``str.format`` template, ``parts`` the values of its fields: formatted
    only when the check fails.  ``template`` None raises ``error(*parts)``."""
    if not ok:
        if template is None:
            raise error(*parts)
        raise error(template.format(*parts))


def check_lanes(ok, error, template, batched, *parts):
    """``check`` under vmap: each example is checked as Python checks it
    (``bool`` of its own value); the first failing one is reported with its
    own values (``batched[i]``: part ``i`` has the batch on axis 0)."""
    ok = np.asarray(ok)
    for k in range(ok.shape[0]):
        if not ok[k]:
            mine = [p[k] if b else p for p, b in zip(parts, batched)]
            check(False, error, template, *mine)


def formatted(template, *parts):
    """An f-string: ``template`` (a ``str.format`` template) of ``parts``."""
    return template.format(*parts)


def stop_gradient(x):
    """Identity on values; derivative zero."""
    return x


def matmul_adjoint_lhs(g, a, b):
    """Cotangent of ``a`` in ``a @ b`` (NumPy's 1-D promotion rules included)."""
    a, b, g = np.asarray(a), np.asarray(b), np.asarray(g)
    if b.ndim == 1:
        out = g[..., None] * b
    elif a.ndim == 1:
        out = np.matmul(b, g[..., None])[..., 0]
    else:
        out = np.matmul(g, np.swapaxes(b, -1, -2))
    return unbroadcast(out, a)


def matmul_adjoint_rhs(g, a, b):
    """Cotangent of ``b`` in ``a @ b``."""
    a, b, g = np.asarray(a), np.asarray(b), np.asarray(g)
    if a.ndim == 1 and b.ndim == 1:
        out = g * a
    elif a.ndim == 1:
        out = a[:, None] * g[..., None, :]
    elif b.ndim == 1:
        out = np.matmul(np.swapaxes(a, -1, -2), g[..., None])[..., 0]
    else:
        out = np.matmul(np.swapaxes(a, -1, -2), g)
    return unbroadcast(out, b)


# --- reductions ----------------------------------------------------------------

def _axes(axis, ndim):
    """``axis`` (None, int or tuple, negatives allowed) as a sorted tuple."""
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    return tuple(sorted(int(a) % ndim for a in axes))


def prod_others(a, *tangents, axis=None):
    """For each entry of ``a``, the product of the other entries that
    ``np.prod(a, axis)`` multiplies it with.

    This is the derivative of the product; computed from prefix and suffix
    products (not ``prod / a``), so zeros in ``a`` are exact.

    With ``tangents`` t1..tm (shaped like ``a``), its m-th derivative along
    them: for entry i, the sum over distinct other entries j1..jm of
    ``t1[j1] ... tm[jm]`` times the product of the entries left.  That family
    is closed under differentiation (the derivative along ``a``'s tangent
    appends it to ``tangents``), so products differentiate to any order.
    """
    a = np.asarray(a)
    axes = _axes(axis, a.ndim)
    last = tuple(range(a.ndim - len(axes), a.ndim))
    moved_shape = np.moveaxis(a, axes, last).shape

    def rows(x):
        moved = np.moveaxis(np.broadcast_to(np.asarray(x), a.shape), axes, last)
        return np.reshape(moved, moved.shape[:a.ndim - len(axes)] + (-1,))

    out = _others(rows(a), [rows(t) for t in tangents])
    return np.moveaxis(np.reshape(out, moved_shape), last, axes)


def _others(rows, tangents):
    """``prod_others`` along the last axis of ``rows`` (see there)."""
    n = rows.shape[-1]
    if n == 0:
        return np.zeros_like(rows)
    if not tangents:
        ones = np.ones_like(rows[..., :1])
        before = np.cumprod(np.concatenate([ones, rows[..., :-1]], axis=-1), axis=-1)
        after = np.cumprod(np.concatenate([ones, rows[..., :0:-1]], axis=-1), axis=-1)[..., ::-1]
        return before * after
    # Choose j1 for the first tangent: a new axis j holds, for each choice,
    # the rows with entry j replaced by t1[j] and the later tangents zeroed
    # there (j is taken); then sum over j != i.
    first, rest = tangents[0], tangents[1:]
    eye = np.eye(n, dtype=bool)
    chosen = np.where(eye, first[..., :, None], rows[..., None, :])
    rest = [np.where(eye, 0.0, t[..., None, :]) for t in rest]
    each = _others(chosen, rest)                  # [..., j, i]
    return np.sum(np.where(eye, 0.0, each), axis=-2)


# --- shape ops -----------------------------------------------------------------

def unconcatenate(g, arrays, axis=0):
    """Split the cotangent of ``np.concatenate(arrays, axis)`` into one piece
    per array, each shaped like its array (a list, as ``arrays`` was a sequence).

    The pieces' extents along ``axis`` are read off the arrays' sizes, so the
    same helper undoes ``vstack``/``hstack``, which first promote 0-d and 1-d
    arrays (``axis=None``: the arrays were raveled first).
    """
    g = np.asarray(g)
    if axis is None:
        g, axis = np.ravel(g), 0
    axis %= g.ndim
    across = g.size // g.shape[axis] if g.shape[axis] else 1
    ends = np.cumsum([np.size(x) // across for x in arrays])[:-1]
    pieces = [np.reshape(p, np.shape(x)) for p, x in zip(np.split(g, ends, axis=axis), arrays)]
    return np.stack(pieces) if isinstance(arrays, np.ndarray) else pieces


def rejoin(cts, g, arrays, axis=0):
    """Cotangent of ``g`` in ``unconcatenate(g, arrays, axis)``: the pieces'
    cotangents joined back in place (symbolic zeros become zeros)."""
    g = np.asarray(g)
    shape = g.shape
    if axis is None:
        g, axis = np.ravel(g), 0
    axis %= g.ndim
    across = g.size // g.shape[axis] if g.shape[axis] else 1
    ends = np.cumsum([np.size(x) // across for x in arrays])[:-1]
    pieces = np.split(g, ends, axis=axis)
    joined = np.concatenate([np.zeros(p.shape) if c is None else np.reshape(c, p.shape)
                             for c, p in zip(cts, pieces)], axis=axis)
    return np.reshape(joined, shape)


def unhstack(g, tup):
    """Cotangents of the arrays of ``np.hstack(tup)``: it joins 1-d results
    along axis 0 and everything else along axis 1."""
    return unconcatenate(g, tup, axis=0 if np.ndim(g) == 1 else 1)


def unstack(g, axis=0):
    """Cotangents of the arrays of ``np.stack(arrays, axis)``: the slices of ``g``."""
    return list(np.moveaxis(np.asarray(g), axis, 0))


def untile(g, A, reps):
    """Cotangent of ``A`` in ``np.tile(A, reps)``: the sum over the copies."""
    shape = np.shape(A)
    reps = (int(reps),) if np.ndim(reps) == 0 else tuple(reps)
    d = max(len(shape), len(reps))
    shape_d = (1,) * (d - len(shape)) + shape
    reps_d = (1,) * (d - len(reps)) + reps
    copies = np.reshape(g, [n for pair in zip(reps_d, shape_d) for n in pair])
    return np.reshape(np.sum(copies, axis=tuple(range(0, 2 * d, 2))), shape)


def unrepeat(g, a, repeats, axis=None):
    """Cotangent of ``a`` in ``np.repeat(a, repeats, axis)``: each entry
    receives the sum of the cotangents of its copies."""
    shape = np.shape(a)
    g = np.asarray(g)
    if axis is None:
        flat = unrepeat(g, np.ravel(a), repeats, axis=0)
        return np.reshape(flat, shape)
    axis %= len(shape)
    n = shape[axis]
    moved = np.moveaxis(g, axis, 0)
    if np.size(repeats) == 1:
        r = int(np.ravel(repeats)[0])
        total = np.sum(np.reshape(moved, (n, r) + moved.shape[1:]), axis=1)
    else:
        total = np.zeros((n,) + moved.shape[1:], dtype=g.dtype)
        np.add.at(total, np.repeat(np.arange(n), repeats), moved)
    return np.moveaxis(total, 0, axis)


def undiagonal(g, a, offset=0, axis1=0, axis2=1):
    """Zeros shaped like ``a`` with ``g`` written on the diagonal that
    ``np.diagonal(a, offset, axis1, axis2)`` reads."""
    g = np.asarray(g)
    dtype = np.result_type(np.asarray(a).dtype, g.dtype)
    out = np.zeros(np.shape(a), dtype=dtype)
    plane = np.moveaxis(out, (axis1, axis2), (-2, -1))     # a writable view
    i = np.arange(g.shape[-1])
    plane[..., i + max(-offset, 0), i + max(offset, 0)] = g
    return out


# --- contractions --------------------------------------------------------------

def _contracted(na, nb, axes):
    """``np.tensordot``'s ``axes`` argument as two lists of non-negative axes."""
    if isinstance(axes, (int, np.integer)):
        return list(range(na - axes, na)), list(range(axes))
    a_axes, b_axes = axes
    a_axes = [a_axes] if np.ndim(a_axes) == 0 else list(a_axes)
    b_axes = [b_axes] if np.ndim(b_axes) == 0 else list(b_axes)
    return [int(i) % na for i in a_axes], [int(i) % nb for i in b_axes]


def _tensordot_lhs(g, a, b, a_axes, b_axes):
    a_free = [i for i in range(np.ndim(a)) if i not in a_axes]
    b_free = [i for i in range(np.ndim(b)) if i not in b_axes]
    g = np.asarray(g)
    out = np.tensordot(g, b, axes=(list(range(len(a_free), g.ndim)), b_free))
    order = a_free + [a_axes[b_axes.index(j)] for j in sorted(b_axes)]
    return np.transpose(out, np.argsort(order))


def _tensordot_rhs(g, a, b, a_axes, b_axes):
    a_free = [i for i in range(np.ndim(a)) if i not in a_axes]
    b_free = [i for i in range(np.ndim(b)) if i not in b_axes]
    out = np.tensordot(a, np.asarray(g), axes=(a_free, list(range(len(a_free)))))
    order = [b_axes[a_axes.index(i)] for i in sorted(a_axes)] + b_free
    return np.transpose(out, np.argsort(order))


def tensordot_adjoint_lhs(g, a, b, axes=2):
    """Cotangent of ``a`` in ``np.tensordot(a, b, axes)``: ``g`` contracted
    with ``b`` over ``b``'s free axes, axes put back in ``a``'s order."""
    a_axes, b_axes = _contracted(np.ndim(a), np.ndim(b), axes)
    return _tensordot_lhs(g, a, b, a_axes, b_axes)


def tensordot_adjoint_rhs(g, a, b, axes=2):
    """Cotangent of ``b`` in ``np.tensordot(a, b, axes)``."""
    a_axes, b_axes = _contracted(np.ndim(a), np.ndim(b), axes)
    return _tensordot_rhs(g, a, b, a_axes, b_axes)


def dot_adjoint_lhs(g, a, b):
    """Cotangent of ``a`` in ``np.dot(a, b)`` (a product when either is 0-d;
    else a contraction of ``a``'s last axis with ``b``'s second-to-last)."""
    na, nb = np.ndim(a), np.ndim(b)
    if na == 0 or nb == 0:
        return unbroadcast(np.multiply(g, b), a)
    return _tensordot_lhs(g, a, b, [na - 1], [max(nb - 2, 0)])


def dot_adjoint_rhs(g, a, b):
    """Cotangent of ``b`` in ``np.dot(a, b)``."""
    na, nb = np.ndim(a), np.ndim(b)
    if na == 0 or nb == 0:
        return unbroadcast(np.multiply(g, a), b)
    return _tensordot_rhs(g, a, b, [na - 1], [max(nb - 2, 0)])


def inner_adjoint_lhs(g, a, b):
    """Cotangent of ``a`` in ``np.inner(a, b)`` (last axes contracted)."""
    na, nb = np.ndim(a), np.ndim(b)
    if na == 0 or nb == 0:
        return unbroadcast(np.multiply(g, b), a)
    return _tensordot_lhs(g, a, b, [na - 1], [nb - 1])


def inner_adjoint_rhs(g, a, b):
    """Cotangent of ``b`` in ``np.inner(a, b)``."""
    na, nb = np.ndim(a), np.ndim(b)
    if na == 0 or nb == 0:
        return unbroadcast(np.multiply(g, a), b)
    return _tensordot_rhs(g, a, b, [na - 1], [nb - 1])


def einsum_specs(subscripts, ndims):
    """Explicit input and output subscripts of an einsum, ellipses spelled
    out as letters (``ndims``: the operands' ranks).  Implicit output is
    NumPy's: the broadcast axes, then the letters used once, sorted."""
    if not isinstance(subscripts, str):
        raise NotImplementedError("einsum's interleaved (operand, sublist) form has no "
                                  "derivative rule; pass a subscripts string")
    subscripts = subscripts.replace(" ", "")
    ins, arrow, out = subscripts.partition("->")
    ins = ins.split(",")
    spare = [c for c in string.ascii_letters if c not in subscripts]
    ranks = [n - (len(s) - 3) for s, n in zip(ins, ndims) if "..." in s]
    ellipsis = "".join(spare[:max(ranks, default=0)])
    specs = [s.replace("...", ellipsis[len(ellipsis) - (n - len(s) + 3):]) if "..." in s else s
             for s, n in zip(ins, ndims)]
    if arrow:
        out = out.replace("...", ellipsis)
    else:
        letters = "".join(ins).replace(".", "")
        out = ellipsis + "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    return specs, out


def einsum_adjoint(g, subscripts, k, *operands):
    """Cotangent of operand ``k`` of ``np.einsum(subscripts, *operands)``.

    It is itself an einsum of ``g`` with the other operands, then broadcast
    over axes that only operand ``k`` summed, summed over axes it broadcast,
    and written onto the diagonal when a letter repeats (``'ii->i'``).
    """
    specs, out = einsum_specs(subscripts, [np.ndim(x) for x in operands])
    target, shape = specs[k], np.shape(operands[k])
    sizes = dict(zip(target, shape))
    others = [s for j, s in enumerate(specs) if j != k]
    unique = "".join(dict.fromkeys(target))
    available = set(out).union(*others)
    kept = "".join(c for c in unique if c in available)
    result = np.einsum(",".join([out] + others) + "->" + kept, g,
                       *[x for j, x in enumerate(operands) if j != k])
    broadcast = tuple(i for i, c in enumerate(kept) if sizes[c] == 1 and result.shape[i] != 1)
    if broadcast:
        result = np.sum(result, axis=broadcast, keepdims=True)
    missing = [i for i, c in enumerate(unique) if c not in available]
    result = np.broadcast_to(np.expand_dims(result, missing), [sizes[c] for c in unique])
    if len(unique) == len(target):
        return result
    full = np.zeros(shape, dtype=result.dtype)
    grids = np.ix_(*[np.arange(sizes[c]) for c in unique])
    full[tuple(grids[unique.index(c)] for c in target)] = result
    return full


# --- linear algebra ------------------------------------------------------------

def _solves_vectors(a, b):
    """Whether ``np.linalg.solve(a, b)`` reads ``b`` as (a stack of) vectors:
    NumPy 2 when ``b`` is 1-d, NumPy 1 when ``b`` has one axis less than ``a``."""
    if int(np.__version__.split(".")[0]) >= 2:
        return np.ndim(b) == 1
    return np.ndim(b) == np.ndim(a) - 1


def solve_transposed(a, g, b):
    """Solve ``a.T @ y = g`` for ``g`` shaped like ``np.linalg.solve(a, b)``:
    the cotangent of ``b`` (before summing axes that ``b`` broadcast over)."""
    at = np.swapaxes(a, -1, -2)
    if _solves_vectors(a, b):
        return np.linalg.solve(at, np.asarray(g)[..., None])[..., 0]
    return np.linalg.solve(at, g)


def solve_adjoint_lhs(y, a, b, x):
    """Cotangent of ``a`` in ``x = np.linalg.solve(a, b)`` given ``y``, the
    one of ``b``: ``-y @ x.T`` (an outer product for vectors)."""
    if _solves_vectors(a, b):
        out = -y[..., :, None] * x[..., None, :]
    else:
        out = -np.matmul(y, np.swapaxes(x, -1, -2))
    return unbroadcast(out, a)


def solve_matvec(m, x, a, b):
    """``m @ x`` for ``x`` shaped like ``np.linalg.solve(a, b)``: a (stack of)
    vector(s) or matrices as ``solve`` reads ``b`` (``m`` is shaped like ``a``).
    The tangent of ``solve`` applies ``a``'s tangent to the solution with it."""
    if _solves_vectors(a, b):
        return np.matmul(m, np.asarray(x)[..., None])[..., 0]
    return np.matmul(m, x)


def _ties(x, best, axes):
    """1 where ``x`` attains the extreme ``best`` (keepdims), shared among ties."""
    hit = (x == best).astype(float)
    return hit / np.sum(hit, axis=axes, keepdims=True)


def norm_adjoint(g, ans, x, ord=None, axis=None, keepdims=False):
    """Cotangent of ``x`` in ``np.linalg.norm(x, ord, axis, keepdims)``.

    Vector norms: any ``ord`` (inf/-inf share the cotangent among ties).
    Matrix norms: ``'fro'``, ``'nuc'``, 2/-2 (largest/smallest singular
    value), 1/-1 (column sums), inf/-inf (row sums).
    """
    x = np.asarray(x)
    if axis is None:
        axis = tuple(range(x.ndim)) if ord is None or x.ndim > 2 else \
            (0 if x.ndim == 1 else (0, 1))
    axes = _axes(axis, x.ndim)
    g, ans = np.asarray(g), np.asarray(ans)
    if not keepdims:
        g, ans = np.expand_dims(g, axes), np.expand_dims(ans, axes)
    if len(axes) != 2 or ord is None or ord == "fro":
        if ord is None or ord == "fro" or ord == 2:
            return g * x / ans
        if ord == np.inf or ord == -np.inf:
            return g * np.sign(x) * _ties(np.abs(x), ans, axes)
        if ord == 0:
            return np.zeros_like(x)
        return g * np.sign(x) * (np.abs(x) / ans) ** (ord - 1)
    rows, cols = axes
    if ord in (1, -1, np.inf, -np.inf):
        summed = cols if ord in (np.inf, -np.inf) else rows
        sums = np.sum(np.abs(x), axis=summed, keepdims=True)
        other = rows if summed == cols else cols
        return g * np.sign(x) * _ties(sums, ans, (other,))
    m = np.moveaxis(x, (rows, cols), (-2, -1))
    u, s, vt = np.linalg.svd(m, full_matrices=False)
    if ord == "nuc":
        d = np.matmul(u, vt)
    elif ord in (2, -2):
        i = 0 if ord == 2 else -1
        d = u[..., :, i, None] * vt[..., i, None, :]
    else:
        raise NotImplementedError(f"no derivative for np.linalg.norm with ord={ord!r}")
    return g * np.moveaxis(d, (-2, -1), (rows, cols))


def custom_jvp_cotangents(fun, args, g):
    """Cotangents of a custom_jvp function's differentiable arguments: the
    transpose of its (linear) tangent map, built by transforming the rule."""
    from ..api.derivatives import Transformed
    nondiff, primals = fun.split(args)
    n = len(args)
    key = ("pullback", n)
    pullback = fun._pullbacks.get(key)
    if pullback is None:
        first = len(nondiff) + len(primals)
        tangent_argnums = tuple(range(first, first + len(primals)))
        pullback = Transformed(fun.tangent_map(n), "vjp", tangent_argnums, False,
                               lambda out, a: out)
        fun._pullbacks[key] = pullback
    zeros = [zeros_like(p) for p in primals]
    _, bars = pullback(*zeros, g, *nondiff, *primals)    # (api._with_extra's order)
    return bars if isinstance(bars, tuple) else (bars,)


class Unbound:
    """The value of a variable that the path taken never assigned.

    Python would raise UnboundLocalError where the variable is used; any use
    of this placeholder raises that error, naming the variable."""

    __array_priority__ = 1e6

    def __init__(self, name):
        object.__setattr__(self, "_name", name)

    def _fail(self, *args, **kwargs):
        raise UnboundLocalError(f"local variable '{self._name}' is used but was not "
                                "assigned on the path the code took")

    __array_ufunc__ = __array_function__ = _fail
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _fail
    __truediv__ = __rtruediv__ = __pow__ = __rpow__ = __matmul__ = __rmatmul__ = _fail
    __neg__ = __getitem__ = __bool__ = __float__ = __array__ = __len__ = __iter__ = _fail
    __lt__ = __le__ = __gt__ = __ge__ = _fail

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        self._fail()

    def __repr__(self):
        return f"<unbound {self._name}>"


def unbound(name):
    """Placeholder for a variable not assigned on the path taken."""
    return Unbound(name)


def iteration_item(items, k):
    """Item ``k`` of what ``for`` iterates over (a dict yields its keys)."""
    if isinstance(items, dict):
        return list(items)[k]
    return items[k]


def scan_length(xs, length=None):
    """Number of scan steps: ``length``, else the leading size of ``xs``."""
    from .. import tree_util
    if length is not None:
        return int(length)
    return len(tree_util.tree_leaves(xs)[0])


def scan_slice(xs, k):
    """Step ``k`` of a scan's inputs: ``x[k]`` for every leaf of ``xs``."""
    from .. import tree_util
    if xs is None:
        return None
    return tree_util.tree_map(lambda a: a[k], xs)


def scan_unslice(xs, k, g):
    """Cotangent of ``scan_slice``: zeros like ``xs`` with ``g`` at step ``k``.
    A leaf of ``g`` that is None (a symbolic zero: the step's item of a
    tuple only partly read) stays None."""
    from .. import tree_util
    if g is None:
        return None
    return tree_util.tree_map(lambda a, b: None if b is None else unindex(a, k, b), xs, g)


def appended(items, item):
    """``items + [item]`` without touching ``items`` (a scan's outputs so far)."""
    return list(items) + [item]


def stack_steps(items, reverse=False):
    """Stack per-step outputs along a new leading axis (leafwise)."""
    from .. import tree_util
    if reverse:
        items = items[::-1]
    if not items or all(i is None for i in items):
        return None
    return tree_util.tree_map(lambda *leaves: np.stack(leaves), *items)


def unstack_steps(g, items, reverse=False):
    """Cotangent of ``stack_steps``: the per-step slices of ``g``."""
    from .. import tree_util
    parts = [tree_util.tree_map(lambda a: a[k], g) for k in range(len(items))]
    return parts[::-1] if reverse else parts


# Helpers of vectorised (vmap) code live in their own module; generated code
# imports every helper from here.
from .lanes import *  # noqa: E402,F401,F403
from .lanes import __all__ as _lanes_all  # noqa: E402

__all__ = __all__ + list(_lanes_all)
