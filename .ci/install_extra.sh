#!/usr/bin/env bash
# Install extras of setup.cfg (e.g. `bash .ci/install_extra.sh mpi`) into the
# active Python's environment.  Where this project is already installed (in
# .ci/run's venv, by the README's command) only the extras' own packages are
# installed: `pip install ".[mpi]"` would build the project's wheel again, in
# an isolated build environment of its own, and reinstall it.  Elsewhere the
# project is installed with them.
set -euo pipefail
cd "$(dirname "$0")/.."
if python -c "import importlib.metadata as m; m.version('tangent_x')" 2>/dev/null; then
  mapfile -t packages < <(python - "$@" <<'PY'
import configparser
import sys

config = configparser.ConfigParser()
config.read("setup.cfg")
for extra in sys.argv[1:]:
    for line in config["options.extras_require"][extra].splitlines():
        if line.strip():
            print(line.strip())
PY
)
  python -m pip install --quiet "${packages[@]}"
else
  python -m pip install --quiet ".[$(IFS=,; echo "$*")]"
fi
