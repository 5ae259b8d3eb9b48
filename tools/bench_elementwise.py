"""Issue #19's elementwise chain: ``jit(lambda x: x * x + x * 2.0)`` on a
3000x3000 float64 matrix, and the same chain summed (``np.sum(x * x + x *
2.0)``), against NumPy's passes and a hand-written one-pass Numba loop.

Target (issue #19): the chain under ``tx.jit`` within 1.1x of the faster of
NumPy and the hand-written loop.  The hand-written loops are what a user
would write (``np.empty_like`` and a flat loop): the gap between them and
NumPy on large results is the kernel's page faults on a fresh result,
which NumPy's allocator avoids with huge pages (see
tangent_x/numba_stage/fused.py).  Used by tools/bench.py; runs alone too::

    NUMBA_NUM_THREADS=1 python tools/bench_elementwise.py
"""
import numba
import numpy as np

import tangent_x as tx

TARGET = 1.1


def chain(x):
    return x * x + x * 2.0


def chain_sum(x):
    return np.sum(x * x + x * 2.0)


@numba.njit(cache=True)
def chain_by_hand(x):
    out = np.empty_like(x)
    flat, flat_out = x.ravel(), out.ravel()
    for i in range(flat.size):
        v = flat[i]
        flat_out[i] = v * v + v * 2.0
    return out


@numba.njit(cache=True)
def chain_sum_by_hand(x):
    flat = x.ravel()
    total = 0.0
    for i in range(flat.size):
        v = flat[i]
        total += v * v + v * 2.0
    return total


def rows(steady, check, quick=False):
    """(table rows, (target text, measured, status)) for the chain and its
    sum.  ``steady(calls)``: steady-state seconds per call of each thunk,
    interleaved; ``check(workload, impl, got, want, required)``."""
    n = 300 if quick else 3000
    x = np.random.default_rng(0).random((n, n))
    out, target = [], None
    for name, fun, by_hand in (("chain", chain, chain_by_hand),
                               ("chain_sum", chain_sum, chain_sum_by_hand)):
        compiled = tx.jit(fun)
        workload = f"elementwise {name} ({n}x{n} float64)"
        check(workload, "tangent_x jit", compiled(x), fun(x), required=True)
        check(workload, "hand-written Numba", by_hand(x), fun(x), required=True)
        t = steady({"tx": lambda: compiled(x), "numpy": lambda: fun(x),
                    "hand": lambda: by_hand(x)})
        best = min(t["numpy"], t["hand"])
        out.append({"workload": workload, "tangent_x": f"{t['tx'] * 1e3:.2f} ms",
                    "reference": f"NumPy {t['numpy'] * 1e3:.2f} ms, hand Numba "
                                 f"{t['hand'] * 1e3:.2f} ms",
                    "ratio": f"{t['tx'] / best:.2f}x of the faster (target <= {TARGET}x)"})
        if name == "chain":
            value = t["tx"] / best
            target = (f"elementwise chain within {TARGET}x of the faster of NumPy and hand "
                      "Numba", f"{value:.2f}x", "holds" if value <= TARGET else "does not hold")
    return out, target


if __name__ == "__main__":
    import statistics
    import time

    def steady(calls, repeat=15):
        times = {k: [] for k in calls}
        for fn in calls.values():
            fn()
        for _ in range(repeat):
            for k, fn in calls.items():
                t0 = time.perf_counter()
                fn()
                times[k].append(time.perf_counter() - t0)
        return {k: statistics.median(v) for k, v in times.items()}

    def check(workload, impl, got, want, required):
        assert np.allclose(got, want, rtol=1e-9), (workload, impl)

    table, target = rows(steady, check)
    for row in table:
        print(row)
    print(target)
