"""The CUDA target, jit(vmap(f), target="cuda"), verified without a GPU.

Tests marked ``cuda`` need the ``[cuda]`` extra (conftest skips them, saying
so, where it is absent; .ci/cuda_step.sh installs it and runs ``-m cuda``):
the acceptance cases in Numba's CUDA simulator, in a subprocess because
``NUMBA_ENABLE_CUDASIM`` must be set before ``numba.cuda`` is imported
(``cuda_sim_cases.py``), equal to the CPU's jit to 1e-12; their PTX for
sm_80 and sm_90 assembled by the nvcc wheel's ptxas; and the located
refusals of what a GPU thread cannot do.  The rest runs everywhere.
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import tangent_x as tx

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import cuda_sim_cases  # noqa: E402


def newton(a):
    y = a
    while abs(y * y - a) > 1e-12:
        y = 0.5 * (y + a / y)
    return y


# -- everywhere ---------------------------------------------------------------

def test_cuda_target_takes_vmapped_functions_only():
    with pytest.raises(TypeError, match=r"jit\(vmap\(newton\), target='cuda'\)"):
        tx.jit(newton, target="cuda")


def test_unknown_target_and_cpu_tape_capacity():
    with pytest.raises(ValueError, match="unknown target 'tpu'"):
        tx.jit(newton, target="tpu")
    with pytest.raises(ValueError, match="tape_capacity is for target='cuda'"):
        tx.jit(tx.vmap(newton), tape_capacity=10)


def test_without_the_extra_the_error_says_what_to_install(monkeypatch):
    from tangent_x.cuda_stage import available
    monkeypatch.setattr(available, "has_cuda_extra", lambda: False)
    with pytest.raises(ImportError, match=r'pip install "tangent_x\[cuda\]"'):
        tx.jit(tx.vmap(newton), target="cuda")


def test_cpu_target_is_the_default_jit():
    xs = np.linspace(1.0, 9.0, 5)
    np.testing.assert_allclose(tx.jit(tx.vmap(newton), target="cpu")(xs), np.sqrt(xs),
                               rtol=1e-12)


# -- with the extra: the simulator ---------------------------------------------

# The simulator's tests share two runs of cuda_sim_cases.py (minutes of CPU
# each): the acceptance cases, reductions and checks in one, the corpus in
# the other.  Under xdist with ``--dist loadgroup`` (.ci/cuda_step.sh) each
# run's tests are one group, which one worker takes and runs once: the
# larger group goes to one worker, the corpus to the other, which then
# takes the PTX tests.
SIMULATOR = pytest.mark.xdist_group("simulator")
SIMULATOR_CORPUS = pytest.mark.xdist_group("simulator-corpus")


def _simulate(*names):
    """The JSON lines of cuda_sim_cases.py NAMES... run in the simulator."""
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    root = os.path.dirname(HERE)
    env["PYTHONPATH"] = os.pathsep.join([root, HERE, env.get("PYTHONPATH", "")])
    run = subprocess.run([sys.executable, os.path.join(HERE, "cuda_sim_cases.py"), *names],
                         env=env, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    rows = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
    return {row.get("case") or row.get("check"): row for row in rows}


@pytest.fixture(scope="module")
def simulated():
    """The acceptance cases, the reductions and the checks in the simulator."""
    return _simulate(cuda_sim_cases.WITHOUT_CORPUS)


@pytest.fixture(scope="module")
def simulated_corpus():
    """The vmap_corpus cases in the simulator."""
    return _simulate("corpus")


@pytest.mark.cuda
@SIMULATOR
@pytest.mark.parametrize("case", sorted(cuda_sim_cases.cases(2)))
def test_simulator_equals_cpu_jit(simulated, case):
    row = simulated[case]
    assert "error" not in row, row
    assert row["max_abs_diff"] <= 1e-12, row
    assert row["shapes_equal"] and row["dtypes_equal"] and row["finite"], row
    assert row["integers_equal"], row          # the walks' step counts


@pytest.mark.cuda
@SIMULATOR
@pytest.mark.parametrize("case", sorted(cuda_sim_cases.reductions(2)))
def test_simulator_sum_over_the_batch_equals_cpu(simulated, case):
    """np.sum(vf(...), axis=0) of a vmapped vf: the kernel adds each thread's
    result with atomics, in whatever order the threads reach it, so floats
    agree to rounding (1e-12), integers exactly."""
    row = simulated[case]
    assert "error" not in row, row
    assert row["max_abs_diff"] <= 1e-12, row
    assert row["shapes_equal"] and row["dtypes_equal"] and row["finite"], row
    assert row["integers_equal"], row


@pytest.mark.cuda
@SIMULATOR_CORPUS
def test_simulator_runs_the_corpus_cases_it_takes(simulated_corpus):
    """Each vmap_corpus case the CUDA stage takes (local arrays of fixed
    shape included) equals the CPU's loop in the simulator; the others are
    refused with a located error."""
    from vmap_corpus import CASES
    assert set(simulated_corpus) == {f"corpus:{name}" for name in CASES}, simulated_corpus
    rows = list(simulated_corpus.values())
    assert len(rows) >= 30, rows
    ran = [row for row in rows if not row.get("refused")]
    assert all("error" not in row for row in rows), [r for r in rows if "error" in r]
    assert all(row["located"] for row in rows if row.get("refused")), rows
    assert len(ran) >= 10, ran
    for row in ran:
        assert row["max_abs_diff"] <= 1e-12, row
        assert row["shapes_equal"] and row["dtypes_equal"] and row["integers_equal"], row


@pytest.mark.cuda
@SIMULATOR
@pytest.mark.parametrize("check", ["device_arrays", "tape_overflow", "index_out_of_range",
                                   "index_in_range"])
def test_simulator_checks(simulated, check):
    assert simulated[check]["passed"], simulated[check]


# -- with the extra: PTX, and refusals ------------------------------------------

@pytest.mark.cuda
@pytest.mark.parametrize("case", sorted(cuda_sim_cases.cases(2)))
def test_ptx_assembles_for_sm80_and_sm90(case):
    from tangent_x.cuda_stage.ptxas import assemble
    fn, in_axes, args = cuda_sim_cases.cases(4)[case]
    kernel = tx.jit(tx.vmap(fn, in_axes=in_axes), target="cuda")
    for cc in ((8, 0), (9, 0)):
        ptx = kernel.ptx(*args, cc=cc)
        assert f".target sm_{cc[0]}{cc[1]}" in ptx
        ok, message = assemble(ptx, cc)
        assert ok, message


@pytest.mark.cuda
@pytest.mark.parametrize("case, atomic", [
    ("sum_of_grads", "cuda.atomic.add(row, i0, src[i0])"),
    ("grad_of_summed_matrix_mlp_loss", "cuda.atomic.add(row, (i0, i1), src[i0, i1])")])
def test_sum_over_the_batch_kernel_uses_atomics_and_assembles(case, atomic):
    from tangent_x.cuda_stage.ptxas import assemble
    fn, args, _ = cuda_sim_cases.reductions(4)[case]
    kernel = tx.jit(fn, target="cuda")
    text = kernel.cuda_source(*args)
    assert atomic in text and "cuda.local.array(" in text
    ptx = kernel.ptx(*args, cc=(9, 0))
    assert "atom.global.add.f64" in ptx or "red.global.add.f64" in ptx
    ok, message = assemble(ptx, (9, 0))
    assert ok, message


def sum_over_rows(P, X):
    return np.sum(cuda_sim_cases.per_example_grads(P, X), axis=1)


def sum_of_other_arguments(P, X):
    return np.sum(cuda_sim_cases.per_example_grads(X, P), axis=0)


@pytest.mark.cuda
@pytest.mark.parametrize("fn, message", [
    (sum_over_rows, "takes axis=0"),
    (sum_of_other_arguments, "own parameters, in order"),
])
def test_a_reduction_the_kernel_cannot_do_is_a_located_error(fn, message):
    with pytest.raises(tx.TransformError, match=message) as info:
        tx.jit(fn, target="cuda")
    assert "test_cuda.py:" in str(info.value) and "target='cpu'" in str(info.value)


def test_cuda_target_of_a_plain_function_says_what_it_takes():
    with pytest.raises(TypeError, match=r"np.sum\(vf\(\*a\), axis=0\)"):
        tx.jit(lambda x: np.sum(x, axis=0), target="cuda")


@pytest.mark.cuda
def test_source_stages_print_kernel_and_ptx():
    vf = tx.vmap(tx.grad(newton))
    text = tx.source(vf, stage="cuda", example_args=(np.ones(3),))
    assert "@cuda.jit" in text and "cuda.grid(1)" in text and "cuda.local.array" in text
    assert "# test_cuda.py:" in text            # the user's lines, as comments
    ptx = tx.source(vf, stage="ptx", example_args=(np.ones(3),))
    assert ".target sm_90" in ptx and ".entry" in ptx


def sorts(x):
    y = np.sort(np.array([x, 2.0 * x, -x]))
    return y[0]


def floors(x):
    return np.floor(x) + 1.0


def dense(W, x):
    return np.sum(np.tanh(W @ x))


def draws_vectors(key):
    return tx.random.normal(key, (3,))[0]


@pytest.mark.cuda
@pytest.mark.parametrize("fn, in_axes, args, message", [
    (sorts, 0, (np.ones(4),), "new array per example"),
    (floors, 0, (np.ones(4),), "np.floor has no device form"),
    (dense, (None, 0), (np.ones((80, 80)), np.ones((4, 80))), "matrix product per thread"),
    (draws_vectors, 0, (tx.random.split(tx.random.PRNGKey(0), 4),), "draws an array"),
])
def test_what_a_thread_cannot_do_is_a_located_error(fn, in_axes, args, message):
    kernel = tx.jit(tx.vmap(fn, in_axes=in_axes), target="cuda")
    with pytest.raises(tx.TransformError, match=message) as info:
        kernel.cuda_source(*args)
    text = str(info.value)
    assert "test_cuda.py:" in text and "target='cpu'" in text


def _cli(*argv):
    return subprocess.run([sys.executable, "-m", "tangent_x", *argv], capture_output=True,
                          text=True, timeout=600, env=dict(
                              os.environ, PYTHONPATH=os.pathsep.join(
                                  [os.path.dirname(HERE), os.environ.get("PYTHONPATH", "")])))


def test_cli_jit_target_cuda_prints_the_kernel_or_what_to_install():
    run = _cli("jit", "--target", "cuda", "--transform", "grad",
               os.path.join(HERE, "cuda_sim_cases.py") + ":newton_sqrt")
    import importlib.util
    if importlib.util.find_spec("numba_cuda") is None:
        assert run.returncode == 2 and 'tangent_x[cuda]' in run.stderr, run.stderr
    else:
        assert run.returncode == 0, run.stderr
        assert "@cuda.jit" in run.stdout and "def vmap_grad_newton_sqrt_kernel(" in run.stdout
        assert "# cuda_sim_cases.py:" in run.stdout
