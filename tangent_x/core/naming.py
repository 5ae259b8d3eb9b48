"""Readable, collision-free names for generated code.

Names are derived from the user's variables (``h``, ``h_1``, ``h_bar``) so
generated code reads like the original; the namer only guarantees that a
fresh name never shadows anything already in use.  This is the one place
that says how a variable's cotangent, tangent and tape are named.
"""
import functools
import keyword
import re

import gast

from . import ir


# --- the conventions of generated code: x -> x_bar, x_dot, x_tape --------
# Every stage spells these names through the functions below, so a change
# of convention is made here once.

ADJOINT_SUFFIX = "_bar"     # a variable's cotangent (reverse mode)
TANGENT_SUFFIX = "_dot"     # its tangent (forward mode)
TAPE_SUFFIX = "_tape"       # the list a forward loop pushes it onto


@functools.lru_cache(maxsize=4096)
def adjoint_name(name):
    """``x`` -> ``x_bar``."""
    return name + ADJOINT_SUFFIX


@functools.lru_cache(maxsize=4096)
def tangent_name(name):
    """``x`` -> ``x_dot``."""
    return name + TANGENT_SUFFIX


@functools.lru_cache(maxsize=4096)
def tape_name(name):
    """``x`` -> ``x_tape``."""
    return name + TAPE_SUFFIX


class Namer:
    def __init__(self, taken=()):
        self.taken = set(taken)
        # the suffix each stem's search resumes from: every smaller one is
        # taken (names are never given back), so the answer is the same as
        # searching from 1, without the quadratic cost of many same-stem names
        self._next = {}

    def restore(self, names):
        """Names in use back to ``names`` (a trial given up): names taken
        since are free again."""
        self.taken = names
        self._next = {}

    def reserve(self, name):
        self.taken.add(name)

    def fresh(self, base):
        """``base`` if free, else ``base_1``, ``base_2``, ..."""
        base = sanitize(base)
        if base not in self.taken:
            self.taken.add(base)
            return base
        stem = base
        i = self._next.get(stem, 1)
        while f"{stem}_{i}" in self.taken:
            i += 1
        name = f"{stem}_{i}"
        self._next[stem] = i + 1
        self.taken.add(name)
        return name

    def adjoint(self, name):
        """A fresh name for the cotangent of ``name`` (``x_bar``)."""
        return self.fresh(adjoint_name(name))

    def tangent(self, name):
        """A fresh name for the tangent of ``name`` (``x_dot``)."""
        return self.fresh(tangent_name(name))

    def tape(self, name):
        """A fresh name for the tape of ``name`` (``x_tape``)."""
        return self.fresh(tape_name(name))


def sanitize(text):
    text = re.sub(r"\W+", "_", text).strip("_") or "t"
    if text[0].isdigit():
        text = "v" + text
    if keyword.iskeyword(text):
        text += "_"
    if len(text) > 32:
        text = text[:32].rstrip("_")
    return text


# --- names for temporaries: from the operation and its operands ----------

def item_name(base, idx):
    """``params[0]['W']`` -> ``params_0_W``: the path reads in the name."""
    stem = base.id if ir.is_name(base) else "item"
    if isinstance(idx, gast.Constant) and isinstance(idx.value, (int, str)) \
            and len(str(idx.value)) <= 8:
        return f"{stem}_{idx.value}"
    if ir.is_name(idx) and len(idx.id) <= 8:
        return f"{stem}_{idx.id}"
    return stem


def base_name(prefix, *atoms):
    """A readable temp name from an operation and its first operand."""
    for a in atoms:
        if ir.is_name(a):
            return f"{prefix}_{a.id}" if prefix else a.id
    return prefix or "t"


OP_WORDS = {"add": "plus", "sub": "minus", "mul": "times", "truediv": "over",
             "pow": "pow", "matmul": "at", "mod": "mod", "floordiv": "div"}


def binop_name(op, left, right):
    word = OP_WORDS.get(op, op)
    parts = [a.id if ir.is_name(a) else None for a in (left, right)]
    if all(parts) and len(parts[0]) + len(parts[1]) <= 14:
        return f"{parts[0]}_{word}_{parts[1]}"
    named = parts[0] or parts[1]
    return f"{word}_{named}" if named else word
