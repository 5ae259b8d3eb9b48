"""Run both test corpora under ``tx.jit`` (issue #7: "every test of the
foundation corpus also passes under jit") and print the pytest summary.

    python tools/jit_corpus.py            # ~15 minutes on 2 cores
    python tools/jit_corpus.py -n 2       # pytest-xdist, two processes

The default test run compiles one representative case per corpus module
(``tests/corpus.jit_params``); the foundation corpus's other gradients are
slow tests (``python -m pytest -m slow``, which CI runs); its other primals
and the control-flow corpus's cases run only here.  This runs every case of both, including the strict
xfails listed in ``JIT_KNOWN_FAILURES`` (a fixed case fails until removed).
"""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

if __name__ == "__main__":
    env = dict(os.environ, TANGENT_X_JIT_CORPUS="all")
    sys.exit(subprocess.call(
        [sys.executable, "-m", "pytest", "-q", "-k", "jit", "-p", "no:cacheprovider",
         "tests/test_corpus.py", "tests/test_control_flow_corpus.py"] + sys.argv[1:],
        cwd=ROOT, env=env))
