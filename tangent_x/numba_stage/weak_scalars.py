"""Python numbers next to narrow arrays, typed as NumPy types them.

Why: NumPy (NEP 50) treats a Python number as "weak": ``x * 0.5`` with a
float32 ``x`` is float32, ``i + 1`` with an int32 ``i`` is int32.  Numba
types the number as a float64 or int64 and promotes: the same code would be
float32 eagerly and float64 under ``jit``, in results and in speed.  So
when a call signature has a narrow leaf (float32, float16, complex64, any
integer but int64), every Python number that meets an array or a number in
arithmetic is spelled ``weak_scalar(0.5, x)``: the number as NumPy would
type it next to ``x`` (``numba_runtime.weak_scalar``; Numba resolves it when
typing, so it costs nothing at run time, and eagerly it is the number
itself).  Signatures of float64/int64/complex128/bool leaves only, the
usual case, keep their literals: there Numba and NumPy agree.

Where: binary arithmetic with one number operand, NumPy ufuncs, ``where``
and ``clip`` with number arguments, and a gradient's seed broadcast to its
output's shape (``unreduce(1.0, y)``).  The type to follow is read from the
other operand's names (``1.0 - y * y``: ``weak_scalar(1.0, y)``), which the
numba stage's one-operation-per-line code nearly always allows; where it
cannot be told from names alone (next to a comparison or an unknown call)
the number is left to Numba's promotion: a known limit, as is a narrow
array made inside a function whose arguments are all wide, such as
``x.astype(np.float32) * 0.5``.

Also weak: arguments that are Python numbers (``lr=0.1``), and arithmetic
among weak numbers (``b + 3.0``).  Where an ``if`` joins a Python number
on one path with a value on the other (``y = 0.5`` / ``y = np.sum(x)``),
the number is spelled ``weak_number(0.5)``, whose Numba type unifies with
the other path's as NumPy promotes (``_weaken_joins``).  And when the
arguments mix integers with float32 (``mixed_kinds``), arithmetic between
two arrays is spelled ``promoted(a, b) * promoted(b, a)``: Numba lets any
integer cast to any float and computes float32 times int64 in float32,
NumPy in float64 (an integer array made inside the function from wide
arguments only is a known limit).
"""
import ast

import numpy as np

from .python_ints import python_ints
from .weak_lanes import ARITHMETIC as _ARITHMETIC, arithmetic_kernels, is_number as _is_number, \
    is_weak_broadcast, lanes_operands, weak_lanes

_WIDE = "dlqD?"        # dtype chars of float64, int64 (two spellings), complex128, bool


def needs_weak_scalars(leaves):
    """Whether any argument leaf is narrow (see the module doc)."""
    for leaf in leaves:
        if isinstance(leaf, (np.ndarray, np.generic)):
            if leaf.dtype.char not in _WIDE:
                return True
    return False


def mixed_kinds(leaves):
    """Whether the argument leaves mix integer arrays or NumPy integers with
    float32 or complex64 ones: Numba then computes float32 times int64 in
    float32 (it lets any integer cast to any float), NumPy in float64, so
    arithmetic between arrays is spelled with ``promoted`` (see
    ``weaken``)."""
    kinds = set()
    for leaf in leaves:
        if isinstance(leaf, (np.ndarray, np.generic)):
            if leaf.dtype.kind in "iu":
                kinds.add("int")
            elif leaf.dtype.char in "fF":
                kinds.add("narrow")
    return kinds == {"int", "narrow"}


def weaken(stmts, helper, numpy_names, numbers=(), join_helper="weak_number",
           mixed=False, promote_helper="promoted"):
    """Wrap the weak numbers of ``stmts`` (statements and kernel function
    definitions, changed in place) in calls to ``helper``; ``numpy_names``:
    the names bound to the numpy module; ``numbers``: the compiled
    function's parameters that hold a Python number (an argument ``lr=0.1``
    is as weak as the literal); ``join_helper``: the name spelling a number
    joined at an ``if`` (``_weaken_joins``); ``mixed``: the arguments mix
    integers with narrow floats (``mixed_kinds``), so every arithmetic
    operand that is not a weak number is spelled ``promoted(a, b)``, cast
    to the dtype NumPy gives ``a`` and ``b`` when Numba's would differ.
    Returns the helpers used."""
    ints = python_ints(stmts, numpy_names, numbers)
    rewriter = _Weaken(helper, numpy_names, ints, weak_lanes(stmts, ints),
                       promote_helper if mixed else None,
                       kernels=arithmetic_kernels(stmts))
    joined = _weaken_joins(stmts, rewriter.weak, join_helper)
    joined = _weaken_loop_starts(stmts, rewriter.weak, join_helper) or joined
    for stmt in stmts:
        rewriter.visit(stmt)
    return {name for name, used in ((helper, rewriter.changed), (join_helper, joined),
                                    (promote_helper, rewriter.promoted),
                                    ("weak_lanes_of", rewriter.lanes_of)) if used}


def _tail_assigns(body):
    """The assignments to one name each that end ``body`` (where the
    specialiser's join of an ``if`` puts them): name -> the Assign."""
    tail = {}
    for stmt in reversed(body):
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and
                isinstance(stmt.targets[0], ast.Name)):
            break
        tail.setdefault(stmt.targets[0].id, stmt)
    return tail


def _weaken_joins(stmts, weak, join_helper):
    """Where an ``if`` joins a Python number on one path with another value
    on the other (``y = np.sum(x)`` / ``y = 0.5``), spell the number
    ``weak_number(0.5)``: Numba then gives ``y`` the other value's type, as
    NumPy would promote the two (float32, not the float64 of Numba's
    literal; see ``numba_runtime.WeakNumber``).  Returns whether any was."""
    changed = False
    for stmt in stmts:
        for node in ast.walk(stmt):
            if not isinstance(node, ast.If) or not node.orelse:
                continue
            body, orelse = _tail_assigns(node.body), _tail_assigns(node.orelse)
            for name in set(body) & set(orelse):
                sides = (body[name], orelse[name])
                for this, that in (sides, sides[::-1]):
                    if weak(this.value) and not weak(that.value) and \
                            not is_weak_broadcast(that.value, ()):
                        call = ast.Call(func=ast.Name(id=join_helper, ctx=ast.Load()),
                                        args=[this.value], keywords=[])
                        this.value = ast.copy_location(call, this.value)
                        changed = True
    return changed


def _weaken_loop_starts(stmts, weak, join_helper):
    """Where a loop starts a variable as a Python number that its turns
    make another value (``s = 0`` before ``for v in x: s = s + v``), spell
    the number ``weak_number(0)``: Numba then gives ``s`` the loop's type
    as NumPy promotes the number with it (float32 for a float32 ``x``, not
    the float64 of Numba's int64 joined with float32).  Only a start that
    nothing reads before the loop.  Returns whether any was."""
    changed = False
    for stmt in [None] + list(stmts):
        nodes = [None] if stmt is None else ast.walk(stmt)
        for node in nodes:
            bodies = [stmts] if node is None else \
                [getattr(node, f) for f in ("body", "orelse", "finalbody")
                 if isinstance(getattr(node, f, None), list)]
            for body in bodies:
                changed = _weaken_starts_in(body, weak, join_helper) or changed
    return changed


def _weaken_starts_in(body, weak, join_helper):
    changed = False
    for i, loop in enumerate(body):
        if not isinstance(loop, (ast.For, ast.While)):
            continue
        made = {t.id for node in loop.body for n in ast.walk(node)
                if isinstance(n, (ast.Assign, ast.AugAssign))
                for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
                if isinstance(t, ast.Name) and not (isinstance(n, ast.Assign) and weak(n.value))}
        for name in sorted(made):
            for start in reversed(body[:i]):
                if isinstance(start, ast.Assign) and len(start.targets) == 1 and \
                        isinstance(start.targets[0], ast.Name) and start.targets[0].id == name:
                    if weak(start.value):
                        call = ast.Call(func=ast.Name(id=join_helper, ctx=ast.Load()),
                                        args=[start.value], keywords=[])
                        start.value = ast.copy_location(call, start.value)
                        changed = True
                    break
                if any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(start)):
                    break       # read (or made) between: left as it is
    return changed


_WHERE_LIKE = {"where": (1, 2), "clip": (0,)}

# Runtime helpers whose first argument, a number, becomes an array shaped
# like the second: the number is typed as NumPy types it next to that array.
_COTANGENT_SEEDS = ("unreduce",)

def cheap(node):
    """An operand that can be read twice: a name, an attribute of one, a
    subscript of names and numbers."""
    if isinstance(node, ast.Name):
        return True
    if isinstance(node, ast.Attribute):
        return cheap(node.value)
    if isinstance(node, ast.Subscript):
        index = node.slice
        parts = index.elts if isinstance(index, ast.Tuple) else [index]
        return cheap(node.value) and all(
            isinstance(p, ast.Name) or isinstance(p, ast.Constant) for p in parts)
    return False


def _witnesses(node, out, weak=None):
    """Cheap operands whose promoted type is ``node``'s type (numbers
    aside): ``tanh_x`` for ``tanh_x * tanh_x``.  False when that cannot be
    told from the expression (a comparison is bool whatever its operands,
    an unknown call anything)."""
    if _is_number(node) or _is_size(node) or (weak is not None and weak(node)):
        return True
    if cheap(node):
        if not any(ast.dump(node) == ast.dump(w) for w in out):
            out.append(node)
        return True
    if isinstance(node, ast.BinOp) and isinstance(node.op, _ARITHMETIC):
        return _witnesses(node.left, out, weak) and _witnesses(node.right, out, weak)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return _witnesses(node.operand, out, weak)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
            _keeps_float32(node.func.attr) and not node.keywords:
        # np.tanh(x), vmath.tanh(x): float32 in, float32 out (an integer
        # input gives float64, and a number next to it is left as it is)
        return all(_witnesses(a, out, weak) for a in node.args)
    return False


def _is_size(node):
    """``x.shape[0]``, ``x.ndim``, ``x.size``: an int64 always (wide), so a
    number next to it needs no cast, and the code stays readable."""
    if isinstance(node, ast.Subscript):
        node = node.value
    return isinstance(node, ast.Attribute) and node.attr in ("shape", "ndim", "size")


def _keeps_float32(name):
    """Whether ``np.<name>`` (or the vmath kernel of that name) is a ufunc
    that maps float32 operands to a float32 result (``tanh``, ``add``; not
    ``greater``, whose result is bool)."""
    fn = getattr(np, name, None)
    return isinstance(fn, np.ufunc) and fn.nout == 1 and \
        f"{'f' * fn.nin}->f" in fn.types


class _Weaken(ast.NodeTransformer):
    def __init__(self, helper, numpy_names, python_ints, weak_lanes=(), promote=None,
                 lanes_helper="weak_lanes_of", kernels=()):
        self.helper = helper
        self.lanes_helper = lanes_helper
        self.lanes_of = False
        self.in_kernel = 0
        self.kernels = kernels
        self.promote = promote
        self.promoted = False
        self.numpy_names = numpy_names
        self.python_ints = python_ints
        self.weak_lanes = weak_lanes
        self.changed = False

    def lanes(self, node):
        return isinstance(node, ast.Name) and node.id in self.weak_lanes

    def visit_FunctionDef(self, node):
        self.in_kernel += 1         # a fused kernel: its values are numbers, not lanes
        self.generic_visit(node)
        self.in_kernel -= 1
        return node

    def visit_Assign(self, node):
        operands = lanes_operands(node.value, self.python_ints, self.weak_lanes,
                                   self.kernels) \
            if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) and \
            not self.in_kernel else None
        self.generic_visit(node)
        if operands:
            self.lanes_of = True
            call = ast.Call(func=ast.Name(id=self.lanes_helper, ctx=ast.Load()),
                            args=[node.value] + [ast.Name(id=n, ctx=ast.Load()) for n in operands],
                            keywords=[])
            node.value = ast.copy_location(call, node.value)
        return node

    def weak(self, node):
        """A number, a name holding a Python number (a shape entry), or
        arithmetic among them (``b + 3.0`` with a Python-number ``b``)."""
        if isinstance(node, ast.BinOp) and isinstance(node.op, _ARITHMETIC):
            return self.weak(node.left) and self.weak(node.right)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            return self.weak(node.operand)
        return _is_number(node) or isinstance(node, ast.Name) and node.id in self.python_ints

    def wrap(self, number, other):
        """``number`` typed as NumPy would next to ``other`` (read before
        its own numbers are wrapped), or as it is when ``other``'s type
        cannot be told (see ``_witnesses``)."""
        likes = []
        if not _witnesses(other, likes, self.weak) or not likes:
            return number
        self.changed = True
        call = ast.Call(func=ast.Name(id=self.helper, ctx=ast.Load()),
                        args=[number] + [copy_load(w) for w in likes], keywords=[])
        return ast.copy_location(call, number)

    def visit_BinOp(self, node):
        if isinstance(node.op, ast.Pow) and type(getattr(node.right, "value", None)) is int:
            self.generic_visit(node)
            return node     # x ** 2 keeps x's type in Numba too, and stays a product
        if self.weak(node.left) and not self.weak(node.right):
            node.left = self.wrap(node.left, node.right)
        elif self.weak(node.right) and not self.weak(node.left):
            node.right = self.wrap(node.right, node.left)
        elif self.lanes(node.left) and not self.lanes(node.right):
            node.left = self.wrap(node.left, node.right)
        elif self.lanes(node.right) and not self.lanes(node.left):
            node.right = self.wrap(node.right, node.left)
        elif self.promote and isinstance(node.op, _ARITHMETIC) and \
                cheap(node.left) and cheap(node.right) and \
                not (self.weak(node.left) or self.weak(node.right)):
            # two arrays (or NumPy numbers): each cast to NumPy's promotion
            left, right = node.left, node.right
            node.left = self.promote_call(left, right)
            node.right = self.promote_call(right, left)
            return node
        self.generic_visit(node)
        return node

    def promote_call(self, operand, other):
        self.promoted = True
        call = ast.Call(func=ast.Name(id=self.promote, ctx=ast.Load()),
                        args=[operand, copy_load(other)], keywords=[])
        return ast.copy_location(call, operand)

    def visit_Call(self, node):
        if is_weak_broadcast(node, self.python_ints):
            self.changed = True
            call = ast.Call(func=ast.Name(id=self.helper, ctx=ast.Load()), args=[node],
                            keywords=[])
            return ast.copy_location(call, node)
        if isinstance(node.func, ast.Name) and node.func.id in _COTANGENT_SEEDS and \
                len(node.args) >= 2 and (self.weak(node.args[0]) or self.lanes(node.args[0])):
            # ``unreduce(1.0, x)``: a gradient's seed, as NumPy types it next to x
            # (vmap(grad)'s seed is the lanes of 1.0: ``unreduce(g_lanes, x)``)
            node.args[0] = self.wrap(node.args[0], node.args[1])
            self.generic_visit(node)
            return node
        name = self.numpy_function(node.func)
        if name is None or node.keywords:
            self.generic_visit(node)
            return node
        self.visit_numpy_call(node, name)
        self.generic_visit(node)
        return node

    def visit_numpy_call(self, node, name):
        fn = getattr(np, name, None)
        if isinstance(fn, np.ufunc):
            candidates = range(len(node.args))
        elif name in _WHERE_LIKE:
            candidates = _WHERE_LIKE[name]
        else:
            return
        others = [node.args[i] for i in candidates
                  if i < len(node.args) and not self.weak(node.args[i])]
        if not others:
            return
        other = others[0]
        for more in others[1:]:        # their promoted type: as their sum's
            other = ast.BinOp(left=other, op=ast.Add(), right=more)
        first = 1 if name == "where" else 0
        node.args = [self.wrap(a, other) if i >= first and self.weak(a) else a
                     for i, a in enumerate(node.args)]

    def numpy_function(self, func):
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and \
                func.value.id in self.numpy_names:
            return func.attr
        return None


def copy_load(node):
    """A copy of ``node`` for reading (the original may be a store target's
    twin only in name; contexts are reset to Load)."""
    import copy
    new = copy.deepcopy(node)
    for sub in ast.walk(new):
        if hasattr(sub, "ctx"):
            sub.ctx = ast.Load()
    return new
