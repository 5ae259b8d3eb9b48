"""Results whose dtype depends on the path taken, given back in that dtype.

NumPy returns ``1.26 - y`` (float32) from an early ``return`` and
``0.23 * np.dot(a, b)`` (float64) from the last one; compiled code gives a
variable one type, so Numba joins the two into float64, and the float32
path's result would come back in another dtype (``joins`` finds that the
join shows at the return, and refuses it).  Every float32 number is a
float64 one (float16 a float32 one, complex64 a complex128 one), so the
joined variable holds the path's numbers exactly; only the dtype is lost.
The text is then compiled again with the dtype kept beside the value:

    result_0 = minus_neg_y; result_0_dtype = dtype_code(result_0)
    ...
    return (result_0, result_1, result_0_dtype)

``dtype_code`` is a constant Numba fixes when it types each path's value
(``overloads.promotion``), each assignment keeps its line (the line map
stays), and after the call ``untag`` casts each such result back to its
path's dtype and drops the codes.  ``joins`` then reads the tagged
variables' return as showing nothing, and refuses any other read of the
join as before.
"""
import ast
import re

import numpy as np

from .compile_errors import imported
from .overloads.promotion import DTYPE_CODES

__all__ = ["tag", "untag_text", "candidates", "same_kind", "tagged_text", "untag"]

# a number type, an array type or an optional one (a loop's ``return``)
_TYPE = re.compile(r"^(?:OptionalType\()?(?:array\()?"
                   r"(float16|float32|float64|complex64|complex128)(?:, (\d+)d)?")


def tag(compiled, verdicts, reload):
    """Whether ``compiled`` (a ``loading.Compiled``, changed in place) was
    given its tagged text: results that hold float32 numbers on one path
    and float64 ones on another, whose join shows only at the return
    (``verdicts``: ``join_verdicts.verdicts``; ``reload``: a function of the
    compiled and a text that loads it).  Tried once per compiled text."""
    if compiled.tags or compiled.untagged is not None:
        return False
    line = return_line(compiled.text, compiled.name)
    names = candidates(verdicts(compiled), line) if line else ()
    found = tagged_text(compiled.text, compiled.name, names) if names else None
    if found is None:
        return False
    compiled.untagged = compiled.text
    reload(compiled, found[0])
    compiled.tags = found[1]
    return True


def untag_text(compiled, reload):
    """Whether tagged code went back to its text before (Numba could not
    compile it)."""
    if not compiled.tags:
        return False
    compiled.tags = []
    reload(compiled, compiled.untagged)
    return True


def candidates(entries, return_line):
    """The variables of the join verdict ``entries`` (``joins.observed``'s
    (variable, one path's type, the joined type, line, line where it
    shows)) that a dtype kept beside them mends: floats joined with floats
    (complex with complex), of one rank, shown by the return on
    ``return_line``."""
    return [var for var, a, b, _, shown in entries if shown == return_line and same_kind(a, b)]


def same_kind(a, b):
    """Whether the Numba types (their text) ``a`` and ``b`` are floats of
    two widths (or complex numbers), or arrays of them of one rank."""
    ma, mb = _TYPE.match(a), _TYPE.match(b)
    return ma is not None and mb is not None and ma.group(2) == mb.group(2) and \
        np.dtype(ma.group(1)).kind == np.dtype(mb.group(1)).kind


def return_line(text, name):
    """The line of the one ``return`` of the function ``name`` in ``text``
    (its last statement), or None."""
    found = _function(text, name)
    return None if found is None else found[1].lineno


def _function(text, name):
    """(the function ``name`` of ``text``, its one return statement), or
    None when it returns elsewhere than at its end."""
    tree = ast.parse(text)
    function = next((node for node in tree.body if isinstance(node, ast.FunctionDef) and
                     node.name == name), None)
    if function is None or not isinstance(function.body[-1], ast.Return):
        return None
    ret = function.body[-1]
    returns = [node for node in _walk_own(function) if isinstance(node, ast.Return)]
    if returns != [ret] or ret.lineno != ret.end_lineno or ret.value is None:
        return None
    return function, ret


def _walk_own(function):
    """The nodes of ``function``'s body, not entering nested functions."""
    work = list(function.body)
    while work:
        node = work.pop()
        yield node
        work.extend(child for child in ast.iter_child_nodes(node)
                    if not isinstance(child, (ast.FunctionDef, ast.Lambda)))


def tagged_text(text, name, variables):
    """(text, tags) with the dtype of each result of the function ``name``
    kept beside it (see the module doc) where one of ``variables`` (joins)
    flows into it, or None.
    ``tags``: [(position of the result among the flat results, position of
    its code in the returned tuple, the variable)].

    After ``v = e``, ``v`` is the value just assigned, in its own type
    (Numba types each assignment's version apart; only a join's version
    has the joined type), so ``v_dtype = dtype_code(v)``.  Where ``e`` is
    itself a variable an ``if`` joins (one assigned more than once), that
    variable is tagged in turn and ``v_dtype = e_dtype``.  A variable is
    tagged only where every binding of it is such an assignment (a
    ``widen_dtype(name, ...)`` counts as its name), and it is not a
    parameter."""
    found = _function(text, name)
    if found is None:
        return None
    function, ret = found
    elements = ret.value.elts if isinstance(ret.value, ast.Tuple) else [ret.value]
    if not all(isinstance(e, ast.Name) for e in elements):
        return None
    returned = [e.id for e in elements]
    params = {a.arg for a in function.args.args}
    taken = {node.id for node in ast.walk(function) if isinstance(node, ast.Name)}
    bindings = _bindings(function)
    edits, done = [], set()

    def tag(var):
        """Whether ``var``'s assignments got their codes."""
        if var in done:
            return True
        assigns = bindings.get(var)
        if var in params or f"{var}_dtype" in taken or not assigns or None in assigns:
            return False
        done.add(var)
        for node, value in assigns:
            if isinstance(value, ast.Name) and len(bindings.get(value.id, ())) > 1:
                if not tag(value.id):
                    return False
                code = f"{value.id}_dtype"
            elif value is node.value:
                code = f"dtype_code({var})"
            elif isinstance(value, (ast.Name, ast.Constant)):
                code = f"dtype_code({ast.unparse(value)})"
            elif node.lineno == node.end_lineno:
                # widened: the value first, its code, then the cast
                cast = ast.unparse(ast.Call(node.value.func, [ast.Name(var)] + node.value.args[1:],
                                            []))
                edits.append((node.lineno, node.col_offset, node.end_col_offset,
                              f"{var} = {ast.unparse(value)}; {var}_dtype = dtype_code({var}); "
                              f"{var} = {cast}"))
                continue
            else:
                return False
            edits.append((node.end_lineno, node.end_col_offset, node.end_col_offset,
                          f"; {var}_dtype = {code}"))
        return True

    tags, joined = [], set(variables)
    for var in dict.fromkeys(returned):
        kept = list(edits), set(done)
        if tag(var) and joined & (done - kept[1]):
            tags += [(i, var) for i, r in enumerate(returned) if r == var]
        else:
            edits[:], done = kept[0], kept[1]
    if not tags:
        return None
    lines = text.split("\n")
    for lineno, col, end, added in sorted(set(edits), reverse=True):
        line = lines[lineno - 1]
        lines[lineno - 1] = line[:col] + added + line[end:]
    # the return: the codes after the results, in a tuple
    line = lines[ret.lineno - 1]
    items = ", ".join(returned + [f"{var}_dtype" for _, var in tags])
    lines[ret.lineno - 1] = line[:ret.col_offset] + f"return ({items})" + \
        line[ret.end_col_offset:]
    imported(lines, "from tangent_x.numba_stage.numba_runtime import dtype_code")
    return "\n".join(lines), [(i, len(returned) + k, var) for k, (i, var) in enumerate(tags)]


def _bindings(function):
    """{variable: [(assignment, the value whose dtype it records)]} of
    ``function``, with None for a binding that is not a one-target
    assignment (a loop's target, an unpacking ...)."""
    out = {}
    for node in _walk_own(function):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                isinstance(node.targets[0], ast.Name):
            value = node.value
            if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and \
                    value.func.id == "widen_dtype" and value.args:
                value = value.args[0]
            out.setdefault(node.targets[0].id, []).append((node, value))
            continue
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For)) else \
            node.names if isinstance(node, ast.Global) else []
        for target in targets:
            for leaf in ast.walk(target) if isinstance(target, ast.AST) else ():
                if isinstance(leaf, ast.Name):
                    out.setdefault(leaf.id, []).append(None)
    return out


def untag(values, tags, bare):
    """The flat results of a call of tagged code (``tagged_text``'s
    ``tags``): each tagged result cast back to its path's dtype, the codes
    dropped; ``bare``: the function's one result is not in a tuple."""
    count = 1 if bare else len(values) - len(tags)
    out = list(values[:count])
    for leaf, position, _ in tags:
        out[leaf] = _cast(out[leaf], values[position])
    return out[0] if bare else tuple(out)


def _cast(value, code):
    if code < 0 or value is None:
        return value
    dtype = DTYPE_CODES[code]
    if isinstance(value, np.ndarray):
        return value if value.dtype == dtype else value.astype(dtype)
    if dtype in (np.float64, np.complex128):
        return value            # as compiled code gives it (a Python float)
    return dtype.type(value)
