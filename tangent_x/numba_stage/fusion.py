"""Elementwise fusion for the numba stage: a chain of elementwise statements
around a ``vmath`` kernel becomes one Numba ufunc, so one loop.

Why: ``y = vmath.tanh(x); y_times_y = y * y; x_bar = 1.0 - y_times_y`` is
three loops and two temporary arrays under Numba (its array-expression pass
fuses only unnamed temporaries within one statement).  On large arrays the
passes over memory, and the page faults of fresh temporaries, cost more
than the math.  The chain is instead emitted as a scalar function compiled
with ``numba.vectorize`` (lazily, per input types)::

    @vectorize(cache=True)
    def elementwise_x_bar(x):
        y = vmath.tanh(x)
        y_times_y = y * y
        return 1.0 - y_times_y

    ...
    x_bar = elementwise_x_bar(x)

A ufunc broadcasts its inputs and returns a number for numbers, exactly as
the statements did, so nothing about shapes needs to be known here.

Which statements: an assignment ``name = expr`` whose ``expr`` is built of
names, numbers, ``+ - * / **``, unary ``-``/``+`` and ``vmath`` calls is
elementwise.  Starting from the last one in a straight-line body, the
statements defining its operands join the group when the name they define is
assigned once in the whole function and read only inside the group, and
when every statement between them and the group's end is in the group: a
group is a run of adjacent statements, so nothing is reordered (a call in
between may update an array in place: ``mask_assign(x, m, v)``).  A group
is emitted only if it calls a ``vmath`` kernel and has at least two
statements: plain arithmetic in one statement is already fused by Numba,
and tuples added to tuples (shape arithmetic, also spelled with ``+``)
never meet a ``vmath`` kernel.
"""
import ast
import copy
from collections import Counter

_BINOPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)
_UNARY = (ast.USub, ast.UAdd)


def fuse(body, params, vmath_name, taken):
    """(new body, kernels): the function body ``body`` (parameters
    ``params``) with fused groups replaced by calls, and the kernels'
    ``ast.FunctionDef``s (decorated).  ``taken``: names in use in the module
    (kernel names are chosen outside it, and added)."""
    if vmath_name is None:
        return body, []
    loads, stores = Counter(), Counter()
    for stmt in body:
        _count(stmt, loads, stores)
    local = set(stores) | set(params)
    kernels = []
    return _fuse_body(body, vmath_name, loads, stores, local, taken, kernels), kernels


def _count(stmt, loads, stores):
    for node in ast.walk(stmt):
        if isinstance(node, ast.Name):
            (loads if isinstance(node.ctx, ast.Load) else stores)[node.id] += 1
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store) and \
                isinstance(node.value, ast.Name):
            stores[node.value.id] += 1
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            stores[node.target.id] += 1          # counted as a load too: it reads it
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                isinstance(node.func.value, ast.Name) and \
                node.func.attr in ("append", "pop", "extend", "insert"):
            stores[node.func.value.id] += 1


def _fuse_body(body, vmath_name, loads, stores, local, taken, kernels):
    body = [_fuse_nested(s, vmath_name, loads, stores, local, taken, kernels) for s in body]
    elementwise = {i: s.targets[0].id for i, s in enumerate(body) if _is_elementwise_assign(
        s, vmath_name)}
    defined_at = {}
    for i, name in elementwise.items():
        defined_at.setdefault(name, i)
    groups, used = [], set()
    for j in sorted(elementwise, reverse=True):
        if j in used:
            continue
        members = _group(body, j, elementwise, defined_at, loads, stores, local, used)
        if len(members) >= 2 and any(_calls_vmath(body[i].value, vmath_name) for i in members):
            groups.append(members)
            used.update(members)
    if not groups:
        return body
    replaced = {}
    for members in groups:
        root = max(members)
        call, kernel = _kernel(body, sorted(members), local, loads, taken)
        replaced.update({i: None for i in members})
        replaced[root] = call
        if kernel is not None:
            kernels.append(kernel)
    return [replaced.get(i, s) for i, s in enumerate(body) if replaced.get(i, s) is not None]


def _fuse_nested(stmt, *rest):
    for field in ("body", "orelse"):
        inner = getattr(stmt, field, None)
        if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
            setattr(stmt, field, _fuse_body(inner, *rest))
    return stmt


def _group(body, j, elementwise, defined_at, loads, stores, local, used):
    """Indices of the statements that fuse into statement ``j``."""
    members = {j}
    changed = True
    while changed:
        changed = False
        inside = Counter()
        for i in members:
            inside.update(n.id for n in ast.walk(body[i].value) if isinstance(n, ast.Name))
        for name in list(inside):
            k = defined_at.get(name)
            if k is None or k in members or k in used or k > j or stores[name] != 1 or \
                    loads[name] != inside[name]:
                continue
            if any(m not in members for m in range(k + 1, j)):
                continue          # only a run of adjacent statements: nothing reordered
            members.add(k)
            changed = True
    return members


def _is_elementwise_assign(stmt, vmath_name):
    return isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and \
        isinstance(stmt.targets[0], ast.Name) and _is_elementwise(stmt.value, vmath_name)


def _is_elementwise(node, vmath_name):
    if isinstance(node, ast.Name):
        return True
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (int, float)) and not isinstance(node.value, bool)
    if isinstance(node, ast.BinOp):
        return isinstance(node.op, _BINOPS) and _is_elementwise(node.left, vmath_name) and \
            _is_elementwise(node.right, vmath_name)
    if isinstance(node, ast.UnaryOp):
        return isinstance(node.op, _UNARY) and _is_elementwise(node.operand, vmath_name)
    if _is_vmath_call(node, vmath_name):
        return _is_elementwise(node.args[0], vmath_name)
    return False


def _is_vmath_call(node, vmath_name):
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
        isinstance(node.func.value, ast.Name) and node.func.value.id == vmath_name and \
        len(node.args) == 1 and not node.keywords


def _calls_vmath(node, vmath_name):
    return any(_is_vmath_call(n, vmath_name) for n in ast.walk(node))


def _kernel(body, members, local, loads, taken):
    """(the call statement, the kernel's FunctionDef or None) for one group."""
    root = body[members[-1]]
    defined = {body[i].targets[0].id for i in members}
    params, so_far = [], set()
    for i in members:                     # names read before the group defines them
        for n in ast.walk(body[i].value):
            if isinstance(n, ast.Name) and n.id in local and n.id not in so_far and \
                    n.id not in params:
                params.append(n.id)
        so_far.add(body[i].targets[0].id)
    if all(loads[n] == 1 for n in defined - {root.targets[0].id}):
        # a tree: one expression, which Numba's array-expression pass
        # already compiles to one loop (no kernel to compile)
        values = {body[i].targets[0].id: body[i].value for i in members[:-1]}
        call = ast.copy_location(
            ast.Assign(targets=[root.targets[0]], value=_substitute(root.value, values)), root)
        call._tx_src = getattr(root, "_tx_src", None)
        return call, None
    name = _fresh(f"elementwise_{root.targets[0].id}", taken)
    stmts = [body[i] for i in members[:-1]] + [ast.Return(value=root.value)]
    kernel = ast.FunctionDef(
        name=name, args=ast.arguments(posonlyargs=[], args=[ast.arg(p) for p in params],
                                      vararg=None, kwonlyargs=[], kw_defaults=[],
                                      kwarg=None, defaults=[]),
        body=stmts, decorator_list=[ast.parse("vectorize(cache=True)", mode="eval").body],
        returns=None, type_params=[])
    ast.fix_missing_locations(ast.copy_location(kernel, root))
    call = ast.copy_location(ast.Assign(
        targets=[root.targets[0]], value=ast.Call(func=ast.Name(name, ast.Load()),
                                                  args=[ast.Name(p, ast.Load()) for p in params],
                                                  keywords=[])), root)
    call._tx_src = getattr(root, "_tx_src", None)
    return call, kernel


def _substitute(node, values):
    """``node`` with each name in ``values`` replaced by its expression."""
    class Inline(ast.NodeTransformer):
        def visit_Name(self, name):
            if name.id in values:
                return self.visit(copy.deepcopy(values[name.id]))
            return name
    return Inline().visit(copy.deepcopy(node))


def _fresh(base, taken):
    name, i = base, 1
    while name in taken:
        name, i = f"{base}_{i}", i + 1
    taken.add(name)
    return name
