#!/usr/bin/env bash
# CI step for MPI (issue #20): the [mpi] extra (the mpich and mpi4py wheels:
# no system MPI; MPICH because Open MPI refuses to run as root, which CI is)
# into the active virtual environment, then the tests marked `mpi`
# (mpiexec -n 2 and -n 4 launches on this machine, the MPI SGD example among
# them) within a 2-minute budget (about 60 s on an idle 2-core machine; the
# hard limit below is 5 minutes, so that a loaded machine is not a failure,
# while each launch has its own timeout against hangs).  Called by .ci/run
# with its venv active:
#     bash .ci/mpi_step.sh
set -euo pipefail
cd "$(dirname "$0")/.."
# (only the extra's packages where the project is installed: .ci/install_extra.sh)
bash .ci/install_extra.sh mpi
# mpiexec comes with the mpich wheel, beside this venv's python
"$(dirname "$(command -v python)")/mpiexec" -n 2 python -c \
    "from mpi4py import MPI; assert MPI.COMM_WORLD.Get_size() == 2"
start=$SECONDS
timeout 300 python -m pytest -q -n 0 -m "mpi and not slow" -p no:cacheprovider tests/test_mpi.py
echo "MPI tests: $((SECONDS - start)) s (budget 120 s)"
# jit(pmap) across processes: Numba compiles in every rank (~30 s)
timeout 300 python -m pytest -q -n 0 -m "mpi and slow" -p no:cacheprovider tests/test_mpi.py \
    || test $? -eq 5
