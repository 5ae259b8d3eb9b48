"""tools/bench.py's harness: timing (medians, interleaved steady states,
first calls), equal-results checks recorded for the report, and the
examples' workloads loaded from examples/.  ``QUICK`` (set by
``--quick``) cuts every repeat count to a smoke run."""
import importlib.util
import os
import statistics
import time

import numpy as np

import tangent_x as tx

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

QUICK = False
CHECKS = []          # (workload, implementation, ok, detail)


# ------------------------------------------------------------------ timing

def median_time(fn, repeat=30, number=1):
    """Median seconds per call over ``repeat`` batches of ``number`` calls."""
    if QUICK:
        repeat = min(repeat, 3)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - t0) / number)
    return statistics.median(times)


def interleaved_steady(calls, repeat=21):
    """Steady-state median seconds per call of each of ``calls`` (a dict of
    thunks): batches of at least 2 ms (so that microsecond calls are not
    timer noise), one batch of each in turn, ``repeat`` rounds (3 with
    --quick)."""
    if QUICK:
        repeat = 3
    numbers, times = {}, {key: [] for key in calls}
    for key, fn in calls.items():
        fn()
        t0 = time.perf_counter()
        fn()
        numbers[key] = max(1, int(2e-3 / max(time.perf_counter() - t0, 1e-9)))
    for _ in range(repeat):
        for key, fn in calls.items():
            number = numbers[key]
            t0 = time.perf_counter()
            for _ in range(number):
                fn()
            times[key].append((time.perf_counter() - t0) / number)
    return {key: statistics.median(ts) for key, ts in times.items()}


def positional_call(fn, args):
    """A thunk calling ``fn`` with ``args`` written out in the call, as user
    code calls a function (``g(x)``), not through ``fn(*args)``: a star-call
    costs a Python function (a jit's front, autograd's grad) ~70 ns more
    than a compiled dispatcher (the call is not inlined into the caller's
    frame), which is the harness's cost, not the implementation's, and is
    a third of a 200 ns call such as while_newton's."""
    names = [f"a{i}" for i in range(len(args))]
    env = dict(zip(names, args), fn=fn)
    return eval(f"lambda: fn({', '.join(names)})", env)


def first_time(fn):
    """(seconds, result) of one call: the first one, compile included."""
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def fmt(seconds):
    if seconds is None:
        return "—"
    if seconds >= 1.0:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    if seconds >= 1e-6:
        return f"{seconds * 1e6:.1f} µs"
    return f"{seconds * 1e9:.0f} ns"


# ------------------------------------------------------------------ checks

def _leaves(tree):
    return [np.asarray(leaf, dtype=float) for leaf in tx.tree_util.tree_leaves(tree)]


def same(got, want, rtol=1e-9):
    """Whether two pytrees of results agree to ``rtol`` (plus an absolute
    slack of rtol times the largest reference entry, for entries near 0)."""
    got, want = _leaves(got), _leaves(want)
    if len(got) != len(want):
        return False, f"{len(got)} leaves, expected {len(want)}"
    worst = 0.0
    for a, b in zip(got, want):
        if a.shape != b.shape:
            return False, f"shape {a.shape}, expected {b.shape}"
        scale = np.max(np.abs(b)) if b.size else 0.0
        err = np.max(np.abs(a - b) / (np.abs(b) + scale + 1e-300)) if b.size else 0.0
        worst = max(worst, float(err))
    return worst <= rtol, f"max relative error {worst:.1e}"


def check(workload, impl, got, want, required):
    """Record an equal-results check; a wrong tangent_x or reference result
    stops the run (its timing would mean nothing)."""
    ok, detail = same(got, want)
    CHECKS.append((workload, impl, ok, detail))
    if required and not ok:
        raise AssertionError(f"{workload}: {impl} disagrees with the reference ({detail})")
    return ok


# ------------------------------------------------------------------ examples

def load_example(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, "examples", f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module



def mlp_inputs():
    mlp = load_example("mlp")
    rng = np.random.default_rng(0)
    params = mlp.init_params([784, 64, 10])
    return mlp, params, rng.normal(size=(128, 784)), rng.normal(size=(128, 10))
