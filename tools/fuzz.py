"""Run the program generator: random NumPy programs, every transform
checked against its reference, a table of verdicts per mode.

    python tools/fuzz.py --n 300 --seed 0                    # the fast modes
    python tools/fuzz.py --n 100 --seed 5000 --modes jit,jit_grad,jit_vmap
    python tools/fuzz.py --n 20 --modes jit_vmap_grad      # per-example gradients compiled
    python tools/fuzz.py --n 50 --modes all --show           # print each failure
    python tools/fuzz.py --n 50 --shrink                     # failures -> tests/fuzz_regressions/

Programs are seeds ``seed .. seed + n - 1``; each is written as a real file
in a temporary directory (``--keep DIR`` to keep them).  A verdict is one
of: right; wrong (a value, shape or dtype differs from the reference);
refused (a located TransformError); crash (anything else); skip (no fair
reference at that point: finite differences beside a threshold).
"""
import argparse
import collections
import multiprocessing
import os
import re
import sys
import tempfile
import time

# This checkout's tangent_x and tests, not an installed one (an editable
# install of another checkout would be imported from tools/ otherwise: a
# snapshot run then checks, and lazily imports, whatever that tree holds)
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT, os.path.join(ROOT, "tests")]

import fuzzing  # noqa: E402
import tangent_x  # noqa: E402
from fuzzing import oracles, shrink  # noqa: E402
from tangent_x.numba_stage.specialize.calls import registries  # noqa: E402

assert os.path.dirname(os.path.dirname(os.path.abspath(tangent_x.__file__))) == ROOT, \
    f"tools/fuzz.py imported {tangent_x.__file__}, not this checkout's tangent_x"
# the calls the numba stage evaluates itself, imported lazily at the first
# compile: loaded here, before the pool forks its workers from this process
registries()

STATUSES = ["right", "wrong", "refused", "crash", "skip"]


def run_seed(job):
    seed, modes, directory = job
    start = time.time()
    case = fuzzing.make_case(seed, directory)
    out = [(seed, v.mode, v.status, v.detail) for v in fuzzing.check(case, modes)]
    return out, time.time() - start


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--modes", default="fast",
                        help="comma-separated modes, or fast, jit, jit_extra, all "
                             f"(modes: {', '.join(oracles.MODES)})")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--show", action="store_true", help="print every wrong and crash")
    parser.add_argument("--shrink", action="store_true",
                        help="shrink each failure and write it to tests/fuzz_regressions/")
    parser.add_argument("--keep", help="write the programs in this directory")
    parser.add_argument("--verbose", action="store_true", help="a line per program as it ends")
    args = parser.parse_args(argv)
    groups = {"fast": oracles.FAST_MODES, "jit": oracles.JIT_MODES,
              "jit_extra": oracles.EXTRA_JIT_MODES, "all": oracles.MODES}
    modes = list(dict.fromkeys(m for part in args.modes.split(",")
                               for m in groups.get(part, [part])))     # each once
    unknown = [m for m in modes if m not in oracles.CHECKS]
    if unknown:
        parser.error(f"unknown mode(s) {', '.join(unknown)}")
    directory = args.keep or tempfile.mkdtemp(prefix="tangent_x_fuzz_")
    os.makedirs(directory, exist_ok=True)
    seeds = list(range(args.seed, args.seed + args.n))
    jobs = [(seed, modes, directory) for seed in seeds]
    start = time.time()
    results, slow = [], []
    interrupted = False
    try:
        with multiprocessing.get_context("fork").Pool(args.jobs, maxtasksperchild=20) as pool:
            for out, seconds in pool.imap_unordered(run_seed, jobs):
                results += out
                slow.append((seconds, out[0][0]))
                if args.verbose:
                    verdicts = " ".join(f"{mode}={status}" for _, mode, status, _ in out)
                    print(f"seed {out[0][0]}: {seconds:.1f} s {verdicts}", file=sys.stderr,
                          flush=True)
    except KeyboardInterrupt:
        # Ctrl-C (or kill -INT): the table of the programs that ended
        interrupted = True
        print(f"interrupted: the table counts the {len(slow)} programs that ended",
              file=sys.stderr)
    if not slow:
        return 1
    counts = {m: collections.Counter() for m in modes}
    for seed, mode, status, detail in sorted(results):
        counts[mode][status] += 1
        if args.show and status in ("wrong", "crash"):
            print(f"seed {seed} {mode}: {status}: {detail}")
    done = sorted(seed for _, seed in slow)
    print(f"{len(done)} programs (seeds {args.seed}..{args.seed + args.n - 1}"
          + (f", interrupted: {len(done)} ended, the last {done[-1]}" if interrupted else "")
          + f"), "
          f"{time.time() - start:.0f} s; slowest: " +
          ", ".join(f"seed {s} {t:.1f} s" for t, s in sorted(slow)[::-1][:3]))
    print("| mode | " + " | ".join(STATUSES) + " |")
    print("|---|" + "---|" * len(STATUSES))
    for m in modes:
        print(f"| {m} | " + " | ".join(str(counts[m][s]) for s in STATUSES) + " |")
    if args.show:
        refusals = collections.defaultdict(list)
        for seed, mode, status, detail in sorted(results):
            if status == "refused":
                refusals[mode, re.sub(r"^\S+:\d+: ", "", detail)[:120]].append(seed)
        for (mode, message), found in sorted(refusals.items(), key=lambda kv: -len(kv[1])):
            print(f"refused {len(found)}x in {mode} (seeds {', '.join(map(str, found))}): "
                  f"{message}")
    failures = [(seed, mode) for seed, mode, status, _ in results if status in ("wrong", "crash")]
    if args.shrink:
        for seed, mode in sorted(set(failures)):
            case = fuzzing.make_case(seed, directory)
            small, verdict = shrink.shrink(case.program, mode, directory)
            path = shrink.write_regression(small, mode, verdict)
            print(f"seed {seed} {mode}: shrunk to {path}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
