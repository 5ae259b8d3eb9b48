"""The emitter checks that every printed text parses back to the tree it
was printed from (a precedence slip would otherwise be a wrong value), and
prints negative constants with the precedence of the operator they carry."""
import ast

import gast
import pytest

from tangent_x.python_stage import emit


def test_a_text_that_reads_back_otherwise_is_an_internal_error():
    tree = ast.parse("(-a) ** 2", mode="eval").body
    emit._check_reparses(ast.parse("(-a) ** 2", mode="eval").body, "(-a) ** 2")
    with pytest.raises(AssertionError, match="does not read back"):
        emit._check_reparses(tree, "-a ** 2")


def test_a_negative_constant_raised_to_a_power_keeps_its_sign():
    node = gast.BinOp(left=gast.Constant(value=-0.87, kind=None), op=gast.Pow(),
                      right=gast.Constant(value=2, kind=None))
    text = emit.unparse(node)
    assert eval(text) == pytest.approx((-0.87) ** 2)
    assert text == "(-0.87) ** 2"


def test_printing_leaves_the_callers_tree_as_it_was():
    tree = ast.parse("x = y ** -2.5", mode="exec").body[0]
    before = ast.dump(tree)
    assert emit._to_text(tree) == "x = y ** (-2.5)"
    assert ast.dump(tree) == before


@pytest.mark.parametrize("printed, text, same", [
    ("x = a[1]", "x = a[1]", True),
    ("x = a[1]", "x = a[1.0]", False),          # an int is not a float
    ("x = a + 0.0", "x = a + -0.0", False),      # nor 0.0 -0.0
    ("x = a + b", "x = a + c", False),
    ("x = f(a, b)", "x = f(a)", False),
    ("x = -1.5 * a", "x = -1.5 * a", True),      # the printed tree holds Constant(-1.5)
    ("x, y = a", "x, y = a", True),
])
def test_the_reparse_check_compares_operations_names_and_numbers(printed, text, same):
    tree = ast.parse(printed).body[0]
    if "-1.5" in printed:
        tree.value.left = ast.Constant(-1.5)
    if same:
        emit._check_reparses(tree, text)
    else:
        with pytest.raises(AssertionError, match="does not read back"):
            emit._check_reparses(tree, text)
