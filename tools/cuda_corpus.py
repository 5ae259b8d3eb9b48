"""How much of tests/vmap_corpus the CUDA target compiles.

For every case of ``tests/vmap_corpus`` (its per-example arguments stacked
into a batch, every argument mapped along axis 0) this builds
``jit(vmap(f), target="cuda")``, compiles the kernel's PTX for sm_90 (no GPU
needed) and assembles it with ``ptxas`` from the nvcc wheel.  Each case ends
one of three ways:

* ``ptx``: ptxas accepts the kernel;
* ``refused``: a located ``TransformError`` (it names the user's line and
  suggests the CPU target): what a GPU thread cannot do;
* ``FAILED``: anything else (an unlocated error, or PTX that ptxas rejects),
  which is a bug of the CUDA stage.

    python tools/cuda_corpus.py [--show] [--cc 9.0]

needs the ``[cuda]`` extra; prints one line per case and the fraction, and
exits 1 if any case FAILED.
"""
import argparse
import os
import sys

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tests"))

import tangent_x as tx  # noqa: E402
from tangent_x.cuda_stage.ptxas import assemble  # noqa: E402
from vmap_corpus import BATCH, CASES, stack_examples  # noqa: E402


def run_case(fn, make, cc):
    """("ptx" | "refused" | "FAILED", detail)."""
    examples = [make() for _ in range(BATCH)]
    n = len(examples[0])
    batched = tuple(stack_examples([e[i] for e in examples], 0) for i in range(n))
    try:
        ptx = tx.jit(tx.vmap(fn, in_axes=0), target="cuda").ptx(*batched, cc=cc)
    except tx.TransformError as exc:
        located = exc.origin is not None and "target='cpu'" in str(exc)
        return ("refused" if located else "FAILED"), str(exc).splitlines()[0][:160]
    except Exception as exc:  # the stage's own bug: reported, counted
        return "FAILED", f"{type(exc).__name__}: {str(exc).splitlines()[0][:160]}"
    ok, message = assemble(ptx, cc)
    return ("ptx", "") if ok else ("FAILED", "ptxas: " + message[:160])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show", action="store_true", help="print why each case was refused")
    parser.add_argument("--cc", default="9.0")
    args = parser.parse_args(argv)
    cc = tuple(int(p) for p in args.cc.split("."))
    counts = {"ptx": 0, "refused": 0, "FAILED": 0}
    for name, (fn, make) in CASES.items():
        outcome, detail = run_case(fn, make, cc)
        counts[outcome] += 1
        line = f"{outcome:8} {name}"
        if args.show and detail or outcome == "FAILED":
            line += f"  -- {detail}"
        print(line, flush=True)
    total = sum(counts.values())
    print(f"\n{counts['ptx']}/{total} cases compile to sm_{cc[0]}{cc[1]} PTX that ptxas accepts "
          f"({100 * counts['ptx'] / total:.0f}%), {counts['refused']} refused with a located "
          f"error, {counts['FAILED']} failed")
    return 1 if counts["FAILED"] else 0


if __name__ == "__main__":
    sys.exit(main())
