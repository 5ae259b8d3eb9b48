"""Run check_grads to second order, both modes, over both test corpora.

    python tools/check_grads_corpus.py           # summary + failing cases

Issue #4's acceptance wants every twice-differentiable corpus function to
pass; this tool measures how far that is (it becomes a test in
tests/ once it passes).  Only each case's float arguments are
differentiated (the rest are bound), as check_grads needs float inputs.
Cases with an ``expected`` gradient or a separate ``reference`` are skipped:
their derivative is not the derivative of their values (stop_gradient,
``.at[]`` updates).
"""
import linecache
import os
import sys
import traceback

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, ROOT)

from tangent_x import tree_util  # noqa: E402
from tangent_x.test_util import check_grads  # noqa: E402


def _float_tree(x):
    leaves = tree_util.tree_leaves(x)
    return bool(leaves) and all(
        isinstance(leaf, (float, np.floating)) or
        (isinstance(leaf, np.ndarray) and np.issubdtype(leaf.dtype, np.floating))
        for leaf in leaves)


def check_case(case):
    args = case.args(0)
    floats = [i for i, a in enumerate(args) if _float_tree(a)]
    if not floats:
        return None
    fixed = {i: a for i, a in enumerate(args) if i not in floats}
    names = [f"a{i}" for i in floats]
    call = ", ".join(f"a{i}" if i in floats else f"fixed[{i}]" for i in range(len(args)))
    out = "fn(" + call + ")" + ("[0]" if case.has_aux else "")
    source = f"def wrapped({', '.join(names)}):\n    return {out}\n"
    filename = f"<check_grads corpus {case.name}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"fn": case.fn, "fixed": fixed}
    exec(compile(source, filename, "exec"), namespace)
    check_grads(namespace["wrapped"], tuple(args[i] for i in floats), order=2,
                modes=("fwd", "rev"), atol=1e-4, rtol=1e-4)
    return True


def main():
    from corpus import all_cases as foundation_cases
    from cf_corpus import all_cases as control_flow_cases
    cases = [c for c in foundation_cases() + control_flow_cases()
             if c.expected is None and c.reference is c.fn]
    failed = []
    for case in cases:
        try:
            check_case(case)
        except Exception as exc:   # report every failure, keep going
            last = traceback.format_exception_only(type(exc), exc)[-1].strip()
            failed.append((case.name, last.splitlines()[0][:160]))
    print(f"{len(cases) - len(failed)} of {len(cases)} cases pass check_grads(order=2, "
          "modes=('fwd', 'rev'))")
    for name, why in failed:
        print(f"  {name}: {why}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
