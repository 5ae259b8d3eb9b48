"""The verdicts of ``joins.observed`` on each compiled signature, and the
refusal they lead to.

A verdict is found once per signature, from Numba's typed IR of a
signature compiled in this process, and kept beside the module as JSON
(``_verdict_path``): a signature Numba loads from its disk cache keeps only
its annotation's text, so its verdict is read back from there; where it is
missing the signature is typed again, uncached.  ``check`` refuses a
compiled function whose verdict says a join shows, naming the user's
assignments (``compile_errors.join_error``) and the line where the join
would change a result.
"""
import hashlib
import json
import os
import tempfile

import numba

from .compile_errors import JitError, join_error
from .joins import observed

__all__ = ["check", "refusal", "verdicts"]


def check(compiled):
    """Refuse a compiled signature (a ``loading.Compiled``'s) that joins
    numbers of two types at an ``if`` where the widened type shows: its
    results would have other numbers or another dtype than NumPy's on one
    path.  Once refused, every call is (the signature stays compiled, and
    may come from the disk cache)."""
    dispatcher = compiled.dispatcher
    if compiled.join_refusal is None:
        seen, count = compiled.joins_checked
        for cres in list(dispatcher.overloads.values())[count if seen is dispatcher else 0:]:
            compiled.join_refusal = refusal(compiled, cres)
            if compiled.join_refusal is not None:
                break
    if compiled.join_refusal is not None:
        compiled.joins_checked = (None, 0)      # checked again: raised at every call
        error = JitError(*compiled.join_refusal)
        error.number_join = True      # jit(vmap) tries no other strategy for it
        raise error
    compiled.joins_checked = (dispatcher, len(dispatcher.overloads))


def refusal(compiled, cres):
    """(message, origin, hint) for the first join in ``cres`` (one compiled
    signature of ``compiled``) whose widening shows (``observed``), or
    None."""
    for var, a, b, line, shown in _verdict(compiled, cres):
        where = _user_line(compiled, shown)
        shows = "" if where is None else (f"; here the joined {_plain(b)} would change what "
                                          f"{where.short()} gives: {where.text.strip()}")
        message = (f"Cannot unify {_plain(a)} and {_plain(b)} for '{var}.1', "
                   f"defined at {compiled.path} ({line})")
        joined = join_error(message, compiled, numbers=True) \
            if compiled.linemap.get(line) is not None else None
        if joined is not None:
            message, origin, hint = joined
            return message + shows, origin, hint
        # a variable of the derivative's or of the rewriting's own: its line
        origin = _user_line(compiled, line) or compiled.origin
        return (f"Numba cannot compile this: a value that is {_plain(a)} on one path and "
                f"{_plain(b)} on another is joined into one {_plain(b)} variable, and "
                f"NumPy's result depends on the path taken{shows}", origin,
                "give it one dtype on every path: cast where it is made "
                "(x.astype(np.float64), np.float32(...)), or run without jit "
                "(with tx.disable_jit(): ...)")
    return None


def _user_line(compiled, line):
    """The user's line of the numba stage's ``line``, or of the nearest
    line before it that has one (a return ending the function has no line
    of its own), or None."""
    mapped = [n for n in compiled.linemap if n <= line and compiled.linemap[n]]
    return compiled.linemap[max(mapped)] if mapped else None


def verdicts(compiled):
    """The ``observed`` entries of every signature of ``compiled``."""
    return [entry for cres in list(compiled.dispatcher.overloads.values())
            for entry in _verdict(compiled, cres)]


def _verdict(compiled, cres):
    annotation = getattr(cres, "type_annotation", None)
    path = _verdict_path(compiled, cres)
    tagged = {var for _, _, var in getattr(compiled, "tags", ())}
    cast = getattr(compiled, "cast_results", False)
    if getattr(annotation, "blocks", None) is not None:
        found = observed(annotation.blocks, annotation.typemap, tagged, cast)
        _write(path, found)
        return found
    try:
        with open(path, encoding="utf-8") as f:
            return [tuple(item) for item in json.load(f)]
    except (OSError, ValueError):
        pass
    # loaded from Numba's disk cache without a verdict beside it: typed again
    again = numba.njit(cache=False)(compiled.dispatcher.py_func)
    again.compile(cres.signature.args)
    annotation = again.overloads[tuple(cres.signature.args)].type_annotation
    found = observed(annotation.blocks, annotation.typemap, tagged, cast)
    _write(path, found)
    return found


def _verdict_path(compiled, cres):
    key = f"{cres.signature} {getattr(compiled, 'cast_results', False)}"
    signature = hashlib.sha256(key.encode()).hexdigest()[:16]
    return f"{compiled.path}.joins-{signature}.json"


def _write(path, found):
    try:
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump([list(item) for item in found], f)
        os.replace(tmp, path)
    except OSError:
        pass


def _plain(numba_type):
    if numba_type.startswith("OptionalType(") and numba_type.endswith(")"):
        numba_type = numba_type[len("OptionalType("):-1]      # a loop's ``return`` value
    for dtype in ("float64", "float32", "float16", "int64", "int32", "int16", "int8",
                  "uint64", "uint32", "uint16", "uint8", "complex128", "complex64", "bool"):
        if numba_type == dtype:
            return dtype
    if numba_type.startswith("Literal[int]"):
        return "int64"
    if numba_type.startswith("Literal[bool]"):
        return "bool"
    return numba_type
