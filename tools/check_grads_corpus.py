"""Run check_grads to second order, both modes, over both test corpora.

    python tools/check_grads_corpus.py           # summary + failing cases

The same check runs in the suite (tests/test_check_grads_corpus.py); this
tool lists every failure at once, with its message, instead of stopping at
pytest's report.  Only each case's float arguments are differentiated (the
rest are bound), as check_grads needs float inputs; see
``corpus.second_order_checkable`` for the cases left out and why.
"""
import os
import sys
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, ROOT)

from corpus import check_second_order, second_order_checkable  # noqa: E402


def main():
    from corpus import all_cases as foundation_cases
    from cf_corpus import all_cases as control_flow_cases
    cases = [c for c in foundation_cases() + control_flow_cases() if second_order_checkable(c)]
    failed = []
    for case in cases:
        try:
            check_second_order(case)
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
