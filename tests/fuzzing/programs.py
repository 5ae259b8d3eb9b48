"""Random differentiable NumPy programs, as trees that print as source.

A program is a module holding ``f`` (the function under test), perhaps
helper functions it calls, and ``loss`` (a scalar of ``f``'s output, what
the gradient modes differentiate).  It is kept as a tree of small
statement and expression objects, not as text, so that the shrinker can
delete a statement or replace an expression by one of its parts and print
the result again.

Every value the generator builds has a known shape, one of ``SHAPES``, so
expressions combine only where NumPy's broadcasting allows; every loop
has a bound; every denominator, logarithm and square root is kept away
from zero, so the untransformed program is smooth almost everywhere and
finite differences are a fair reference.

Covered: arithmetic with broadcasting and negative constants (powers of
them too); elementwise functions and reductions; indexing and slicing;
nested if/elif/else on data; conditional expressions and and/or; for over
ranges, arrays and zip; while loops with data-dependent stops; break,
continue and early return (also from inside loops); in-place and slice
updates (``c[i] = v``, ``c[a:b] *= v``, ``c = c.at[i].add(v)``) that read
the array they write; augmented assignment; helper functions, closures and
lambdas; ``lax.cond/switch/fori_loop/while_loop/scan``; a dict argument
and tuple results; 0-d, 1-d and 2-d values; float64, some float32; in a
fraction of programs, Python lists, tuples and dicts built and read at run
time (``containers``).
"""
import ast
import random

import numpy as np

N, M = 3, 2                  # the lengths of 1-d values and the rows of 2-d ones
# the shapes of in-place places that a number is written to but read as arrays
_READS = {"[1::2]": ((N - 1) // 2,), "[:, :2]": (M, 2)}
SHAPES = [(), (N,), (M,), (M, N)]


def broadcasts(small, big):
    """Whether a value of shape ``small`` combines with one of ``big``
    into ``big``."""
    if small == () or small == big:
        return True
    return len(small) == 1 and len(big) == 2 and small[0] == big[1]


# ---------------------------------------------------------------- expressions
class Expr:
    """An expression of a known shape.  ``parts`` are its sub-expressions,
    what the shrinker may put in its place."""
    shape = ()
    parts = ()

    def text(self):
        raise NotImplementedError

    def replace(self, i, new):
        """A copy with part ``i`` replaced by ``new``."""
        raise NotImplementedError

    def names(self):
        out = set()
        for p in self.parts:
            out |= p.names()
        return out


class Var(Expr):
    def __init__(self, name, shape):
        self.name, self.shape = name, shape

    def text(self):
        return self.name

    def names(self):
        return {self.name}


class Const(Expr):
    def __init__(self, value):
        self.value = value

    def text(self):
        # a negative number is written as the user writes it, in parentheses
        # where an operator follows (the case an emitter gets wrong)
        return f"({self.value!r})" if self.value < 0 else repr(self.value)


class Template(Expr):
    """``form`` with ``{0}``, ``{1}``... holes filled by the parts' text."""

    def __init__(self, form, parts, shape):
        self.form, self.parts, self.shape = form, list(parts), shape

    def text(self):
        return fill(self.form, self.parts)

    def replace(self, i, new):
        parts = list(self.parts)
        parts[i] = new
        return Template(self.form, parts, self.shape)


_ATOMIC = {}


def atomic(expr):
    """Whether an expression prints as an operand that needs no parentheses
    (a name, a call, a subscript, a parenthesised form)."""
    if isinstance(expr, Var):
        return True
    if isinstance(expr, Const):
        return True                    # a negative constant prints in parentheses
    form = expr.form
    if form not in _ATOMIC:
        text = form.format(*[f"_h{i}" for i in range(len(expr.parts))])
        node = ast.parse(text, mode="eval").body
        _ATOMIC[form] = isinstance(node, (ast.Name, ast.Call, ast.Subscript, ast.Attribute)) or \
            (text.startswith("(") and text.endswith(")") and isinstance(node, (ast.IfExp, ast.Tuple)))
    return _ATOMIC[form]


_OPERAND_OF = {}


def _operand_holes(form, n):
    """The holes of ``form`` that stand as an operand of an operator (where
    a compound value must be parenthesised)."""
    if form not in _OPERAND_OF:
        text = form.format(*[f"_h{i}" for i in range(n)]).strip()
        if text.startswith(("else", "elif")):
            text = "if 0: pass\n" + text
        if text.endswith(":"):
            text += " pass"
        tree = ast.parse(text)
        holes = set()
        for node in ast.walk(tree):
            if isinstance(node, (ast.BinOp, ast.UnaryOp, ast.Compare, ast.BoolOp, ast.Attribute,
                                 ast.Subscript)):
                for child in ast.iter_child_nodes(node):
                    if isinstance(child, ast.Name) and child.id.startswith("_h") and \
                            not (isinstance(node, ast.Subscript) and child is node.slice):
                        holes.add(int(child.id[2:]))
        _OPERAND_OF[form] = holes
    return _OPERAND_OF[form]


def fill(form, parts):
    holes = _operand_holes(form, len(parts))
    return form.format(*[f"({p.text()})" if i in holes and not atomic(p) else p.text()
                         for i, p in enumerate(parts)])


# ---------------------------------------------------------------- statements
class Stmt:
    """A statement; ``blocks`` are its nested statement lists."""
    blocks = ()

    def lines(self, indent):
        raise NotImplementedError

    def exprs(self):
        return []

    def with_exprs(self, exprs):
        return self

    def with_blocks(self, blocks):
        return self


class Line(Stmt):
    """One line of source: ``form`` with holes for expressions."""

    def __init__(self, form, exprs=()):
        self.form, self._exprs = form, list(exprs)

    def lines(self, indent):
        return [indent + fill(self.form, self._exprs)]

    def exprs(self):
        return list(self._exprs)

    def with_exprs(self, exprs):
        return Line(self.form, exprs)


class Block(Stmt):
    """A compound statement: a header line with expression holes and one or
    more bodies, e.g. if/else (``heads`` are the lines opening each body)."""

    def __init__(self, heads, exprs, blocks, prefix=(), tail=()):
        self.heads, self._exprs, self.blocks = list(heads), list(exprs), [list(b) for b in blocks]
        self.prefix, self.tail = list(prefix), list(tail)

    def lines(self, indent):
        out = [indent + fill(p, self._exprs) for p in self.prefix]
        for head, body in zip(self.heads, self.blocks):
            out.append(indent + fill(head, self._exprs))
            inner = [line for s in body for line in s.lines(indent + "    ")]
            out += inner or [indent + "    pass"]
        out += [indent + fill(t, self._exprs) for t in self.tail]
        return out

    def exprs(self):
        return list(self._exprs)

    def with_exprs(self, exprs):
        return Block(self.heads, exprs, self.blocks, self.prefix, self.tail)

    def with_blocks(self, blocks):
        return Block(self.heads, self._exprs, blocks, self.prefix, self.tail)


class Program:
    """A module: helper functions, ``f`` and ``loss``; its arguments."""

    def __init__(self, seed, params, body, ret, helpers, out_kind, args, dtype):
        self.seed, self.params, self.body, self.ret = seed, params, body, ret
        self.helpers, self.out_kind, self.args, self.dtype = helpers, out_kind, args, dtype

    def source(self):
        lines = ['"""A program written by tests/fuzzing (seed %d)."""' % self.seed,
                 "import numpy as np", "", "from tangent_x import lax", ""]
        for h in self.helpers:
            lines += [""] + h + [""]
        lines += ["", f"def f({', '.join(self.params)}):"]
        lines += [line for s in self.body for line in s.lines("    ")]
        lines.append("    return " + self.ret.text())
        lines += ["", "", f"def loss({', '.join(self.params)}):"]
        call = f"f({', '.join(self.params)})"
        if self.out_kind == "scalar":
            lines.append(f"    return {call}")
        elif self.out_kind == "array":
            lines.append(f"    return np.sum(np.sin({call}))")
        else:
            lines += [f"    first, second = {call}", "    return first * 2.0 + np.sum(second)"]
        return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- the generator
UNARY = [
    "np.sin({0})", "np.cos({0})", "np.tanh({0})", "np.exp(np.tanh({0}))",
    "np.sqrt(1.0 + {0} * {0})", "np.log(1.0 + {0} * {0})", "({0}) ** 2", "({0}) ** 3",
    "-{0}", "np.abs({0})", "{0} / (1.0 + {0} * {0})", "np.arctan({0})",
    "1.0 / (1.0 + np.exp(-{0}))", "np.maximum({0}, 0.1)",
]
BINARY = ["{0} + {1}", "{0} - {1}", "{0} * {1}", "{0} - -{1}", "({0}) * ({1}) + {0}"]
REDUCE = ["np.sum({0})", "np.mean({0})", "np.max({0})", "np.min({0})", "np.sum({0} * {0})"]


class OwnStream:
    """A kind of statement group drawn from a random stream of its own
    (``containers``, ``sharing``, ``unpacking``): a program in which it is
    off draws exactly what it drew before the kind existed.  A subclass sets
    ``NAME``, ``RATE`` (the programs that use the kind), ``STMT_RATE`` (in
    those, the statements of this kind) and ``make(gen, scope, r)``."""
    NAME, RATE, STMT_RATE = "", 0.0, 0.0

    def __init__(self, seed, attempt):
        self.r = random.Random(f"{self.NAME}-{seed}-{attempt}")
        self.on = self.r.random() < self.RATE

    def wants(self):
        return self.on and self.r.random() < self.STMT_RATE

    def stmt(self, gen, scope):
        saved, gen.r = gen.r, self.r        # the group's expressions draw from this stream too
        try:
            return self.make(gen, scope, self.r)
        finally:
            gen.r = saved

    def make(self, gen, scope, r):
        raise NotImplementedError


class Generator:
    """Draws one program from a seed.  ``features`` limits what it may use
    (every construct by default)."""

    def __init__(self, seed, attempt=0, float32=None):
        self.seed = seed
        self.r = random.Random(seed * 1000 + attempt)
        self.counter = 0
        self.helpers = []
        self.helper_sigs = []          # (name, param shapes, result shape)
        self.float32 = self.r.random() < 0.08 if float32 is None else float32
        self.guards = set()
        from .containers import Containers    # local import: containers builds on this module
        from .sharing import Sharing
        from .unpacking import Unpacking
        self.containers = Containers(seed, attempt)
        self.sharing = Sharing(seed, attempt)
        self.unpacking = Unpacking(seed, attempt)

    # -- names and scope
    def writable(self, scope):
        """The variables a statement may assign: not the stop variable of an
        enclosing while loop (the loop must end)."""
        return [v for v in scope if v not in self.guards]

    def fresh(self, stem):
        self.counter += 1
        return f"{stem}{self.counter}"

    def const(self, lo=-1.5, hi=1.5):
        return round(self.r.uniform(lo, hi), 2)

    # -- expressions
    def expr(self, scope, shape, depth=2):
        r = self.r
        candidates = [v for v, s in scope.items() if broadcasts(s, shape)]
        exact = [v for v in candidates if scope[v] == shape]
        if depth <= 0 or r.random() < 0.25:
            if exact and r.random() < 0.85:
                return Var(r.choice(exact), shape)
            if candidates and r.random() < 0.5:
                v = r.choice(candidates)
                if scope[v] == shape:
                    return Var(v, shape)
                return Template("{0} * {1}", [Var(v, scope[v]), self.full(scope, shape)], shape)
            if shape == ():
                return Const(self.const())
            return self.full(scope, shape)
        k = r.random()
        if k < 0.35:
            return Template(r.choice(UNARY), [self.expr(scope, shape, depth - 1)], shape)
        if k < 0.7:
            a = self.expr(scope, shape, depth - 1)
            small = r.choice([s for s in SHAPES if broadcasts(s, shape)])
            b = self.expr(scope, small, depth - 1) if r.random() < 0.5 else Const(self.const())
            if r.random() < 0.5:
                a, b = b, a
            if isinstance(a, Const) and isinstance(b, Const):
                b = self.expr(scope, shape, 0)
            return Template(r.choice(BINARY), [a, b], shape)
        if k < 0.78 and shape == ():
            big = r.choice([(N,), (M,), (M, N)])
            return Template(r.choice(REDUCE), [self.expr(scope, big, depth - 1)], ())
        if k < 0.84:
            return self.index(scope, shape, depth)
        if k < 0.88:
            c = Const(self.const(-1.0, -0.1))      # a negative constant raised to a power
            return Template("{0} * {1} ** 2", [self.expr(scope, shape, depth - 1), c], shape)
        if k < 0.92 and self.helper_sigs:
            fits = [h for h in self.helper_sigs if broadcasts(h[2], shape)]
            if fits:
                name, pshapes, rshape = r.choice(fits)
                args = [self.expr(scope, s, depth - 1) for s in pshapes]
                call = Template(name + "(" + ", ".join("{%d}" % i for i in range(len(args))) + ")",
                                args, rshape)
                return call if rshape == shape else \
                    Template("{0} * {1}", [call, self.expr(scope, shape, 0)], shape)
        if k < 0.96:
            cond = self.cond(scope, depth - 1)
            return Template("({0} if {1} else {2})", [self.expr(scope, shape, depth - 1), cond,
                                                      self.expr(scope, shape, depth - 1)], shape)
        if shape == (M,):
            return Template("{0} @ {1}", [self.expr(scope, (M, N), depth - 1),
                                          self.expr(scope, (N,), depth - 1)], shape)
        if shape == ():
            return Template("np.dot({0}, {1})", [self.expr(scope, (N,), depth - 1),
                                                 self.expr(scope, (N,), depth - 1)], shape)
        return Template(r.choice(UNARY), [self.expr(scope, shape, depth - 1)], shape)

    def full(self, scope, shape):
        """A value of ``shape`` made from the arguments."""
        base = [v for v, s in scope.items() if s == shape]
        if base:
            return Var(self.r.choice(base), shape)
        c = Const(self.const())
        if shape == (N,):
            return Template("np.linspace(-1.0, 1.0, 3) * {0}", [c], shape)
        if shape == (M,):
            return Template("np.array([0.5, -0.25]) * {0}", [c], shape)
        return Template("np.ones((2, 3)) * {0}", [c], shape)

    def index(self, scope, shape, depth):
        r = self.r
        if shape == ():
            src = r.choice([(N,), (M, N)])
            base = self.expr(scope, src, depth - 1)
            idx = r.choice(["[0]", "[-1]", "[1]"]) if src == (N,) else r.choice(["[0, 1]", "[-1, -1]", "[1][2]"])
            return Template("{0}" + idx, [base], ())
        if shape == (M,):
            src = r.choice([(N,), (M, N)])
            base = self.expr(scope, src, depth - 1)
            idx = r.choice(["[:2]", "[1:]", "[::2]", "[-2:]"]) if src == (N,) else r.choice(["[:, 0]", "[:, -1]"])
            return Template("{0}" + idx, [base], shape)
        if shape == (N,):
            base = self.expr(scope, (M, N), depth - 1)
            return Template("{0}" + r.choice(["[0]", "[-1]", "[1, :]"]), [base], shape)
        base = self.expr(scope, (M, N), depth - 1)
        return Template("{0}" + r.choice(["[::-1]", "[:, ::-1]"]), [base], shape)

    def cond(self, scope, depth=1):
        r = self.r
        k = r.random()
        shape = r.choice(SHAPES)
        e = self.expr(scope, shape, max(depth, 0))
        red = e if shape == () else Template(r.choice(["np.sum({0})", "np.mean({0})", "{0}.max()"]), [e], ())
        op = r.choice(["<", ">", "<=", ">="])
        base = Template("{0} %s {1}" % op, [red, Const(self.const(-1.0, 1.0))], ())
        if k < 0.15:
            other = self.cond(scope, 0) if depth > 0 else Template("{0} > {1}", [self.expr(scope, (), 0), Const(self.const())], ())
            return Template("{0} %s {1}" % r.choice(["and", "or"]), [base, other], ())
        if k < 0.2:
            return Template("not {0}", [base], ())
        return base

    # -- statements
    def assign(self, scope, name=None, shape=None, depth=2):
        shape = shape if shape is not None else self.r.choice(SHAPES)
        name = name or self.fresh("v")
        e = self.expr(scope, shape, depth)
        scope[name] = shape
        return Line(name + " = {0}", [e])

    def block(self, scope, n, depth, out_shape, in_loop=False):
        stmts = []
        for _ in range(n):
            stmts += self.stmt(scope, depth, out_shape, in_loop)
        return stmts

    def stmt(self, scope, depth, out_shape, in_loop):
        r = self.r
        k = r.random()
        owned = [v for v, s in scope.items() if v.startswith("c") and s in [(N,), (M, N)]]
        if self.containers.wants():
            return self.containers.stmt(self, scope)
        if self.sharing.wants():
            return self.sharing.stmt(self, scope)
        if self.unpacking.wants():
            return self.unpacking.stmt(self, scope)
        if depth <= 0 or k < 0.3:
            if r.random() < 0.4 and self.writable(scope):
                # reassign or update an existing variable, keeping its shape
                v = r.choice(self.writable(scope))
                if r.random() < 0.5:
                    return [Line(v + " %s= {0}" % r.choice("+-*"), [self.expr(scope, scope[v], 1)])]
                return [Line(v + " = {0}", [self.expr(scope, scope[v], 2)])]
            return [self.assign(scope)]
        if k < 0.42:
            return self.if_stmt(scope, depth, out_shape, in_loop)
        if k < 0.52:
            return self.for_stmt(scope, depth, out_shape)
        if k < 0.59:
            return self.while_stmt(scope, depth, out_shape)
        if k < 0.72:
            return self.inplace(scope, owned)
        if k < 0.84:
            return self.lax_stmt(scope)
        if k < 0.9:
            return self.closure(scope)
        if k < 0.95 and in_loop:
            cond = self.cond(scope, 0)
            return [Block(["if {0}:"], [cond], [[Line(r.choice(["break", "continue"]))]])]
        if k < 0.98 and out_shape is not None:
            cond = self.cond(scope, 0)
            return [Block(["if {0}:"], [cond], [[Line("return {0}", [self.out_expr(scope, out_shape)])]])]
        return [self.assign(scope)]

    def out_expr(self, scope, out_shape):
        if isinstance(out_shape, tuple) and out_shape and isinstance(out_shape[0], tuple):
            return Template("({0}, {1})", [self.expr(scope, out_shape[0], 1),
                                           self.expr(scope, out_shape[1], 1)], ())
        return self.expr(scope, out_shape, 2)

    def if_stmt(self, scope, depth, out_shape, in_loop):
        r = self.r
        n_branches = r.choice([1, 2, 2, 3])
        conds = [self.cond(scope) for _ in range(max(n_branches - 1, 1))]
        # variables every branch assigns become visible after the statement
        target_shape = r.choice(SHAPES)
        target = self.fresh("b") if r.random() < 0.6 or not self.writable(scope) else \
            r.choice(self.writable(scope))
        if target in scope:
            target_shape = scope[target]
        bodies, scopes = [], []
        for _ in range(n_branches):
            inner = dict(scope)
            body = self.block(inner, r.choice([0, 1, 1, 2]), depth - 1, out_shape, in_loop)
            body.append(self.assign(inner, target, target_shape))
            bodies.append(body)
            scopes.append(inner)
        if n_branches == 1 and target not in scope:
            scope_before = dict(scope)
            pre = self.assign(scope_before, target, target_shape)
            scope.update(scope_before)
            heads = ["if {0}:"]
            return [pre, Block(heads, conds, bodies)]
        heads = ["if {0}:"] + (["elif {1}:"] if n_branches == 3 else []) + ["else:"]
        common = set.intersection(*[set(s) for s in scopes])
        for v in common:
            shapes = {s[v] for s in scopes}
            if len(shapes) == 1:
                scope[v] = shapes.pop()
        return [Block(heads, conds, bodies)]

    def carried(self, scope):
        """Loop-carried variables: new accumulators or existing values."""
        r = self.r
        pre, names = [], []
        for _ in range(r.choice([1, 2])):
            if self.writable(scope) and r.random() < 0.5:
                names.append(r.choice(self.writable(scope)))
            else:
                name = self.fresh("acc")
                pre.append(self.assign(scope, name, r.choice(SHAPES), 1))
                names.append(name)
        return pre, names

    def loop_body(self, scope, names, depth, out_shape, extra=None, stops=False):
        r = self.r
        inner = dict(scope)
        if extra:
            inner.update(extra)
        body = self.block(inner, r.choice([0, 1]), depth - 1, out_shape, in_loop=True)
        for v in names:
            e = self.expr(inner, scope[v], 1)
            # a contraction keeps repeated updates bounded
            body.append(Line(f"{v} = 0.7 * {v} + 0.3 * {{0}}", [e]))
        if r.random() < 0.3:
            # its condition reads only what is bound before the loop: the exit
            # may come before the body's own assignments
            # (a while loop's ``continue`` there would skip its progress for
            # ever once taken: ``stops`` makes it a ``break``, drawn alike)
            at = r.randrange(len(body) + 1)
            cond = self.cond(scope, 0)
            word = r.choice(["break", "continue"])
            body.insert(at, Block(["if {0}:"], [cond], [[Line("break" if stops else word)]]))
        return body

    def for_stmt(self, scope, depth, out_shape):
        r = self.r
        pre, names = self.carried(scope)
        k = r.random()
        i = self.fresh("i")
        if k < 0.45:
            body = self.loop_body(scope, names, depth, out_shape, {i: ()})
            # the index used as a number too
            body.insert(0, Line(f"{names[0]} = {names[0]} + 0.1 * {i}"))
            return pre + [Block([f"for {i} in range({r.randint(1, 4)}):"], [], [body])]
        if k < 0.75:
            src = r.choice([(N,), (M, N)])
            arr = self.expr(scope, src, 1)
            body = self.loop_body(scope, names, depth, out_shape, {i: src[1:]})
            return pre + [Block([f"for {i} in {{0}}:"], [arr], [body])]
        j = self.fresh("j")
        a, b = self.expr(scope, (N,), 1), self.expr(scope, (N,), 1)
        body = self.loop_body(scope, names, depth, out_shape, {i: (), j: ()})
        return pre + [Block([f"for {i}, {j} in zip({{0}}, {{1}}):"], [a, b], [body])]

    def while_stmt(self, scope, depth, out_shape):
        r = self.r
        pre, names = self.carried(scope)
        w = self.fresh("w")
        pre.append(Line(w + " = np.tanh({0})", [self.expr(scope, (), 1)]))
        scope[w] = ()
        self.guards.add(w)
        body = self.loop_body(scope, names, depth, out_shape, stops=True)
        # the stop depends on the data and is reached: w grows by 0.2 at least
        body.append(Line(f"{w} = {w} + 0.3 + 0.1 * np.sin({{0}})", [self.expr(scope, (), 1)]))
        if r.random() < 0.4:
            k = self.fresh("k")
            pre.append(Line(f"{k} = 0"))
            body.append(Line(f"{k} += 1"))
            head = f"while {w} < {{0}} and {k} < {r.randint(2, 5)}:"
        else:
            head = f"while {w} < {{0}}:"
        return pre + [Block([head], [Const(self.const(0.0, 1.2))], [body])]

    def inplace(self, scope, owned):
        r = self.r
        out = []
        if not owned or r.random() < 0.4:
            shape = r.choice([(N,), (M, N)])
            c = self.fresh("c")
            src = self.expr(scope, shape, 1)
            out.append(Line(c + " = {0} * 1.0", [src]))     # an array the function owns
            scope[c] = shape
        else:
            c = r.choice(owned)
        shape = scope[c]
        view = dict(scope)
        if shape == (N,):
            choices = [("[{i}]", ()), ("[1:]", (M,)), ("[:2]", (M,)), ("[::2]", (M,)),
                       ("[-2:]", (M,)), ("[1::2]", ()), ("[:]", (N,))]
        else:
            choices = [("[0]", (N,)), ("[:, 1]", (M,)), ("[1, 2]", ()), ("[:, :2]", ()), ("[-1]", (N,))]
        idx, vshape = r.choice(choices)
        k = r.random()
        if "{i}" in idx:
            idx = idx.format(i=r.choice(["0", "1", "-1", "2"]))
        rhs = self.expr(view, vshape if r.random() < 0.6 else (), 2)
        # the right side often reads the array being written, overlapping slices too
        if r.random() < 0.5:
            # (a place a number is written to may read as an array: c[1::2])
            ridx = r.choice([i for i, s in choices if _READS.get(i, s) == vshape
                             and "{i}" not in i] or [idx])
            rhs = Template("{0} * " + c + ridx, [rhs], vshape)
        if k < 0.6:
            op = r.choice(["", "+", "-", "*"])
            out.append(Line(c + idx + f" {op}= {{0}}", [rhs]))
        elif "[" in idx and ":" not in idx and "," not in idx:
            method = r.choice(["add", "set", "multiply"])
            out.append(Line(f"{c} = {c}.at{idx}.{method}({{0}})", [rhs]))
        else:
            i = self.fresh("i")
            body = [Line(f"{c}[{i}] = {c}[{i}] * {{0}} + np.sin({c}[{i} - 1])",
                         [self.expr(scope, shape[1:], 1)])]
            out.append(Block([f"for {i} in range(1, {shape[0]}):"], [], [body]))
        return out

    def lax_stmt(self, scope):
        r = self.r
        shape = r.choice(SHAPES)
        v = self.fresh("l")
        a = self.fresh("a")
        inner = dict(scope)
        inner[a] = shape
        k = r.random()
        if k < 0.3:
            e1, e2 = self.expr(inner, shape, 1), self.expr(inner, shape, 1)
            return [Line(f"{v} = lax.cond({{0}}, lambda {a}: {{1}}, lambda {a}: {{2}}, {{3}})",
                         [self.cond(scope, 0), e1, e2, self.expr(scope, shape, 1)])] + self._bind(scope, v, shape)
        if k < 0.45:
            s = self.fresh("s")
            es = [self.expr(inner, shape, 1) for _ in range(3)]
            return [Line(f"{s} = np.sum({{0}})", [self.expr(scope, (N,), 1)]),
                    Line(f"{v} = lax.switch(0 if {s} < -0.5 else (1 if {s} < 0.5 else 2), "
                         f"[lambda {a}: {{0}}, lambda {a}: {{1}}, lambda {a}: {{2}}], {{3}})",
                         es + [self.expr(scope, shape, 1)])] + self._bind(scope, v, shape)
        if k < 0.65:
            i = self.fresh("i")
            inner[i] = ()
            body = self.expr(inner, shape, 1)
            return [Line(f"{v} = lax.fori_loop(0, {r.randint(1, 4)}, "
                         f"lambda {i}, {a}: 0.6 * {a} + 0.4 * {{0}}, {{1}})",
                         [body, self.expr(scope, shape, 1)])] + self._bind(scope, v, shape)
        if k < 0.82:
            carry = dict(scope)
            carry["c[1]"] = shape          # the loop's value, read from its (count, value) carry
            return [Line(f"_, {v} = lax.while_loop(lambda c: c[0] < {r.randint(1, 4)}, "
                         f"lambda c: (c[0] + 1, 0.6 * c[1] + 0.4 * {{0}}), (0, {{1}}))",
                         [self.expr(carry, shape, 1), self.expr(scope, shape, 1)])] + self._bind(scope, v, shape)
        xi = self.fresh("xi")
        inner2 = dict(scope)
        inner2[a], inner2[xi] = shape, ()
        upd = self.expr(inner2, shape, 1)
        ys = self.fresh("ys")
        line = Line(f"{v}, {ys} = lax.scan(lambda {a}, {xi}: (0.6 * {a} + 0.4 * {{0}}, np.sum({a}) * {xi}), "
                    f"{{1}}, {{2}})", [upd, self.expr(scope, shape, 1), self.expr(scope, (N,), 1)])
        scope[ys] = (N,)
        return [line] + self._bind(scope, v, shape)

    def _bind(self, scope, v, shape):
        scope[v] = shape
        return []

    def closure(self, scope):
        r = self.r
        shape = r.choice(SHAPES)
        g = self.fresh("g")
        a = self.fresh("p")
        inner = dict(scope)
        inner[a] = shape
        body = self.expr(inner, shape, 2)
        out = []
        if r.random() < 0.5:
            out.append(Line(f"{g} = lambda {a}: {{0}}", [body]))
        else:
            out.append(Block([f"def {g}({a}):"], [], [[Line("return {0}", [body])]]))
        v = self.fresh("v")
        out.append(Line(f"{v} = {g}({{0}})", [self.expr(scope, shape, 1)]))
        scope[v] = shape
        return out

    def helper(self):
        r = self.r
        name = self.fresh("helper")
        pshapes = [r.choice(SHAPES) for _ in range(r.choice([1, 2]))]
        params = [self.fresh("q") for _ in pshapes]
        scope = dict(zip(params, pshapes))
        rshape = r.choice(SHAPES)
        body = self.block(scope, r.choice([1, 2]), 1, rshape)
        lines = [f"def {name}({', '.join(params)}):"]
        lines += [line for s in body for line in s.lines("    ")]
        lines.append("    return " + self.expr(scope, rshape, 2).text())
        self.helpers.append(lines)
        self.helper_sigs.append((name, pshapes, rshape))

    def program(self):
        r = self.r
        for _ in range(r.choice([0, 0, 1, 2])):
            self.helper()
        n_params = r.choice([1, 2, 2, 3])
        params, scope, args = [], {}, []
        rng = np.random.RandomState(self.r.randrange(2 ** 31))
        dt = np.float32 if self.float32 else np.float64
        use_dict = r.random() < 0.12
        for i in range(n_params):
            name = "xyz"[i]
            shape = r.choice(SHAPES)
            params.append(name)
            scope[name] = shape
            args.append(rng.uniform(-1.5, 1.5, size=shape).astype(dt) if shape else float(round(rng.uniform(-1.5, 1.5), 3)))
        body = []
        if use_dict:
            params.append("p")
            pw, pb = r.choice([(N,), (M, N)]), r.choice([(), (N,)])
            args.append({"w": rng.uniform(-1, 1, size=pw).astype(dt), "b": rng.uniform(-1, 1, size=pb).astype(dt)})
            body.append(Line("pw = p['w']"))
            body.append(Line("pb = p['b']"))
            scope["pw"], scope["pb"] = pw, pb
        if self.float32:
            args = [np.asarray(a, dtype=np.float32) if not isinstance(a, dict) else a for a in args]
        out_kind = r.choice(["scalar", "scalar", "array", "tuple"])
        out_shape = {"scalar": (), "array": r.choice([(N,), (M,), (M, N)]),
                     "tuple": ((), r.choice([(N,), (M,)]))}[out_kind]
        body += self.block(scope, r.choice([2, 3, 4, 5]), 2, out_shape)
        ret = self.out_expr(scope, out_shape)
        return Program(self.seed, params, body, ret, self.helpers, out_kind, args,
                       "float32" if self.float32 else "float64")


def generate(seed, **options):
    return Generator(seed, **options).program()
