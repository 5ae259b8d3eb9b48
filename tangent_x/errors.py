"""Errors raised for code tangent_x cannot transform.

Every message names the user's file and line, the construct, and what to do
instead: a user should never have to read a traceback into the library to
learn what went wrong in *their* code.
"""


class TransformError(TypeError):
    """Code that cannot be transformed.

    A subclass of TypeError, as the API promises, so code that already
    guards JAX transforms with ``except TypeError`` keeps working.
    """

    def __init__(self, message, origin=None, hint=None):
        self.origin = origin
        self.hint = hint
        self.bare_message = message
        text = message
        if origin is not None:
            text = f"{origin.where()}: {message}"
        if hint:
            text = f"{text}; {hint}"
        super().__init__(text)


def _inside_library(module):
    package = __name__.partition(".")[0]
    return module == package or module.startswith(package + ".")


class Origin:
    """Where a piece of generated code comes from: the user's file:line."""

    __slots__ = ("filename", "lineno", "text", "func")

    def __init__(self, filename, lineno, text="", func=""):
        self.filename = filename
        self.lineno = lineno
        self.text = text
        self.func = func

    def where(self):
        return f"{self.filename}:{self.lineno}"

    def short(self):
        import os
        return f"{os.path.basename(self.filename)}:{self.lineno}"

    def __repr__(self):
        return f"Origin({self.filename!r}, {self.lineno})"


def call_site():
    """Where the user called into tangent_x (for errors with no better
    place): the first frame, from the caller's caller outwards, that is not
    tangent_x's own code."""
    import linecache
    import sys
    frame = sys._getframe(2)
    while frame is not None and _inside_library(frame.f_globals.get("__name__", "")):
        frame = frame.f_back
    if frame is None:
        return None
    code = frame.f_code
    text = linecache.getline(code.co_filename, frame.f_lineno).strip()
    return Origin(code.co_filename, frame.f_lineno, text)
