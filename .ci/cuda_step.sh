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
# Measured on this 2-core machine while other jobs shared it: 8 min 21 s in all
# (3 min 11 s of CPU): installing the project with the extra 115-174 s, the cuda
# tests 4 min 21 s, the corpus 2 min.  The simulator's tests share one run of
# tests/cuda_sim_cases.py (the corpus included), kept on one xdist worker by
# --dist loadgroup (each worker ran it once before).  Usage: bash .ci/cuda_step.sh
# (from anywhere);
# .ci/run can call it after the slow step.
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
python -m pip install --quiet ".[test,cuda]"
echo "--- cuda extra installed in $((SECONDS - start)) s ---"
export TANGENT_X_CACHE_DIR="${TANGENT_X_CACHE_DIR:-$(mktemp -d)}"
python -m pytest -q -n 2 --dist loadgroup -p no:cacheprovider -m cuda tests/test_cuda.py
echo "--- simulator and PTX tests done at $((SECONDS - start)) s ---"
python tools/cuda_corpus.py
echo "--- cuda step: $((SECONDS - start)) s ---"
