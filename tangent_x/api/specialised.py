"""Specialising a transform on its call's Python values, as JAX's tracing
does: where the generic code is refused because a recursion's depth hangs
on an argument (``tx.grad(power)(x, 3)`` with ``if n == 0``, or
``apply(layers[1:], ...)`` over a tuple argument), the code is built again
for this call's Python int/bool arguments (folded in by value, as jit's
static arguments are) and its tuple/list arguments (by length).  A new
value or length gets code of its own; an array argument deciding the
depth is still refused at the user's line.
"""
import inspect

_FOLDED_TYPES = (bool, int)


def static_arguments(fun, args, kwargs, argnums):
    """{parameter name: ("value", v) or ("tuple" | "list", n)} of a call of the
    user's function ``fun`` with ``args`` and ``kwargs``: each Python
    int/bool argument not differentiated (``argnums``) by value, each
    tuple or list argument by length.  Empty when nothing can be folded."""
    try:
        signature = inspect.signature(fun)
        bound = signature.bind(*args, **kwargs)
    except (TypeError, ValueError):
        return {}
    names = list(signature.parameters)
    wrt = {names[i % len(names)] for i in argnums if names} if argnums else set()
    static = {}
    for name, value in bound.arguments.items():
        kind = signature.parameters[name].kind
        if kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            continue
        if type(value) in _FOLDED_TYPES and name not in wrt:
            static[name] = ("value", value)
        elif type(value) in (tuple, list):
            static[name] = (type(value).__name__, len(value))    # its kind and length
    return static


def container_kinds(fun, args, kwargs):
    """{parameter name: ("kind", "tuple" | "list" | "dict")} for each
    argument of a call that is one of those containers.  The code is built
    knowing them (a write into an item of a list argument -- ``for p, g in
    zip(params, grads): p -= lr * g`` -- is a list's item update, not an
    array's), as JAX traces the structure of its arguments: one code per
    kinds, the same for every call whose arguments are arrays."""
    try:
        signature = inspect.signature(fun)
        bound = signature.bind(*args, **kwargs)
    except (TypeError, ValueError):
        return {}
    kinds = {}
    for name, value in bound.arguments.items():
        kind = signature.parameters[name].kind
        if kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            continue
        if type(value) in (tuple, list, dict):
            kinds[name] = ("kind", type(value).__name__)
    return kinds


def with_kinds(static, fun, args, kwargs):
    """``static`` and the argument kinds (``container_kinds``) together (a
    tuple's or list's length says its kind too)."""
    out = container_kinds(fun, args, kwargs)
    out.update(static or {})
    return out


def key_of(static):
    """A hashable key of a ``static_arguments`` answer (True and 1 apart)."""
    return tuple(sorted((name, kind, type(v).__name__, v)
                        for name, (kind, v) in static.items()))
