"""distributed.keep_freed_memory: glibc keeps freed blocks for the next
training step (set by distributed.initialize; TANGENT_X_KEEP_HEAP=0 opts
out).  Run in a subprocess: the setting is process-wide."""
import subprocess
import sys

import pytest

CHECK = """
import ctypes, numpy as np
from tangent_x import distributed
print(distributed.keep_freed_memory())
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
@pytest.mark.parametrize("env, expected", [({}, "True"), ({"TANGENT_X_KEEP_HEAP": "0"}, "False")])
def test_keep_freed_memory_sets_glibc_options_unless_opted_out(env, expected, monkeypatch):
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    out = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == expected
