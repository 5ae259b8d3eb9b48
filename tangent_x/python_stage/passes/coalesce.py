"""Coalesce copies: bind a value under the name it ends up in.

Canonical code gives every value a fresh name, so a loop body that updates
a carried ``s`` computes ``s_2 = s_1 + x`` and ends with ``s_1 = s_2``; the
same happens around loops (``s_1 = s`` before).  When nothing in between
reads the copy's target, the value can be bound to it directly::

    s_2 = s_1 + x              s_1 = s_1 + x
    t = s_2 * 2.0       ->     t = s_1 * 2.0
    s_1 = s_2

which is how a person writes a loop, and saves a store per carried value
per iteration.  Conditions, for a copy ``a = b`` in a statement list:
``b`` is bound exactly once in the function, by an assignment earlier in
the same list; between that binding and the copy nothing reads or binds
``a``; and ``b`` is dead after the copy (``liveness``).  Then ``b``
becomes ``a`` from its binding to the copy, and the copy goes.

A tape read followed by its pop, ``v = t[-1]`` ... ``t.pop()``, becomes
``v = t.pop()`` when nothing in between touches ``t``.
"""
import gast

from ...core import ir
from ...analysis.defuse import binding_counts, names_with_ctx
from ...analysis.liveness import walk_blocks

_ROUNDS = 6


def coalesce(blocks, live_out):
    """Apply both rewrites to ``blocks`` (edited in place)."""
    _fuse_pops(blocks)
    for _ in range(_ROUNDS):
        live_after = {}

        def record(stmt, live):
            live_after[id(stmt)] = live
            return None
        walk_blocks(blocks, live_out, record)
        bindings = binding_counts(s for block in blocks for s in block.stmts)
        flat = [stmt for block in blocks for stmt in block.stmts]
        changed = _coalesce_list(flat, live_after, bindings, set())
        _rebuild(blocks, flat)
        if not changed:
            break
    return blocks


def _rebuild(blocks, flat):
    """Put the statements of the top-level list back into their blocks
    (a removed copy leaves its block shorter)."""
    keep = {id(s) for s in flat}
    for block in blocks:
        block.stmts = [s for s in block.stmts if id(s) in keep]


def _coalesce_list(stmts, live_after, bindings, touched):
    """Coalesce copies in one statement list (then in nested bodies)."""
    changed = False
    binder = {}                     # name -> index of its (only) binding in this list
    for j, stmt in enumerate(stmts):
        copy = _copy(stmt)
        if copy is not None:
            a, b = copy
            i = binder.get(b)
            if i is not None and bindings.get(b) == 1 and a != b \
                    and not {a, b} & touched and id(stmt) in live_after \
                    and b not in live_after[id(stmt)] \
                    and _clear(stmts[i + 1:j], a) \
                    and _binds_simply(stmts[i], b):
                for s in stmts[i:j]:
                    if s is not None:
                        _Rename(b, a).visit(s)
                stmts[j] = None
                touched.update((a, b))
                changed = True
                continue
        if isinstance(stmt, gast.Assign):
            for name_ in names_with_ctx(stmt.targets[0], gast.Store):
                binder[name_] = j
    stmts[:] = [s for s in stmts if s is not None and not _self_copy(s)]
    for stmt in stmts:
        for field in ("body", "orelse"):
            body = getattr(stmt, field, None)
            if isinstance(body, list) and body and isinstance(stmt, (gast.If, gast.For,
                                                                     gast.While)):
                changed |= _coalesce_list(body, live_after, bindings, touched)
                if not body:
                    body.append(gast.Pass())
    return changed


def _copy(stmt):
    if isinstance(stmt, gast.Assign) and ir.is_name(stmt.targets[0]) and \
            ir.is_name(stmt.value):
        return stmt.targets[0].id, stmt.value.id
    return None


def _self_copy(stmt):
    copy = _copy(stmt)
    return copy is not None and copy[0] == copy[1]


def _binds_simply(stmt, b):
    """``b = ...`` or a tuple of names including ``b`` (not ``b[i] = ...``),
    whose value does not read an earlier ``b`` (a rebound parameter,
    ``x = np.moveaxis(x, 1, 0)``, keeps its name)."""
    if not isinstance(stmt, gast.Assign) or b in names_with_ctx(stmt.value, gast.Load):
        return False
    target = stmt.targets[0]
    if ir.is_name(target, b):
        return True
    return isinstance(target, gast.Tuple) and any(ir.is_name(e, b) for e in target.elts)


def _clear(stmts, a):
    """No statement of ``stmts`` reads or binds ``a``."""
    return not any(n.id == a for s in stmts if s is not None for n in ir.walk_names(s))


class _Rename(gast.NodeTransformer):
    def __init__(self, old, new):
        self.old, self.new = old, new

    def visit_Name(self, node):
        if node.id == self.old:
            node.id = self.new
        return node


def _fuse_pops(blocks):
    for block in blocks:
        _fuse_list(block.stmts)


def _fuse_list(stmts):
    for j, stmt in enumerate(stmts):
        tape = _pop_of(stmt)
        if tape is not None:
            for i in range(j - 1, -1, -1):
                s = stmts[i]
                if s is None:
                    continue
                if _reads_last(s, tape):
                    s.value = gast.Call(func=gast.Attribute(value=ir.name(tape), attr="pop",
                                                            ctx=gast.Load()),
                                        args=[], keywords=[])
                    stmts[j] = None
                    break
                if any(n.id == tape for n in ir.walk_names(s)):
                    break
    stmts[:] = [s for s in stmts if s is not None]
    for stmt in stmts:
        if isinstance(stmt, (gast.If, gast.For, gast.While)):
            _fuse_list(stmt.body)
            _fuse_list(stmt.orelse)


def _pop_of(stmt):
    """``t`` for a statement ``t.pop()``."""
    call = getattr(stmt, "value", None)
    if isinstance(stmt, gast.Expr) and isinstance(call, gast.Call) and not call.args \
            and isinstance(call.func, gast.Attribute) and call.func.attr == "pop" \
            and ir.is_name(call.func.value):
        return call.func.value.id
    return None


def _reads_last(stmt, tape):
    """``v = t[-1]``."""
    return isinstance(stmt, gast.Assign) and ir.is_name(stmt.targets[0]) and \
        isinstance(stmt.value, gast.Subscript) and ir.is_name(stmt.value.value, tape) and \
        isinstance(stmt.value.slice, gast.Constant) and stmt.value.slice.value == -1
