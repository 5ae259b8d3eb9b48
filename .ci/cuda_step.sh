#!/usr/bin/env bash
# CI step for the CUDA target (jit(vmap(f), target="cuda")), verified without a GPU:
# installs the [cuda] extra (numba-cuda, and CUDA 13.0's NVVM, NVRTC, runtime and
# nvcc wheels, ~150 MB unpacked) into the active virtual environment (.ci/run's, so
# the project and its test dependencies are not installed twice), or into a venv of
# its own when none is active, then runs
#   1. tests/test_cuda.py -m cuda: the acceptance cases in Numba's CUDA simulator
#      (a subprocess with NUMBA_ENABLE_CUDASIM=1) equal to the CPU's jit, the sums
#      over the batch (atomics), every vmap_corpus case the stage takes, their PTX
#      for sm_80 and sm_90 assembled by the nvcc wheel's ptxas, the located refusals;
#   2. tools/cuda_corpus.py: every case of tests/vmap_corpus compiles to sm_90 PTX
#      that ptxas accepts, or is refused with a located error (exit 1 otherwise).
# The two run side by side, so that both cores stay busy: the tests' two
# simulator processes (one per xdist worker, --dist loadgroup: the acceptance
# cases, reductions and checks, ~50 s of CPU; the corpus, ~56 s, then the PTX
# tests) and tools/cuda_corpus.py (one process).  Before session 14 the
# simulator was one process of ~177 s of CPU (131 s of it the corpus, mostly
# compiling the CPU's jit of each case as its reference, now the function
# itself called per example) and the corpus's PTX waited for it, one core
# idle.  Measured in session 14 on this 2-core machine with the extra
# installed, at a load of ~11 (other jobs): 294 s of CPU for the whole step
# (19 min wall at that load); the same machine, idle, took ~421 s wall for
# the step before these changes.  Usage: bash .ci/cuda_step.sh (from
# anywhere); .ci/run calls it after the MPI step.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
if [ -z "${VIRTUAL_ENV:-}" ]; then
  venv="$(mktemp -d)/venv-cuda"
  python3 -m venv "$venv"
  # shellcheck disable=SC1091
  . "$venv/bin/activate"
  python -m pip install --quiet --upgrade pip
fi
bash .ci/install_extra.sh test cuda
echo "--- cuda extra installed in $((SECONDS - start)) s ---"
export TANGENT_X_CACHE_DIR="${TANGENT_X_CACHE_DIR:-$(mktemp -d)}"
corpus_log="$(mktemp)"
python tools/cuda_corpus.py >"$corpus_log" 2>&1 &
corpus=$!
tests=0
python -m pytest -q -n 2 --dist loadgroup -p no:cacheprovider -m cuda tests/test_cuda.py || tests=$?
echo "--- simulator and PTX tests done at $((SECONDS - start)) s ---"
status=0
wait "$corpus" || status=$?
cat "$corpus_log"
echo "--- corpus PTX done; cuda step: $((SECONDS - start)) s ---"
test "$tests" -eq 0 && test "$status" -eq 0
