"""The program generator: random NumPy programs (``programs``, with
containers built at run time in ``containers`` and arrays shared through
containers, unpacking and loops in ``sharing``), the checks of every
transform on them (``oracles``), and the shrinker that cuts a failing
program down to a regression test (``shrink``).

``make_case(seed, directory)`` writes program ``seed`` as a real file and
returns it loaded; ``check(case, modes)`` gives a verdict per mode.
"""
import os

import numpy as np

from . import oracles, programs


def valid(case):
    """The untransformed program runs, finite and moderate, on its
    arguments and on every example of its vmapped batch, within seconds."""
    with oracles.time_limit(10):
        return _valid(case)


def _valid(case):
    try:
        with np.errstate(all="raise"):
            for args in [case.args] + case.examples:
                if np.ndim(case.ref_loss(*args)) != 0:
                    return False
                for fn in (case.ref_f, case.ref_loss):
                    out = fn(*args)
                    for leaf in oracles.leaves(out):
                        a = np.asarray(leaf)
                        if not np.issubdtype(a.dtype, np.floating) or not np.all(np.isfinite(a)) \
                                or np.any(np.abs(a) > 1e4):
                            return False
        return True
    except (Exception, oracles.Timeout):    # noqa: BLE001 - any failure makes the draw invalid
        return False


def write(program, directory, stem=None):
    path = os.path.join(directory, f"{stem or f'prog_{program.seed}'}.py")
    with open(path, "w") as out:
        out.write(program.source())
    return path


def make_case(seed, directory, attempts=50):
    """Program ``seed``: the first valid draw of its attempts."""
    for attempt in range(attempts):
        program = programs.generate(seed, attempt=attempt)
        path = write(program, directory, f"prog_{seed}_{attempt}")
        try:
            case = oracles.Case(path, program.args, seed)
        except Exception:       # noqa: BLE001 - a draw that does not even load
            continue
        if valid(case):
            case.program = program
            return case
    raise RuntimeError(f"no valid program for seed {seed} in {attempts} attempts")


def check(case, modes):
    return [oracles.run(case, mode) for mode in modes]
