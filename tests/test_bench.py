"""tools/bench.py's smoke run: every workload runs and every implementation
it times (tangent_x, the hand-written references, the installed peers)
passes its equal-results check.  Timings are printed, never asserted."""
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.slow        # Numba compiles: CI's slow step
def test_bench_quick_equal_results(tmp_path):
    env = dict(os.environ, TANGENT_X_CACHE_DIR=str(tmp_path / "tx"))
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "bench.py"), "--quick"],
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    ours = re.search(r"Equal-results checks of tangent_x and the references: (\d+) run, "
                     r"(\d+) failed", proc.stdout)
    assert ours, proc.stdout[-3000:]
    # scalar_loop, mlp_grad, while_newton, rnn: reference + tangent_x; per_example_grad:
    # two references (+ tangent_x once vmap exists); per_example_mlp: three; the eager
    # MLP row
    assert int(ours.group(1)) >= 11 and int(ours.group(2)) == 0, proc.stdout
    peers = re.search(r"Equal-results checks of the peers: (\d+) run, (\d+) failed",
                      proc.stdout)
    assert peers, proc.stdout[-3000:]
    for workload in ("scalar_loop", "mlp_grad", "per_example_grad", "while_newton", "rnn",
                     "per_example_mlp"):
        assert re.search(rf"^\| {workload} \|", proc.stdout, re.M), workload
    # a wrong peer result is reported in the table, never hidden
    wrong = re.findall(r"^- (\w+): (JAX|autograd): (.*)$", proc.stdout, re.M)
    assert not wrong, wrong
