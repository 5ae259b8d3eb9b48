"""Statements that build Python containers at run time and read them back.

A fraction of generated programs (drawn per program) use them: lists
filled by ``append`` in for and while loops (numbers, arrays, tuples of
them, lists of lists), list comprehensions with ``if`` filters on data and
on static values, ``list(zip(..))``, ``list(enumerate(..))``, ``tuple(..)``,
``sum``/``max``/``min`` of a list, ``items[i]``, ``items[-1]``,
``items[i][j]``, slices of lists, ``for a, b in items``,
``np.array``/``np.stack``/``np.concatenate`` of lists, ``len``, ``pop()``
in a while loop, dicts with static keys updated in loops, dict
comprehensions over ``d.items()`` and starred unpacking.

Each statement group ends by binding one new array variable of a known
shape (one of ``programs.SHAPES``), read from the container, so the rest
of the program uses it like any other value; the containers themselves
never enter the generator's scope.  Every item is an expression of the
program's values, so the result stays differentiable.

The draws use a random stream of their own: a program without containers
is the same program it was before this module existed.
"""
from .programs import M, N, SHAPES, Block, Const, Line, OwnStream, Template, Var


class Containers(OwnStream):
    NAME = "containers"
    RATE = 0.3              # the programs that use containers
    STMT_RATE = 0.35        # in those, the statements that are container statements

    def make(self, gen, scope, r):
        return r.choice(MAKERS)(_Draw(gen, scope))


class _Draw:
    """The generator, the scope and small helpers for one statement group."""

    def __init__(self, gen, scope):
        self.gen, self.scope, self.r = gen, scope, gen.r

    def e(self, shape, depth=1, extra=None):
        scope = dict(self.scope)
        scope.update(extra or {})
        return self.gen.expr(scope, shape, depth)

    def fresh(self, stem):
        return self.gen.fresh(stem)

    def bind(self, shape, form, exprs=()):
        """``v = form``: the result, a new variable of ``shape`` in scope."""
        v = self.fresh("k")
        self.scope[v] = shape
        return Line(f"{v} = " + form, list(exprs))

    def shape(self):
        return self.r.choice(SHAPES)


def _sum_of(shape):
    return "{0}" if shape == () else "np.sum({0})"


# ---------------------------------------------------------------- lists filled by append
def appended(d):
    """``items = []; for ...: items.append(x)``, then read back."""
    r = d.r
    items, i = d.fresh("items"), d.fresh("i")
    n = r.choice([2, 3])
    shape = r.choice(SHAPES)
    body = [Line(f"{items}.append({{0}})", [_damped(d.e(shape, 1, {i: ()}), i)])]
    if r.random() < 0.3:
        # a filter on data inside the loop
        cond = Template("np.sum({0}) > {1}" if shape != () else "{0} > {1}",
                        [d.e(shape, 1, {i: ()}), Const(round(r.uniform(-1.0, 1.0), 2))], ())
        body = [Block(["if {0}:"], [cond], [body])]
        guaranteed = False
    else:
        guaranteed = True
    if r.random() < 0.25:
        pre = [Line(f"{items} = []"), Line(f"{i} = 0")]
        loop = Block([f"while len({items}) < {n}:"] if guaranteed else [f"while {i} < {n}:"], [],
                     [body + [Line(f"{i} += 1")]])
    else:
        pre = [Line(f"{items} = []")]
        loop = Block([f"for {i} in range({n}):"], [], [body])
    return pre + [loop] + _read_list(d, items, shape, n if guaranteed else None)


def _damped(expr, i):
    """An item that depends on the loop index too."""
    return Template("{0} * (1.0 + 0.25 * %s)" % i, [expr], expr.shape)


def _read_list(d, items, shape, n):
    """Statements reading list ``items`` of items of ``shape`` (``n`` of
    them, or an unknown number when ``n`` is None), binding a new value."""
    r = d.r
    s = _sum_of(shape)
    if n is None:
        # possibly empty: only readers that accept no items
        k = r.random()
        if k < 0.4:
            return [d.bind((), f"sum([{s.format('t')} for t in {items}]) + 0.0")]
        if k < 0.7:
            acc = d.fresh("k")
            t = d.fresh("t")
            d.scope[acc] = ()
            return [Line(f"{acc} = 0.0"),
                    Block([f"for {t} in {items}:"], [], [[Line(f"{acc} = 0.5 * {acc} + {s.format(t)}")]])]
        t = d.fresh("t")
        return [d.bind((), f"len({items}) * 0.1 + sum({s.format(t)} for {t} in {items}[::-1])")]
    choices = ["sum", "index", "last", "slice", "tuple", "star", "pop", "len"]
    if shape == ():
        choices += ["array", "array", "maxmin"]
    else:
        choices += ["stack", "concat"]
    how = r.choice(choices)
    if how == "sum":
        return [d.bind(shape, f"sum({items})")]
    if how == "index":
        return [d.bind(shape, f"{items}[{r.randrange(n)}] * {items}[{r.randrange(-n, 0)}]")]
    if how == "last":
        return [d.bind(shape, f"{items}[-1] - {items}[0]")]
    if how == "slice":
        sl = r.choice(["[::-1]", "[1:]", "[:-1]", "[::2]"])
        t = d.fresh("t")
        return [d.bind(shape, f"sum({t} * 0.5 for {t} in {items}{sl})")]
    if how == "tuple":
        tup = d.fresh("tup")
        return [Line(f"{tup} = tuple({items})"), d.bind(shape, f"{tup}[0] + 2.0 * {tup}[-1]")]
    if how == "star":
        a, rest = d.fresh("a"), d.fresh("rest")
        return [Line(f"{a}, *{rest} = {items}"), d.bind(shape, f"{a} - sum({rest})")]
    if how == "pop":
        acc = d.fresh("k")
        d.scope[acc] = shape
        return [Line(f"{acc} = {items}[0] * 0.0"),
                Block([f"while {items}:"], [], [[Line(f"{acc} = 0.5 * {acc} + {items}.pop()")]])]
    if how == "len":
        return [d.bind(shape, f"{items}[len({items}) - 1] * len({items})")]
    if how == "array":
        if n in (M, N):
            return [d.bind({M: (M,), N: (N,)}[n], f"np.array({items})")]
        return [d.bind((), f"np.sum(np.array({items}) ** 2)")]
    if how == "maxmin":
        return [d.bind((), f"{r.choice(['max', 'min'])}({items}) + 0.5 * {items}[1]")]
    if how == "stack":
        if n == M and shape == (N,):
            return [d.bind((M, N), f"np.stack({items})")]
        return [d.bind((), f"np.sum(np.stack({items}) ** 2)")]
    return [d.bind((), f"np.sum(np.sin(np.concatenate([np.ravel(t) for t in {items}])))")]


def tuples(d):
    """A list of tuples filled in a loop, read by unpacking and indexing."""
    r = d.r
    items, i = d.fresh("pairs"), d.fresh("i")
    n = r.choice([2, 3])
    sa, sb = r.choice(SHAPES), r.choice([(), (N,)])
    ea, eb = _damped(d.e(sa, 1, {i: ()}), i), d.e(sb, 1, {i: ()})
    if r.random() < 0.3:
        item = "({0}, {1}, %s)" % i                 # an int beside the numbers
    else:
        item = "({0}, {1})"
    out = [Line(f"{items} = []"),
           Block([f"for {i} in range({n}):"], [], [[Line(f"{items}.append({item})", [ea, eb])]])]
    k = r.random()
    res = sa if sb == () else ((N,) if sa in [(), (N,)] else ((M, N) if sa == (M, N) else None))
    if k < 0.35 and res is not None:
        a, b = d.fresh("a"), d.fresh("b")
        acc = d.fresh("k")
        d.scope[acc] = res
        rest = ", *_" if item.count(",") == 2 else ""
        return out + [Line(f"{acc} = {items}[0][1] * 0.0 + {items}[0][0] * 0.0"),
                      Block([f"for {a}, {b}{rest} in {items}:"], [], [[Line(f"{acc} = {acc} + {a} * {b}")]])]
    if k < 0.6:
        j = r.randrange(n)
        return out + [d.bind((), f"{_sum_of(sa).format(items + f'[{j}][0]')} * "
                                 f"{_sum_of(sb).format(items + '[-1][1]')}")]
    if k < 0.8 and sa == () and sb == ():
        arr = d.fresh("arr")
        return out + [Line(f"{arr} = np.array({items})"),
                      d.bind((), f"np.sum({arr}[:, 0] * {arr}[:, 1]) + {arr}[-1, 0]")]
    t = d.fresh("t")
    return out + [d.bind((), f"sum({_sum_of(sa).format(t + '[0]')} - {_sum_of(sb).format(t + '[1]')} "
                             f"for {t} in {items}[::-1])")]


def nested(d):
    """A list of lists built by nested loops, made an array."""
    r = d.r
    rows, row, i, j = d.fresh("rows"), d.fresh("row"), d.fresh("i"), d.fresh("j")
    e = d.e((), 1, {i: (), j: ()})
    body = [Line(f"{row} = []"),
            Block([f"for {j} in range({N}):"], [], [[Line(f"{row}.append({{0}} + 0.1 * {j} * {i})", [e])]]),
            Line(f"{rows}.append({row})")]
    out = [Line(f"{rows} = []"), Block([f"for {i} in range({M}):"], [], [body])]
    if r.random() < 0.5:
        return out + [d.bind((M, N), f"np.array({rows})")]
    return out + [d.bind((), f"{rows}[1][2] - {rows}[0][-1] + len({rows}[0]) * {rows}[-1][0]")]


# ---------------------------------------------------------------- comprehensions and builtins
def comprehension(d):
    """A list comprehension over an array, a range, zip or enumerate, with
    a filter on data or on static values."""
    r = d.r
    v, w = d.fresh("u"), d.fresh("u")
    lst = d.fresh("lst")
    k = r.random()
    if k < 0.3:
        src = d.e((N,), 1)
        cond = r.choice([f" if {v} > {round(r.uniform(-0.8, 0.8), 2)}", "", " if True"])
        elem = d.e((), 1, {v: ()})
        line = Line(f"{lst} = [{{0}} for {v} in {{1}}{cond}]", [elem, src])
        n = None if "> " in cond else N
    elif k < 0.55:
        elem = d.e(r.choice([(), (N,)]), 1, {v: ()})
        cond = r.choice([f" if {v} % 2 == 0", f" if {v} != 1", ""])
        line = Line(f"{lst} = [{{0}} * (1.0 + {v}) for {v} in range(4){cond}]", [elem])
        n = {"": 4, f" if {v} % 2 == 0": 2, f" if {v} != 1": 3}[cond]
        return [line] + _read_list(d, lst, elem.shape, n)
    elif k < 0.8:
        a, b = d.e((N,), 1), d.e((N,), 1)
        z = d.fresh("zipped")
        elem = d.e((), 1, {v: (), w: ()})
        return [Line(f"{z} = list(zip({{0}}, {{1}}))", [a, b]),
                Line(f"{lst} = [{{0}} * {w} for {v}, {w} in {z}]", [elem])] + _read_list(d, lst, (), N)
    else:
        src = d.e(r.choice([(N,), (M, N)]), 1)
        en = d.fresh("en")
        elem = d.e(src.shape[1:], 1, {w: src.shape[1:]})
        return [Line(f"{en} = list(enumerate({{0}}))", [src]),
                Line(f"{lst} = [{{0}} * (0.5 + {v}) for {v}, {w} in {en}]", [elem])] + \
            _read_list(d, lst, src.shape[1:], src.shape[0])
    return [line] + _read_list(d, lst, (), n)


# ---------------------------------------------------------------- dicts and unpacking
def dicts(d):
    """A dict with static keys, updated in a loop over its keys, perhaps
    remade by a comprehension over its items."""
    r = d.r
    dd, key, kk, vv = d.fresh("d"), d.fresh("key"), d.fresh("kk"), d.fresh("vv")
    shape = r.choice(SHAPES)
    out = [Line(f'{dd} = {{{{"a": {{0}}, "b": {{1}}}}}}', [d.e(shape, 1), d.e(shape, 1)])]
    if r.random() < 0.7:
        out.append(Block([f'for {key} in ("a", "b"):'], [],
                         [[Line(f"{dd}[{key}] = {dd}[{key}] * {{0}}", [d.e((), 1)])]]))
    if r.random() < 0.5:
        out.append(Line(f"{dd} = {{{{{kk}: {vv} * 2.0 for {kk}, {vv} in {dd}.items()}}}}"))
    if r.random() < 0.4:
        out.append(Line(f'{dd}["a"] = {dd}["a"] + {{0}}', [Var(f'{dd}["b"]', shape)]))
    return out + [d.bind(shape, f'{dd}["a"] - 0.5 * {dd}["b"]')]


def unpacking(d):
    """A tuple of values unpacked with a starred target."""
    r = d.r
    shape = r.choice(SHAPES)
    parts = [d.e(shape, 1) for _ in range(r.choice([2, 3, 4]))]
    a, rest, last = d.fresh("a"), d.fresh("rest"), d.fresh("z")
    tup = "(" + ", ".join("{%d}" % i for i in range(len(parts))) + ")"
    if r.random() < 0.5 and len(parts) >= 2:
        return [Line(f"{a}, *{rest}, {last} = {tup}", parts),
                d.bind(shape, f"{a} * {last} + sum({rest}) * 0.5 + len({rest})")]
    return [Line(f"{a}, *{rest} = {tup}", parts), d.bind(shape, f"{a} + sum({rest})")]


MAKERS = [appended, appended, tuples, nested, comprehension, comprehension, dicts, unpacking]
