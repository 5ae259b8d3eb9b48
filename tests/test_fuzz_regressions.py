"""Every program in tests/fuzz_regressions/: a failure the generator found,
shrunk by ``python tools/fuzz.py --shrink`` and kept as it was written
(source, arguments, failing mode).  Each must now be right.  A program
that failed in several modes is kept once, its modes listed in ``MODES``."""
import ast
import glob
import os
import re
import shutil

import pytest

from fuzzing import oracles, shrink

FILES = sorted(glob.glob(os.path.join(shrink.REGRESSIONS, "seed_*.py")))


def _modes(path):
    """The file's failing modes: ``MODE = 'jac'`` (as the shrinker writes
    it) or ``MODES = ('jac', 'vmap_grad')``."""
    with open(path) as f:
        found = re.search(r"^(MODES?) = (.*)$", f.read(), re.M)
    value = ast.literal_eval(found.group(2))
    return [value] if found.group(1) == "MODE" else list(value)


CASES = [(path, mode) for path in FILES for mode in _modes(path)]


@pytest.mark.parametrize("path, mode", CASES, ids=[
    f"{os.path.basename(p)[:-3]}" + (f"-{m}" if len(_modes(p)) > 1 else "") for p, m in CASES])
def test_regression(path, mode, tmp_path):
    # load a copy: the checks write a harness module beside the program
    copy = shutil.copy(path, tmp_path / os.path.basename(path))
    module = oracles.load(str(copy))
    case = oracles.Case(str(copy), module.ARGS, module.SEED)
    verdict = oracles.run(case, mode)
    assert verdict.status in ("right", "skip"), verdict
