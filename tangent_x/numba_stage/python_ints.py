"""Names of the numba stage's code that hold Python numbers (weak in NumPy's
promotion, NEP 50): shape entries, ``len``, ``range`` counters, number
literals and arithmetic among them, parameters given Python numbers, and
items read back from a list of such numbers.  ``weak_scalars`` spells the
numbers next to narrow arrays as NumPy types them."""
import ast

from .weak_lanes import ARITHMETIC as _ARITHMETIC, is_number as _is_number

_RANGE = object()     # the value of a ``for`` target over ``range(...)``: an int


def _is_range(node):
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
        node.func.id == "range"


def python_ints(stmts, numpy_names, numbers=()):
    """Names that hold a Python number in NumPy terms, so weak too: a shape's
    entries (``shape_x_0 = shape_x[0]`` after ``shape_x = np.shape(x)``),
    ``len``, sizes and ranks, a ``for`` counter over ``range``, a name
    assigned only number literals and arithmetic among such numbers (a
    ``while`` loop's ``s = 1.0`` ... ``s = s * 2.0``), a parameter in
    ``numbers``.  A name assigned anything else as well (an array, a NumPy
    scalar, another parameter) is left out."""
    kernels = {}            # fused kernels defined beside the code: name -> parameters
    returned = {}           # a map kernel's name -> the expression it returns
    for stmt in stmts:
        if isinstance(stmt, ast.FunctionDef) and not stmt.args.vararg and \
                not stmt.args.kwonlyargs and not stmt.args.defaults:
            kernels[stmt.name] = [a.arg for a in stmt.args.args]
            if stmt.body and isinstance(stmt.body[-1], ast.Return) and \
                    not any(isinstance(d, ast.Name) and d.id == "elementwise_sum"
                            for d in stmt.decorator_list):
                returned[stmt.name] = stmt.body[-1].value
    assigned = {}
    fed, fed_values = [], {}     # (kernel parameter, the argument a call passes it)
    known = set()           # the Name targets read below; any other store is unknown
    appended = {}           # a list's name -> the values appended to it (None: unknown)
    for stmt in stmts:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        known.add(id(target))
                        # a fused map's call holds what its statements gave
                        # (numbers: a Python number, as unfused); a sum, a
                        # NumPy scalar
                        value = node.value
                        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) \
                                and value.func.id in kernels:
                            value = returned.get(value.func.id)
                        assigned.setdefault(target.id, []).append(value)
            elif isinstance(node, ast.For) and isinstance(node.target, ast.Name):
                # ``for i in range(n)``: ``i`` is a Python int, as in the source
                known.add(id(node.target))
                assigned.setdefault(node.target.id, []).append(
                    _RANGE if _is_range(node.iter) else None)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and \
                    id(node) not in known:
                # unpacked, augmented, a comprehension's or a with's target
                assigned.setdefault(node.id, []).append(None)
            elif isinstance(node, ast.FunctionDef) and node.name in kernels:
                pass        # its parameters: what its calls pass (below)
            elif isinstance(node, (ast.FunctionDef, ast.Lambda)):
                for arg in node.args.args:
                    assigned.setdefault(arg.arg, []).append(None)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                    isinstance(node.func.value, ast.Name) and \
                    node.func.attr in ("append", "extend", "insert"):
                # a list's items: what is appended (anything else: unknown)
                one = node.func.attr == "append" and len(node.args) == 1 and \
                    not node.keywords
                appended.setdefault(node.func.value.id, []).append(
                    node.args[0] if one else None)
            elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store) and \
                    isinstance(node.value, ast.Name):
                appended.setdefault(node.value.id, []).append(None)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                    node.func.id in kernels:
                # a fused kernel's parameter holds what its callers pass
                params = kernels[node.func.id]
                for k, param in enumerate(params):
                    arg = node.args[k] if k < len(node.args) and not node.keywords else None
                    fed.append((param, None if isinstance(arg, ast.Starred) else arg))
    for name in numbers:
        assigned.setdefault(name, []).append(_RANGE)     # a Python number
    for param, arg in fed:
        # a name the statements never assign is a parameter of the compiled
        # function (not a Python number: those are in ``numbers``); a kernel
        # parameter is often named like it, which must not read as a cycle
        if isinstance(arg, ast.Name) and arg.id not in assigned:
            arg = None
        fed_values.setdefault(param, []).append(arg)
    for param, values in fed_values.items():
        assigned.setdefault(param, []).extend(values)
    # lists of Python numbers (``pairs_1_tape.append(times_i)``): an item
    # read back is a Python number too (NumPy sees the number appended)
    lists = set(appended) | {name for name, values in assigned.items()
                             if any(isinstance(v, ast.List) for v in values)}
    grew = True
    while grew:         # and a slice of one is one (``pairs_sliced = pairs[::-1]``)
        grew = False
        for name, values in assigned.items():
            if name not in lists and any(
                    isinstance(v, ast.Subscript) and isinstance(v.slice, ast.Slice) and
                    isinstance(v.value, ast.Name) and v.value.id in lists for v in values):
                lists.add(name)
                grew = True
    for name in lists:
        if name in assigned:
            assigned[name].extend(appended.get(name, []))
    shapes, ints = set(), set()

    def listed(node):
        return isinstance(node, ast.Name) and node.id in lists and node.id in ints

    def shape_like(value):
        if isinstance(value, ast.Attribute):
            return value.attr == "shape"
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and \
                isinstance(value.func.value, ast.Name) and \
                value.func.value.id in numpy_names:
            return value.func.attr == "shape"
        return isinstance(value, ast.Name) and value.id in shapes

    def int_like(value):
        if value is _RANGE or _is_number(value):
            return True
        if isinstance(value, ast.BinOp) and isinstance(value.op, _ARITHMETIC):
            # arithmetic of Python numbers is a Python number (``s = s * 2.0``
            # with ``s = 1.0``, ``0.1 * i`` with a ``range`` counter ``i``)
            return int_like(value.left) and int_like(value.right)
        if isinstance(value, ast.UnaryOp) and isinstance(value.op, (ast.USub, ast.UAdd)):
            return int_like(value.operand)
        if isinstance(value, ast.List):
            return all(int_like(e) for e in value.elts)
        if isinstance(value, ast.Subscript):
            if listed(value.value):
                return True         # an item, or a slice (a list of numbers again)
            return shape_like(value.value) and not isinstance(value.slice, ast.Slice)
        if isinstance(value, ast.Attribute):
            return value.attr in ("ndim", "size")
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and \
                value.func.attr == "pop" and listed(value.func.value):
            return True
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
            if value.func.id == "iteration_item" and value.args and listed(value.args[0]):
                return True
            # len(...), and numba_runtime's size/ndim, which np.size/np.ndim
            # become; float(v), int(v), round(v) give Python numbers
            return value.func.id in ("len", "size", "ndim", "float", "int", "round")
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and \
                isinstance(value.func.value, ast.Name) and \
                value.func.value.id in numpy_names:
            return value.func.attr in ("ndim", "size")
        return isinstance(value, ast.Name) and value.id in ints and value.id not in lists
    changed = True
    while changed:
        changed = False
        for name, values in assigned.items():
            if name not in shapes and all(v is not None and shape_like(v) for v in values):
                shapes.add(name)
                changed = True
    # the largest set closed under the rules: a loop-carried ``s = s * 2.0``
    # holds a Python number if everything else it is assigned does
    ints = {name for name, values in assigned.items() if None not in values}
    changed = True
    while changed:
        changed = False
        for name in list(ints):
            if not all(int_like(v) for v in assigned[name]):
                ints.discard(name)
                changed = True
    return ints - lists
