"""Variables first assigned inside a loop, read after it.

Why: ``for v in x: last = v * v ... ; return last * 2`` — the python stage
starts ``last`` as ``unbound('last')`` (a placeholder that raises Python's
UnboundLocalError when used), and Numba needs every variable to have a
value before the loop.  The specialiser starts it as ``None``
(``Specializer.initialize``), which Numba types as an *optional* value:
arithmetic on it checks for None by itself, but a helper called with it
(``np.full(shape, last)``, ``unreduce(last, x)``) would be typed for an
optional argument and fail.  So every read of such a variable outside the
loops that assign it is spelled ``assigned(last)``
(``numba_runtime.assigned``): the value, of its plain type, or
UnboundLocalError when the loop never ran — what Python raises there.
Reads inside those loops stay as they are (the variable is legitimately
still None there: an ``if`` joining it with a new value, a tape push).
So a helper may be called inside them with a value Numba types optional
(the backward pass's copy of the variable, read back from a tape, where
it does hold a value): the helpers that tell an array from a number by
its type unwrap an optional argument first (``assigned``: ``unbroadcast``,
``unreduce``, ``unindex``, ``add_at``, the reductions, ``ndim``,
``size``, ``transpose``, ``inner``); taken for a number, an optional
array gave wrong cotangents (fuzz seed 671560;
``tests/test_jit_optional_values.py`` checks these).  Others (``dot``'s
adjoints, ``reshape``, ``broadcast_to``, ``clip``, ``tile``, ``repeat``,
``diagonal``, ``moveaxis``, ``expand_dims``, ``array``) fail to compile
with one, a located refusal.  Wrapping such reads at the call, where a
helper needs the value, would cover every helper at once; a generated
unwrapping implementation cannot be cached by Numba (no source file),
which is why each helper unwraps its own.
"""
import ast

from .specialize.syntax import stored_names


def mark_assigned_reads(stmts, names, helper, takes_optional):
    """Wrap the reads described above of the variables ``names`` in calls
    to ``helper`` (in place); True if any was.  ``takes_optional(call)``:
    whether a call accepts an unassigned value as it is (``zeros_like``: the
    zero cotangent of a variable never assigned is a zero)."""
    if not names:
        return False
    wrapper = _Wrap(set(names), helper, takes_optional)
    for stmt in stmts:
        wrapper.visit(stmt)
    return wrapper.changed


class _Wrap(ast.NodeTransformer):
    def __init__(self, optional, helper, takes_optional):
        self.optional = optional
        self.helper = helper
        self.takes_optional = takes_optional
        self.inside = []          # names assigned by each enclosing loop
        self.changed = False

    def visit_loop(self, node):
        self.inside.append(stored_names(node))
        self.generic_visit(node)
        self.inside.pop()
        return node

    visit_While = visit_For = visit_loop

    def visit_Call(self, node):
        if self.takes_optional(node):
            node.func = self.visit(node.func)
            node.args = [a if isinstance(a, ast.Name) else self.visit(a) for a in node.args]
            return node
        self.generic_visit(node)
        return node

    def visit_Name(self, node):
        if isinstance(node.ctx, ast.Load) and node.id in self.optional and \
                not any(node.id in names for names in self.inside):
            self.changed = True
            call = ast.Call(func=ast.Name(id=self.helper, ctx=ast.Load()),
                            args=[node], keywords=[])
            return ast.copy_location(call, node)
        return node
