"""Index checks for compiled code: ``x[checked(x, i)]``.

Numba reads past an array's end without a word (NumPy raises IndexError),
so the numba stage wraps every index it emits for an array in
``checked(x, index)``: eagerly the index itself, compiled a check of each
integer (or integer array) part of the index against the size of the axis
it selects, raising ``OutOfBounds`` (an IndexError; ``Jitted`` then runs
the call eagerly for NumPy's own error, see there).  What to check is
decided when Numba types the call: slices, ``None`` and ``...`` select
nothing out of range and cost nothing; an integer costs two comparisons.

A tuple index is walked part by part with the axis each part selects
(parts after ``...`` count from the last axis), so ``x[i, :, j]`` checks
``i`` against axis 0 and ``j`` against axis 2.  An optional integer part
(popped from a tape that started unassigned) is returned unwrapped.  Boolean masks are checked
for NumPy's shape rule (the mask's shape is the shape of the axes it
selects).
"""
from numba import types
from numba.extending import overload, register_jitable

__all__ = ["checked"]


def checked(x, index):
    """``index`` (checked against ``x``'s shape when compiled)."""
    return index


class OutOfBounds(IndexError):
    """An index out of range, found by compiled code.  Its message is a
    constant: compiled code that builds NumPy's message (the index and the
    axis size as text) runs a loop of reads 3-4x slower, even though the
    message is never built on the way through, while a constant message
    costs nothing measurable.  ``Jitted`` runs a call that raised it again
    eagerly, which raises NumPy's own IndexError at the user's line."""


@register_jitable
def check_integer(i, n):
    if i < -n or i >= n:
        raise OutOfBounds("index out of bounds")


@register_jitable
def position(i, n):
    """Item ``i`` (negative: from the end) of ``n`` items, checked: how a
    list filled by a loop and kept as one list per leaf (a tape, whose
    number lists are allocated ahead of their size) is indexed."""
    if i < -n or i >= n:
        raise OutOfBounds("list index out of range")
    return i + n if i < 0 else i


def _consumed(t):
    """How many axes of the indexed array the index part of type ``t`` selects."""
    if isinstance(t, (types.NoneType, types.EllipsisType)):
        return 0
    if isinstance(t, types.Array) and isinstance(t.dtype, types.Boolean):
        return t.ndim
    return 1


def _part_lines(t, expr, axis, ndim):
    """Lines checking the index part ``expr`` of type ``t`` that selects
    from ``axis`` on (an int, or None where the axis is not known)."""
    if axis is None or axis >= ndim:
        return []
    # (the size read once into a local: reading ``x.shape[a]`` twice in
    # the test made a loop of reads 10x slower, measured)
    raise_ = f'raise OutOfBounds("index out of bounds for axis {axis}")'
    if isinstance(t, types.Integer):
        return [f"n = x.shape[{axis}]",
                f"if {expr} < -n or {expr} >= n:",
                f"    {raise_}"]
    if isinstance(t, types.Array) and isinstance(t.dtype, types.Boolean):
        return [line for k in range(min(t.ndim, ndim - axis)) for line in (
            f"if {expr}.shape[{k}] != x.shape[{axis + k}]:",
            f'    raise OutOfBounds("boolean index did not match indexed array along axis '
            f'{axis + k}")')]
    if isinstance(t, types.Array) and isinstance(t.dtype, types.Integer):
        return [f"n = x.shape[{axis}]",
                f"for i in {expr}.ravel():",
                f"    if i < -n or i >= n:",
                f"        {raise_}"]
    return []


_CHECKS = {}


def _checker(parts, ndim, tuple_index):
    """A jitable ``check(x, index)`` for an index whose parts have the
    types ``parts`` into an array of rank ``ndim``."""
    key = (tuple(parts), ndim, tuple_index)
    if key in _CHECKS:
        return _CHECKS[key]
    # local import: the overloads load when Numba first types a check, not with tangent_x
    from .overloads.assigned import assigned
    lines, axis = [], 0
    unwrapped = []      # (a tuple index) its parts, optional integers unwrapped
    for k, t in enumerate(parts):
        expr = f"index[{k}]" if tuple_index else "index"
        if tuple_index and isinstance(t, types.Optional) and isinstance(t.type, types.Integer):
            # an integer read from a tape that starts unassigned (a loop
            # counter pushed before its first assignment): its value, or
            # UnboundLocalError where it was never assigned
            lines.append(f"part{k} = assigned({expr})")
            expr, t = f"part{k}", t.type
        unwrapped.append(expr)
        if isinstance(t, types.EllipsisType):
            after = sum(_consumed(u) for u in parts[k + 1:])
            axis = ndim - after
            continue
        lines += _part_lines(t, expr, axis, ndim)
        axis += _consumed(t)
    result = "index"
    if tuple_index and any(e.startswith("part") for e in unwrapped):
        result = "(" + ", ".join(unwrapped) + ("," if len(unwrapped) == 1 else "") + ")"
    text = "def check(x, index):\n" + "".join(f"    {line}\n" for line in lines) + \
        f"    return {result}\n"
    namespace = {"OutOfBounds": OutOfBounds, "assigned": assigned}
    exec(compile(text, "<tangent_x index check>", "exec"), namespace)
    _CHECKS[key] = namespace["check"]
    return _CHECKS[key]


@overload(checked)
def _checked(x, index):
    if not isinstance(x, types.Array):
        return lambda x, index: index      # Numba checks a tuple's and a list's indices
    if isinstance(index, types.BaseTuple):
        return _checker(list(index), x.ndim, True)
    if isinstance(index, (types.Integer, types.Array)):
        return _checker([index], x.ndim, False)
    return lambda x, index: index       # Numba's indexing types (or refuses) the rest
