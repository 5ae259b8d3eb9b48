"""tx.distributed, MPIGroup and the compiled MPI collectives, across processes.

The tests marked ``mpi`` start ``mpiexec -n 2`` and ``-n 4`` launches of the
programs in tests/mpi_programs/ (each asserts its own results against NumPy
and prints OK), with a timeout, so that a hang fails instead of stalling
the run.  They need the ``[mpi]`` extra (the mpich and mpi4py wheels) and
are left out of the default run (setup.cfg); CI runs them in their own step
(.ci/mpi_step.sh): ``python -m pytest -m mpi tests/test_mpi.py`` (the
``mpi and slow`` ones, Numba compiling in every rank, outside its 2-minute
budget).  Where mpi4py or mpiexec is missing they are skipped, saying so.
The tests without the marker need no MPI.
"""
import os
import re
import shutil
import subprocess
import sys

import pytest

from tangent_x import distributed

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAMS = os.path.join(HERE, "mpi_programs")
ROOT = os.path.dirname(HERE)
TIMEOUT = 90


def mpiexec():
    """The mpiexec beside this Python (the mpich wheel's), else on PATH."""
    beside = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    return beside if os.path.exists(beside) else shutil.which("mpiexec")


def _missing():
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return "mpi4py is not installed (pip install '.[mpi]')"
    if mpiexec() is None:
        return "no mpiexec beside this Python or on PATH (pip install '.[mpi]' brings mpich's)"
    return None


def needs_mpi(test):
    """Marked ``mpi`` (left out of the default run); skipped, saying why, without the extra."""
    return pytest.mark.mpi(pytest.mark.skipif(_missing() is not None, reason=str(_missing()))(test))


def launch(processes, program, *args, env=None, timeout=TIMEOUT):
    environ = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [ROOT] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    environ.update(env or {})
    command = [mpiexec(), "-n", str(processes), sys.executable,
               os.path.join(PROGRAMS, program), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=environ)


def assert_ok(result, processes):
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert result.stdout.count("OK rank") == processes, output   # lines of ranks may interleave


@needs_mpi
@pytest.mark.parametrize("processes, local", [(2, 2), (4, 1)])
def test_collectives_equal_numpy_on_the_gathered_data(processes, local):
    assert_ok(launch(processes, "collectives.py", str(local)), processes)


@needs_mpi
@pytest.mark.parametrize("where", ["python", "compiled", "thread"])
def test_a_failing_rank_stops_every_rank(where):
    result = launch(2, "failing.py", where, timeout=60)   # a hang raises TimeoutExpired
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert "fails on purpose" in output and "ValueError" in output, output
    assert "went on after the failure" not in output, output


@needs_mpi
def test_shapes_differing_across_ranks_name_the_operand():
    assert_ok(launch(2, "shapes.py"), 2)


@needs_mpi
def test_compiled_collectives_load_from_the_disk_cache(tmp_path):
    env = {"NUMBA_CACHE_DIR": str(tmp_path)}
    assert_ok(launch(2, "cached.py", "first", env=env), 2)
    assert_ok(launch(2, "cached.py", "second", env=env), 2)


@needs_mpi
@pytest.mark.parametrize("where", ["calls", pytest.param("pmap", marks=pytest.mark.slow)])
def test_a_rank_waiting_for_a_late_one_leaves_its_core(where):
    """Rank 1 comes 1 s late to each collective; rank 0's wait costs it
    little CPU (MPICH's own wait polls throughout: ~1 s of CPU on an idle
    core), through mpi_calls compiled and from Python, MPIGroup and (slow:
    compiling it) a jit(pmap) shard's psum; the results are right."""
    assert_ok(launch(2, "waiting.py", *(["pmap"] if where == "pmap" else [])), 2)


@needs_mpi
def test_data_parallel_sgd_equals_single_process_training():
    result = launch(2, os.path.join(ROOT, "examples", "mpi_sgd.py"))
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "same parameters as one process" in result.stdout, output


# -- without MPI (the default run) ---------------------------------------------
def test_missing_mpi4py_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "mpi4py", None)
    with pytest.raises(ImportError, match=r'pip install "tangent_x\[mpi\]"'):
        distributed.mpi()


def test_not_initialized_is_one_process():
    assert not distributed.is_initialized()
    assert (distributed.process_index(), distributed.process_count()) == (0, 1)
    with pytest.raises(RuntimeError, match="initialize"):
        distributed.communicator()


class _Request:
    """An mpi4py request stand-in: done at the ``done_at``-th Test."""

    def __init__(self, done_at):
        self.done_at, self.tests, self.waited = done_at, 0, False

    def Test(self):    # noqa: N802 (mpi4py's name)
        self.tests += 1
        return self.tests >= self.done_at

    def Wait(self):    # noqa: N802
        self.waited = True


def test_wait_polls_then_sleeps_until_the_request_is_done(monkeypatch):
    sleeps = []
    monkeypatch.setattr(distributed.time, "sleep", sleeps.append)
    before = distributed.set_waiting(spin=0.0, first_pause=1e-5, longest_pause=4e-5)
    try:
        request = _Request(done_at=6)
        distributed.wait(request)
        assert request.tests == 6 and not request.waited
        # no polling time left: a sleep between polls, doubling up to the longest
        assert sleeps == [1e-5, 2e-5, 4e-5, 4e-5]
        sleeps.clear()
        distributed.set_waiting(spin=60.0)             # polls throughout, no sleep
        distributed.wait(_Request(done_at=50))
        assert sleeps == []
        distributed.set_waiting(spin=float("inf"))     # MPI's own wait
        request = _Request(done_at=10 ** 9)
        distributed.wait(request)
        assert request.waited and request.tests == 0
    finally:
        distributed.set_waiting(*before)
    assert tuple(distributed.WAITING) == before


def test_set_waiting_refuses_negative_times():
    before = tuple(distributed.WAITING)
    with pytest.raises(ValueError, match="longest_pause must be >= 0"):
        distributed.set_waiting(spin=1.0, longest_pause=-1.0)
    with pytest.raises(ValueError, match="spin must be >= 0"):
        distributed.set_waiting(spin=float("nan"))
    assert tuple(distributed.WAITING) == before


def test_launch_detection():
    assert distributed.launched_by_mpiexec({"PMI_RANK": "0", "PMI_SIZE": "2"})
    assert not distributed.launched_by_mpiexec({"HOME": "/root"})


@needs_mpi
def test_initialize_outside_a_launch_says_what_to_do():
    env = {k: v for k, v in os.environ.items() if k not in distributed.LAUNCH_VARIABLES}
    env["PYTHONPATH"] = os.pathsep.join([ROOT, env.get("PYTHONPATH", "")])
    code = ("from tangent_x import distributed\n"
            "try:\n    distributed.initialize()\n"
            "except RuntimeError as e:\n    print('refused:', e)\n"
            "distributed.initialize(num_processes=1)\n"
            "print(distributed.process_index(), distributed.process_count())\n"
            "try:\n    distributed.initialize(num_processes=1)\n"
            "except RuntimeError as e:\n    print('twice:', e)\n"
            "distributed.shutdown()\nprint(distributed.is_initialized())\n"
            "distributed.initialize(num_processes=1)\nprint(distributed.is_initialized())\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=TIMEOUT, env=env)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("refused:") and "mpiexec -n N" in lines[0], result.stdout
    assert lines[1] == "0 1" and lines[2].startswith("twice:") and "only be called once" in lines[2]
    assert lines[3:] == ["False", "True"], result.stdout


# -- pmap across processes (once tangent_x.pmap is merged: issue #20 part A) --
def _digests(output):
    return {line.split(" digest ")[1].split()[0] for line in output.splitlines() if " digest " in line}


@needs_mpi
@pytest.mark.parametrize("mode", ["eager", pytest.param("jit", marks=pytest.mark.slow)])
def test_pmap_sgd_across_processes_equals_threads_bitwise(mode):
    alone = subprocess.run([sys.executable, os.path.join(PROGRAMS, "pmap_sgd.py"), mode],
                           capture_output=True, text=True, timeout=TIMEOUT,
                           env=dict(os.environ, TANGENT_X_NUM_DEVICES="4", PYTHONPATH=ROOT))
    assert_ok(alone, 1)
    digests = _digests(alone.stdout)
    for processes, local in [(2, 2), (4, 1)] if mode == "eager" else [(2, 2)]:
        result = launch(processes, "pmap_sgd.py", mode, env={"TANGENT_X_NUM_DEVICES": str(local)})
        assert_ok(result, processes)
        assert _digests(result.stdout) == digests, (alone.stdout, result.stdout)


@needs_mpi
@pytest.mark.slow
@pytest.mark.parametrize("processes", [2, 4])
def test_compiled_collectives_with_one_device_per_rank_equal_threads_bitwise(processes):
    """jit(pmap) with one device per rank calls MPI from the compiled shard
    (numba_stage.mpi_shard): psum, pmean, pmax, pmin, all_gather,
    axis_index and a data-parallel gradient, per device bitwise the threads'
    results (and the unmapped loop's, which the program checks; the gradient
    also against one process's, to 1e-12); shapes differing across ranks
    raise one MismatchError on every rank."""
    # (the first run compiles every shard cold: 2 x TIMEOUT)
    alone = subprocess.run([sys.executable, os.path.join(PROGRAMS, "pmap_compiled.py")],
                           capture_output=True, text=True, timeout=2 * TIMEOUT,
                           env=dict(os.environ, TANGENT_X_NUM_DEVICES=str(processes),
                                    PYTHONPATH=ROOT))
    assert_ok(alone, 1)
    result = launch(processes, "pmap_compiled.py", env={"TANGENT_X_NUM_DEVICES": "1"},
                    timeout=2 * TIMEOUT)
    assert_ok(result, processes)
    # (the ranks' lines may interleave)
    per_device = [sorted(re.findall(r"device \d+ digest [0-9a-f]{40}", run.stdout))
                  for run in (alone, result)]
    assert len(per_device[0]) == processes and per_device[0] == per_device[1], \
        (alone.stdout, result.stdout)
