"""Every program in tests/fuzz_regressions/: a failure the generator found,
shrunk by ``python tools/fuzz.py --shrink`` and kept as it was written
(source, arguments, failing mode).  Each must now be right."""
import glob
import os
import shutil

import pytest

from fuzzing import oracles, shrink

FILES = sorted(glob.glob(os.path.join(shrink.REGRESSIONS, "seed_*.py")))


@pytest.mark.parametrize("path", FILES, ids=[os.path.basename(p)[:-3] for p in FILES])
def test_regression(path, tmp_path):
    # load a copy: the checks write a harness module beside the program
    copy = shutil.copy(path, tmp_path / os.path.basename(path))
    module = oracles.load(str(copy))
    case = oracles.Case(str(copy), module.ARGS, module.SEED)
    verdict = oracles.run(case, case.module.MODE)
    assert verdict.status in ("right", "skip"), verdict
