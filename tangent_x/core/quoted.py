"""Quoted code: generated statements written as Python with holes.

Control flow that a transform makes reads best as the code it makes::

    REPLAY = quote('''
        for index in reversed(iterations):
            body
    ''')
    REPLAY.fill(index="t", iterations=range_call, body=stmts)

Every name of the quoted code that ``fill`` is given is a hole:

- a string renames it (as a target too: ``index`` above);
- a node replaces it (an expression where the name is read);
- a list of statements replaces a hole standing alone as a statement
  (``body``); a body left empty becomes ``pass`` (an ``else`` left empty
  goes).

Other names are kept as written (``reversed``, ``range``, ``np``).  The
rule templates of ``templates.py`` are the other kind of quoted code:
functions whose parameters are the holes.
"""
import functools
import textwrap

import gast

from . import ir
from .builders import name

_LOCATION = ("lineno", "col_offset", "end_lineno", "end_col_offset")


class Quoted:
    def __init__(self, source):
        self.source = textwrap.dedent(source).strip()
        self.body = gast.parse(self.source).body
        for stmt in self.body:
            for node in ir.walk(stmt):
                for attr in _LOCATION:      # generated code has no user line here
                    if hasattr(node, attr):
                        delattr(node, attr)

    def fill(self, **holes):
        """The quoted statements with ``holes`` filled (fresh nodes)."""
        filler = _Filler(holes)
        out = []
        for stmt in ir.clone(self.body):
            filled = filler.visit(stmt)
            out.extend(filled if isinstance(filled, list) else [filled])
        return out

    def stmt(self, **holes):
        """The one quoted statement, filled."""
        [stmt] = self.fill(**holes)
        return stmt

    def expr(self, **holes):
        """The quoted expression, filled."""
        return self.stmt(**holes).value


@functools.lru_cache(maxsize=None)
def quote(source):
    """``source`` (statements, or one expression) ready to ``fill``."""
    return Quoted(source)


class _Filler(gast.NodeTransformer):
    def __init__(self, holes):
        self.holes = holes

    def visit_Expr(self, node):
        hole = node.value.id if isinstance(node.value, gast.Name) else None
        if hole in self.holes and isinstance(self.holes[hole], list):
            return list(self.holes[hole])
        self.generic_visit(node)
        return node

    def visit_Name(self, node):
        if node.id not in self.holes:
            return node
        value = self.holes[node.id]
        if isinstance(value, str):
            return name(value, node.ctx)
        return value

    def generic_visit(self, node):
        super().generic_visit(node)
        if isinstance(node, (gast.For, gast.While, gast.If)) and not node.body:
            node.body = [gast.Pass()]
        return node
