"""What every module of Numba implementations shares: the jit options of an
implementation cached on disk, and tests on Numba types."""
from numba import types
from numba.core.errors import TypingError


# Implementations are compiled once per type signature and cached on disk
# next to the module defining them, so that a new user function's first compile reuses
# them (a process starting with an empty generated-code cache compiles only
# the numba stage itself).
CACHED = {"cache": True}

# The start of a refusal an overload raises as a TypingError for the user
# (compile_errors shows its text and hint as they are): "REFUSES what;
# hint: what to do".
REFUSES = "tangent_x cannot compile this: "
HINT = "; hint: "


def is_array(t):
    """``t`` is the Numba type of an array."""
    return isinstance(t, types.Array)


def is_none(t):
    """``t`` is None, the type of None, or an omitted argument (of any default)."""
    return t is None or isinstance(t, (types.NoneType, types.Omitted))


def count_axes(axis, ndim):
    """How many axes the ``axis`` argument (of Numba type) names, of ``ndim``."""
    if is_none(axis):
        return ndim
    if isinstance(axis, types.Integer):
        return 1
    if isinstance(axis, types.BaseTuple):
        return len(axis)
    raise TypingError(f"axis must be an int or a tuple of ints, not {axis}")


def is_none_value(t):
    """``t`` is None, the type of None, or an omitted argument whose default
    is None (``is_none`` takes any omitted argument)."""
    return t is None or isinstance(t, (types.NoneType, types.Omitted)) and (
        not isinstance(t, types.Omitted) or t.value is None)
