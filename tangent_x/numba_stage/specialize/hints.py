"""What a specialisation error advises: the arguments worth marking static,
and the variable an unbound placeholder stands for."""
import ast
import linecache
import re

from .values import Const, Dyn, av_leaves


def depends_on(func, names, params):
    """The parameters of ``func`` (among ``params``) that ``names`` are
    computed from, following its assignments and loop targets."""
    sources = {}
    for node in ast.walk(func):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and node.value:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            value = node.value
        elif isinstance(node, (ast.For, ast.comprehension)):
            targets, value = [node.target], node.iter
        else:
            continue
        reads = {n.id for n in ast.walk(value) if isinstance(n, ast.Name)}
        for target in targets:
            for n in ast.walk(target):
                if isinstance(n, ast.Name):
                    sources.setdefault(n.id, set()).update(reads)
    seen, todo = set(), list(names)
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(sources.get(name, ()))
    return [p for p in params if p in seen]


def could_be_static(av, ranks):
    """Whether an argument could be marked static: known at the call as a
    run-time number or string (an array cannot be: it is not hashable)."""
    if av is None or isinstance(av, Const):
        return False
    leaves = [leaf for leaf in av_leaves(av) if isinstance(leaf, Dyn)]
    return bool(leaves) and not any(leaf.name in (ranks or {}) for leaf in leaves)


def static_hint(params):
    """The hint for code that cannot be compiled, naming the arguments
    (numbers or strings) it depends on, if any."""
    if params:
        names = ", ".join(repr(p) for p in params)
        return (f"if {names} {'is' if len(params) == 1 else 'are'} fixed per call, mark "
                f"{'it' if len(params) == 1 else 'them'} static (static_argnums/"
                "static_argnames); or run without jit (with tx.disable_jit(): ...)")
    return ("write it with arrays, numbers and the NumPy functions Numba compiles, "
            "or run without jit (with tx.disable_jit(): ...)")


def describe_unassigned(name, origin, function_origin):
    """The variable an unbound placeholder stands for: by its name if the
    user's function has a variable of that name (not a name tangent_x made
    up, like pow_x_i)."""
    text = getattr(origin, "text", "") or ""
    if function_origin is not None:
        lines = linecache.getlines(function_origin.filename)[function_origin.lineno - 1:]
        if lines:
            indent = len(lines[0]) - len(lines[0].lstrip())
            body = [lines[0]]
            for line in lines[1:]:
                if line.strip() and len(line) - len(line.lstrip()) <= indent:
                    break
                body.append(line)
            text += "\n" + "".join(body)
    if re.search(r"(?<![\w.])" + re.escape(name) + r"\s*(=|\+=|-=|\*=|/=)", text):
        return f"the variable '{name}'"
    return "a variable assigned only on some paths (of an if, or of a loop that may run no step)"
