"""Builders for the gast nodes generated code is made of.

Names, constants, attribute chains, calls and assignments: every stage
that writes Python builds its nodes here, so a node is always spelled the
same way (gast needs fields such as ``annotation`` and ``type_comment``
that are easy to forget).
"""
import gast


def name(id_, ctx=None):
    """``id_`` as a Name (loaded unless ``ctx`` says otherwise)."""
    return gast.Name(id=id_, ctx=ctx or gast.Load(), annotation=None, type_comment=None)


def store(id_):
    """``id_`` as an assignment target."""
    return name(id_, gast.Store())


def const(value):
    return gast.Constant(value=value, kind=None)


def attribute(value, attr):
    """``value.attr`` (``value`` a node, or a name as a string)."""
    value = name(value) if isinstance(value, str) else value
    return gast.Attribute(value=value, attr=attr, ctx=gast.Load())


def dotted(spelling):
    """'np.linalg.solve' -> the gast expression that spells it."""
    parts = spelling.split(".")
    node = name(parts[0])
    for part in parts[1:]:
        node = attribute(node, part)
    return node


def call(func, /, *args, **kwargs):
    """``func(*args, **kwargs)``; ``func`` a node or a dotted spelling."""
    func = func if isinstance(func, gast.AST) else dotted(func)
    return gast.Call(func=func, args=list(args),
                     keywords=[gast.keyword(arg=k, value=v) for k, v in kwargs.items()])


def assign(target, value):
    """``target = value``; ``target`` a node, or a name as a string."""
    target = store(target) if isinstance(target, str) else target
    return gast.Assign(targets=[target], value=value, type_comment=None)
