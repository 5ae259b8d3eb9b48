"""Readable, collision-free names for generated code.

Names are derived from the user's variables (``h``, ``h_1``, ``h_bar``) so
generated code reads like the original; the namer only guarantees that a
fresh name never shadows anything already in use.
"""
import keyword
import re


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
