"""``assigned``: a variable first assigned in a loop, read after it (see
``numba_stage.optional``): its value, or UnboundLocalError when the path
taken never assigned it."""
from numba import types
from numba.core.imputils import impl_ret_borrowed
from numba.extending import intrinsic, overload

from ... import runtime
from ..kernels.common import CACHED


def assigned(value):
    """``value``, a variable the code reads after a loop that assigns it
    (see numba_stage/optional.py); eagerly the python stage's ``unbound`` placeholder
    raises by itself, so this is the value."""
    return value


@intrinsic
def optional_value(typingctx, value):
    """The value inside an optional one (Numba's own cast, which raises
    TypeError on None: ``assigned`` checks first)."""
    if not isinstance(value, types.Optional):
        return None

    def codegen(context, builder, signature, args):
        inner = context.cast(builder, args[0], signature.args[0], signature.return_type)
        # the cast borrows the optional's reference; a result is a new one
        # (without this an array is freed twice: heap corruption)
        return impl_ret_borrowed(context, builder, signature.return_type, inner)
    return value.type(value), codegen


# helpers whose Numba forms take an optional (maybe never assigned) value as it is
TAKES_OPTIONAL = (runtime.zeros_like,)


@overload(assigned, jit_options=CACHED)
def _assigned(value):
    if isinstance(value, types.NoneType):
        # typed before the loop's assignments are: resolved once they are
        return None
    if isinstance(value, types.Optional):
        def impl(value):
            if value is None:
                raise UnboundLocalError("a local variable is used but was not assigned "
                                        "on the path the code took")
            return optional_value(value)
        return impl
    return lambda value: value
