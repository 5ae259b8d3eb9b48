"""Paths split at an ``if``: the statements after it specialised once per branch.

Compiled code gives a variable one type.  Where an ``if`` leaves a value
float32 on one path and float64 on the other (``b = x32 * 2.0`` in one
branch, ``b = y64`` in the other) and later lines compute with it, Numba
computes both in float64, where NumPy's float32 path rounds each step to
float32: ``joins`` refuses that.  Splitting gives each path its own code:
the statements after the ``if`` (up to the function's result) are copied
into each of its branches, so every variable keeps its path's type, and
the only join left is the result, which ``result_dtypes`` returns in its
path's dtype.

Only ``if`` statements outside loops are split (a loop's body runs again:
its continuation is not a straight line), at most ``LIMIT`` paths in all
(code grows with each split), and first those whose branches hold an
assignment the refused join named (``lines``).  Inside a split branch the
``if``'s test, when it is a variable, is known: a later ``if`` on it (the
gradient's backward pass repeats the forward's tests) takes that branch
only.
"""
import ast
import copy

__all__ = ["split_tails", "RESULT", "LIMIT"]

RESULT = "split_result"     # the function's result, assigned on every path
LIMIT = 4


def split_tails(body, lines, limit=LIMIT):
    """``body`` (a function's statements ending in its ``return``) with the
    statements after each chosen ``if`` copied into its branches; None
    when no ``if`` is split.  ``lines``: python-stage line numbers of the
    assignments whose joins are refused (their ifs are split first)."""
    if not body or not isinstance(body[-1], ast.Return) or body[-1].value is None:
        return None
    ret = body[-1]
    assign = ast.Assign(targets=[ast.Name(RESULT, ast.Store())], value=ret.value,
                        lineno=ret.lineno, col_offset=ret.col_offset)
    state = {"paths": 1, "split": 0}
    stmts = _split(list(body[:-1]) + [assign], set(lines), limit, state)
    if not state["split"]:
        return None
    done = ast.Return(value=ast.Name(RESULT, ast.Load()), lineno=ret.lineno,
                      col_offset=ret.col_offset)
    return stmts + [done]


def _split(stmts, lines, limit, state):
    for i, stmt in enumerate(stmts):
        if not isinstance(stmt, ast.If) or state["paths"] >= limit or \
                not _holds(stmt, lines):
            continue
        rest = stmts[i + 1:]
        state["paths"] += 1
        state["split"] += 1
        stmt.tx_split = True
        stmt.body = _split(list(stmt.body) + copy.deepcopy(rest), lines, limit, state)
        stmt.orelse = _split(list(stmt.orelse) + copy.deepcopy(rest), lines, limit, state)
        return stmts[:i + 1]
    return stmts


def _holds(stmt, lines):
    """Whether the ``if`` ``stmt`` is on a line of ``lines`` (where its
    join assigns), or assigns on one outside a loop."""
    if stmt.lineno in lines:
        return True
    work = list(stmt.body) + list(stmt.orelse)
    while work:
        node = work.pop()
        if isinstance(node, (ast.Assign, ast.AugAssign)) and node.lineno in lines:
            return True
        if isinstance(node, ast.If):
            work += list(node.body) + list(node.orelse)
    return False
