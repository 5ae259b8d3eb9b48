"""NumPy's dtype promotion in compiled code: Python numbers next to narrow
arrays (``weak_scalar``, NEP 50; see ``numba_stage.weak_scalars``), a Python
number joined with a value at an ``if`` (``weak_number``), arrays widened
to a variable's common dtype (``widen_dtype``) and the dtype a returned
value had on its path (``dtype_code``)."""
import operator

import numpy as np
from numba import types
from numba.core import typeconv
from numba.core.errors import TypingError
from numba.core.datamodel import models
from numba.core.datamodel.registry import register_default
from numba.core.imputils import lower_cast
from numba.extending import intrinsic, overload, type_callable, lower_builtin
from numba.np.numpy_support import as_dtype, from_dtype

from ..kernels.common import CACHED, HINT, REFUSES, is_array
from ..kernels.dtypes import numpy_dtype, result_dtype
from .lanes import WeakLanes, as_weak_lanes


def weak_scalar(value, *likes):
    """The Python number ``value`` as NumPy types it in an operation whose
    other operands promote to the type of ``likes`` (NEP 50: next to a
    float32 array ``0.5`` is a float32).  Eagerly NumPy does that itself,
    so this is ``value``; compiled, a cast chosen when Numba types the call
    (see weak_scalars)."""
    return value


def _weak_type(value, like):
    """The Numba type NEP 50 gives the number type ``value`` next to an
    operand of (scalar) type ``like``, or None for Numba's own promotion."""
    kinds = (types.Boolean, types.Integer, types.Float, types.Complex)
    rank = next((i for i, k in enumerate(kinds) if isinstance(value, k)), None)
    like_rank = next((i for i, k in enumerate(kinds) if isinstance(like, k)), None)
    if rank is None or like_rank is None or like_rank == 0:
        return None
    if rank <= like_rank:
        return like                          # the number takes the operand's type
    if like_rank == 2 and rank == 3:         # a complex number next to float32
        return types.complex64 if like.bitwidth <= 32 else None
    return None


@overload(weak_scalar, jit_options=CACHED)
def _weak_scalar(value, *likes):
    if isinstance(value, types.Array):
        if not likes:
            # weak_scalar(broadcast_lanes(0.5, n)): a Python number's lanes
            # (weak_scalars tells them apart from a NumPy scalar's)
            return lambda value, *likes: as_weak_lanes(value)
        if not isinstance(value, WeakLanes):
            return lambda value, *likes: value       # a strong array: as it is
        return _weak_lanes_scalar(value, likes)
    if likes and isinstance(value, (types.Number, types.Literal)) and \
            all(isinstance(like, WeakNumber) for like in likes):
        # next to Python numbers only (a carry started as one: ``0.5 * s``
        # after ``s = weak_number(0.0)``) a Python number stays weak, as in
        # NumPy, so the loop's other operands decide its type
        return lambda value, *likes: weak_number(value)
    likes = [like for like in likes if not isinstance(like, WeakNumber)]
    dtypes = []
    for like in likes:
        dtype = like.dtype if isinstance(like, types.Array) else like
        if not isinstance(dtype, types.Number) and not isinstance(dtype, types.Boolean):
            return lambda value, *likes: value
        dtypes.append(as_dtype(dtype))
    promoted = from_dtype(np.result_type(*dtypes)) if dtypes else None
    target = _weak_type(value, promoted)
    if target is None or target == value:
        return lambda value, *likes: value
    cast = as_dtype(target).type
    return lambda value, *likes: cast(value)


def weak_lanes_of(value, *operands):
    """``value``, arithmetic among ``operands`` (vmap's lanes) and Python
    numbers: eagerly the result itself (``lanes.WeakLanes`` arithmetic
    stays weak); compiled, typed ``WeakLanes`` when every operand is (the
    lanes of a Python number scaled, ``0.5 * acc`` with ``acc =
    broadcast_lanes(0.0, n)``), so that the next array it meets decides its
    dtype as NumPy's would (see weak_scalars)."""
    return value


@overload(weak_lanes_of, jit_options=CACHED)
def _weak_lanes_of(value, *operands):
    if isinstance(value, types.Array) and not isinstance(value, WeakLanes) and operands and \
            all(isinstance(o, WeakLanes) or isinstance(o, (types.Number, WeakNumber))
                for o in operands) and any(isinstance(o, WeakLanes) for o in operands):
        return lambda value, *operands: as_weak_lanes(value)
    return lambda value, *operands: value


def widen_dtype(x, dtype):
    """``x`` as an array of ``dtype`` when it is an array of another dtype,
    else ``x``: put on every assignment of a variable whose arrays NumPy
    gives two dtypes (``acc = x`` float32 before a loop, float64 after
    ``acc = acc + c`` with a float64 ``c`` in it), which Numba cannot type
    as one (see ``Jitted._widened``)."""
    if isinstance(x, np.ndarray) and x.dtype != dtype:
        return x.astype(dtype)
    return x


@overload(widen_dtype, jit_options=CACHED)
def _widen_dtype(x, dtype):
    target = getattr(dtype, "instance_type", None)
    if not is_array(x) or target is None or x.dtype == target:
        return lambda x, dtype: x
    return lambda x, dtype: x.astype(dtype)


# The dtypes ``dtype_code`` tells apart (its code: the index here); a
# result of any other is left as compiled (code -1).
DTYPE_CODES = tuple(np.dtype(d) for d in ("float64", "float32", "float16", "complex128",
                                          "complex64"))


def dtype_code(x):
    """The index in ``DTYPE_CODES`` of ``x``'s dtype (-1: another), fixed
    when Numba types the call: put beside each assignment of a result that
    holds float32 numbers on one path and float64 ones on another, which
    compiled code joins into float64 (see ``numba_stage.result_dtypes``)."""
    dtype = np.asarray(x).dtype
    return DTYPE_CODES.index(dtype) if dtype in DTYPE_CODES else -1


@overload(dtype_code, jit_options=CACHED)
def _dtype_code(x):
    ty = x.dtype if isinstance(x, types.Array) else getattr(x, "number", x)  # a WeakNumber's
    if isinstance(ty, types.Literal):
        ty = getattr(ty, "literal_type", ty)
    try:
        dtype = as_dtype(ty)
    except Exception:               # (None: Numba's NotImplementedError of its own)
        dtype = None
    code = DTYPE_CODES.index(dtype) if dtype in DTYPE_CODES else -1
    return lambda x: code


def _weak_lanes_scalar(value, likes):
    """``weak_scalar`` of ``WeakLanes``: the lanes cast to the dtype NumPy
    gives their numbers next to ``likes`` (as ``lanes.WeakLanes`` does)."""
    dtypes = []
    for like in likes:
        dtype = like.dtype if isinstance(like, types.Array) else like
        if not isinstance(dtype, (types.Number, types.Boolean)):
            return lambda value, *likes: value
        dtypes.append(as_dtype(dtype))
    promoted = from_dtype(np.result_type(*dtypes)) if dtypes else None
    target = _weak_type(value.dtype, promoted)
    if target is None or target == value.dtype:
        return lambda value, *likes: value
    dtype = as_dtype(target)
    return lambda value, *likes: value.astype(dtype)


def weak_number(value):
    """The Python number ``value`` assigned where an ``if`` joins it with
    another value (``y = np.sum(x)`` on one path, ``y = 0.5`` on the other):
    eagerly the number itself; compiled, a ``WeakNumber``, which unifies with
    the other path's number type as NumPy would promote them (a float32 sum
    keeps ``y`` float32, where Numba's float64 literal made it float64)."""
    return value


class WeakNumber(types.Type):
    """Numba's type of ``weak_number(v)``: the number type ``number`` of
    ``v`` (float64, int64, complex128), weak in NumPy's sense where it
    unifies with another number type (see ``_weak_type``)."""

    def __init__(self, number):
        self.number = number
        super().__init__(name=f"{number} (a Python number)")

    def unify(self, typingctx, other):
        if isinstance(other, WeakNumber):
            return typingctx.unify_pairs(self.number, other.number)
        if isinstance(other, (types.Number, types.Boolean)):
            target = _weak_type(self.number, other)
            return target if target is not None else typingctx.unify_pairs(self.number, other)
        return None

    def can_convert_to(self, typingctx, other):
        if other == self.number:
            return typeconv.Conversion.promote
        if isinstance(other, (types.Number, types.Boolean)):
            if _weak_type(self.number, other) == other:
                # NumPy gives the number the other operand's type: the
                # arithmetic of that type is the best match (``s + v`` in
                # a loop that started ``s = weak_number(0)``: float32 for a
                # float32 ``v``, not Numba's float64 of int64 and float32)
                return typeconv.Conversion.promote
            return typingctx.can_convert(self.number, other)
        return None


@register_default(WeakNumber)
class _WeakNumberModel(models.PrimitiveModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, dmm.lookup(fe_type.number).get_value_type())


@type_callable(weak_number)
def _type_weak_number(context):
    def typer(value):
        if isinstance(value, (types.Integer, types.Float, types.Complex)) and \
                not isinstance(value, types.Literal):
            return WeakNumber(value)
        if isinstance(value, types.IntegerLiteral):
            return WeakNumber(value.literal_type)
        if isinstance(value, types.Literal) and isinstance(
                getattr(value, "literal_type", None), (types.Float, types.Complex)):
            return WeakNumber(value.literal_type)
        return None
    return typer


@lower_builtin(weak_number, types.Number)
@lower_builtin(weak_number, types.Literal)
def _lower_weak_number(context, builder, sig, args):
    return context.cast(builder, args[0], sig.args[0], sig.return_type.number)


@lower_cast(WeakNumber, types.Number)
@lower_cast(WeakNumber, types.Boolean)
def _weak_number_to_number(context, builder, fromty, toty, val):
    return context.cast(builder, val, fromty.number, toty)


@intrinsic
def _weak_as(typingctx, value, like):
    """The ``WeakNumber`` ``value`` as the number NumPy makes it next to
    ``like`` (an array: a Python 0 next to float32 is a float32 0)."""
    if not isinstance(value, WeakNumber):
        return None
    dtype = like.dtype if isinstance(like, types.Array) else like
    target = _weak_type(value.number, dtype) or value.number

    def codegen(context, builder, sig, args):
        return context.cast(builder, args[0], value.number, target)
    return target(value, like), codegen


def _weak_array_arithmetic(op):
    """``op`` of a ``WeakNumber`` and an array (a loop carry started as a
    Python number meets an array: ``acc = 0`` ... ``acc = acc + x``), with
    the number as NumPy types it next to the array.  The carry itself
    stays refused (a number on one path, an array on the other)."""
    @overload(op, jit_options=CACHED)
    def _op(a, b):
        if isinstance(a, WeakNumber) and isinstance(b, WeakNumber):
            # two Python numbers give a Python number: still weak
            return lambda a, b: weak_number(op(_weak_as(a, a), _weak_as(b, b)))
        if isinstance(a, WeakNumber) and isinstance(b, types.Array):
            return lambda a, b: op(_weak_as(a, b), b)
        if isinstance(b, WeakNumber) and isinstance(a, types.Array):
            return lambda a, b: op(a, _weak_as(b, a))
        return None


for _arithmetic in (operator.add, operator.sub, operator.mul, operator.truediv, operator.pow):
    _weak_array_arithmetic(_arithmetic)


def _weak_ufunc(ufunc):
    """A NumPy ufunc of a ``WeakNumber`` (``np.sin(b)`` of a Python number a
    loop carries: fuzz seed 570052), with the number as NumPy takes it: by
    itself, its own type (float64 for a float); next to another operand,
    that operand's type where NumPy gives it that (``_weak_as``).  Numba's
    ufuncs know numbers and arrays only."""
    if ufunc.nin == 1:
        @overload(ufunc, jit_options=CACHED)
        def _unary(a):
            if isinstance(a, WeakNumber):
                return lambda a: ufunc(_weak_as(a, a))
            return None
    elif ufunc.nin == 2:
        @overload(ufunc, jit_options=CACHED)
        def _binary(a, b):
            if isinstance(a, WeakNumber) and isinstance(b, WeakNumber):
                return lambda a, b: ufunc(_weak_as(a, a), _weak_as(b, b))
            if isinstance(a, WeakNumber):
                return lambda a, b: ufunc(_weak_as(a, b), b)
            if isinstance(b, WeakNumber):
                return lambda a, b: ufunc(a, _weak_as(b, a))
            return None


def _register_weak_ufuncs():
    from numba.np.ufunc_db import get_ufuncs   # (Numba's own list of the ufuncs it compiles)
    for ufunc in get_ufuncs():
        if isinstance(ufunc, np.ufunc) and ufunc.nin in (1, 2) and ufunc.nout == 1:
            _weak_ufunc(ufunc)


_register_weak_ufuncs()


def promoted(x, other):
    """``x`` cast to the dtype NumPy gives ``x`` and ``other`` together, where
    Numba's arithmetic would give another (an integer array next to a
    float32 one: Numba computes in float32, NumPy in float64); else ``x``.
    Eagerly NumPy promotes by itself, so this is ``x``."""
    return x


@overload(promoted, jit_options=CACHED)
def _promoted(x, other):
    own, dtype = numpy_dtype(x), result_dtype(x, other)
    if own is None or dtype is None or own == dtype or own.kind not in "biu" or \
            dtype.kind not in "fc":
        return lambda x, other: x
    cast = dtype.type
    if isinstance(x, types.Array):
        return lambda x, other: x.astype(cast)
    return lambda x, other: cast(x)


def float_operand(x):
    """``x`` as NumPy's float-only ufuncs compute it (``np.exp(x)``): an
    int16 or uint16 value in float32 (Numba would take float64); an int8,
    uint8 or bool value NumPy computes in float16, which Numba cannot, so
    compiling refuses it.  Eagerly ``x`` (see narrow_ints)."""
    return x


@overload(float_operand, jit_options=CACHED)
def _float_operand(x):
    dtype = numpy_dtype(x)
    if dtype is None or dtype.kind not in "biu" or dtype.itemsize >= 4:
        return lambda x: x
    if dtype.itemsize == 1:
        raise TypingError(
            f"{REFUSES}NumPy computes this function of {dtype.name} values in float16, "
            f"which compiled code has no arithmetic for{HINT}cast them first "
            f"(x.astype(np.float32) gives float32 results), or run without jit "
            f"(with tx.disable_jit(): ...)")
    if isinstance(x, types.Array):
        return lambda x: x.astype(np.float32)
    return lambda x: np.float32(x)


def division_operand(x, other):
    """``x`` cast to float64 where it and ``other`` are both integers (or
    bools): NumPy divides integers in float64, Numba int16 and uint8 ones in
    float32.  Eagerly ``x`` (see narrow_ints)."""
    return x


@overload(division_operand, jit_options=CACHED)
def _division_operand(x, other):
    own, theirs = numpy_dtype(x), numpy_dtype(other)
    if own is None or theirs is None or own.kind not in "biu" or theirs.kind not in "biu":
        return lambda x, other: x
    if isinstance(x, types.Array):
        return lambda x, other: x.astype(np.float64)
    return lambda x, other: np.float64(x)
