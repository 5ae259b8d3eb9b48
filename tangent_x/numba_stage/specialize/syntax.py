"""Facts the specialiser reads off the python stage's syntax trees: how
lists are used, what a statement assigns, whether a loop body jumps."""
import ast


def in_place_appends(func):
    """The calls of ``xs = appended(xs, item)`` (one name, never copied to
    another): the old list is not read again, so a loop's list (a
    ``Tape``) may take the item in place (a scan's outputs)."""
    copied = {node.value.id for node in ast.walk(func)
              if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name)}
    return {id(node.value) for node in ast.walk(func)
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and
            isinstance(node.targets[0], ast.Name) and isinstance(node.value, ast.Call) and
            isinstance(node.value.func, ast.Name) and node.value.func.id == "appended" and
            node.value.args and isinstance(node.value.args[0], ast.Name) and
            node.value.args[0].id == node.targets[0].id and
            node.targets[0].id not in copied}


def scan_output_lists(func):
    """Names of lists a scan's loop fills (``ys = appended(ys, y)``): one
    structure per step, so a step's ``None`` makes a list of Nones (a list
    whose first item is None elsewhere may hold other values later, as a
    loop's early-return value does)."""
    return {node.args[0].id for node in ast.walk(func)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and
            node.func.id == "appended" and node.args and isinstance(node.args[0], ast.Name)}


def stack_lists(func):
    """Names of the python stage's lists used only as stacks: bound to
    ``[]``, pushed (``xs.append(v)``), popped (``xs.pop()``) and measured
    (``len(xs)``), nothing else (no indexing, iterating or passing on)."""
    parents = {}
    for node in ast.walk(func):
        for child in ast.iter_child_nodes(node):
            parents[child] = node
    ok, bad = set(), set()
    for node in ast.walk(func):
        if not isinstance(node, ast.Name):
            continue
        parent = parents.get(node)
        grand = parents.get(parent)
        if isinstance(node.ctx, ast.Store):
            use = isinstance(parent, ast.Assign) and len(parent.targets) == 1 and \
                parent.targets[0] is node and isinstance(parent.value, ast.List) and \
                not parent.value.elts
        elif isinstance(parent, ast.Attribute) and parent.value is node and \
                isinstance(grand, ast.Call) and grand.func is parent:
            use = (parent.attr == "append" and len(grand.args) == 1 and
                   isinstance(parents.get(grand), ast.Expr)) or \
                (parent.attr == "pop" and not grand.args)
        elif isinstance(parent, ast.Call) and node in parent.args:
            use = isinstance(parent.func, ast.Name) and parent.func.id == "len" and \
                len(parent.args) == 1 and not parent.keywords
        else:
            use = False
        (ok if use else bad).add(node.id)
    return ok - bad


def tagged(stmt, source):
    stmt._tx_src = getattr(source, "lineno", None)
    return stmt


def target_hint(target):
    return target.id if isinstance(target, ast.Name) else "value"


def stored_names(node):
    """The names bound anywhere under ``node`` (an ``ast`` tree of the
    numba stage; the python stage's gast trees have analysis/defuse.py)."""
    return {n.id for n in ast.walk(node)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def assigned_names(stmt):
    names = set()
    for node in ast.walk(stmt):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr in ("append", "pop") and isinstance(node.func.value, ast.Name):
            names.add(node.func.value.id)
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store) and \
                isinstance(node.value, ast.Name):
            names.add(node.value.id)
    if isinstance(stmt, ast.For):
        names.discard(stmt.target.id) if isinstance(stmt.target, ast.Name) else None
    return sorted(names)


def has_jump(stmts):
    """Whether a ``break``/``continue`` in ``stmts`` leaves this loop (one in
    a nested loop leaves only that one)."""
    for stmt in stmts:
        if isinstance(stmt, (ast.Break, ast.Continue)):
            return True
        if isinstance(stmt, (ast.For, ast.While)):
            continue
        for field in ("body", "orelse"):
            if has_jump(getattr(stmt, field, []) or []):
                return True
    return False


def range_node(start, stop, step):
    args = [ast.Constant(stop)] if (start == 0 and step == 1) else \
        ([ast.Constant(start), ast.Constant(stop)] if step == 1 else
         [ast.Constant(start), ast.Constant(stop), ast.Constant(step)])
    return ast.Call(func=ast.Name("range", ast.Load()), args=args, keywords=[])


_BOOLEAN_CALLS = {"logical_and", "logical_or", "logical_not", "logical_xor", "isnan",
                  "isfinite", "isinf", "signbit"}


def is_boolean_expr(node, masks):
    """Whether ``node`` computes a boolean array (a mask) by its spelling:
    comparisons, ``~``/``&``/``|`` of masks, ``np.logical_*``."""
    if isinstance(node, ast.Compare):
        return True
    if isinstance(node, ast.Name):
        return node.id in masks
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Invert, ast.Not)):
        return is_boolean_expr(node.operand, masks)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.BitAnd, ast.BitOr, ast.BitXor)):
        return is_boolean_expr(node.left, masks) and is_boolean_expr(node.right, masks)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.attr in _BOOLEAN_CALLS
    return False


def is_simple(node):
    """Whether ``node`` is a name or an attribute of one (``x.shape``):
    cheap to spell twice."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


def popped_from(node):
    """``h`` for an item of the tape ``h_tape`` (``h_tape.pop()`` or, for a
    sized tape, ``h_tape[size]``), else None."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
            node.func.attr == "pop" and not node.args:
        node = node.func.value
    elif isinstance(node, ast.Subscript):
        node = node.value
    else:
        return None
    if isinstance(node, ast.Name) and node.id.endswith("_tape"):
        return node.id[:-len("_tape")]
    return None
