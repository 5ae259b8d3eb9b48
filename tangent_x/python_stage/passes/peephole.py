"""Peephole simplification of generated code.

Rules are written for any shapes, so their instances carry what a person
would leave out once the shapes are known: ``unbroadcast(g, x)`` where
``g`` already has ``x``'s shape, ``-1.0 * y``, ``a + -b``, a name bound to
a constant and then multiplied in.  Derivatives of derivatives multiply
these.  This pass removes them without knowing any shape at run time:

* **same shape.**  Names fall into classes of equal shape, found from how
  they are bound: an elementwise function of ``x`` or ``x`` combined with a
  scalar constant has ``x``'s shape, ``unbroadcast(g, x)`` and
  ``broadcast_like(t, x)`` have ``x``'s, ``a + b`` has the shape both share.
  ``unbroadcast(g, x)`` with ``g`` and ``x`` in one class is ``g``, as
  is ``broadcast_like(t, x)``.  Only names bound once count (a name rebound
  by accumulation could change shape).
* **signs.**  ``-1.0 * y`` is ``-y``, ``a + -b`` is ``a - b``, ``a - -b`` is
  ``a + b``, ``--a`` is ``a``; ``zeros_like(1.0)`` is ``0.0``.
* **ones.**  ``1.0 * y`` is ``y`` unless ``y`` may hold an int (bound to
  an int constant, ``len``, a shape entry, a ``range`` index, int
  arithmetic, an item of a tape such names were pushed on): a cotangent
  keeps its primal's floating type (``find_maybe_ints``).
* **constants and copies.**  A name bound once to a number is replaced by
  the number; at the top level of the function (no loop around it), a name
  bound once by a copy ``a = b`` of a name bound at most once is replaced
  by ``b``.

Dead-code elimination runs after it (see ``pipeline.PIPELINE``).
"""
import gast

from ...core import ir, primitives as P
from ...analysis.defuse import own_names
from ...analysis.unionfind import UnionFind
from ...core.fold import fold_binop, fold_unaryop

# spellings of the elementwise calls: ``f(x)`` has ``x``'s shape
_ELEMENTWISE = {p.spelling for p in P.BY_NAME.values() if p.elementwise and p.kind == "call"}
_ELEMENTWISE_BINOPS = (gast.Add, gast.Sub, gast.Mult, gast.Div, gast.Pow, gast.Mod)
_SCALAR = "<scalar>"


def _number(node):
    return isinstance(node, gast.Constant) and type(node.value) in (int, float)


def _spelling(func):
    parts = []
    while isinstance(func, gast.Attribute):
        parts.append(func.attr)
        func = func.value
    if not isinstance(func, gast.Name):
        return None
    return ".".join([func.id] + parts[::-1])


class _Shapes(UnionFind):
    """Classes of names known to have equal shapes."""

    def __init__(self, once):
        super().__init__()
        self.once = once

    def of(self, node):
        """The shape class of an expression, ``_SCALAR`` for a number, or None."""
        if _number(node):
            return _SCALAR
        if isinstance(node, gast.Name):
            return self.find(node.id) if node.id in self.once else None
        if isinstance(node, gast.UnaryOp) and isinstance(node.op, (gast.USub, gast.UAdd)):
            return self.of(node.operand)
        if isinstance(node, gast.BinOp) and isinstance(node.op, _ELEMENTWISE_BINOPS):
            left, right = self.of(node.left), self.of(node.right)
            if left == _SCALAR:
                return right
            if right == _SCALAR or left == right:
                return left
            return None
        if isinstance(node, gast.Call) and not node.keywords:
            name = _spelling(node.func)
            if name in _ELEMENTWISE and len(node.args) == 1:
                return self.of(node.args[0])
            if name in ("unbroadcast", "broadcast_like", "unreduce") and len(node.args) == 2:
                return self.of(node.args[1])
        return None

    def bind(self, name_, value):
        shape = self.of(value)
        if shape is not None and shape != _SCALAR and name_ in self.once:
            self.parent[self.find(name_)] = shape


def _walk_stmts(stmts):
    for stmt in stmts:
        yield stmt
        for field in ("body", "orelse"):
            yield from _walk_stmts(getattr(stmt, field, None) or [])


def _simple_binding(stmt):
    if isinstance(stmt, gast.Assign) and ir.is_name(stmt.targets[0]):
        return stmt.targets[0].id, stmt.value
    return None, None


class _Rewrite:
    """Bottom-up rewriting of an expression (a hand-written walk: the
    generic ``NodeTransformer`` costs more than the rules)."""

    def __init__(self, shapes, constants, ints=frozenset()):
        self.shapes, self.constants, self.ints = shapes, constants, ints

    def visit(self, node):
        kind = type(node)
        if kind is gast.Name:
            if node.id in self.constants and isinstance(node.ctx, gast.Load):
                return ir.const(self.constants[node.id])
            return node
        if kind is gast.Constant:
            return node
        for field in node._fields:
            value = getattr(node, field, None)
            if type(value) is list:
                value[:] = [self.visit(v) if isinstance(v, gast.AST) else v for v in value]
            elif isinstance(value, gast.AST):
                setattr(node, field, self.visit(value))
        if kind is gast.Call:
            return self.call(node)
        if kind is gast.UnaryOp:
            return self.unary(node)
        if kind is gast.BinOp:
            return self.binop(node)
        return node

    def call(self, node):
        name = _spelling(node.func)
        if name == "zeros_like" and len(node.args) == 1 and _number(node.args[0]):
            return ir.const(0.0 * node.args[0].value)
        if name in ("unbroadcast", "broadcast_like") and len(node.args) == 2 \
                and not node.keywords:
            g, like = node.args
            shape = self.shapes.of(g)
            if shape is not None and shape != _SCALAR and shape == self.shapes.of(like):
                return g
        return node

    def unary(self, node):
        node = fold_unaryop(node)
        if not isinstance(node, gast.UnaryOp):
            return node
        if isinstance(node.op, gast.USub) and isinstance(node.operand, gast.UnaryOp) \
                and isinstance(node.operand.op, gast.USub):
            return node.operand.operand
        return node

    def binop(self, node):
        node = fold_binop(node, self.ints)
        if not isinstance(node, gast.BinOp):
            return node
        minus_one = [s for s in ("left", "right") if _number(getattr(node, s)) and
                     getattr(node, s).value == -1]
        if isinstance(node.op, gast.Mult) and minus_one:
            other = node.right if minus_one[0] == "left" else node.left
            # (not of a bool, which NumPy cannot negate, nor of an int,
            # which ``-1.0 *`` makes a float: jvp of grad of np.maximum's
            # mask, fuzz seed 500648)
            if not _may_be_int(other, self.ints):
                return self.unary(gast.UnaryOp(op=gast.USub(), operand=other))
        if isinstance(node.op, (gast.Add, gast.Sub)) and _negated(node.right):
            op = gast.Sub() if isinstance(node.op, gast.Add) else gast.Add()
            return gast.BinOp(left=node.left, op=op, right=node.right.operand)
        if isinstance(node.op, (gast.Add, gast.Sub)) and _number(node.right) \
                and node.right.value < 0:
            op = gast.Sub() if isinstance(node.op, gast.Add) else gast.Add()
            return gast.BinOp(left=node.left, op=op, right=ir.const(-node.right.value))
        if isinstance(node.op, gast.Add) and _negated(node.left):
            return gast.BinOp(left=node.right, op=gast.Sub(), right=node.left.operand)
        return node


def _may_be_int(node, ints):
    """Whether ``node`` may be an int or a bool (``ints``: names that may)."""
    if isinstance(node, gast.Name):
        return node.id in ints
    return isinstance(node, (gast.Compare, gast.BoolOp)) or \
        isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.Not) or \
        isinstance(node, gast.Constant) and type(node.value) in (int, bool)


def _negated(node):
    return isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub)


def simplify(blocks, live_out, maybe_ints=()):
    """Rewrite ``blocks`` in place (see the module docstring); ``maybe_ints``:
    names bound outside them that may hold ints."""
    stmts = [s for block in blocks for s in _walk_stmts(block.stmts)]
    counts, early, loaded = {}, set(), set()
    for stmt in stmts:        # one pass: bindings, reads before binding, all reads
        for n in own_names(stmt):
            if isinstance(n.ctx, gast.Store):
                counts[n.id] = counts.get(n.id, 0) + 1
            else:
                loaded.add(n.id)
                if n.id not in counts:
                    early.add(n.id)
    # names bound once, and not arguments the function rebinds (read first)
    once = {n for n, c in counts.items() if c == 1} - early
    constants = {}
    changed = True
    while changed:            # a copy of a constant is that constant
        changed = False
        for stmt in stmts:
            name_, value = _simple_binding(stmt)
            if name_ not in once or name_ in constants or name_ in live_out:
                continue
            if ir.is_name(value) and value.id in constants:
                value = ir.const(constants[value.id])
            if _number(value):
                constants[name_] = value.value
                changed = True
    once |= loaded - set(counts)          # parameters, globals
    shapes = _Shapes(once)
    for _ in range(2):
        for stmt in stmts:
            name_, value = _simple_binding(stmt)
            if name_ is not None:
                shapes.bind(name_, value)
    rewrite = _Rewrite(shapes, constants, find_maybe_ints(stmts, maybe_ints))
    for block in blocks:
        for stmt in _walk_stmts(block.stmts):
            _rewrite_values(stmt, rewrite)
        block.stmts = [s for s in block.stmts
                       if not (_simple_binding(s)[0] in constants)]
    _propagate_copies(blocks, once, live_out)
    return blocks


_INT_CALLS = {"len", "int", "scan_length", "np.argmax", "np.argmin", "np.ndim", "np.size",
              # booleans (an int to arithmetic: ``(x > 0) * 1.0`` is how users
              # ask for a float, never to be folded to ``x > 0``)
              "bool", "np.isnan", "np.isinf", "np.isfinite", "np.logical_and",
              "np.logical_or", "np.logical_not", "np.logical_xor", "np.any", "np.all",
              "np.greater", "np.greater_equal", "np.less", "np.less_equal", "np.equal",
              "np.not_equal", "np.count_nonzero", "np.nonzero", "np.signbit",
              # draws of integers or booleans
              "tx_random.bernoulli", "tx_random.randint", "tx_random.permutation",
              "tx_random.choice", "tx_random.bits", "tx_random.categorical"}
# calls whose result has their first argument's dtype: an int in, an int out
_DTYPE_KEEPING = {"np.sum", "np.prod", "np.cumsum", "np.cumprod", "np.max", "np.min",
                  "np.amax", "np.amin", "np.abs", "np.absolute", "np.negative", "np.sign",
                  "np.reshape", "np.transpose", "np.squeeze", "np.ravel", "np.flip",
                  "np.expand_dims", "np.swapaxes", "np.moveaxis", "np.broadcast_to",
                  "np.atleast_1d", "np.atleast_2d", "np.atleast_3d", "np.tile",
                  "np.repeat", "np.diagonal", "np.copy", "np.asarray", "np.array",
                  "np.concatenate", "np.stack", "np.hstack", "np.vstack", "np.maximum",
                  "np.minimum", "np.where", "np.clip", "np.roll", "np.sort", "np.diff",
                  "np.outer", "np.dot", "np.matmul", "np.trace", "np.square"}
_INT_BINOPS = (gast.Add, gast.Sub, gast.Mult, gast.FloorDiv, gast.Mod, gast.Pow,
               gast.BitAnd, gast.BitOr, gast.BitXor, gast.LShift, gast.RShift)


def find_maybe_ints(stmts, given=()):
    """Names that may hold an int (or bool) when bound by ``stmts`` (all
    statements, nested ones included): an int constant, ``len``, a shape's
    entry, a ``range`` index, int arithmetic on such values, a copy, or an
    item popped from (or read from) a list such values were appended to.
    ``given``: names bound elsewhere that may (arguments not
    differentiated); other arguments count as floats."""
    ints, lists = set(given), set()
    bindings = []                 # (target name, value expr or "int")
    for stmt in stmts:
        if isinstance(stmt, gast.Assign) and ir.is_name(stmt.targets[0]):
            bindings.append((stmt.targets[0].id, stmt.value))
        elif isinstance(stmt, gast.AugAssign) and ir.is_name(stmt.target):
            bindings.append((stmt.target.id, gast.BinOp(left=ir.name(stmt.target.id),
                                                        op=stmt.op, right=stmt.value)))
        elif isinstance(stmt, gast.For) and ir.is_name(stmt.target) and \
                isinstance(stmt.iter, gast.Call) and _spelling(stmt.iter.func) == "range":
            ints.add(stmt.target.id)
        elif isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Call) and \
                isinstance(stmt.value.func, gast.Attribute) and \
                stmt.value.func.attr == "append" and ir.is_name(stmt.value.func.value) \
                and len(stmt.value.args) == 1:
            bindings.append((("list", stmt.value.func.value.id), stmt.value.args[0]))

    def int_like(node):
        if isinstance(node, gast.Constant):
            return type(node.value) in (int, bool)
        if isinstance(node, gast.Name):
            return node.id in ints
        if isinstance(node, gast.BinOp):
            return isinstance(node.op, _INT_BINOPS) and int_like(node.left) \
                and int_like(node.right)
        if isinstance(node, gast.UnaryOp):
            return isinstance(node.op, gast.Not) or int_like(node.operand)
        if isinstance(node, (gast.Compare, gast.BoolOp)):
            return True
        if isinstance(node, gast.Attribute):
            return node.attr in ("ndim", "size")
        if isinstance(node, gast.Subscript):
            base = node.value
            return ir.is_name(base) and (base.id in lists or base.id in ints) or \
                isinstance(base, gast.Attribute) and base.attr == "shape" or \
                isinstance(base, gast.Call) and _spelling(base.func) == "np.shape"
        if isinstance(node, gast.Call):
            name = _spelling(node.func)
            if name in _INT_CALLS:
                return True
            if name in _DTYPE_KEEPING:
                return any(int_like(a) for a in node.args
                           if not isinstance(a, gast.Constant))
            return isinstance(node.func, gast.Attribute) and node.func.attr == "pop" and \
                ir.is_name(node.func.value) and node.func.value.id in lists
        return False

    changed = True
    while changed:
        changed = False
        for target, value in bindings:
            found = lists if isinstance(target, tuple) else ints
            key = target[1] if isinstance(target, tuple) else target
            if key not in found and int_like(value):
                found.add(key)
                changed = True
    return ints


def _rewrite_values(stmt, rewrite):
    """Rewrite the expressions a statement evaluates (not nested bodies:
    ``_walk_stmts`` reaches those)."""
    if isinstance(stmt, (gast.Assign, gast.Expr, gast.Return, gast.AugAssign)):
        if stmt.value is not None:
            stmt.value = rewrite.visit(stmt.value)
        if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Subscript):
            stmt.targets[0].slice = rewrite.visit(stmt.targets[0].slice)
    elif isinstance(stmt, (gast.If, gast.While)):
        stmt.test = rewrite.visit(stmt.test)
    elif isinstance(stmt, gast.For):
        stmt.iter = rewrite.visit(stmt.iter)


def _propagate_copies(blocks, once, live_out):
    """``a = b`` at the top level, ``a`` bound once and ``b`` at most once:
    read ``b`` wherever ``a`` was read (a loop around them could see ``b``
    rebound first; none is)."""
    renames = {}
    for block in blocks:
        for stmt in block.stmts:
            name_, value = _simple_binding(stmt)
            if name_ in once and ir.is_name(value) and value.id in once \
                    and name_ not in live_out:
                renames[name_] = renames.get(value.id, value.id)
    if not renames:
        return

    for block in blocks:
        block.stmts = [s for s in block.stmts if _simple_binding(s)[0] not in renames]
        for stmt in block.stmts:
            for node in ir.walk_names(stmt):
                if isinstance(node.ctx, gast.Load) and node.id in renames:
                    node.id = renames[node.id]
