"""The exceptions of specialisation: the error the user sees, and the
signals by which one part of the walk tells another to take another way."""
from ...errors import TransformError


class SpecializationError(TransformError):
    """Code that cannot be specialised for Numba (located at the user's line)."""


class EmptyLoopError(TransformError):
    """Raised by compiled code: a loop whose first iteration was peeled
    (``Loops.peel``) ran no iteration.  Its one argument is the whole
    located message (compiled code raises with constant arguments)."""

    def __init__(self, text):
        super().__init__(text)


class NeedUnroll(Exception):
    """A container was indexed by a run-time integer: the loop producing it
    must be unrolled (its trip count is then static)."""

    def __init__(self, name, where=None):
        self.name = name
        self.where = where


class LoopExit(Exception):
    pass


class StaticBreak(Exception):
    """A ``break`` reached in a loop being unrolled (``unroll_while``)."""


class NoStaticUnroll(Exception):
    """A ``while`` loop cannot be unrolled: it is compiled as a loop."""


class DeadPath(Exception):
    """The rest of this path raises when it runs (a check known to fail,
    emitted as a ``raise``): an ``if`` on a run-time test keeps the other
    path's values (see ``Joins.stmt_If``)."""
