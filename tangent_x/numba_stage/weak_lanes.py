"""The lanes of Python numbers in vmap's compiled code, told apart by name.

Why: vmap gives a Python number shared by every example (``acc = 0.0``
before a loop, ``float(s)`` of a per-example value) lanes, one number per
example; eagerly these are ``lanes.WeakLanes``, which NumPy's promotion
treats as the Python numbers they are (weak, NEP 50), and arithmetic among
them stays weak.  Compiled, Numba types them as float64 arrays, strong.  So
``weak_scalars`` needs the names that may hold such lanes: those assigned
``broadcast_lanes`` of a number or ``number_lanes``, and those assigned
arithmetic (or a shape change, or a fused arithmetic kernel) of such names
and numbers only.  It spells the latter ``weak_lanes_of(value, *lanes)``,
which keeps Numba's type ``WeakLanes`` where every operand has it.
"""
import ast

ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow, ast.FloorDiv, ast.Mod)


def is_number(node):
    return isinstance(node, ast.Constant) and type(node.value) in (int, float, complex)


def is_weak_broadcast(node, ints):
    """``broadcast_lanes(0.5, batch_size)``: vmap's lanes of a Python
    number; ``number_lanes(s, 'float')``: of ``float(s)`` per example."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and
            len(node.args) == 2 and not node.keywords):
        return False
    if node.func.id == "number_lanes":
        return True
    return node.func.id == "broadcast_lanes" and \
        (is_number(node.args[0]) or
         isinstance(node.args[0], ast.Name) and node.args[0].id in ints)


def weak_lanes(stmts, ints):
    """Names ever assigned ``broadcast_lanes`` of a Python number (a loop
    carry of vectorised code that starts as one): their reads next to an
    array are spelled ``weak_scalar(acc, other)``, which casts the lanes
    while they are weak (``numba_runtime.WeakLanes``) and is the array
    itself once the loop made it one."""
    names = set()
    assigns = [node for stmt in stmts for node in ast.walk(stmt) if isinstance(node, ast.Assign)]
    kernels = arithmetic_kernels(stmts)
    changed = True
    while changed:
        changed = False
        for node in assigns:
            if is_weak_broadcast(node.value, ints) or \
                    lanes_operands(node.value, ints, names, kernels):
                for t in node.targets:
                    if isinstance(t, ast.Name) and t.id not in names:
                        names.add(t.id)
                        changed = True
    return names


_SHAPE_OPS = {"expand_dims", "reshape", "broadcast_to", "squeeze", "transpose", "moveaxis"}


def _shape_op(func):
    """A function giving its first argument's numbers in another shape:
    numba_runtime's (``expand_dims``) or NumPy's (``np.reshape``)."""
    if isinstance(func, ast.Attribute):
        return func.attr in _SHAPE_OPS
    return isinstance(func, ast.Name) and func.id in _SHAPE_OPS


def arithmetic_kernels(stmts):
    """The fused kernels defined beside the code (fusion) that do
    arithmetic only: each statement ``name = <arithmetic of names and
    numbers>``, then ``return`` of one."""
    def arithmetic(n):
        if isinstance(n, ast.BinOp) and isinstance(n.op, ARITHMETIC):
            return arithmetic(n.left) and arithmetic(n.right)
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, (ast.USub, ast.UAdd)):
            return arithmetic(n.operand)
        return isinstance(n, ast.Name) or is_number(n)
    out = set()
    for stmt in stmts:
        if isinstance(stmt, ast.FunctionDef) and stmt.body and all(
                isinstance(b, ast.Assign) and len(b.targets) == 1 and
                isinstance(b.targets[0], ast.Name) and arithmetic(b.value)
                for b in stmt.body[:-1]) and isinstance(stmt.body[-1], ast.Return) and \
                stmt.body[-1].value is not None and arithmetic(stmt.body[-1].value):
            out.add(stmt.name)
    return out


def lanes_operands(node, ints, lanes, kernels=()):
    """The ``lanes`` names ``node`` does arithmetic on, when it is
    arithmetic among them and Python numbers only (``0.5 * acc``, ``a -
    b``, a fused kernel of such arithmetic called on them; eagerly
    ``lanes.WeakLanes`` then stays weak), else None.  Such a value may be
    weak lanes too: ``weak_lanes_of`` says so to Numba."""
    found = []
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
            node.func.id in kernels and not node.keywords:
        node = ast.Tuple(elts=node.args, ctx=ast.Load())
    elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Name) and \
            node.args[0].id in lanes and _shape_op(node.func):
        # expand_dims(acc, 1): the same numbers, another shape (as a view
        # of ``lanes.WeakLanes`` is one)
        return [node.args[0].id]

    def walk(n):
        if isinstance(n, ast.BinOp) and isinstance(n.op, ARITHMETIC):
            return walk(n.left) and walk(n.right)
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, (ast.USub, ast.UAdd)):
            return walk(n.operand)
        if isinstance(n, ast.Name) and n.id in lanes:
            if n.id not in found:
                found.append(n.id)
            return True
        return is_number(n) or isinstance(n, ast.Name) and n.id in ints
    if isinstance(node, ast.Tuple):
        ok = all(walk(e) for e in node.elts)
    else:
        ok = isinstance(node, (ast.BinOp, ast.UnaryOp)) and walk(node)
    return found if ok and found else None
