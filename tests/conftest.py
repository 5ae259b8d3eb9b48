"""Test-wide fixtures.

Rule tests draw their inputs from module-level ``RNG``s (seeded
``RandomState``s; test_jvp_rules also draws through the rule modules it
imports).  Run serially, the draws of a test depend on every test that ran
before it in the process; under pytest-xdist (the default run, see
setup.cfg) that depends on how tests are spread over workers, so one run
could meet an ill-conditioned matrix another did not.  Each test therefore
starts every test module's ``RNG`` from a seed derived from its own id:
the same inputs in any order, on any worker.
"""
import os
import sys
import tempfile
import zlib

# Numba's optimisation level: the tests check what compiled code computes,
# which LLVM's optimisation passes do not change (no fast-math flags are
# set but the gemm kernel's reassociation), and without them a first
# compile takes about half the time -- most of a cold run is compiling.
# The default run therefore compiles at level 0 unless $NUMBA_OPT says
# otherwise; CI's slow step, tools/fuzz.py and tools/bench.py compile at
# Numba's default (3), as users do.  Compiled code is cached apart per
# level: $NUMBA_CACHE_DIR (the library's overloads) unless set, and the
# generated modules' file names (``loading.runtime_stamp``), so code
# compiled here is never loaded by a program at another level.
os.environ.setdefault("NUMBA_OPT", "0")
os.environ.setdefault("NUMBA_CACHE_DIR", os.path.join(
    tempfile.gettempdir(), f"tangent_x-tests-numba-opt{os.environ['NUMBA_OPT']}"))

import numpy as np
import pytest

_HERE = os.path.dirname(os.path.abspath(__file__))


def _test_module_rngs():
    for module in list(sys.modules.values()):
        rng = getattr(module, "RNG", None)
        if isinstance(rng, np.random.RandomState) and \
                os.path.dirname(os.path.abspath(getattr(module, "__file__", "") or "")) == _HERE:
            yield module.__name__, rng


@pytest.fixture(autouse=True)
def _rngs_seeded_per_test(request):
    for name, rng in _test_module_rngs():
        rng.seed(zlib.crc32(f"{request.node.nodeid} {name}".encode()))
    yield


# The default run (the README's command) must stay within 10 minutes on
# CI's 2 cores.  Tests measured among its slowest -- nearly all of them jit
# tests, whose time is Numba compiling -- are listed in
# tests/slow_tests.txt and marked ``slow`` here, so they run in CI's slow
# step (``-m slow``) instead.  ``python tools/slow_tests.py DURATIONS_LOG``
# rewrites the list from a run's ``--durations`` output.
_SLOW_LIST = os.path.join(_HERE, "slow_tests.txt")


def pytest_configure(config):
    # Without optimisation, LLVM leaves in some functions the address of a
    # global it would otherwise fold away, and Numba will not cache them
    # ("uses dynamic globals"): they compile again in the next process,
    # which costs a test run nothing it would measure.  At the default
    # level (CI's slow step) the warning still shows.
    if os.environ.get("NUMBA_OPT") == "0":
        config.addinivalue_line(
            "filterwarnings",
            "ignore:.*Cannot cache compiled function.*dynamic globals:"
            "numba.core.errors.NumbaWarning")


def _listed_slow():
    if not os.path.exists(_SLOW_LIST):
        return frozenset()
    with open(_SLOW_LIST, encoding="utf-8") as f:
        return frozenset(line.strip() for line in f
                         if line.strip() and not line.startswith("#"))


# CI's slow step has the time left by its 30 minutes once the default run,
# MPI and CUDA steps are counted; the largest families of slow tests (one
# Numba compile or more per case) run there as a fixed sample, one test in
# ``k`` chosen by a hash of its id (stable as cases are added), and the rest
# are marked ``exhaustive`` as well as ``slow``.  CI runs
# ``-m "slow and not exhaustive"``; ``python -m pytest -m slow -n 2`` runs
# them all (the README says when that was last done, and its result).
_SAMPLED = {
    "tests/test_corpus.py::test_grad_matches_finite_differences": 12,
    "tests/test_jit_mixed_precision.py::": 12,
    "tests/test_at_updates.py::": 12,
    "tests/test_jit_vmap.py::": 4,
    # wrong values found in these before (joins of branches, lists in
    # loops): every slow one runs in CI's slow step (session 24 moved 28 of
    # them out of the default run to keep it within its 10 minutes)
    "tests/test_rejoins.py::": 1,
    "tests/test_jit_lists_control_flow.py::": 1,
}
# (the jit modes of the generator, seeds 0-19, all run: sampled 1 in 2, the
# half left out held a wrong jit(grad) for sessions -- seed 13, a slice of
# a list of pairs -- found by a whole -m slow run in session 15)
# every other slow test (not the MPI or CUDA steps'): one in ``_SLOW_K``.
# Measured in a fresh-clone CI run (session 12): the whole non-exhaustive
# slow step of 1 in 8 / 1 in 2 above and every other slow test took 944 s,
# the default run 628 s, which with the MPI and CUDA steps is far over
# CI's 30 minutes.
_SLOW_K = 5


# The same for a generated matrix in the default run (the README's command
# has 10 minutes): one test in ``k`` runs there, the others are ``slow`` and
# ``exhaustive`` (run with -m slow).
_DEFAULT_SAMPLED = {
    "tests/test_nested_transforms.py::test_two_deep": 3,
}


def _default_sampled_out(item):
    for prefix, k in _DEFAULT_SAMPLED.items():
        if item.nodeid.startswith(prefix):
            return zlib.crc32(item.nodeid.encode()) % k != 0
    return False


def _sampled_out(item):
    for prefix, k in _SAMPLED.items():
        if item.nodeid.startswith(prefix):
            return zlib.crc32(item.nodeid.encode()) % k != 0
    if item.get_closest_marker("mpi") is not None or item.get_closest_marker("cuda") is not None:
        return False
    return zlib.crc32(item.nodeid.encode()) % _SLOW_K != 0


# Tests marked ``cuda`` need the CUDA target's extra (numba-cuda, NVVM, the
# nvcc wheel's ptxas): skipped, saying so, where it is not installed;
# .ci/cuda_step.sh installs it and runs them (``-m cuda``).
_CUDA_SKIP = pytest.mark.skip(
    reason='needs the CUDA extra: pip install "tangent_x[cuda]" (see .ci/cuda_step.sh)')


def pytest_collection_modifyitems(config, items):
    listed = _listed_slow()
    import importlib.util
    has_cuda = importlib.util.find_spec("numba_cuda") is not None
    for item in items:
        if item.nodeid in listed:
            item.add_marker(pytest.mark.slow)
        if item.get_closest_marker("slow") is None and _default_sampled_out(item):
            item.add_marker(pytest.mark.slow)
            item.add_marker(pytest.mark.exhaustive)
        elif item.get_closest_marker("slow") is not None and _sampled_out(item):
            item.add_marker(pytest.mark.exhaustive)
        if not has_cuda and item.get_closest_marker("cuda") is not None:
            item.add_marker(_CUDA_SKIP)
