"""Elementwise fusion for the numba stage: a chain of elementwise statements
becomes one kernel, so one pass over memory with no temporaries.

Why: ``x_times_x = x * x; times_x = x * 2.0; plus = x_times_x + times_x``
is three loops and two temporary arrays under Numba (its array-expression
pass fuses only unnamed temporaries within one statement).  On large arrays
the passes over memory, and the page faults of fresh temporaries, cost more
than the math.  The chain is instead emitted as a scalar function, and
its call::

    @elementwise
    def elementwise_plus(x):
        x_times_x = x * x
        times_x = x * 2.0
        return x_times_x + times_x

    ...
    plus = elementwise_plus(x)

``fused`` holds what the decorator compiles: per Numba types of the
arguments, either one fused pass (a loop calling the scalar function,
into one result, broadcasting as the statements did) or, where fusing could change
the result (tuples added to tuples, which is shape arithmetic also spelled
with ``+``; small integers and booleans, whose Numba scalar types are wider
than their array types), the statements as written.  So nothing about
kinds, shapes or dtypes needs to be known here: the decision is made on
Numba's types, where they are certain.

A sum at the end joins the group: ``sq = x * x; s = np.sum(sq)`` becomes
``s = elementwise_sum_s(x)`` under ``@elementwise_sum``, one pass with no
array at all (its summation order is in ``fused``'s doc).

Which statements: an assignment ``name = expr`` whose ``expr`` is built of
names, numbers, ``+ - * / **``, unary ``-``/``+`` and ``vmath`` calls is
elementwise.  Starting from the last one in a straight-line body, the
statements defining its operands join the group when the name they define is
assigned once in the whole function and read only inside the group, and
when every statement between them and the group's end is in the group: a
group is a run of adjacent statements, so nothing is reordered (a call in
between may update an array in place: ``mask_assign(x, m, v)``).  Names
read several times inside the group are fine (one kernel variable).  A
group is emitted when it has at least two statements (one statement's
arithmetic Numba fuses already), or one followed by its ``np.sum``, and
only where it pays for its compile: its statements hold at least three
operations (``_PAYS``; one before a sum) with an operand that may be an
array of rank >= 1.  Why three: fusing saves a pass over memory and a
fresh array per temporary it removes, which pays on arrays that outgrow
the caches, while its compile is paid on every first call, large arrays or
small.  Two operations leave one temporary, and ``tanh(x @ w + b)`` is
typical of them: fused, ``tanh`` is a scalar function compiled in the
process (~10% of a cold ``jit(grad(mlp loss))``), where unfused it is the
array kernel compiled beside the caller (beside.py); one temporary of a
hidden layer is worth less.  Three operations (``x * x + x * 2.0``: two
temporaries, two thirds of the memory traffic) or a closing sum (no array
at all) pay on large arrays, and a kernel is one Numba function to
compile (fused.py: the statements are written into its loop).  Ranks come from the jit signature (``ranks``: every leaf that is not
an array is a number) and follow through the code; a chain of numbers (a
Newton step, a loss's scalar tail) stays as written, with no kernel to
compile, since fusing gains nothing there and each kernel costs compile time.
"""
import ast
from collections import Counter

import numpy as np

_ITEM = "[]"              # prefix of a container's items in ``ranks``
_BINOPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)
_UNARY = (ast.USub, ast.UAdd)
# operations on arrays from which a group is fused (see the module doc)
_PAYS = 3


def fuse(body, params, vmath_name, numpy_names, taken, param_ranks=None):
    """(new body, kernels, decorators): the function body ``body``
    (parameters ``params``) with fused groups replaced by calls, the
    kernels' ``ast.FunctionDef``s (decorated) and the names of the
    decorators they use (``elementwise``, ``elementwise_sum``: to import
    from the numba runtime).  ``vmath_name``/``numpy_names``: the names
    binding ``vmath`` and NumPy; ``taken``: names in use in the module
    (kernel names are chosen outside it, and added); ``param_ranks``:
    parameter -> rank where the signature says (0 for a number), so that
    groups of numbers are left as written (see ``ranks``)."""
    loads, stores = Counter(), Counter()
    for stmt in body:
        _count(stmt, loads, stores)
    local = set(stores) | set(params)
    ctx = _Context(vmath_name, set(numpy_names), loads, stores, local, taken)
    ctx.ranks = ranks(body, param_ranks or {}, params, vmath_name, ctx.numpy_names)
    return _fuse_body(body, ctx), ctx.kernels, sorted(ctx.decorators)


class _Context:
    def __init__(self, vmath_name, numpy_names, loads, stores, local, taken):
        self.vmath_name, self.numpy_names = vmath_name, numpy_names
        self.loads, self.stores, self.local, self.taken = loads, stores, local, taken
        self.kernels, self.decorators = [], set()
        self.ranks = {}


def ranks(body, param_ranks, params, vmath_name, numpy_names):
    """name -> rank for the variables whose rank follows from the
    parameters' (``param_ranks``): every assignment of the name is
    elementwise arithmetic, a ufunc or ``np.where``/``np.clip`` of known
    ranks (the largest of them), or a whole-array reduction (0).  A name
    assigned any other way has no entry (unknown).  Found by iterating up
    from the smallest ranks, so a loop's ``y = 0.5 * (y + a / y)`` of
    numbers is a number.  ``params``: all parameters (those without a
    rank are unknown)."""
    defs, unknown = {}, set(params) - set(param_ranks)
    for node in ast.walk(ast.Module(body=list(body), type_ignores=[])):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                isinstance(node.targets[0], ast.Name):
            defs.setdefault(node.targets[0].id, []).append(node.value)
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                isinstance(node.targets[0], ast.Subscript) and \
                isinstance(node.targets[0].value, ast.Name):
            # an item of a tape or an array: its reads are as the values stored
            defs.setdefault(_ITEM + node.targets[0].value.id, []).append(node.value)
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            defs.setdefault(node.target.id, []).append(
                ast.BinOp(ast.Name(node.target.id, ast.Load()), node.op, node.value))
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            pass                      # a target of the forms above, or below
        elif isinstance(node, (ast.For, ast.comprehension, ast.With, ast.NamedExpr)) or \
                isinstance(node, ast.Assign):
            for target in (node.targets if isinstance(node, ast.Assign) else
                           [getattr(node, "target", None)] + [
                               i.optional_vars for i in getattr(node, "items", [])]):
                for n in ast.walk(target) if target is not None else ():
                    if isinstance(n, ast.Name):
                        unknown.add(n.id)
    for key in [k for k in defs if k.startswith(_ITEM)]:
        tape = key[len(_ITEM):]
        if tape in params or tape not in defs or not all(_is_tape(v) for v in defs[tape]):
            unknown.add(key)          # only a tape's items are its stored values
    known = dict(param_ranks)
    for name in defs:
        known.setdefault(name, 0)     # a local's first assignment is one of defs
    changed = True
    while changed:
        changed = False
        for name, values in defs.items():
            if name in unknown:
                continue
            rank = known.get(name, 0)
            for value in values:
                r = _rank_of(value, known, vmath_name, numpy_names, unknown)
                if r is None:
                    unknown.add(name)
                    changed = True
                    break
                rank = max(rank, r)
            else:
                if rank != known.get(name):
                    known[name] = rank
                    changed = True
    return {n: r for n, r in known.items() if n not in unknown}


def _is_tape(value):
    """``value`` is ``None`` or ``grown(...)`` (a tape, numba_runtime.grown)."""
    return isinstance(value, ast.Constant) and value.value is None or \
        isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and \
        value.func.id == "grown"


def _rank_of(node, known, vmath_name, numpy_names, unknown):
    """The rank of the value of ``node`` from ``known`` ranks, or None."""
    if isinstance(node, ast.Name):
        return None if node.id in unknown or node.id not in known else known[node.id]
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and \
            isinstance(node.ctx, ast.Load) and not isinstance(node.slice, (ast.Slice, ast.Tuple)):
        # a tape's item (``y = y_tape[i]`` of a tape of numbers; the tape is
        # a list, or an array of one more axis, whose items are stored values)
        item = _ITEM + node.value.id
        return None if item in unknown or item not in known else known[item]
    if isinstance(node, ast.Constant):
        ok = isinstance(node.value, (int, float)) and not isinstance(node.value, bool)
        return 0 if ok else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, _BINOPS):
        parts = [node.left, node.right]
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, _UNARY):
        parts = [node.operand]
    elif isinstance(node, ast.Compare):
        parts = [node.left] + node.comparators
    elif isinstance(node, ast.Call) and not node.keywords and isinstance(node.func, ast.Name):
        if node.func.id in ("unbroadcast", "unreduce") and len(node.args) == 2:
            parts = node.args[1:]      # the runtime helpers: the second's shape
        elif node.func.id == "clip":
            parts = node.args
        elif node.func.id in ("size", "len") and len(node.args) == 1:
            return 0                   # a count: a number
        else:
            return None
    elif isinstance(node, ast.Call) and not node.keywords and isinstance(
            node.func, ast.Attribute) and isinstance(node.func.value, ast.Name):
        module, attr = node.func.value.id, node.func.attr
        if module == vmath_name and len(node.args) == 1:
            parts = node.args
        elif module in numpy_names and attr in ("sum", "mean", "max", "min", "prod") and \
                len(node.args) == 1:
            return 0                   # a whole-array reduction: a number
        elif module in numpy_names and len(node.args) == 1 and \
                isinstance(getattr(np, attr, None), type) and \
                issubclass(getattr(np, attr), np.number):
            return 0                   # np.float64(...): a number
        elif module in numpy_names and (isinstance(getattr(np, attr, None), np.ufunc) or
                                        attr in ("where", "clip")):
            parts = node.args
        else:
            return None
    else:
        return None
    ranks_ = [_rank_of(p, known, vmath_name, numpy_names, unknown) for p in parts]
    return None if None in ranks_ else max(ranks_)


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


def _fuse_body(body, ctx):
    body = [_fuse_nested(s, ctx) for s in body]
    elementwise = {i: s.targets[0].id for i, s in enumerate(body) if _is_elementwise_assign(
        s, ctx.vmath_name)}
    defined_at = {}
    for i, name in elementwise.items():
        defined_at.setdefault(name, i)
    groups, used = [], set()
    for j in range(len(body) - 1, -1, -1):
        if j in used:
            continue
        summed = _summed_name(body[j], ctx)
        if summed is not None:
            k = j - 1        # the statement defining the summed array, right before
            if k in elementwise and k not in used and elementwise[k] == summed and \
                    ctx.stores[summed] == 1 and ctx.loads[summed] == 1 and \
                    body[j].targets[0].id != summed:
                members = _group(body, k, elementwise, defined_at, ctx, used)
                if _array_ops(body, members, ctx) < 1:
                    continue           # numbers: as written, no kernel to compile
                groups.append((members | {j}, True))
                used.update(members | {j})
            continue
        if j not in elementwise:
            continue
        members = _group(body, j, elementwise, defined_at, ctx, used)
        if len(members) >= 2 and _array_ops(body, members, ctx) >= _PAYS:
            groups.append((members, False))
            used.update(members)
    if not groups:
        return body
    replaced = {}
    for members, reduce in groups:
        root = max(members)
        call = _kernel(body, sorted(members), reduce, ctx)
        replaced.update({i: None for i in members})
        replaced[root] = call
    return [replaced.get(i, s) for i, s in enumerate(body) if replaced.get(i, s) is not None]


def _array_ops(body, members, ctx):
    """How many operations of the statements ``members`` may take an array
    of rank >= 1 (an operand of unknown rank counts): only such chains are
    worth a kernel, whose compilation costs more than a number's
    arithmetic gains from it."""
    count = 0
    for i in members:
        for node in ast.walk(body[i].value):
            if isinstance(node, ast.BinOp):
                parts = [node.left, node.right]
            elif isinstance(node, ast.UnaryOp):
                parts = [node.operand]
            elif isinstance(node, ast.Call):
                parts = node.args
            else:
                continue
            ranks_ = [_rank_of(p, ctx.ranks, ctx.vmath_name, ctx.numpy_names, set())
                      for p in parts]
            count += any(r is None or r >= 1 for r in ranks_)
    return count


def _summed_name(stmt, ctx):
    """``a`` when ``stmt`` is ``name = np.sum(a)`` (no axis), else None."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and
            isinstance(stmt.targets[0], ast.Name)):
        return None
    call = stmt.value
    if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and \
            call.func.attr == "sum" and isinstance(call.func.value, ast.Name) and \
            call.func.value.id in ctx.numpy_names and len(call.args) == 1 and \
            not call.keywords and isinstance(call.args[0], ast.Name):
        return call.args[0].id
    return None


def _fuse_nested(stmt, ctx):
    for field in ("body", "orelse"):
        inner = getattr(stmt, field, None)
        if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
            setattr(stmt, field, _fuse_body(inner, ctx))
    return stmt


# At most this many vmath calls in one kernel: inlined into a loop that
# broadcasts operands of different ranks, three (exp(tanh(log(...)))) kept
# LLVM's optimiser busy for minutes (fuzz seed 300108; two: seconds).
MAX_VMATH = 2


def _vmath_calls(stmt, ctx):
    return sum(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and
               isinstance(n.func.value, ast.Name) and n.func.value.id == ctx.vmath_name
               for n in ast.walk(stmt))


def _group(body, j, elementwise, defined_at, ctx, used):
    """Indices of the statements that fuse into statement ``j`` (holding
    at most ``MAX_VMATH`` vmath calls between them)."""
    members = {j}
    calls = _vmath_calls(body[j], ctx)
    changed = True
    while changed:
        changed = False
        inside = Counter()
        for i in members:
            inside.update(n.id for n in ast.walk(body[i].value) if isinstance(n, ast.Name))
        for name in list(inside):
            k = defined_at.get(name)
            if k is None or k in members or k in used or k > j or ctx.stores[name] != 1 or \
                    ctx.loads[name] != inside[name]:
                continue
            if any(m not in members for m in range(k + 1, j)):
                continue          # only a run of adjacent statements: nothing reordered
            more = _vmath_calls(body[k], ctx)
            if calls + more > MAX_VMATH:
                continue
            calls += more
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


def _kernel(body, members, reduce, ctx):
    """The call statement replacing the group ``members`` (its last one
    ``np.sum`` of the one before when ``reduce``); its kernel goes to
    ``ctx.kernels``."""
    root = body[members[-1]]
    maps = members[:-1] if reduce else members
    params, so_far = [], set()
    for i in maps:                        # names read before the group defines them
        for n in ast.walk(body[i].value):
            if isinstance(n, ast.Name) and n.id in ctx.local and n.id not in so_far and \
                    n.id not in params:
                params.append(n.id)
        so_far.add(body[i].targets[0].id)
    decorator = "elementwise_sum" if reduce else "elementwise"
    ctx.decorators.add(decorator)
    name = _fresh(f"{decorator}_{root.targets[0].id}", ctx.taken)
    stmts = [body[i] for i in maps[:-1]] + [ast.Return(value=body[maps[-1]].value)]
    kernel = ast.FunctionDef(
        name=name, args=ast.arguments(posonlyargs=[], args=[ast.arg(p) for p in params],
                                      vararg=None, kwonlyargs=[], kw_defaults=[],
                                      kwarg=None, defaults=[]),
        body=stmts, decorator_list=[ast.Name(decorator, ast.Load())],
        returns=None, type_params=[])
    ast.fix_missing_locations(ast.copy_location(kernel, root))
    ctx.kernels.append(kernel)
    call = ast.copy_location(ast.Assign(
        targets=[root.targets[0]], value=ast.Call(func=ast.Name(name, ast.Load()),
                                                  args=[ast.Name(p, ast.Load()) for p in params],
                                                  keywords=[])), root)
    call._tx_src = getattr(root, "_tx_src", None)
    return call


def _fresh(base, taken):
    name, i = base, 1
    while name in taken:
        name, i = f"{base}_{i}", i + 1
    taken.add(name)
    return name
