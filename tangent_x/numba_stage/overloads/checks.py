"""``assert``, ``raise`` and f-strings in compiled code: ``check``,
``check_lanes`` and ``formatted``.

A failing check raises the user's exception with the user's message: the
message is formatted by Python (an ``objmode`` block, entered only when the
check fails), so compiled code reports exactly what eager code reports."""
import numba
from numba import types
from numba.extending import overload, register_jitable

from ... import runtime
from ..kernels.common import is_array


def _raise_formatted(error, template, parts):
    runtime.check(False, error, template, *parts)


def _message_literal(template):
    if isinstance(template, (types.NoneType, types.Omitted)) or template is None:
        return True, None
    if isinstance(template, types.StringLiteral):
        return True, template.literal_value
    return False, None


def _truth_of(ok):
    """Python's ``bool(ok)`` for Numba: an array must hold one element."""
    if is_array(ok):
        def array_truth(ok):
            if ok.size != 1:
                raise ValueError("The truth value of an array with more than one element "
                                 "is ambiguous. Use a.any() or a.all()")
            return bool(ok.ravel()[0])
        return array_truth
    return lambda ok: bool(ok)


@overload(runtime.check, prefer_literal=True)
def _check(ok, error, template, *parts):
    cls = getattr(error, "exc_class", None)
    known, text = _message_literal(template)
    if cls is None or not known:
        return None
    truth = register_jitable(_truth_of(ok))

    def impl(ok, error, template, *parts):
        if not truth(ok):
            with numba.objmode():
                _raise_formatted(cls, text, parts)
    return impl


@overload(runtime.check_lanes, prefer_literal=True)
def _check_lanes(ok, error, template, batched, *parts):
    cls = getattr(error, "exc_class", None)
    known, text = _message_literal(template)
    if cls is None or not known:
        return None

    def impl(ok, error, template, batched, *parts):
        for k in range(ok.shape[0]):
            if not ok[k]:
                with numba.objmode():
                    runtime.check_lanes(ok, cls, text, batched, *parts)
    return impl


@overload(runtime.formatted, prefer_literal=True)
def _formatted(template, *parts):
    if not isinstance(template, types.StringLiteral):
        return None
    text = template.literal_value

    def impl(template, *parts):
        with numba.objmode(out="unicode_type"):
            out = text.format(*parts)
        return out
    return impl
