"""Statements that share arrays through containers, unpacking and loops,
then change them in place through one name and read them through another.

Python shares objects: ``t = (c, v)`` holds the array ``c`` itself, so
``c *= 2`` is seen through ``t[0]``, and ``for p, q in zip(ps, qs): p -=
q`` changes the arrays ``ps`` holds.  A fraction of generated programs
(drawn per program) use them, on arrays the function owns (``c = ... *
1.0``), in the forms the library follows rather than refuses:

- an array or a row of it in a tuple, list or dict, changed by ``op=`` or
  an item write, through the name or through the container;
- ``a, b = c`` of a 2-d array (two row views), one changed in place;
- ``for p in ps`` / ``zip`` / ``enumerate`` over a list of arrays, each
  item changed in place;
- a helper returning a view (``return c[1]``) or a tuple of views;
- a helper changing its argument in place in a loop or ``if`` of its own.

Each group ends by binding one new value of a known shape that reads both
names, so a missed change is a wrong value.  The draws use a random stream
of their own: a program without these statements is the program it was
before this module existed.
"""
from .programs import M, N, Line, Block, OwnStream


class Sharing(OwnStream):
    NAME = "sharing"
    RATE = 0.2              # the programs that use them
    STMT_RATE = 0.25        # in those, the statements that are of this kind

    def make(self, gen, scope, r):
        return r.choice(MAKERS)(gen, scope, r)


def _owned(gen, scope, shape):
    """``c = <expr> * 1.0``: an array the function owns, of ``shape``."""
    c = gen.fresh("c")
    line = Line(c + " = {0} * 1.0", [gen.expr(scope, shape, 1)])
    scope[c] = shape
    return c, line


def _bind(gen, scope, form, exprs=()):
    k = gen.fresh("k")
    scope[k] = ()
    return Line(f"{k} = " + form, list(exprs))


def _change(r, target):
    """A change in place of ``target`` (an array): ``op=`` of a number or an
    item write."""
    k = r.random()
    if k < 0.6:
        return f"{target} {r.choice('+-*')}= {{0}}"
    return f"{target}[0] = {{0}} * {target}[-1]"


def in_container(gen, scope, r):
    """An array (or a row of it) in a tuple, list or dict, changed in place
    through one of the two names, read through both."""
    shape = r.choice([(N,), (M, N)])
    c, made = _owned(gen, scope, shape)
    row = r.random() < 0.4 and shape == (M, N)
    held = f"{c}[1]" if row else c
    kind = r.choice(["tuple", "list", "dict"])
    t = gen.fresh("t")
    other = gen.expr(scope, (), 1)
    if kind == "tuple":
        build, item = f"{t} = ({held}, {{0}})", f"{t}[0]"
    elif kind == "list":
        build, item = f"{t} = [{held}, {{0}}]", f"{t}[0]"
    else:
        build, item = f'{t} = {{{{"w": {held}, "s": {{0}}}}}}', f'{t}["w"]'
    out = [made, Line(build, [other])]
    through = r.random()
    if through < 0.4:                      # through the name
        out.append(Line(_change(r, c), [gen.expr(scope, (), 1)]))
    elif through < 0.7 or kind == "tuple":  # through the item, read into a name
        a = gen.fresh("a")
        out += [Line(f"{a} = {item}"), Line(_change(r, a), [gen.expr(scope, (), 1)])]
    else:                                   # through the container's item
        out.append(Line(_change(r, item), [gen.expr(scope, (), 1)]))
    return out + [_bind(gen, scope, f"np.sum({item}) * 0.5 + np.sum({c})")]


def unpacked_rows(gen, scope, r):
    """``a, b = c`` of a 2-d array: two views of its rows; one changed."""
    c, made = _owned(gen, scope, (M, N))
    a, b = gen.fresh("a"), gen.fresh("b")
    changed = r.choice([a, b])
    return [made, Line(f"{a}, {b} = {c}"), Line(_change(r, changed), [gen.expr(scope, (), 1)]),
            _bind(gen, scope, f"np.sum({c} * {c}) + np.sum({a}) - np.sum({b})")]


def iterated(gen, scope, r):
    """Each array of a list changed in place by a loop over the list."""
    shape = r.choice([(N,), (M,)])
    c1, m1 = _owned(gen, scope, shape)
    c2, m2 = _owned(gen, scope, shape)
    ps, p, q, i = gen.fresh("ps"), gen.fresh("p"), gen.fresh("q"), gen.fresh("i")
    out = [m1, m2, Line(f"{ps} = [{c1}, {c2}]")]
    k = r.random()
    if k < 0.35:
        body = [Line(f"{p} *= {{0}}", [gen.expr(scope, (), 1)])]
        out.append(Block([f"for {p} in {ps}:"], [], [body]))
    elif k < 0.7:
        body = [Line(f"{p} -= 0.5 * {q}")]
        out.append(Block([f"for {p}, {q} in zip({ps}, [{c2}, {c1}]):"], [], [body]))
    else:
        body = [Line(f"{p} += 0.25 * {i} * {p}")]
        out.append(Block([f"for {i}, {p} in enumerate({ps}):"], [], [body]))
    return out + [_bind(gen, scope, f"np.sum({ps}[0] * {c2}) + np.sum({c1})")]


def returned_view(gen, scope, r):
    """A local function returning a view (or a tuple of them), then the
    array changed in place."""
    c, made = _owned(gen, scope, (M, N))
    g, v, w = gen.fresh("g"), gen.fresh("v"), gen.fresh("w")
    if r.random() < 0.5:
        out = [made, Block([f"def {g}():"], [], [[Line(f"return {c}[1]")]]),
               Line(f"{v} = {g}()")]
        read = f"np.sum({v})"
    else:
        out = [made, Block([f"def {g}():"], [], [[Line(f"return {c}[0], {c}[1]")]]),
               Line(f"{v}, {w} = {g}()")]
        read = f"np.sum({v} * {w})"
    out.append(Line(_change(r, c), [gen.expr(scope, (), 1)]))
    return out + [_bind(gen, scope, read + f" + np.sum({c})")]


def changed_in_helper(gen, scope, r):
    """A local function changing its array argument in place inside a loop
    or an ``if`` of its own (``def g(q): for i in range(2): q += ...``),
    called on the array, on a row of it or through an alias, maybe by
    another function's loop; the caller then reads the array and a row of
    it taken before the call (fuzz seed 730217: a helper's loop left the
    caller's array unchanged, in every transform)."""
    shape = r.choice([(N,), (M, N)])
    c, made = _owned(gen, scope, shape)
    g, q, i = gen.fresh("g"), gen.fresh("q"), gen.fresh("i")
    arg_kind = r.random()
    out, arg = [made], c
    if shape == (M, N) and arg_kind < 0.3:
        arg = f"{c}[1]"
    elif arg_kind < 0.5:
        arg = gen.fresh("a")
        out.append(Line(f"{arg} = {c}"))
    row = gen.fresh("row") if shape == (M, N) else None
    if row:
        out.append(Line(f"{row} = {c}[0]"))
    change = Line(_change(r, q), [gen.expr(scope, (), 1)])
    where = r.random()
    if where < 0.45:
        body = [Block([f"for {i} in range({r.randint(1, 3)}):"], [], [[change]])]
    elif where < 0.7:
        body = [Line(f"{i} = 0"),
                Block([f"while {i} < {r.randint(1, 3)}:"], [], [[change, Line(f"{i} += 1")]])]
    else:
        body = [Block(["if {0}:"], [gen.cond(scope)], [[change]])]
    out.append(Block([f"def {g}({q}):"], [], [body + [Line(f"return np.sum({q})")]]))
    if r.random() < 0.3:            # called in another function's loop
        g2, p, j = gen.fresh("g"), gen.fresh("p"), gen.fresh("j")
        loop = Block([f"for {j} in range({r.randint(1, 2)}):"], [], [[Line(f"{g}({p})")]])
        out.append(Block([f"def {g2}({p}):"], [], [[loop, Line("return 0.0")]]))
        g = g2
    if r.random() < 0.5:
        out.append(Line(f"{g}({arg})"))
        read = f"np.sum({c})"
    else:
        v = gen.fresh("v")
        out.append(Line(f"{v} = {g}({arg})"))
        read = f"{v} + np.sum({c})"
    if row:
        read += f" - 0.5 * np.sum({row})"
    return out + [_bind(gen, scope, read)]


MAKERS = [in_container, in_container, unpacked_rows, iterated, iterated, returned_view,
          changed_in_helper, changed_in_helper]
