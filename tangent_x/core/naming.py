"""Readable, collision-free names for generated code.

Names are derived from the user's variables (``h``, ``h_1``, ``h_bar``) so
generated code reads like the original; the namer only guarantees that a
fresh name never shadows anything already in use.
"""
import keyword
import re

import gast

from . import ir


class Namer:
    def __init__(self, taken=()):
        self.taken = set(taken)

    def reserve(self, name):
        self.taken.add(name)

    def fresh(self, base):
        """``base`` if free, else ``base_1``, ``base_2``, ..."""
        base = sanitize(base)
        if base not in self.taken:
            self.taken.add(base)
            return base
        stem = base
        i = 1
        while f"{stem}_{i}" in self.taken:
            i += 1
        name = f"{stem}_{i}"
        self.taken.add(name)
        return name


def sanitize(text):
    text = re.sub(r"\W+", "_", text).strip("_") or "t"
    if text[0].isdigit():
        text = "v" + text
    if keyword.iskeyword(text):
        text += "_"
    if len(text) > 32:
        text = text[:32].rstrip("_")
    return text


def adjoint_name(name):
    return f"{name}_bar"


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
