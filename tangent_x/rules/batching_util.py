"""Helpers shared by the batching rules (vmap), and the rule every elementwise
primitive gets.

A batching rule gets the equation and the running ``Batcher`` (``b``) and
returns the statements computing the batched result, marking which outputs
are batched; ``None`` means "no vectorised form here" and the equation runs
once per example (``map_lanes``).  The batch is always axis 0 of a batched
value, so the rules are few and small:

- elementwise ops only need operands of lower rank lined up
  (``np.expand_dims``): NumPy broadcasting does the rest (``elementwise``
  below, registered for every primitive marked ``elementwise``);
- reductions and shape ops shift their axis arguments by one;
- contractions become batched matmuls or einsums;
- indexing gains a leading ``:``, or a lane index (``np.arange``) when the
  index itself differs per example.

A rule is called only when some operand is batched; ranks (``b.rank``) are
per example, from one example run at first call (``probe``).  Each rule
lives in its primitive's family module, beside its adjoint and tangent
rules.  Which values are batched is a *flag* per name: a bool for an array,
a nested list/dict of bools for a container.
"""
import inspect

import gast

from ..core import ir, primitives as P
from ..core.builders import call  # noqa: F401  (the rules build calls through it)
from .registry import BATCHING

NO_VALUE = inspect.Parameter.empty


# --- flags: which leaves of a value carry the batch ----------------------------

def any_batched(flag):
    """Whether some leaf of the flag is batched."""
    if isinstance(flag, dict):
        return any(any_batched(f) for f in flag.values())
    if isinstance(flag, (list, tuple)):
        return any(any_batched(f) for f in flag)
    return bool(flag)


def container_truth(b, atom, flag=None):
    """Whether ``atom`` (flag ``flag``, else its own) is a container, whose
    truth (``if xs:``, ``not xs``, ``bool(xs)``) is its length: every
    example's, though its items may carry the batch."""
    flag = b.flag(atom) if flag is None else flag
    shape = b.shape(atom)
    return isinstance(flag, (list, dict)) or \
        shape is not None and shape.kind in ("list", "tuple", "dict")


def truth_batched(b, pred, flag=None):
    """Whether the truth of condition ``pred`` (flag ``flag``, else its own)
    differs between lanes; a container's never does (``container_truth``)."""
    flag = b.flag(pred) if flag is None else flag
    return any_batched(flag) and not container_truth(b, pred, flag)


def all_batched(flag):
    """Whether every leaf of the flag is batched."""
    if isinstance(flag, dict):
        return all(all_batched(f) for f in flag.values())
    if isinstance(flag, (list, tuple)):
        return all(all_batched(f) for f in flag)
    return bool(flag)


def full_flag(shape, value=True):
    """The flag of a value of ``shape`` (probe Shape) with every leaf ``value``."""
    if shape is None or shape.kind in ("array", "other"):
        return value
    if shape.kind == "dict":
        return {k: full_flag(s, value) for k, s in shape.items.items()}
    return [full_flag(s, value) for s in shape.items]


def merge_flags(a, b):
    """Leafwise OR of two flags (a leaf against a container: the container)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return {k: merge_flags(a.get(k, False), b.get(k, False)) for k in {**a, **b}}
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [merge_flags(x, y) for x, y in zip(a, b)]
    if isinstance(a, (dict, list)) or isinstance(b, (dict, list)):
        return True if any_batched(a) or any_batched(b) else a
    return bool(a) or bool(b)


def exact_or(a, b):
    """Leafwise OR of two flags that describe the same structure, exactly: a
    bool flag on a container is every leaf of it (False: all shared, True:
    all batched).  ``merge_flags`` may round a container holding batched and
    shared values up to True, which suits the places that then give the
    value the batch where the flag says so (``lanes_of``), never a flag
    marked on a value as it is.  None where the two do not line up."""
    if not isinstance(a, (dict, list)) or not isinstance(b, (dict, list)):
        if isinstance(a, (dict, list)):
            a, b = b, a
        return True if a else b
    if isinstance(a, dict) and isinstance(b, dict) and set(a) == set(b):
        out = {k: exact_or(a[k], b[k]) for k in a}
        return None if any(v is None for v in out.values()) else out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        out = [exact_or(x, y) for x, y in zip(a, b)]
        return None if any(v is None for v in out) else out
    return None


# --- atoms and parameters ----------------------------------------------------

def constant_atom(value):
    """A Python constant (or a tuple of them) as an atom."""
    if isinstance(value, tuple):
        return gast.Tuple(elts=[constant_atom(v) for v in value], ctx=gast.Load())
    return ir.const(value)


def static_value(b, atom):
    """A static Python value of an atom, or NO_VALUE: constants, and names
    the probe saw holding small ints/tuples that no batched value feeds."""
    if isinstance(atom, gast.Constant):
        return atom.value
    if isinstance(atom, gast.Tuple) and all(isinstance(e, gast.Constant) for e in atom.elts):
        return tuple(e.value for e in atom.elts)
    if isinstance(atom, gast.UnaryOp) and isinstance(atom.op, gast.USub) and \
            isinstance(atom.operand, gast.Constant):
        return -atom.operand.value
    return NO_VALUE


def respell(eqn, args=None, kwargs=None):
    new = ir.Eqn(eqn.outs, eqn.prim, eqn.args if args is None else args,
                 eqn.kwargs if kwargs is None else kwargs, eqn.params, eqn.origin)
    return ir.spell(new)


# Parameter names of NumPy functions whose signature some NumPy versions do
# not expose (C functions).
_PARAMETERS = {"concatenate": ["arrays", "axis", "out"]}


def _parameters(eqn):
    try:
        return [p.name for p in inspect.signature(eqn.prim.fn).parameters.values()]
    except (TypeError, ValueError):
        return _PARAMETERS.get(eqn.prim.name)


def bound_args(eqn):
    """{parameter name: atom} for a NumPy call (positional args named)."""
    names = _parameters(eqn)
    if names is None:
        return None
    out = dict(zip(names, eqn.args))
    out.update(eqn.kwargs)
    return out


def with_args(eqn, **changes):
    """The call with some parameters replaced (by position if passed so)."""
    names = _parameters(eqn)
    args = list(eqn.args)
    kwargs = dict(eqn.kwargs)
    for key, atom in changes.items():
        i = names.index(key)
        if i < len(args):
            args[i] = atom
        else:
            kwargs[key] = atom
    return respell(eqn, args, kwargs)


def shift_axis(axis, rank):
    """A per-example axis (int or tuple, possibly negative) on batched data."""
    if isinstance(axis, tuple):
        return tuple(shift_axis(a, rank) for a in axis)
    return axis + 1 if axis >= 0 else axis


def lanes_axes(rank):
    """Every per-example axis of a batched value (what ``axis=None`` meant)."""
    return 1 if rank == 1 else tuple(range(1, rank + 1))


def expanded(b, atom, rank, target):
    """``atom`` (batched, per-example rank ``rank``) with new axes after the
    batch axis so that it has per-example rank ``target``."""
    if rank >= target:
        return atom
    axes = tuple(range(1, 1 + target - rank))
    return b.let(f"{atom.id}_expanded", call("np.expand_dims", atom,
                                             constant_atom(axes if len(axes) > 1 else axes[0])))


# --- elementwise --------------------------------------------------------------

def elementwise(eqn, b):
    """Operands line up by NumPy broadcasting once every batched operand has
    the result's per-example rank."""
    if eqn.kwargs:
        return None
    target = b.rank(ir.name(eqn.out)) if eqn.outs else None
    ranks = [b.rank(a) for a in eqn.args]
    if target is None:
        if any(r is None for r in ranks):
            return None
        target = max(ranks)
    args = []
    for a, r in zip(eqn.args, ranks):
        if b.batched(a):
            if r is None or not ir.is_name(a):
                return None
            a = expanded(b, a, r, target)
        args.append(a)
    b.mark(eqn.out)
    return respell(eqn, args)


for _prim in list(P.BY_NAME.values()):
    if _prim.elementwise:
        BATCHING[_prim.name] = elementwise


# --- containers ----------------------------------------------------------------

def item_flag(flag, key):
    """The flag of a container's item ``key`` (None: differs per item, key unknown)."""
    if isinstance(flag, dict):
        return flag.get(key, False) if key is not NO_VALUE else any_batched(flag)
    if isinstance(flag, list):
        if isinstance(key, int) and -len(flag) <= key < len(flag):
            return flag[key]
        if isinstance(key, slice):
            return flag[key]
        return any_batched(flag) if all_batched(flag) or not any_batched(flag) else None
    return flag


def all_lanes(b, items):
    """A list/tuple name all of whose items carry the batch axis."""
    flag = b.flag(items)
    if all_batched(flag):
        return items
    mask = tuple(bool(any_batched(f)) for f in flag) if isinstance(flag, list) else None
    return b.let(f"{items.id}_lanes", call("broadcast_items", items, constant_atom(mask),
                                           b.batch_size))


# --- indexing -------------------------------------------------------------------

def index_parts(idx):
    return list(idx.elts) if isinstance(idx, gast.Tuple) else [idx]


def spread_index(b, idx):
    """An index held in a name bound to a tuple (``t = 0, 1``; ``x[t]``) as
    a tuple of one name per part, so that each part is seen (and shifted past
    the batch axis) as a part: ``x[:, t]`` would index axis 1 with the array
    ``[0, 1]`` instead."""
    shape = b.shape(idx)
    if not ir.is_name(idx) or shape is None or shape.kind != "tuple" or \
            shape.fields is not None:
        return idx
    # (not the values the probe saw in it: a tuple built in a loop, ``(i, 0)``,
    # holds another one in each step)
    flag = b.flag(idx)
    flags = flag if isinstance(flag, list) and len(flag) == len(shape.items) else \
        [flag] * len(shape.items)
    parts = []
    for i, (item, item_flag) in enumerate(zip(shape.items, flags)):
        part = b.let(f"{idx.id}_{i}", gast.Subscript(value=idx, slice=ir.const(i),
                                                       ctx=gast.Load()),
                     flag=item_flag)
        b.shapes[part.id] = item
        parts.append(part)
    return gast.Tuple(elts=parts, ctx=gast.Load())


def _is_static_part(b, part):
    """A part of an index the same for every example and not an array."""
    if b.batched(part):
        return False
    if isinstance(part, gast.Constant) or (isinstance(part, gast.Call)
                                           and ir.is_name(part.func, "slice")):
        return True
    rank = b.rank(part)
    return rank == 0


def lane_index(b, idx, x_batched):
    """The index of a batched ``x`` (or of a shared one indexed per example):
    a leading ``:`` for a shared index, ``np.arange`` lanes for a batched one."""
    parts = index_parts(idx)
    batched_parts = [b.batched(p) for p in parts]
    if not any(batched_parts):
        if not x_batched:
            return None
        arrays = [p for p in parts if not _is_static_part(b, p)]
        if len(arrays) > 1:
            return None        # several advanced indices: NumPy moves their axes
        return gast.Tuple(elts=[ir.slice_call(None, None, None)] + parts, ctx=gast.Load())
    # batched parts must lead, be integer scalars per example, and be adjacent
    lead = 0
    while lead < len(parts) and batched_parts[lead]:
        lead += 1
    if any(batched_parts[lead:]) or any(b.rank(p) != 0 for p in parts[:lead]):
        return None
    if any(not _is_static_part(b, p) for p in parts[lead:]):
        return None
    if not x_batched:
        return idx if len(parts) > 1 else parts[0]
    lanes = b.let("lanes", call("np.arange", b.batch_size), flag=False)
    return gast.Tuple(elts=[lanes] + parts, ctx=gast.Load())


def indexed_rank(b, idx, rank):
    """Per-example rank of ``x[idx]`` for an index of ints, slices, None and ``...``."""
    out = rank
    for part in index_parts(idx):
        value = static_value(b, part)
        if value is None:
            out += 1
        elif value is Ellipsis or isinstance(part, gast.Call):
            continue
        elif b.rank(part) == 0:
            out -= 1
        elif b.rank(part) is not None and not b.batched(part) and \
                len(index_parts(idx)) == 1:      # one integer array: its shape replaces an axis
            out += b.rank(part) - 1
        else:
            return None
    return out


# --- shape queries: the same for every example ------------------------------

def query(eqn, b, value):
    """``out = value``, the same for every example."""
    b.mark(eqn.out, False)
    return [gast.Assign(targets=[ir.name(eqn.out, gast.Store())], value=value,
                        type_comment=None)]


def per_example_shape(x):
    return gast.Subscript(value=call("np.shape", x),
                          slice=gast.Slice(lower=ir.const(1), upper=None, step=None),
                          ctx=gast.Load())
