"""Cut a failing program down to a small one that fails the same way, and
write it as a regression test.

A candidate is the program with one statement deleted, one compound
statement replaced by one of its bodies, one expression replaced by one of
its parts or a constant, or one helper dropped.  It is kept when the
untransformed program still runs on the same arguments and the mode still
ends the same way (``wrong``, or ``crash`` with the same exception type).
The first candidate kept starts the next round, until none is kept.
"""
import copy
import os
import time

import numpy as np

from . import oracles, programs, valid

REGRESSIONS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                           "fuzz_regressions")


def _body_variants(body):
    """Bodies with one change each, at any depth."""
    for i, stmt in enumerate(body):
        yield body[:i] + body[i + 1:]
        for b in stmt.blocks:
            yield body[:i] + list(b) + body[i + 1:]
        for k, block in enumerate(stmt.blocks):
            for new in _body_variants(block):
                blocks = list(stmt.blocks)
                blocks[k] = new
                yield body[:i] + [stmt.with_blocks(blocks)] + body[i + 1:]
        exprs = stmt.exprs()
        for k, e in enumerate(exprs):
            for new in _expr_variants(e):
                es = list(exprs)
                es[k] = new
                yield body[:i] + [stmt.with_exprs(es)] + body[i + 1:]


def _expr_variants(e):
    if isinstance(e, programs.Template):
        for p in e.parts:
            yield p
        yield programs.Const(0.5)
        for i, p in enumerate(e.parts):
            for new in _expr_variants(p):
                yield e.replace(i, new)
    elif isinstance(e, programs.Const) and e.value not in (0.5, 1.0):
        yield programs.Const(0.5)


def candidates(program):
    for body in _body_variants(program.body):
        p = copy.copy(program)
        p.body = body
        yield p
    for new in _expr_variants(program.ret):
        p = copy.copy(program)
        p.ret = new
        yield p
    for i in range(len(program.helpers)):
        p = copy.copy(program)
        p.helpers = program.helpers[:i] + program.helpers[i + 1:]
        yield p


def _signature(verdict):
    if verdict.status == "crash":
        return ("crash", verdict.detail.split(" [at ")[0])
    return (verdict.status,)


def shrink(program, mode, directory, budget=120.0):
    """The smallest program found that fails ``mode`` as ``program`` does."""
    case = oracles.Case(_write(program, directory, "shrink"), program.args, program.seed)
    target = _signature(oracles.run(case, mode))
    if target[0] not in ("wrong", "crash"):
        return program, None
    best, verdict = program, None
    deadline = time.time() + budget
    improved = True
    n = 0
    while improved and time.time() < deadline:
        improved = False
        for cand in candidates(best):
            if time.time() > deadline:
                break
            if len(cand.source()) >= len(best.source()):
                continue
            n += 1
            try:
                c = oracles.Case(_write(cand, directory, f"shrink{n}"), cand.args, cand.seed)
            except Exception:        # noqa: BLE001 - a candidate that does not load
                continue
            if not valid(c):
                continue
            v = oracles.run(c, mode)
            if _signature(v) == target:
                best, verdict, improved = cand, v, True
                break
    return best, verdict


def _write(program, directory, stem):
    path = os.path.join(directory, f"{stem}_{program.seed}.py")
    with open(path, "w") as out:
        out.write(program.source())
    return path


def literal(x):
    """Python source for an argument value."""
    if isinstance(x, dict):
        return "{" + ", ".join(f"{k!r}: {literal(v)}" for k, v in x.items()) + "}"
    if isinstance(x, np.ndarray):
        dtype = "" if x.dtype == np.float64 else f", dtype=np.{x.dtype}"
        return f"np.array({np.asarray(x, np.float64).tolist()!r}{dtype})"
    return repr(float(x))


def write_regression(program, mode, verdict, directory=REGRESSIONS):
    """The shrunk program as a regression file: its source, its arguments
    and the mode that failed; tests/test_fuzz_regressions.py runs them all."""
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, f"seed_{program.seed}_{mode}.py")
    text = program.source()
    lines = text.splitlines()
    lines[0] = (f'"""Found by tools/fuzz.py (seed {program.seed}, mode {mode}), shrunk: '
                f'{(verdict.detail if verdict else "")[:150]!s}"""'.replace("\\", ""))
    lines += ["", "", f"SEED = {program.seed}", f"MODE = {mode!r}",
              f"ARGS = [{', '.join(literal(a) for a in program.args)}]"]
    with open(path, "w") as out:
        out.write("\n".join(lines) + "\n")
    return path
