"""Tapes kept with a size (``specialize.Specializer.sizes``): ``grown`` and
``NumberTape``, a tape of numbers as a NumPy array of their dtype."""
import numpy as np
from numba import types
from numba.core.datamodel.models import ArrayModel
from numba.core.datamodel.registry import register_default
from numba.core.imputils import impl_ret_borrowed
from numba.core.registry import cpu_target
from numba.core.errors import TypingError
from numba.extending import intrinsic, overload, register_jitable
from numba.np.numpy_support import as_dtype

from ..kernels.common import CACHED
from .assigned import optional_value
from .promotion import WeakNumber


def grown(tape, item):
    """The tape (``None`` before its first push) with room for one item
    more, which the caller then writes at the tape's size:

        if y_tape is None or y_tape_size == len(y_tape):
            y_tape = grown(y_tape, y)
        y_tape[y_tape_size] = y

    The tape starts as None because its items' type is known only when
    Numba types the push; it is never shrunk, so popping (``y_tape[size]``
    after lowering the size) and pushing again reuse its memory, and a push
    with room is a store, with no call and no reference counting.

    Why not a Numba list throughout: for a number pushed per iteration of
    a short loop, the list's allocations and appends cost as much as the
    arithmetic (Newton's sqrt: 250 ns with a list, 215 ns with an array,
    the hand-written gradient 195 ns).  So compiled, numbers (and bools)
    go in a NumPy array of their dtype, 16 items at first, doubled when
    full; anything else (arrays, shape tuples, values that may be None) in
    a Numba list, appended to.  This eager form is the list form."""
    if tape is None:
        tape = []
    tape.append(item)
    return tape


_TAPE_START = 16          # items of a number tape's first allocation


class NumberTape(types.Array):
    """Numba's type of a tape of numbers: a 1-D C array of their dtype,
    whose type unifies with the tape type of another dtype (to the common
    dtype) as Numba's list types do.  Numba types a loop in rounds, and a
    carried variable may first be typed narrower than it ends up (``acc =
    0`` before the loop, ``acc = acc + x`` in it: int64, then float64), so
    a push is typed first with the narrow item, then with the final one;
    plain array types of two dtypes would not unify and the function would
    not compile.  No value of the narrow type exists at run time: code is
    generated from the final types only."""

    def __init__(self, dtype):
        super().__init__(dtype, 1, "C", name=f"tape({dtype})")

    def unify(self, typingctx, other):
        if isinstance(other, NumberTape):
            dtype = typingctx.unify_pairs(self.dtype, other.dtype)
            if _number_tape(dtype):
                return NumberTape(dtype)
        return None


register_default(NumberTape)(ArrayModel)


@intrinsic
def _new_tape(typingctx, dtype, size):
    """An uninitialised tape of ``size`` items of the NumPy scalar type
    ``dtype``.  Lowered straight to Numba's array allocation rather than
    through ``np.empty``, whose overload costs ~0.1 s of compiling in every
    new process (it is not cached on disk), for a function that may
    otherwise never allocate an array."""
    item = dtype.instance_type

    def codegen(context, builder, signature, args):
        from numba.core.imputils import impl_ret_new_ref
        from numba.np.arrayobj import _empty_nd_impl
        n = context.cast(builder, args[1], signature.args[1], types.intp)
        array = _empty_nd_impl(context, builder, types.Array(item, 1, "C"), [n])
        return impl_ret_new_ref(context, builder, signature.return_type, array._getvalue())
    return NumberTape(item)(dtype, size), codegen


@intrinsic
def _any_layout(typingctx, array):
    """``array`` typed as an array of any layout (the same array)."""
    def codegen(context, builder, signature, args):
        value = context.cast(builder, args[0], signature.args[0], signature.return_type)
        return impl_ret_borrowed(context, builder, signature.return_type, value)
    return array.copy(layout="A")(array), codegen


def _number_tape(item):
    return isinstance(item, (types.Number, types.Boolean))


@register_jitable
def _same(value):
    return value


@overload(grown, inline="always", jit_options=CACHED)
def _grown(tape, item):
    item = types.unliteral(item)
    if isinstance(item, WeakNumber):
        # a Python number (a loop's variable that starts as one, then
        # meets float32 arrays): a number tape of its type, which later
        # pushes of the other type widen (fuzz seed 470259)
        item = item.number
    held = tape.type if isinstance(tape, types.Optional) else tape
    if isinstance(item, types.NoneType):
        # typed before the loop's assignments are (a variable None before
        # the loop): resolved once they are (an optional item, kept in a list)
        return None
    # the tape when it is not None, of its plain type
    unwrap = optional_value if isinstance(tape, types.Optional) else _same
    start = _TAPE_START
    if _number_tape(item):
        if isinstance(held, types.List):
            raise TypingError(f"a tape of {held.dtype} is pushed a {item}")
        if isinstance(tape, types.NoneType):      # typed before the loop's pushes are
            dtype = as_dtype(item).type
            return lambda tape, item: _new_tape(dtype, start)
        # The items kept in the common dtype of the tape's and the item's:
        # a round of typing may see an item narrower or wider than the
        # tape's (see NumberTape), and pushes of two types at two places
        # make one tape of the common type, as a Numba list would.
        dtype = np.promote_types(as_dtype(held.dtype), as_dtype(item)).type

        def number(tape, item):
            if tape is None:
                return _new_tape(dtype, start)
            old = unwrap(tape)
            out = _new_tape(dtype, 2 * len(old))     # (a tape has 16 items or more)
            for k in range(len(old)):
                out[k] = old[k]
            return out
        return number
    if isinstance(held, NumberTape):
        raise TypingError(f"a tape of {held.dtype} is pushed a {item}")
    if isinstance(item, types.Array) and item.layout != "A":
        # A list of arrays holds them as any layout: a variable pushed at two
        # places may be a C array at one and a view at the other, and Numba
        # unifies list(C) with list(A) but cannot cast one list to the other
        # (an AssertionError in its lowering: fuzz seed 320049)
        if isinstance(tape, types.NoneType):
            return lambda tape, item: [_any_layout(item)]

        def listed_any(tape, item):
            if tape is None:
                return [_any_layout(item)]
            out = unwrap(tape)
            out.append(item)
            return out
        return listed_any
    # The list holds the common type of its items and the pushed one: a
    # round of typing may see the tape narrower or wider than the item (a
    # variable None before a loop and a number after it: float64, then
    # optional(float64)), and Numba unifies the two list types but cannot
    # cast one list to the other (an AssertionError in its lowering: fuzz
    # seed 670160), so every list returned here is of the common type.
    common = item
    if isinstance(held, types.List):
        common = cpu_target.typing_context.unify_pairs(held.dtype, item) or item
    if isinstance(tape, types.NoneType):
        return lambda tape, item: [_as_item(item, common)]
    if not isinstance(held, types.List) or held.dtype == common:
        def listed(tape, item):
            if tape is None:
                return [_as_item(item, common)]
            out = unwrap(tape)
            out.append(_as_item(item, common))
            return out
        return listed

    def listed_wider(tape, item):        # the old items, widened
        out = [_as_item(item, common)]
        if tape is None:
            return out
        old = unwrap(tape)
        out.clear()
        for k in range(len(old)):
            out.append(_as_item(old[k], common))
        out.append(_as_item(item, common))
        return out
    return listed_wider


@intrinsic
def _as_item(typingctx, value, typ):
    """``value`` as the type ``typ`` (a list's common item type)."""
    target = typ.instance_type

    def codegen(context, builder, signature, args):
        result = context.cast(builder, args[0], signature.args[0], target)
        return impl_ret_borrowed(context, builder, target, result)
    return target(value, typ), codegen
