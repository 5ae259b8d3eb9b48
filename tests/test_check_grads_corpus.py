"""check_grads to second order, forward and reverse, over both corpora.

Issue #4's acceptance: ``check_grads(f, args, order=2, modes=("fwd", "rev"))``
passes for every function of the foundation corpus (tests/corpus) and the
control-flow corpus (tests/cf_corpus) that is twice differentiable at its
test points.  That checks jvp of jvp, vjp of vjp and their mixes against
finite differences, so it runs the derivative code tangent_x generated
through tangent_x again: loops with tapes, early returns, container
cotangents, the runtime helpers' own rules.

Left out (``corpus.second_order_checkable``): cases whose gradient is not
the derivative of their values (``expected`` for stop_gradient, a
``reference`` for ``.at[]`` updates) and cases without float arguments.
``python tools/check_grads_corpus.py`` runs the same check and lists every
failure at once.
"""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # corpus, cf_corpus

from corpus import all_cases as foundation_cases, check_second_order, second_order_checkable
from cf_corpus import all_cases as control_flow_cases

CASES = [c for c in foundation_cases() + control_flow_cases() if second_order_checkable(c)]


def test_nearly_every_case_is_checked():
    total = len(foundation_cases()) + len(control_flow_cases())
    assert len(CASES) >= 450 and len(CASES) >= 0.9 * total


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_check_grads_order_2(case):
    check_second_order(case)
