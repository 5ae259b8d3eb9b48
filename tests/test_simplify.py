"""Dead-code elimination of the python stage, statement by statement:
inside loops and branches, with break/continue, and never dropping a tape
pop.  (The corpora check that derivatives stay right end to end; these
pin the liveness rules themselves.)"""
import ast
import textwrap

import gast

from tangent_x.core.lower import Block
from tangent_x.python_stage.pipeline import optimize


def prune(source, live):
    stmts = gast.parse(textwrap.dedent(source)).body
    blocks = optimize([Block(stmts)], set(live))
    module = ast.fix_missing_locations(
        gast.gast_to_ast(gast.Module(body=blocks[0].stmts, type_ignores=[])))
    return ast.unparse(module).strip()


def lines(text):
    return [line.strip() for line in text.splitlines()]


def test_replayed_statements_the_adjoint_does_not_read_go():
    out = prune("""
        for t in reversed(range(10)):
            x = x_tape.pop()
            s = np.sin(x)
            y = s * 0.99
            x_bar = x_bar * 0.99 * np.cos(x)
        """, {"x_bar"})
    assert "np.sin" not in out and "y = " not in out
    assert "x = x_tape.pop()" in out and "x_bar = x_bar * 0.99 * np.cos(x)" in out


def test_a_value_read_by_the_next_iteration_stays():
    out = prune("""
        for i in range(3):
            b = a + 1.0
            a = c * 2.0
            c = b
        """, {"c"})
    # b feeds c, c feeds a (next iteration), a feeds b: all live
    assert lines(out)[1:] == ["b = a + 1.0", "a = c * 2.0", "c = b"]


def test_a_dead_cycle_goes_with_its_loop():
    out = prune("""
        for i in range(3):
            d = d + 1.0
        z = 2.0
        """, {"z"})
    assert out == "z = 2.0"


def test_break_sees_what_is_live_after_the_loop():
    out = prune("""
        while True:
            y = f_val * 2.0
            if not gt:
                break
            y = 0.0
            gt = y > 1.0
        w = y
        """, {"w"})
    # the first y reaches `w = y` through the break although a later
    # statement of the body overwrites it
    assert "y = f_val * 2.0" in out


def test_continue_sees_what_the_next_iteration_reads():
    out = prune("""
        for i in range(4):
            if i > 2:
                continue
            acc = acc + q
            q = i * 1.0
        """, {"acc"})
    assert "q = i" in out      # (the peephole pass folds the `* 1.0`)


def test_tape_pops_stay_even_when_their_value_is_dead():
    out = prune("""
        for i in range(4):
            x = x_tape.pop()
            g = g * 2.0
        y = x_tape.pop()
        """, {"g", "y"})
    assert "x = x_tape.pop()" in out      # the later pop must see the tape popped


def test_a_branch_with_only_a_live_else_is_inverted():
    out = prune("""
        if flag:
            a = 1.0
        else:
            b = 2.0
        """, {"b"})
    assert lines(out) == ["if not flag:", "b = 2.0"]


def test_a_branch_with_nothing_live_goes():
    assert prune("""
        if flag:
            a = 1.0
        r = 3.0
        """, {"r"}) == "r = 3.0"


_TAPED = """
    t = []
    {alias}
    for i in range(n):
        t.append(x)
        x = x * 2.0
    for i in range(n):
        v = t.pop()
        {backward}
    """


def test_a_tape_whose_pops_nobody_reads_goes_with_its_pushes():
    """A tape only pushed and popped, its popped values read by nothing
    (each pop keeps the tape live for the next one, so plain liveness keeps
    it): creation, pushes and pops all go."""
    out = prune(_TAPED.format(alias="", backward="g = g * 2.0"), {"g"})
    assert "t" not in {n.id for n in ast.walk(ast.parse(out)) if isinstance(n, ast.Name)}
    assert "g = g * 2.0" in out


def test_a_tape_stays_when_a_pop_is_read_returned_or_aliased():
    read = prune(_TAPED.format(alias="", backward="g = g * v"), {"g"})
    assert "t.append(x)" in read and "v = t.pop()" in read
    returned = prune(_TAPED.format(alias="", backward="g = g * 2.0"), {"g", "t"})
    assert "t.append(x)" in returned
    aliased = prune(_TAPED.format(alias="u = t", backward="g = g * 2.0"), {"g", "u"})
    assert "t.append(x)" in aliased
