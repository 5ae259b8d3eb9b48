"""The program generator in the suite: a fixed set of random programs
(tests/fuzzing), every transform checked on each against its reference.

Seeds 0-299 run the fast modes (grad, jvp, vjp, jacobians, Hessian-vector
products, vmap, vmap(grad), grad of a vmapped sum) in the default run;
the jit modes (jit, jit(grad), jit(vmap) against eager) run on seeds 0-19 in
CI's slow step (``-m slow``): each compiles three functions with Numba.  A
verdict of ``wrong`` or ``crash`` fails, except the pairs in ``KNOWN``:
failures found and not yet fixed, each named with its cause; such a pair
must still fail (a fixed one is taken out of the list), so the list only
shrinks.  ``python tools/fuzz.py`` runs any other seeds.
"""
import pytest

import fuzzing
from fuzzing import oracles

SEEDS = range(300)
JIT_SEEDS = range(20)        # Numba compiles three functions a program: 5-100 s
CHUNK = 5

# (seed, mode): the cause, for failures not yet fixed
KNOWN = {
}


def _check(seeds, modes, directory):
    failures, unexpected_passes = [], []
    for seed in seeds:
        case = fuzzing.make_case(seed, str(directory))
        for v in fuzzing.check(case, modes):
            bad = v.status in ("wrong", "crash")
            if (seed, v.mode) in KNOWN:
                if not bad:
                    unexpected_passes.append(f"seed {seed} {v.mode}: {v.status} (listed in KNOWN "
                                             f"as {KNOWN[seed, v.mode]!r}; take it out)")
            elif bad:
                failures.append(f"seed {seed} {v.mode}: {v.status}: {v.detail}\n"
                                f"{case.program.source()}")
    assert not failures and not unexpected_passes, "\n".join(failures + unexpected_passes)


CHUNKS = [list(SEEDS)[i:i + CHUNK] for i in range(0, len(SEEDS), CHUNK)]


@pytest.mark.parametrize("seeds", CHUNKS, ids=lambda s: f"seeds{s[0]}-{s[-1]}")
def test_generated_programs(seeds, tmp_path):
    _check(seeds, oracles.FAST_MODES, tmp_path)


JIT_CHUNKS = [list(JIT_SEEDS)[i:i + CHUNK] for i in range(0, len(JIT_SEEDS), CHUNK)]


@pytest.mark.slow
@pytest.mark.parametrize("seeds", JIT_CHUNKS, ids=lambda s: f"seeds{s[0]}-{s[-1]}")
def test_generated_programs_under_jit(seeds, tmp_path):
    _check(seeds, oracles.JIT_MODES, tmp_path)
