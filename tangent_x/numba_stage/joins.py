"""Joins Numba widens without a word: a variable holding numbers of two
types on the two sides of an ``if``.

Numba refuses a variable holding arrays of two dtypes or ranks (see
``compile_errors``), but numbers of two types it unifies silently: ``a = 2``
under an ``if`` and ``a = x[0] * 1.5`` under its ``else`` make ``a`` a
float64 on both paths, where NumPy keeps the int on its path; a float32
value on one path and a float64 one on the other become float64.  The
compiled function would give another dtype than the plain one, so such a
join is refused at the user's assignments (``refusal``), as Numba's own
refusals are.

Read from Numba's type annotation of each compiled signature (its text,
which a signature loaded from the disk cache keeps too): once Numba has
removed its phi nodes, a join is a copy ``a.2 = a.1`` at the end of each
path whose two sides have different types.  Joins at a loop's head (a
counter ``s = 0`` that the loop makes ``s = s + x[i]``), and joins of a
variable copied inside a loop (the join after a ``while``, whose guard
``if`` skips it), are widened, as
arrays are (``compile_errors.widened_text``): NumPy's value has the wider
type once the loop has run.  A derivative's variable (``_bar``, ``_dot``:
the cotangent of an integer loop counter is a zero of it) and a Python
number spelled ``weak_number`` (which unifies as NumPy promotes) are left.
"""
import ast
import re

import numpy as np

from .compile_errors import join_error

__all__ = ["silent_joins", "refusal"]

_STATEMENT = re.compile(r"^\s*#\s+([\w.$]+) = (.+?)  :: (.+?)\s*$")
_COPY = re.compile(r"^[\w.$]+$")
_LABEL = re.compile(r"^\s*#\s+label (\d+)\s*$")
_JUMP = re.compile(r"^\s*#\s+(?:jump (\d+)|branch [\w.$]+, (\d+), (\d+))\s*$")
_LINE = re.compile(r"^\s*# --- LINE (\d+) --- ")
_LITERAL = re.compile(r"Literal\[(int|bool)\]\(.*\)")
_DERIVATIVE = re.compile(r"_(bar|dot)(_\d+)*$")


def _number_dtype(numba_type):
    """The dtype of a Numba number type's text (``float32``,
    ``Literal[int](2)``), or None for anything else (arrays, a Python
    number spelled weak_number, optional values)."""
    m = _LITERAL.fullmatch(numba_type)
    if m is not None:
        return np.dtype(np.int64 if m.group(1) == "int" else np.bool_)
    if re.fullmatch(r"(float|int|uint|complex)\d+|bool", numba_type):
        return np.dtype(numba_type)
    return None


def silent_joins(annotation, loop_lines=frozenset()):
    """[(variable, type of one side, type of the join, line)] for each join
    of numbers of two types at an ``if`` in Numba's type annotation text
    ``annotation`` (a signature's ``type_annotation``, as text); ``line``:
    the compiled module's line of the side's assignment."""
    types, copies, blocks = {}, [], {}
    label, line, jumps = None, None, []
    for text in annotation.split("\n"):
        m = _LINE.match(text)
        if m is not None:
            line = int(m.group(1))
            continue
        m = _LABEL.match(text)
        if m is not None:
            label = int(m.group(1))
            continue
        m = _JUMP.match(text)
        if m is not None and label is not None:
            targets = [int(t) for t in m.groups() if t is not None]
            blocks[label] = targets
            jumps += [(label, t) for t in targets]
            continue
        m = _STATEMENT.match(text)
        if m is None:
            continue
        target, value, type_ = m.groups()
        types.setdefault(target, type_)
        if _COPY.match(value):
            copies.append((target, value, label, line))
    heads = {t for source, t in jumps if t <= source}     # a loop's head: a jump back
    looped = set()
    for target, value, label, line in copies:
        # a copy on the way back to a loop's head, or on a line of a loop's
        # body (``loop_lines``; a ``while`` is a guard ``if`` and a loop
        # testing at its bottom: the join after it meets the value from
        # before the loop and the one from its last turn; the annotation's
        # text is ordered by line, so its labels do not place every jump)
        if any(t in heads for t in blocks.get(label, ())) or line in loop_lines:
            looped.add(_base(target))
    found = []
    for target, value, label, line in copies:
        base = _base(target)
        if base in looped or base.startswith("$") or _DERIVATIVE.search(base):
            continue
        a, b = _number_dtype(types.get(value, "")), _number_dtype(types.get(target, ""))
        if a is None or b is None or a == b:
            continue
        found.append((base, types[value], types[target], line))
    return found


def _base(name):
    return name.split(".")[0]


def refusal(compiled, cres):
    """(message, origin, hint) for the first silent join (``silent_joins``)
    of a user's variable in ``cres``, one compiled signature of
    ``compiled``, or None."""
    annotation = getattr(cres, "type_annotation", None)
    if annotation is None:
        return None
    for var, a, b, line in silent_joins(str(annotation), _loop_lines(compiled.path)):
        if line is None or compiled.linemap.get(line) is None:
            continue
        message = (f"Cannot unify {_plain(a)} and {_plain(b)} for '{var}.1', "
                   f"defined at {compiled.path} ({line})")
        joined = join_error(message, compiled, numbers=True)
        if joined is not None:
            return joined
    return None


def _loop_lines(path):
    """The lines of the compiled module ``path`` inside a ``for`` or
    ``while`` statement."""
    try:
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read())
    except (OSError, SyntaxError, ValueError, TypeError):
        return frozenset()
    lines = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.For, ast.While)):
            lines.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return frozenset(lines)


def _plain(numba_type):
    dtype = _number_dtype(numba_type)
    return numba_type if dtype is None else dtype.name
