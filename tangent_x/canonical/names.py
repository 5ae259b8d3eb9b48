"""What statements read and bind: the name analysis the canonicaliser's
scopes and control flow rest on (Python's local names, a loop's carried
names, whether an ``if`` returns on every path)."""
import gast

from ..core import ir


def loaded_names(nodes):
    """Names the nodes read: ``y op= v`` reads ``y`` too (its target is a
    store to the parser, yet a ``y`` bound only inside an ``if`` before it
    must come out of that ``if``)."""
    found = set()
    for node in nodes:
        for n in ir.walk(node):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
                found.add(n.id)
            elif isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name):
                found.add(n.target.id)
    return found


def exposed_reads(stmts):
    """Names the statements may read before binding them: what is live at
    their start (a loop body's, for the loop's next iteration).  A name a
    plain ``name = ...`` binds is not, past that point: ``zs = []`` at the
    top of a loop body starts a new list each iteration.  Where a
    ``break`` or ``continue`` may skip that binding, every name read counts."""
    return live_in(stmts, set())


def live_in(stmts, live_after):
    """Names live before the statements, given those live after them."""
    if escaping_jumps(stmts):
        return set(live_after) | loaded_names(stmts)
    live = set(live_after)
    for stmt in reversed(stmts):
        live = live_before(stmt, live)
    return live


def live_before(stmt, live_after):
    """Names live before ``stmt`` given those live after it: the names it
    may read first, and those live after that it does not always bind.
    Only a plain ``name = ...`` or ``def name`` binds for sure (a loop's body may run no
    times); a statement a ``break`` or ``continue`` leaves binds nothing.
    Callers fall back to ``loaded_names`` where a local function may read
    names at call time."""
    if escaping_jumps([stmt]):
        return set(live_after) | loaded_names([stmt])
    if isinstance(stmt, (gast.For, gast.While)):
        head = stmt.iter if isinstance(stmt, gast.For) else stmt.test
        # (a ``for``'s body reads its target after each turn binds it)
        target = stored_names([gast.Assign(targets=[stmt.target], value=stmt.iter)],
                              updates=False) if isinstance(stmt, gast.For) else set()
        return (set(live_after) | loaded_names([head]) | (exposed_reads(stmt.body) - target)
                | loaded_names(stmt.orelse))
    if isinstance(stmt, gast.If):
        return (loaded_names([stmt.test]) | live_in(stmt.body, live_after)
                | live_in(stmt.orelse, live_after))
    bound = set()
    if isinstance(stmt, gast.Assign) and all(_plain_target(t) for t in stmt.targets):
        # (``w, rest = ...`` binds ``w`` and ``rest`` too, and so does
        # ``a, *rest, z = ...`` its three names: fuzz seeds 570197, 581306)
        bound = {n.id for t in stmt.targets for n in ir.walk(t) if isinstance(n, gast.Name)}
    elif isinstance(stmt, gast.FunctionDef):      # ``def g(...)`` binds ``g``
        bound = {stmt.name}
    return (set(live_after) - bound) | loaded_names([stmt])


def _plain_target(t):
    """A target made of names only (unpacked, starred or nested)."""
    if isinstance(t, gast.Starred):
        t = t.value
    return isinstance(t, gast.Name) or isinstance(t, (gast.Tuple, gast.List)) and \
        all(_plain_target(e) for e in t.elts)


def escaping_jumps(stmts):
    """Whether a ``break`` or ``continue`` in the statements leaves them
    (one inside a loop of theirs stays in that loop)."""
    stack = list(stmts)
    while stack:
        n = stack.pop()
        if isinstance(n, (gast.Break, gast.Continue)):
            return True
        if isinstance(n, (gast.For, gast.While)):
            stack.extend(n.orelse)
        elif isinstance(n, gast.If):
            stack.extend(n.body + n.orelse)
        elif isinstance(n, (gast.With, gast.Try)):
            return True         # (not supported: no liveness claimed)
    return False


def has_local_functions(node):
    """Whether a function defines functions (or lambdas) inside: they read
    its names when called, not where they are written."""
    return any(isinstance(n, (gast.FunctionDef, gast.Lambda)) and n is not node
               for n in ir.walk(node))


def stored_names(stmts, updates=True, binds=True):
    """Names the statements bind (not looking inside nested functions).

    With ``updates``, also the names they change in place -- ``x[i] = v``,
    ``xs.append(v)``, ``xs.pop()`` -- which a loop must carry; without, just
    what Python counts as local assignments.  Without ``binds``, only the
    names changed in place."""
    found = set()

    def visit(n):
        if isinstance(n, (gast.FunctionDef, gast.Lambda, gast.ClassDef)):
            if binds and not isinstance(n, gast.Lambda):
                found.add(n.name)
            return
        if binds and isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
            found.add(n.id)
        if updates and isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute) \
                and n.func.attr in ("append", "pop") and isinstance(n.func.value, gast.Name):
            found.add(n.func.value.id)     # xs.append(v) / xs.pop() rebind xs
        if updates and isinstance(n, gast.Subscript) and isinstance(n.ctx, gast.Store):
            root = n.value                 # x[i] = v and x[i][j] += v change x
            while isinstance(root, gast.Subscript):
                root = root.value
            if isinstance(root, gast.Name):
                found.add(root.id)
        for child in ir.children(n):
            visit(child)

    for s in stmts:
        visit(s)
    return found


def aug_assigned(stmts):
    """Names the statements change with ``y op= v``: in place if ``y`` holds
    an array, so the loop must carry (and follow) the names sharing it."""
    return {n.target.id for s in stmts for n in ir.walk(s)
            if isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name)}


def changed_names(stmts, also=frozenset()):
    """(names changed in place -- maybe, for ``y op= v`` --, names rebound);
    ``also``: names known to change in place otherwise (through items)."""
    return (stored_names(stmts, binds=False) | aug_assigned(stmts) | set(also),
            stored_names(stmts, updates=False))


def always_returns(stmts):
    """After ``exits`` ran, an ``if`` holding a return returns (or raises)
    on every path."""
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, (gast.Return, gast.Raise)):    # a raise never falls through
        return True
    if isinstance(last, gast.If):
        return always_returns(last.body) and always_returns(last.orelse)
    return False


def assigned_names(node):
    """Names local to a function (Python decides this statically)."""
    return stored_names(node.body if isinstance(node.body, list) else [], updates=False)


def rebinding(stmts):
    """Names the statements bind other than by ``op=`` (which changes an
    array in place; a number it rebinds has no sharing to keep)."""
    return (stored_names(stmts, updates=False) - aug_assigned(stmts)) | plainly_rebound(stmts)


def plainly_rebound(stmts):
    """Names the statements bind to a new value (``y = ...``, a loop's
    target), not counting ``y op= v``, which keeps an array."""
    aug_targets = {id(n.target) for s in stmts for n in ir.walk(s)
                   if isinstance(n, gast.AugAssign)}
    return {n.id for s in stmts for n in ir.walk(s) if isinstance(n, gast.Name)
            and isinstance(n.ctx, gast.Store) and id(n) not in aug_targets}
