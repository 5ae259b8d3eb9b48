"""Write tests/slow_tests.txt: the tests that move from the default run to
CI's slow step, read from a run's ``--durations`` output.

    python -m pytest -q --durations=400 > run.log
    python tools/slow_tests.py run.log [--over SECONDS] [--keep PATTERN ...]

A test whose call took over ``--over`` seconds (default 4) is listed, unless
its id contains a ``--keep`` pattern (a representative that should stay in
the default run).  Tests already listed stay listed (a listed test does not
run by default, so the log cannot time it).
"""
import argparse
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
LIST = os.path.join(HERE, "..", "tests", "slow_tests.txt")
HEADER = """\
# Tests of the default run that move to CI's slow step (-m slow), being
# among its slowest: see tests/conftest.py.  Written by tools/slow_tests.py
# from a run's --durations output; edit by hand to keep a test by default.
"""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("log")
    parser.add_argument("--over", type=float, default=4.0)
    parser.add_argument("--keep", nargs="*", default=[])
    args = parser.parse_args()
    timed = {}
    with open(args.log, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"\s*([0-9.]+)s (call|setup|teardown)\s+(.+?)\s*$", line)
            if m:
                timed[m.group(3)] = timed.get(m.group(3), 0.0) + float(m.group(1))
    listed = set()
    if os.path.exists(LIST):
        with open(LIST, encoding="utf-8") as f:
            listed = {line.strip() for line in f if line.strip() and not line.startswith("#")}
    slow = {t for t, s in timed.items() if s > args.over
            and not any(k in t for k in args.keep)}
    total = sum(timed[t] for t in slow)
    with open(LIST, "w", encoding="utf-8") as f:
        f.write(HEADER)
        for t in sorted(listed | slow):
            f.write(t + "\n")
    print(f"{len(slow)} tests over {args.over} s ({total:.0f} s in all) added; "
          f"{len(listed | slow)} listed")


if __name__ == "__main__":
    main()
