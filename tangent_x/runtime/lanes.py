"""Runtime helpers of vectorised (vmap) code: the batch is axis 0 ("lanes").

Batching rules spell almost everything with plain NumPy (a shifted axis, an
``expand_dims``, a transposed matmul).  What NumPy cannot say in one call is
here, one job each:

- ``map_lanes``: the always-correct fallback, one call per example, results
  stacked — used for an operation with no batching rule (an opaque user
  callable, a boolean mask whose result size differs per example, ...);
- ``select_lanes``: per-lane choice between two values (an ``if`` whose
  condition differs between examples, a ``while`` whose lanes finish at
  different iterations);
- ``broadcast_lanes``: give a value shared by every example its batch axis;
- ``move_lanes``: move the batch axis of every leaf of a pytree (in_axes and
  out_axes of pytree arguments and results);
- ``stack_lanes``: stack per-example results (the loop strategy).

They take pytrees (tuples, lists, dicts of arrays) where values can be
containers, so the generated code stays one line per operation.  Each is a
registered primitive, so vectorised code can be transformed again.
"""
import numpy as np

from .. import tree_util
from .values import Unbound

__all__ = ["map_lanes", "select_lanes", "broadcast_lanes", "move_lanes", "stack_lanes",
           "unbroadcast_lanes", "set_index", "add_index", "min_index", "max_index", "mul_index",
           "broadcast_items", "lane_item", "unlane_item", "finish_lanes", "unfinish_lanes",
           "number_lanes"]


def stack_lanes(results):
    """``[f(x[0]), f(x[1]), ...]`` -> one pytree whose leaves have the batch first."""
    if not results:
        raise ValueError("vmap over a batch of size 0: there is no example to tell "
                         "the shape of the results")
    return tree_util.tree_map(lambda *leaves: np.stack([np.asarray(a) for a in leaves]),
                              *results)


def map_lanes(fn, batch_size, *lanes):
    """``fn`` applied to each example: ``fn(a[k], b[k], ...)`` for every ``k``,
    results stacked on a new leading axis (the loop strategy for one
    operation)."""
    results = []
    for k in range(batch_size):
        results.append(fn(*(tree_util.tree_map(lambda a: _example(a, k), lane)
                            for lane in lanes)))
    if not results:
        return stack_lanes(results)
    # Python numbers in every lane (a loop counter read from a range) stay
    # weak: ``0.1 * i`` then keeps a float32 array's dtype, lane by lane as
    # in each example (fuzz seed 410610)
    return tree_util.tree_map(lambda *leaves: _stacked(leaves), *results)


def _stacked(leaves):
    out = np.stack([np.asarray(a) for a in leaves])
    if all(_is_weak_number(a) for a in leaves):
        return out.view(WeakLanes)
    return out


def _example(a, k):
    """Example ``k`` of a batched value, as a copy: the operation may be one
    the in-place pass made write into an argument it owns (``add_at`` of an
    adjoint), and under vmap the batched array it came from is not its to
    change (both branches of an ``if`` run, and ``select_lanes`` still reads
    the lanes of the branch not taken).  A number has no batch axis: in a
    pytree of lanes (a list's cotangent whose items are partly constants)
    it is the same for every example."""
    if np.ndim(a) == 0:
        return a
    lane = a[k]
    if isinstance(a, WeakLanes) and np.ndim(lane) == 0:
        return lane.item()      # the example's Python number
    if isinstance(lane, np.ndarray):
        return lane.copy()
    return lane


def _lane_mask(pred, ndim):
    pred = np.asarray(pred)
    return np.reshape(pred, pred.shape + (1,) * (ndim - pred.ndim))


def _no_value(x):
    return x is None or isinstance(x, Unbound)


class RaggedLanes(ValueError):
    """Examples whose values at one point differ in structure (lists of
    different lengths): vmap then runs the function example by example
    (``api.vmap``)."""


def select_lanes(pred, on_true, on_false):
    """``on_true`` in the lanes where ``pred`` holds, else ``on_false``; both
    batched on axis 0 (leafwise for pytrees).  A side holding no value (None,
    or a variable its branch never assigned) defers to the other: such a
    variable is only read where it was assigned, as in the original code."""
    if _no_value(on_true) or _no_value(on_false):
        return on_false if _no_value(on_true) else on_true

    # every lane on one side: that side's dtype, as a loop over the examples
    # would give (np.where promotes float32 beside a float64 it never picks)
    lanes = np.asarray(pred)
    side = "true" if lanes.all() else "false" if not lanes.any() else None

    def pick(a, b):
        if _no_value(a) or _no_value(b):
            return b if _no_value(a) else a
        if _is_weak(a) != _is_weak(b):
            # a Python number in some lanes, an array in the others: each
            # lane as its example's code has it, the numbers in the dtype
            # the array's arithmetic would give them (fuzz seed 441852:
            # ``0.5 if y else y32`` became float64 lanes)
            strong = b if _is_weak(a) else a
            dtype = np.result_type(np.asarray(strong).dtype, 0.0) \
                if np.asarray(strong).dtype.kind in "fc" else None
            if dtype is not None:
                a, b = (np.asarray(a, dtype=dtype) if _is_weak(a) else a,
                        np.asarray(b, dtype=dtype) if _is_weak(b) else b)
        out = np.where(_lane_mask(pred, max(np.ndim(a), np.ndim(b))), a, b)
        if _is_weak(a) and _is_weak(b):
            return out.view(WeakLanes)      # a Python number in every lane
        if side is not None:
            dtype = np.result_type(a if side == "true" else b)
            if out.dtype != dtype:
                out = out.astype(dtype)
        return out
    try:
        return tree_util.tree_map(pick, on_true, on_false, is_leaf=_no_value)
    except ValueError:
        if tree_util.tree_structure(on_true) == tree_util.tree_structure(on_false):
            raise
        # two lists of another length (a tape one side popped): where every
        # lane takes one side, that side; else the lanes hold values of
        # different structures, which no batched value holds (fuzz 511764)
        if side is None:
            raise RaggedLanes("the examples' values have different structures here") \
                from None
        return on_true if side == "true" else on_false


def broadcast_lanes(x, batch_size):
    """A value shared by every example, given the batch axis (a read-only view).
    A Python number becomes ``WeakLanes``: still weak in each lane."""
    if _no_value(x):
        return x

    def lanes(a):
        if isinstance(a, Unbound):      # (a tape's first value of a loop's target)
            return a
        if _is_weak_number(a):
            return np.broadcast_to(np.asarray(a), (batch_size,)).view(WeakLanes)
        return np.broadcast_to(a, (batch_size,) + np.shape(a), subok=isinstance(a, WeakLanes))
    return tree_util.tree_map(lanes, x)


def number_lanes(x, kind):
    """``float(v)``, ``int(v)`` or ``bool(v)`` (``kind``: their name) of each
    lane of ``x``: lanes each holding the Python number the example's code
    made, so ``WeakLanes`` (``x32 * float(s)`` is float32 lane by lane)."""
    dtype = {"float": np.float64, "int": np.int64, "bool": np.bool_}[kind]
    return np.asarray(x, dtype=dtype).view(WeakLanes)


def _is_weak_number(x):
    """A Python number (NumPy's float64 scalar subclasses ``float`` but is
    strong: NEP 50)."""
    return isinstance(x, (int, float, complex)) and not isinstance(x, (bool, np.generic))


def _is_weak(x):
    return isinstance(x, WeakLanes) or _is_weak_number(x)


# ufuncs that Python's operators on numbers call: a number combined with a
# number by one of these is a number again
_NUMBER_OPS = {np.add, np.subtract, np.multiply, np.true_divide, np.floor_divide,
               np.remainder, np.power, np.negative, np.positive, np.absolute}


class WeakLanes(np.ndarray):
    """Lanes each holding a Python number (a shared ``0.5`` given the batch
    axis, a loop counter or accumulator that starts as one).

    NumPy types a Python number as weak (NEP 50): ``0.5 * x`` has ``x``'s
    dtype, float32 included, where a float64 array of 0.5 would promote
    ``x`` to float64.  Lane by lane, the example's code saw a number, so an
    operation meeting an array or NumPy scalar first casts these lanes to the
    dtype NumPy would give the number there; arithmetic among numbers stays
    weak, and anything else (``np.exp``, a reduction, a comparison) gives a
    plain array, as NumPy gives a NumPy scalar."""

    weak_numbers = True       # (``values.inplace_result``: numbers, rebound by ``op=``)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        strong = [x for x in inputs if not isinstance(x, WeakLanes) and not _is_weak_number(x)]
        if strong and method == "__call__":
            known = [x.dtype if isinstance(x, (np.ndarray, np.generic)) else np.asarray(x).dtype
                     for x in strong]
            inputs = tuple(np.asarray(x).astype(np.result_type(*known, x.dtype.type(0).item()),
                                                copy=False)
                           if isinstance(x, WeakLanes) else x for x in inputs)
        else:
            inputs = tuple(np.asarray(x) if isinstance(x, WeakLanes) else x for x in inputs)
        if "out" in kwargs:
            kwargs["out"] = tuple(np.asarray(o) if isinstance(o, WeakLanes) else o
                                  for o in kwargs["out"])
        result = getattr(ufunc, method)(*inputs, **kwargs)
        if not strong and method == "__call__" and ufunc in _NUMBER_OPS \
                and isinstance(result, np.ndarray) and "out" not in kwargs:
            return result.view(WeakLanes)
        return result


def strong_lanes(x):
    """A ``WeakLanes`` leaf as a plain array (what vmap returns), anything
    else as it is."""
    return np.asarray(x) if isinstance(x, WeakLanes) else x


def move_lanes(x, source, destination):
    """``np.moveaxis`` on every leaf whose axis in ``source``/``destination``
    (an int, or one int or None per leaf in flattened order) is not None."""
    leaves, treedef = tree_util.tree_flatten(x)
    srcs = list(source) if not isinstance(source, int) else [source] * len(leaves)
    dsts = list(destination) if not isinstance(destination, int) \
        else [destination] * len(leaves)
    moved = [a if s is None or d is None or s == d else np.moveaxis(a, s, d)
             for a, s, d in zip(leaves, srcs, dsts)]
    return tree_util.tree_unflatten(treedef, moved)


def unbroadcast_lanes(g, x, x_batched=False):
    """Sum a batched cotangent ``g`` to ``(batch,) + shape`` of one example of
    ``x``: ``x`` shared by every example, or batched itself (``x_batched``,
    with a per-example rank below ``g``'s).  The per-example ``unbroadcast``,
    lane by lane: a cotangent of lower rank than ``x`` (a seed folded to a
    number) is broadcast up to it."""
    shape = np.shape(x)[1:] if x_batched else np.shape(x)
    g = np.asarray(g)
    rank = g.ndim - 1
    if rank < len(shape):
        g = np.reshape(g, g.shape[:1] + (1,) * (len(shape) - rank) + g.shape[1:])
        return np.broadcast_to(g, g.shape[:1] + shape)
    lead = rank - len(shape)
    axes = tuple(range(1, 1 + lead)) + tuple(
        1 + lead + i for i, n in enumerate(shape) if n == 1 and g.shape[1 + lead + i] != 1)
    if axes:
        g = np.sum(g, axis=axes)
    return np.reshape(g, (g.shape[0],) + shape)


def set_index(x, index, value):
    """``x`` with ``x[index] = value``, as a new array (a functional update)."""
    out = np.copy(x)
    out[index] = value
    return out


def add_index(x, index, value):
    """``x`` with ``value`` added at ``index`` (repeated indices accumulate,
    as ``x.at[index].add(value)``), as a new array."""
    out = np.array(x, dtype=np.result_type(x, value))
    np.add.at(out, index, value)
    return out


def min_index(x, index, value):
    """``x.at[index].min(value)`` as a new array: every value written at a
    repeated index counts (``np.minimum.at``)."""
    out = np.array(x, dtype=np.result_type(x, value))
    np.minimum.at(out, index, value)
    return out


def max_index(x, index, value):
    """``x.at[index].max(value)`` as a new array (``np.maximum.at``)."""
    out = np.array(x, dtype=np.result_type(x, value))
    np.maximum.at(out, index, value)
    return out


def mul_index(x, index, value):
    """``x.at[index].multiply(value)`` as a new array (``np.multiply.at``)."""
    out = np.array(x, dtype=np.result_type(x, value))
    np.multiply.at(out, index, value)
    return out


def broadcast_items(items, batched, batch_size):
    """A list of values, the shared ones (``batched[i]`` False) given the batch
    axis, so that NumPy can stack or concatenate them with the batched ones."""
    return [a if flag else np.broadcast_to(a, (batch_size,) + np.shape(a))
            for a, flag in zip(items, batched)]


def lane_item(x, k, batched=None):
    """Example ``k`` of a pytree whose leaves are batched (on axis 0) where
    ``batched`` (a flag per leaf, flattened order; None: every leaf) says:
    ``a[k]`` for those, the shared leaves as they are.  Array leaves are
    copies: the example's code may change them in place (``p['b'] += v``),
    which must reach neither the caller's values nor the next example
    (vmap's loop over examples gave each example the changes of those
    before it: fuzz seed 401042)."""
    leaves, treedef = tree_util.tree_flatten(x)
    if batched is None:
        batched = [True] * len(leaves)
    return treedef.unflatten(_own(
        (a[k].item() if isinstance(a, WeakLanes) and np.ndim(a) == 1 else a[k]) if b else a)
        for a, b in zip(leaves, batched))


def _own(leaf):
    return leaf.copy() if isinstance(leaf, np.ndarray) else leaf


def unlane_item(g, x, k, batched=None):
    """The cotangent of ``x`` from that of ``lane_item(x, k, batched)``: a
    batched leaf gets ``g``'s leaf at row ``k`` (zeros elsewhere), a shared
    leaf ``g``'s leaf itself (a symbolic zero, None, as zeros)."""
    leaves, treedef = tree_util.tree_flatten(x)
    if batched is None:
        batched = [True] * len(leaves)
    g_leaves = [None] * len(leaves) if g is None else treedef.flatten_up_to(g)
    out = []
    for a, gl, b in zip(leaves, g_leaves, batched):
        bar = np.zeros(np.shape(a), dtype=np.result_type(a, float))
        if gl is not None:
            if b:
                bar[k] = gl
            else:
                bar = bar + gl
        out.append(bar)
    return treedef.unflatten(out)


def finish_lanes(x, batched, axes, batch_size):
    """The results of vectorised code, leaf by leaf (flattened order): shared
    leaves given the batch axis, the batch moved to its ``out_axes`` entry
    (None: a shared leaf left as it is)."""
    if _no_value(x):       # a loop's carry not bound yet (fuzz seed 490890)
        return x
    leaves, treedef = tree_util.tree_flatten(x)
    if len(leaves) != len(batched):
        # a symbolic zero (None) in a container still has its flag (the
        # batcher's flags follow the code's structure): pair the flags with
        # the leaves None included, or a batched leaf after a None would be
        # read as shared and given the batch axis twice
        leaves, treedef = tree_util.tree_flatten(x, is_leaf=lambda v: v is None)
    out = []
    for a, is_batched, axis in zip(leaves, batched, axes):
        if a is None:
            pass
        elif axis is not None:
            # (Python numbers stay weak lane by lane inside the code: a tuple
            # of an array and a loop counter given the batch, then read back,
            # fuzz seed 420508; vmap's boundary makes them plain arrays)
            weak = isinstance(a, WeakLanes) or _is_weak_number(a)
            if not is_batched:
                a = np.broadcast_to(a, (batch_size,) + np.shape(a))
                a = a.view(WeakLanes) if weak else a
            if axis != 0:
                a = np.moveaxis(a, 0, axis)
        out.append(a)
    return tree_util.tree_unflatten(treedef, out)


def _finish_leaves(x, n):
    """The leaves of ``x`` paired with ``finish_lanes``'s ``n`` flags (None
    leaves included when the plain flattening comes out short)."""
    leaves, treedef = tree_util.tree_flatten(x)
    if len(leaves) != n:
        leaves, treedef = tree_util.tree_flatten(x, is_leaf=lambda v: v is None)
    return leaves, treedef


def unfinish_lanes(g, x, batched, axes, batch_size):
    """Cotangent of ``x`` in ``finish_lanes(x, batched, axes, batch_size)``,
    leaf by leaf: the batch moved back from its ``out_axes`` entry to axis 0,
    and summed over the lanes for a leaf ``x`` shared by every example."""
    if g is None:
        return None
    g_leaves, _ = _finish_leaves(g, len(batched))
    x_leaves, treedef = _finish_leaves(x, len(batched))
    out = []
    for a, b, is_batched, axis in zip(g_leaves, x_leaves, batched, axes):
        if a is not None and axis is not None:
            a = np.asarray(a)
            if axis != 0:
                a = np.moveaxis(a, axis, 0)
            if not is_batched:
                a = np.sum(a, axis=0)
                if np.shape(b) != a.shape:
                    a = np.reshape(a, np.shape(b))
                dtype = getattr(b, "dtype", None)
                if dtype is not None and a.dtype != dtype:
                    a = a.astype(dtype)
        out.append(a)
    return tree_util.tree_unflatten(treedef, out)
