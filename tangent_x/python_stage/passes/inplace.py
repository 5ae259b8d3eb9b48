"""Update lists in place where the old version is dead.

Canonical code is functional: ``xs.append(v)`` in code being transformed
becomes ``xs_1 = appended(xs, v)`` (a new list) and ``xs.pop()`` becomes
``last = xs[-1]; xs_1 = xs[:-1]``, which is what lets derivative code be
differentiated again.  Run as it stands, a loop that pushes on a tape this
way copies the tape at every step: O(n^2) for n steps.  When nothing reads
the old list after the update, the copy is unobservable, and this pass
writes the update in place::

    xs_1 = appended(xs, v)     ->    xs.append(v)
                                     xs_1 = xs
    xs_1 = xs[:-1]             ->    xs.pop()
                                     xs_1 = xs

"Nothing reads the old list" must hold for every name that may refer to
it, so the pass first groups names into families -- a name, the names
copied from it, and the versions ``appended``/slicing derive from it --
and keeps only families that certainly hold lists this function created
(``[]``, ``list(...)``, ``zeros_like`` of such a list) and that never
escape: no member is stored into a container, passed to a call other than
the few that only read it, or bound from anything else (an argument, an
unpacked tuple).  A family passes the test at an update when no member but
the updated name is live after it (``liveness``).
"""
import gast

from ...core import ir
from ...core.builders import assign, attribute, call
from ...analysis.unionfind import UnionFind
from ...analysis.defuse import assigned_targets
from ...analysis.liveness import walk_blocks

# calls that read a list without keeping a reference to it
_READERS = {"len", "zeros_like", "list", "iteration_item", "tuple", "sum", "max", "min"}


def _is_numpy_call(node):
    """``np.stack(xs)``, ``np.array(xs)``: NumPy makes an array of a list's
    items and keeps no reference to the list."""
    return isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and \
        ir.is_name(node.func.value) and node.func.value.id == "np"


def _call_name(node):
    if isinstance(node, gast.Call) and ir.is_name(node.func):
        return node.func.id
    return None


def _is_pop_slice(node):
    """``x[:-1]`` or ``x[slice(None, -1)]`` (how the two modes print a pop)."""
    if not (isinstance(node, gast.Subscript) and ir.is_name(node.value)):
        return False
    s = node.slice
    if isinstance(s, gast.Slice):
        parts = (s.lower, s.upper, s.step)
    elif _call_name(s) == "slice" and len(s.args) == 2 and not s.keywords:
        parts = (s.args[0], s.args[1], None)
    else:
        return False
    lower, upper, step = parts
    none = lambda n: n is None or isinstance(n, gast.Constant) and n.value is None  # noqa: E731
    return none(lower) and none(step) and isinstance(upper, gast.Constant) \
        and upper.value == -1


def _is_item_read(node):
    """``xs[k]`` or ``xs[a:b]`` read (not stored to): an item, or a new list
    of the items; neither keeps a reference to ``xs`` itself."""
    return isinstance(node, gast.Subscript) and ir.is_name(node.value) and \
        isinstance(node.ctx, gast.Load)


def _statements(blocks):
    for block in blocks:
        for stmt in block.stmts:
            yield from _nested(stmt)


def _nested(stmt):
    yield stmt
    for field in ("body", "orelse"):
        for s in getattr(stmt, field, None) or ():
            yield from _nested(s)


def _owned_families(blocks):
    """Families (root name -> member names) that certainly hold lists this
    function created and never escape."""
    families = UnionFind()
    sources = {}          # name -> list of ("fresh" | "derived" | "zeros" | "other", source)
    safe_reads = set()    # id() of Name nodes read in a way that keeps no reference
    for stmt in _statements(blocks):
        if isinstance(stmt, gast.Assign) and ir.is_name(stmt.targets[0]):
            target, value = stmt.targets[0].id, stmt.value
            name = _call_name(value)
            if isinstance(value, gast.List) and not value.elts:
                kind = ("fresh", None)
            elif name == "list" and len(value.args) == 1:
                kind = ("fresh", None)
                safe_reads.add(id(value.args[0]))
            elif name == "appended" and len(value.args) == 2 and ir.is_name(value.args[0]):
                kind = ("derived", value.args[0].id)
                safe_reads.add(id(value.args[0]))
            elif _is_pop_slice(value) or ir.is_name(value):
                source = value.value if isinstance(value, gast.Subscript) else value
                kind = ("derived", source.id)
                safe_reads.add(id(source))
            elif name == "zeros_like" and len(value.args) == 1 and ir.is_name(value.args[0]):
                kind = ("zeros", value.args[0].id)
                safe_reads.add(id(value.args[0]))
            else:
                kind = ("other", None)
            sources.setdefault(target, []).append(kind)
            if kind[0] == "derived":
                families.union(target, kind[1])
        elif isinstance(stmt, gast.Assign):
            for n in ir.walk_names(stmt.targets[0]):
                sources.setdefault(n.id, []).append(("other", None))
        elif isinstance(stmt, gast.For):
            for n in ir.walk_names(stmt.target):
                sources.setdefault(n.id, []).append(("other", None))
        if isinstance(stmt, (gast.While, gast.If)) and ir.is_name(stmt.test):
            safe_reads.add(id(stmt.test))          # ``while xs:``: its truth
        for node in ir.walk(stmt):
            if _is_item_read(node):
                safe_reads.add(id(node.value))
            elif (_call_name(node) in _READERS or _is_numpy_call(node)) and node.args:
                safe_reads.add(id(node.args[0]))
    members = {}
    for name in set(sources) | set(families.parent):
        members.setdefault(families.find(name), set()).add(name)
    # a family escapes when a member is read other than safely
    escaped = set()
    for stmt in _statements(blocks):
        for node in _shallow_walk(stmt):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load) \
                    and id(node) not in safe_reads and node.id in sources \
                    and not isinstance(stmt, gast.Return):
                escaped.add(families.find(node.id))
    owned = {root for root in members if root not in escaped}
    changed = True
    while changed:            # every binding must make a list this function owns
        changed = False
        for root in list(owned):
            for name in members[root]:
                bindings = sources.get(name, [("other", None)])   # unbound: an argument
                if any(kind == "other" or
                       kind == "zeros" and families.find(src) not in owned
                       for kind, src in bindings):
                    owned.discard(root)
                    changed = True
                    break
    return {root: members[root] for root in owned}, families


def _shallow_walk(stmt):
    """The nodes of ``stmt`` outside its nested statement bodies."""
    if isinstance(stmt, (gast.For, gast.While, gast.If)):
        heads = [stmt.iter, stmt.target] if isinstance(stmt, gast.For) else [stmt.test]
        for head in heads:
            yield from ir.walk(head)
        return
    yield from ir.walk(stmt)


def reuse_dead_lists(blocks, live_out):
    """Rewrite ``appended`` and pop-slices in place where allowed (see the
    module docstring).  ``live_out``: names read at the end."""
    if not any(_call_name(getattr(s, "value", None)) == "appended" or
               _is_pop_slice(getattr(s, "value", None)) for s in _statements(blocks)):
        return blocks          # nothing to update in place
    owned, families = _owned_families(blocks)
    if not owned:
        return blocks

    def visit(stmt, live):
        if not (isinstance(stmt, gast.Assign) and ir.is_name(stmt.targets[0])):
            return None
        value, target = stmt.value, stmt.targets[0].id
        if _call_name(value) == "appended" and ir.is_name(value.args[0]):
            old, method, args = value.args[0].id, "append", [value.args[1]]
        elif _is_pop_slice(value):
            old, method, args = value.value.id, "pop", []
        else:
            return None
        family = owned.get(families.find(old))
        if family is None or (family - {target}) & live:
            return None
        update = gast.Expr(value=call(attribute(old, method), *args))
        return [update, assign(target, ir.name(old))]

    walk_blocks(blocks, live_out, visit)
    return blocks


# --- arrays: cotangent accumulators ---------------------------------------------

# calls whose result holds no reference to their argument
_ARRAY_READERS = {"zeros_like", "len"}


def _safe_array_reads(stmt):
    """id() of the Name nodes in ``stmt`` read in a way that keeps no
    reference to the object: operands of arithmetic (``a + b`` is a new
    object), arguments of shape queries, the value of a copy or the left
    operand of a sum bound to a name (both join the family instead)."""
    safe = set()
    for node in _shallow_walk(stmt):
        if isinstance(node, gast.BinOp):
            safe.update(id(side) for side in (node.left, node.right) if isinstance(side, gast.Name))
        elif isinstance(node, gast.UnaryOp) and isinstance(node.operand, gast.Name):
            safe.add(id(node.operand))
        elif isinstance(node, gast.Compare):
            safe.update(id(side) for side in [node.left] + node.comparators
                        if isinstance(side, gast.Name))
        elif (_call_name(node) in _ARRAY_READERS or _spelled(node) == "np.shape") and node.args:
            safe.add(id(node.args[0]))
    if isinstance(stmt, gast.Assign) and ir.is_name(stmt.targets[0]) and ir.is_name(stmt.value):
        safe.add(id(stmt.value))
    return safe


def _spelled(node):
    if isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and \
            ir.is_name(node.func.value):
        return f"{node.func.value.id}.{node.func.attr}"
    return None


def _sum_onto(value):
    """``L`` for a value ``L + B`` (the accumulation the reverse pass writes)."""
    if isinstance(value, gast.BinOp) and isinstance(value.op, gast.Add) and \
            ir.is_name(value.left):
        return value.left.id
    return None


def _owned_accumulators(blocks):
    """Families of names that certainly hold an object this function
    allocated with ``zeros_like`` (or a sum onto one) and that no other
    object refers to: every binding of a member is ``zeros_like(...)``, a
    sum ``member + b`` or a copy of a member, and a member is read only by
    arithmetic (whose result is a new object), shape queries, those
    bindings and the final ``return``."""
    families = UnionFind()
    sources = {}
    for stmt in _statements(blocks):
        if isinstance(stmt, gast.Assign) and ir.is_name(stmt.targets[0]):
            target, value = stmt.targets[0].id, stmt.value
            left = _sum_onto(value)
            if _call_name(value) == "zeros_like":
                kind = "fresh"
            elif left is not None:
                kind = "derived"
                families.union(target, left)
            elif ir.is_name(value):
                kind = "derived"
                families.union(target, value.id)
            else:
                kind = "other"
            sources.setdefault(target, []).append(kind)
        else:
            for target in assigned_targets(stmt):
                for n in ir.walk_names(target):
                    sources.setdefault(n.id, []).append("other")
    members = {}
    for name in set(sources) | set(families.parent):
        members.setdefault(families.find(name), set()).add(name)
    rejected = set()
    for stmt in _statements(blocks):
        if isinstance(stmt, gast.Return):
            continue
        safe = _safe_array_reads(stmt)
        for node in _shallow_walk(stmt):
            if isinstance(node, gast.Name) and not isinstance(node.ctx, gast.Store) \
                    and id(node) not in safe:
                rejected.add(families.find(node.id))
    owned = {}
    for root, names in members.items():
        kinds = [k for n in names for k in sources.get(n, ["other"])]   # unbound: an argument
        if root not in rejected and "fresh" in kinds and "other" not in kinds:
            owned[root] = names
    return owned, families


def accumulate_in_place(blocks, live_out, grows=None):
    """``A_1 = A + b`` -> ``A += b`` (then ``A_1 = A``) where ``A`` is an
    owned accumulator (see ``_owned_accumulators``) that no name but ``A_1``
    reads afterwards.

    The reverse pass sums every contribution to a cotangent functionally
    (``W_bar = W_bar + matmul_adjoint_lhs(...)``), which is what lets
    derivative code be differentiated again; run as written, a loop
    allocates a new accumulator at every step.  Under these conditions the
    old array is unobservable, so adding into it is the same program, and
    ``jit`` can then write the contribution straight into the buffer
    (``numba_stage``: no temporary at all for a rank-one update).

    ``grows(A, A_1)`` says where the sum may be larger than ``A`` (under
    vmap, a shared accumulator plus a batched contribution: ``A`` has one
    example's shape, ``A_1`` the batch's); those stay functional."""
    if not any(isinstance(s, gast.Assign) and _sum_onto(s.value) for s in _statements(blocks)):
        return blocks
    owned, families = _owned_accumulators(blocks)
    if not owned:
        return blocks

    def visit(stmt, live):
        if not (isinstance(stmt, gast.Assign) and ir.is_name(stmt.targets[0])):
            return None
        old, target = _sum_onto(stmt.value), stmt.targets[0].id
        family = owned.get(families.find(old)) if old is not None else None
        if family is None or (family - {target}) & live:
            return None
        if grows is not None and grows(old, target):
            return None
        update = gast.AugAssign(target=ir.name(old, gast.Store()), op=gast.Add(),
                                value=stmt.value.right)
        if target == old:
            return [update]
        return [update, assign(target, ir.name(old))]

    walk_blocks(blocks, live_out, visit)
    return blocks
