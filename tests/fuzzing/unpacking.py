"""Unpacking assignments whose items read the names they bind: Python
reads every item on the right before it binds a name on the left.

    a, b = b, a                       # a swap
    a, b, c = b, c, a                 # a rotation
    cur, prev = 0.5 * cur + x, cur    # a shift register: the old value kept

alone, in a ``for`` over a range or in a ``while`` loop (where the loop's
carries at the end of a turn are such an assignment too: ``w, y = w_new,
w`` after ``y = w``, seed 700089 -- a compiled swap gave ``b`` the new
``a``, a silently wrong value under jit).  Each group ends by binding a
number that reads every name, so a value taken too late is a wrong value.
The draws use a random stream of their own: a program without these
statements is the program it was before this module existed.
"""
from .programs import SHAPES, Block, Const, Line, OwnStream


class Unpacking(OwnStream):
    NAME = "unpacking"
    RATE = 0.15             # the programs that use them
    STMT_RATE = 0.2         # in those, the statements that are of this kind

    def make(self, gen, scope, r):
        return _group(gen, scope, r)


def _group(gen, scope, r):
    shape = r.choice(SHAPES)
    n = r.choice([2, 2, 3])
    names = [gen.fresh("u") for _ in range(n)]
    out = []
    for u in names:
        out.append(Line(u + " = {0}", [gen.expr(scope, shape, 1)]))
        scope[u] = shape
    kind = r.random()
    if kind < 0.4:          # a swap or rotation: each target reads a name bound before it
        step = Line(", ".join(names) + " = " + ", ".join(names[1:] + names[:1]))
    else:                   # a shift register: the newest value first, then the old ones
        new = f"0.5 * {names[0]} + 0.5 * {{0}}"
        step = Line(", ".join(names) + " = " + ", ".join([new] + names[:-1]),
                    [gen.expr(scope, shape, 1)])
    where = r.random()
    if where < 0.25:
        out.append(step)
    elif where < 0.65:
        i = gen.fresh("i")
        out.append(Block([f"for {i} in range({r.randint(1, 4)}):"], [], [[step]]))
    else:               # a while loop whose stop is reached: w grows by 0.3 a turn
        w = gen.fresh("w")
        out.append(Line(w + " = np.tanh({0})", [gen.expr(scope, (), 1)]))
        scope[w] = ()
        body = [step]
        if shape == () and r.random() < 0.5:
            # ``y = w`` then ``w`` changes: the turn's carries are ``w, y = w_new, w``
            body.append(Line(f"{names[-1]} = {w}"))
        body.append(Line(f"{w} = {w} + 0.3"))
        out.append(Block([f"while {w} < {{0}}:"], [Const(gen.const(0.0, 1.2))], [body]))
    k = gen.fresh("k")
    scope[k] = ()
    read = " + ".join(f"{j + 1}.0 * np.sum({u})" for j, u in enumerate(names))
    return out + [Line(f"{k} = {read}")]
