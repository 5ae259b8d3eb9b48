"""Python stage -> text: render generated functions as readable modules.

``ast.unparse`` prints one statement at a time; this module adds what it
cannot: a comment tying each block of statements to the user's line, and a
map from every generated line back to that user line (used to annotate
exceptions raised inside generated code).
"""
import ast

import gast

from ..core.lower import ORIGIN
from ..version import __version__


def display_path(path):
    """Paths under the working directory print relative (stable, short)."""
    import os
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


class _Unparser(getattr(ast, "_Unparser", object)):
    """ast.unparse, with assignments printed the same on every Python:
    ``a, b = b, a`` (3.10-3.13 disagree on parentheses around tuples)."""

    def visit_Assign(self, node):
        self.fill()
        for target in node.targets:
            self._bare(target)
            self.write(" = ")
        self._bare(node.value)

    def _bare(self, node):
        if isinstance(node, ast.Tuple) and node.elts:
            for i, elt in enumerate(node.elts):
                if i:
                    self.write(", ")
                self.traverse(elt)
            if len(node.elts) == 1:
                self.write(",")
        else:
            self.traverse(node)


class _SignedConstants(ast.NodeTransformer):
    """A negative number is an operator applied to a number as Python reads
    it: ``Constant(-0.87)``, printed as it stands, is ``-0.87 ** 2`` under a
    power, which is ``-(0.87 ** 2)``.  Written ``-(0.87)`` the unparser
    gives the operator its precedence: ``(-0.87) ** 2``."""

    def visit_Constant(self, node):
        value = node.value
        if isinstance(value, (int, float)) and not isinstance(value, bool) \
                and (value < 0 or (value == 0 and str(value).startswith("-"))):
            return ast.copy_location(ast.UnaryOp(ast.USub(), ast.Constant(-value)), node)
        if isinstance(value, complex) and (value.real < 0 or str(value).startswith("-")):
            return ast.copy_location(
                ast.BinOp(ast.Constant(value.real), ast.Add(), ast.Constant(complex(0, value.imag))),
                node)
        return node


# fields text does not keep, or newer Pythons add; ``ctx``: a target
# printed alone reads back as a load
_UNKEPT = frozenset(("ctx", "type_params", "type_comment", "kind"))


def _signed(node):
    """``node`` with a negative number written as Python reads it back."""
    if isinstance(node, ast.Constant):
        return _SignedConstants().visit_Constant(node)
    return node


def _same_shape(a, b):
    """Whether two trees are the same operations, attributes and the fields
    in ``_UNKEPT`` aside (numbers compared by their text, so ``0.0`` is not
    ``-0.0``): the check that text printed from a tree parses back to it.
    One walk over both, which stops at the first difference (printing every
    tree's ``ast.dump`` twice cost a tenth of generating code)."""
    if isinstance(a, ast.AST):
        a, b = _signed(a), _signed(b)
        if type(a) is not type(b):
            return False
        for field in a._fields:
            if field not in _UNKEPT and \
                    not _same_shape(getattr(a, field, None), getattr(b, field, None)):
                return False
        return True
    if type(a) is list:
        return type(b) is list and len(a) == len(b) and all(map(_same_shape, a, b))
    return type(a) is type(b) and (a == b if isinstance(a, str) else repr(a) == repr(b))


def _copy(tree):
    import copy
    return copy.deepcopy(tree)


def _to_text(tree, owned=False):
    """``tree`` printed (``owned``: a tree of the caller's own making, which
    printing may change; otherwise a copy is printed)."""
    tree = _SignedConstants().visit(tree if owned else _copy(tree))
    if hasattr(ast, "_Unparser"):
        text = _Unparser().visit(tree)
    else:                         # pragma: no cover - every supported Python has it
        text = ast.unparse(tree)
    _check_reparses(tree, text)
    return text


def _check_reparses(tree, text):
    """Every emitted text must parse back to the tree it was printed from;
    a precedence slip in a printer is otherwise a silently wrong value.
    (``tree`` is the printed copy: the check may change it.)"""
    if isinstance(tree, ast.expr):
        back = ast.parse(text, mode="eval").body
    elif isinstance(tree, ast.stmt):
        body = ast.parse(text).body
        back = body[0] if len(body) == 1 else None
    else:
        return
    if back is None or not _same_shape(back, tree):
        raise AssertionError(f"tangent_x internal error: the emitted text {text!r} does not "
                             "read back as the operations it was printed from")


def unparse(node):
    tree = gast.gast_to_ast(node)
    # unparse reads statements' line numbers (for type comments) but never
    # prints them; simple statements need only their own.
    for n in (ast.walk(tree) if hasattr(tree, "body") else (tree,)):
        if isinstance(n, ast.stmt):
            n.lineno = n.end_lineno = 1
            n.col_offset = n.end_col_offset = 0
    return _to_text(tree, owned=True)     # gast_to_ast made it: no copy to print


def unparse_ast(node):
    """Text of a Python ``ast`` node (``unparse`` takes gast nodes).
    Statements get line numbers of their own, which printing needs."""
    node = ast.fix_missing_locations(node)
    if isinstance(node, ast.stmt):
        for n in ast.walk(node):
            if isinstance(n, ast.stmt):
                n.lineno = n.end_lineno = 1
                n.col_offset = n.end_col_offset = 0
    return _to_text(node)


def _signature(params, defaults, kwonly=(), kw_defaults=None):
    parts = list(params)
    for i, d in enumerate(defaults or ()):
        j = len(parts) - len(defaults) + i
        parts[j] = f"{parts[j]}={unparse(d)}"
    if kwonly:
        kw_defaults = kw_defaults or {}
        parts.append("*")
        parts += [f"{k}={unparse(kw_defaults[k])}" if k in kw_defaults else k for k in kwonly]
    return ", ".join(parts)


def render_function(name, params, defaults, blocks, result, docstring=None, origin=None,
                    kwonly=(), kw_defaults=None):
    """Return (lines, origins): the function's text and each line's Origin
    (the ``def`` line maps to ``origin``, the user's function).  ``params``
    are the positional parameters (``defaults`` for the trailing ones);
    ``kwonly`` follow a ``*`` (``kw_defaults``: name -> default)."""
    lines = [f"def {name}({_signature(params, defaults, kwonly, kw_defaults)}):"]
    origins = [origin]
    if docstring:
        lines.append(f'    """{docstring}"""')
        origins.append(None)
    last_comment = None
    for block in blocks:
        if not block.stmts:
            continue
        comment = block.comment
        if comment is None and block.origin is not None:
            comment = f"{block.origin.short()}: {block.origin.text}"
        if comment and comment != last_comment:
            lines.append(f"    # {comment}")
            origins.append(block.origin)
            last_comment = comment
        for stmt in block.stmts:
            texts = unparse(stmt).splitlines()
            lines += ["    " + text for text in texts]
            origins += nested_origins(stmt, texts, block.origin)
    lines.append(f"    return {unparse(result)}")
    origins.append(None)
    return lines, origins


_BODIES = ("body", "orelse", "handlers", "finalbody")


def _preorder(stmt):
    """``stmt`` and the statements nested in it, outer first (gast and
    ``ast`` trees alike)."""
    out = [stmt]
    for field in _BODIES:
        for child in getattr(stmt, field, None) or []:
            if isinstance(child, (gast.stmt, ast.stmt, gast.excepthandler,
                                  ast.excepthandler)):
                out += _preorder(child)
    return out


def nested_origins(stmt, texts, default):
    """The Origin of each line of ``texts``, the printed ``stmt``: a line
    inside a loop or branch maps to the origin its own statement carries
    (``lower.ORIGIN``), else to ``default`` (its block's)."""
    origins = [default] * len(texts)
    if len(texts) < 2:
        return origins
    made = _preorder(stmt)
    if not any(getattr(s, ORIGIN, None) is not None for s in made[1:]):
        return origins
    try:
        parsed = _preorder(ast.parse("\n".join(texts)).body[0])
    except SyntaxError:             # pragma: no cover - printed text always parses
        return origins
    if len(parsed) != len(made):    # pragma: no cover - one printed statement each
        return origins
    for ours, back in list(zip(made, parsed))[1:]:
        origin = getattr(ours, ORIGIN, None)
        if origin is not None and hasattr(back, "lineno"):
            for line in range(back.lineno, (back.end_lineno or back.lineno) + 1):
                origins[line - 1] = origin
    return origins


def render_module(description, origin, imports, env_names, functions, modules=()):
    """Module text for one or more rendered functions of the python stage,
    plus its line map.

    ``modules``: (module, alias) pairs to import besides NumPy."""
    header = module_header(description, origin)
    header.append("import numpy as np")
    for module, alias in sorted(modules):
        header.append(f"import {module} as {alias}")
    runtime = sorted(imports)
    if runtime:
        header.append(f"from tangent_x.runtime import {', '.join(runtime)}")
    if env_names:
        header.append(f"# bound when loaded, from the function's globals and closure: "
                      f"{', '.join(sorted(env_names))}")
    return assemble_module(header, functions)


def module_header(description, origin=None, notes=()):
    """The comment lines every generated module (python and numba stage)
    starts with: what generated it, ``notes``, and the user's source it
    comes from."""
    header = [f"# Generated by tangent_x {__version__}: {description}"]
    header += [f"# {note}" for note in notes]
    if origin is not None:
        header.append(f"# from {display_path(origin.filename)}:{origin.lineno}. Do not "
                      "edit: tangent_x regenerates it from that source.")
    return header


def assemble_module(header, sections):
    """(text, line map) of a generated module: the ``header`` lines
    (comments, imports), then each section, a ``(lines, origins)`` pair (a
    function, a kernel), after two blank lines.  The line map takes every
    line with an origin to it (line numbers from 1)."""
    lines, origins = list(header), [None] * len(header)
    for section_lines, section_origins in sections:
        lines += ["", ""]
        origins += [None, None]
        lines += section_lines
        origins += section_origins
    linemap = {i + 1: o for i, o in enumerate(origins) if o is not None}
    return "\n".join(lines) + "\n", linemap
