"""Benchmarks for tangent_x, printed as markdown tables of times and ratios.

    python tools/bench.py            # the full run (~30 s with the peers installed)
    python tools/bench.py --quick    # smoke run: every equal-results check, few repeats

Each implementation is checked for equal results before it is timed; times
are the first call (which includes generating / compiling) and the
steady-state median, and every target is a ratio against a reference
measured in the same run, never an absolute number in a test.  Every
implementation runs on one core: thread counts of Numba, BLAS, OpenMP and
XLA are set to 1 before anything numeric is imported (``--pin CPU`` also
binds the process to one CPU), so that ratios compare code, not
parallelism.

Issue #7 workloads (the functions are those of examples/):

- scalar_loop: 1000 steps of ``x = sin(x) * 0.99 + 0.01``, gradient at 0.5;
- mlp_grad: mean squared error of a 784-64-10 tanh MLP, batch 128,
  float64, gradient w.r.t. a list of parameter dicts;
- per_example_grad: ``vmap(grad(tanh))`` over 10^6 float64;
- while_newton: Newton's sqrt with a tolerance-based stop, d/da at a = 2;
- rnn: 50-step tanh RNN (hidden 64, input 32), gradient w.r.t. W and U;
- per_example_mlp (issue #19): ``vmap(grad(loss), in_axes=(None, 0, 0))`` of
  a 32-64-4 tanh MLP with a params dict, batch 256, against hand-written
  batched NumPy backprop and ``jax.jit(jax.vmap(jax.grad))``; eager against
  jit in a row of its own (tools/bench_per_example.py);
- the elementwise chain (issue #19): ``jit(lambda x: x * x + x * 2.0)`` on a
  3000x3000 matrix, and its sum, against NumPy and a hand-written one-pass
  Numba loop (tools/bench_elementwise.py).

Issue #20 (tools/bench_pmap.py): a data-parallel MLP gradient step, 2 pmap
workers vs 1 on twice the batch, with a control row of plain NumPy threads.

References in the same run: the hand-written gradients of
tools/bench_refs.py (Numba for the loops and elementwise work, NumPy
backprop for the MLP) and the compiled primal (``tx.jit(f)``, or
``numba.njit(f)`` before tangent_x has jit) for the ratio grad / primal.
Peers (tools/bench_peers.py): ``jax.jit(jax.grad(...))``, autograd and
tangent-ad, each when installed (``pip install ".[bench]"``).

tangent_x is compiled with ``tx.jit`` when the library has it; otherwise
the eager transform is measured and the table says "jit not available".

Issue #4 rows, kept (tools/bench_costs.py): transform time of a 30-line
function, eager grad of the MLP and of the scalar loop, tape memory per
loop step, jvp and Hessian-vector-product ratios.  Timing and the
equal-results checks: tools/bench_harness.py.
"""
import os
import sys

_ONE_THREAD = ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
               "OPENBLAS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")


def one_thread(pin=None):
    """One thread everywhere (Numba, BLAS, OpenMP, XLA): every implementation
    runs on one core.  With ``pin``, the process (and its children) is also
    bound to that CPU; not by default, because on a machine shared with
    other work a pinned process cannot move to the idler core, which adds
    noise without making the comparison fairer.  Must run before NumPy,
    Numba or JAX are imported."""
    for var in _ONE_THREAD:
        os.environ[var] = "1"
    flags = os.environ.get("XLA_FLAGS", "")
    for flag in ("--xla_cpu_multi_thread_eigen=false", "intra_op_parallelism_threads=1"):
        if flag not in flags:
            flags = f"{flags} {flag}".strip()
    os.environ["XLA_FLAGS"] = flags
    if pin is not None:
        os.sched_setaffinity(0, {pin})
    return pin


if __name__ == "__main__":
    _pin = sys.argv[sys.argv.index("--pin") + 1] if "--pin" in sys.argv[:-1] else None
    PINNED_CPU = one_thread(None if _pin is None else int(_pin))

import argparse  # noqa: E402
import json  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOLS = os.path.join(ROOT, "tools")


def _fresh_caches():
    """Fresh cache directories for tangent_x's generated modules and Numba,
    so that first calls in this run are cold (and nothing of the user's
    cache is touched)."""
    base = tempfile.mkdtemp(prefix="tx-bench-")
    os.environ["TANGENT_X_CACHE_DIR"] = os.path.join(base, "tangent_x")
    os.environ["NUMBA_CACHE_DIR"] = os.path.join(base, "numba")
    return base


if __name__ == "__main__":
    CACHE_BASE = _fresh_caches()

sys.path.insert(0, ROOT)
sys.path.insert(0, TOOLS)

import numpy as np  # noqa: E402

import tangent_x as tx  # noqa: E402

import bench_costs  # noqa: E402
import bench_harness as harness  # noqa: E402
from bench_harness import (check, first_time, fmt, interleaved_steady, load_example,  # noqa: E402
                           median_time, mlp_inputs, positional_call)
import bench_elementwise  # noqa: E402
import bench_peers  # noqa: E402
import bench_pmap  # noqa: E402
import bench_per_example  # noqa: E402
from bench_report import machine, table  # noqa: E402
import bench_refs  # noqa: E402

PEERS = ("JAX", "autograd", "tangent-ad")


# ------------------------------------------------------------------ workloads

HAS_JIT = hasattr(tx, "jit")
HAS_VMAP = hasattr(tx, "vmap")


def workloads():
    """name -> dict(f, argnums, args, reference, primal, jax_args)."""
    cf = load_example("control_flow")
    basics = load_example("basics")
    mlp, params, x, y = mlp_inputs()
    rng = np.random.default_rng(0)
    W, U, xs = 0.5 * rng.normal(size=(64, 64)) / 8, rng.normal(size=(64, 32)) / 6, \
        rng.normal(size=(50, 32))
    n_per_example = 10 ** 4 if harness.QUICK else 10 ** 6
    z = rng.normal(size=n_per_example)
    import numba
    return {
        "scalar_loop": dict(
            f=cf.recurrence, argnums=0, args=(0.5,),
            reference=("hand Numba", bench_refs.compiled("scalar_loop_grad")),
            primal=("numba", numba.njit(cf.recurrence))),
        "mlp_grad": dict(
            f=mlp.loss, argnums=0, args=(params, x, y),
            reference=("hand NumPy backprop", bench_refs.mlp_grad_numpy),
            primal=("NumPy", mlp.loss)),
        "per_example_grad": dict(
            f=basics.tanh, argnums=0, args=(z,), vmap=True,
            reference=("NumPy 1 - tanh(x)**2", bench_refs.tanh_grad_numpy),
            extra_reference=("hand Numba loop", bench_refs.compiled("tanh_grad_loop")),
            primal=("NumPy", np.tanh)),
        "while_newton": dict(
            f=cf.newton_sqrt, argnums=0, args=(2.0,),
            reference=("hand Numba", bench_refs.compiled("newton_sqrt_grad")),
            primal=("numba", numba.njit(cf.newton_sqrt))),
        "rnn": dict(
            f=cf.rnn, argnums=(0, 1), args=(W, U, xs),
            reference=("hand Numba", bench_refs.compiled("rnn_grad")),
            primal=("numba", numba.njit(cf.rnn))),
        "per_example_mlp": dict(
            f=bench_refs.per_example_mlp_loss, argnums=0, vmap=True, in_axes=(None, 0, 0),
            args=bench_refs.per_example_mlp_inputs(),
            reference=("hand batched NumPy backprop", bench_refs.per_example_mlp_grads_numpy),
            primal=("NumPy", bench_refs.per_example_mlp_losses_numpy)),
    }


def tangent_x_gradient(spec):
    """(label, callable or None): jit(grad(f)) when tx.jit exists, else the
    eager grad; vmap(grad(f)) for the per-example workload."""
    if spec.get("vmap"):
        if not HAS_VMAP:
            return "vmap not available", None
        g = tx.vmap(tx.grad(spec["f"]), in_axes=spec.get("in_axes", 0))
        label = "vmap(grad)"
    else:
        g = tx.grad(spec["f"], argnums=spec["argnums"])
        label = "grad"
    if HAS_JIT:
        return f"jit({label})", tx.jit(g)
    return f"{label} eager (jit not available)", g


def compiled_primal(spec):
    """The primal as compiled code: tx.jit(f) when it exists, else plain
    Numba (loops) or NumPy (vectorised workloads)."""
    kind, fn = spec["primal"]
    if HAS_JIT and kind == "numba":
        return "tx.jit", tx.jit(spec["f"])
    return kind, fn


def peer_call(peer, name, spec):
    """(call, None) for one peer's gradient, or (None, table cell) when it
    has none."""
    if not bench_peers.installed(peer):
        return None, "not installed"
    try:
        fn = bench_peers.make(peer, name)
    except bench_peers.Unsupported as exc:
        return None, str(exc)
    args = spec["args"]
    if peer == "JAX":
        import jax
        args = jax.tree_util.tree_map(jax.numpy.asarray, args)
        call = positional_call(fn, args)
        return (lambda: jax.block_until_ready(call())), None
    return positional_call(fn, args), None


def bench_workload(name, spec):
    """One row of the issue #7 table, plus the times the targets need.

    Every implementation's first call is timed alone and its result
    checked against the hand-written reference; the steady states are then
    measured interleaved (one batch of each in turn, repeatedly), so that a
    change of load on the shared machine hits all of them alike."""
    args = spec["args"]
    ref_label, ref = spec["reference"]
    row = {"workload": name}
    calls, firsts = {}, {}
    firsts["ref"], want = first_time(lambda: ref(*args))
    check(name, ref_label, want, want, required=True)
    calls["ref"] = positional_call(ref, args)
    if "extra_reference" in spec:
        extra_label, extra = spec["extra_reference"]
        firsts["extra"], out = first_time(lambda: extra(*args))
        check(name, extra_label, out, want, required=True)
        calls["extra"] = positional_call(extra, args)

    label, grad = tangent_x_gradient(spec)
    row["tangent_x"] = label
    if grad is not None:
        try:
            firsts["tx"], out = first_time(lambda: grad(*args))
        except Exception as exc:     # reported in the table, and the run fails
            harness.CHECKS.append((name, f"tangent_x {label}", False,
                           f"raised {type(exc).__name__}: {exc}"[:400]))
            row["tangent_x"] = f"{label}: fails ({type(exc).__name__})"
        else:
            check(name, f"tangent_x {label}", out, want, required=True)
            calls["tx"] = positional_call(grad, args)

    primal_label, primal = compiled_primal(spec)
    firsts["primal"], _ = first_time(lambda: primal(*args))
    calls["primal"] = positional_call(primal, args)
    if primal_label == "tx.jit":      # and plain Numba: the difference is the call overhead
        plain = spec["primal"][1]
        plain(*args)
        calls["primal_numba"] = positional_call(plain, args)

    for peer in PEERS:
        call, cell = peer_call(peer, name, spec)
        if call is None:
            row[peer] = cell
            continue
        try:
            firsts[peer], out = first_time(call)
        except Exception as exc:
            harness.CHECKS.append((name, peer, False, f"raised {type(exc).__name__}: {exc}"[:200]))
            row[peer] = f"fails: {type(exc).__name__}"
            continue
        if not check(name, peer, out, want, required=False):
            row[peer] = "wrong result"
            continue
        calls[peer] = call

    t = interleaved_steady(calls)
    row["t_ref"], row["t_tx"], row["t_primal"] = t["ref"], t.get("tx"), t["primal"]
    row["reference"] = f"{fmt(t['ref'])} {ref_label}"
    if "extra" in t:
        row["reference"] += f"; {fmt(t['extra'])} {extra_label}"
    if "tx" in t:
        row.update(first=fmt(firsts["tx"]), steady=fmt(t["tx"]),
                   vs_ref=f"{t['tx'] / t['ref']:.2f}x", vs_primal=f"{t['tx'] / t['primal']:.2f}x")
    else:
        row.update(first="—", steady="—", vs_ref="—", vs_primal="—")
    row["primal"] = f"{fmt(t['primal'])} ({primal_label})"
    if "primal_numba" in t:
        row["primal"] += f"; {fmt(t['primal_numba'])} (numba.njit)"
    for peer in PEERS:
        row[f"t_{peer}"] = t.get(peer)
        if peer in t:
            row[peer] = f"{fmt(t[peer])} (first {fmt(firsts[peer])})"
    row["vs_jax"] = f"{t['tx'] / t['JAX']:.2f}x" if "tx" in t and "JAX" in t else "—"
    return row


# ------------------------------------------------------------------ targets

def targets(rows, compile_times):
    """(target, measured, holds) for issue #7's acceptance ratios."""
    r = {row["workload"]: row for row in rows}
    out = []

    def ratio(name, key, limit, text, den=None):
        row = r[name]
        t, base = row["t_tx"], row.get(den or key)
        if t is None or base is None:
            out.append((text, "not measured", "—"))
            return
        value = t / base
        out.append((text, f"{value:.2f}x", "holds" if value <= limit else "does not hold"))

    ratio("scalar_loop", "t_ref", 1.4, "scalar_loop within 1.4x of hand Numba")
    ratio("scalar_loop", "t_primal", 2.5, "scalar_loop at most 2.5x the compiled primal")
    ratio("rnn", "t_ref", 1.5, "rnn within 1.5x of hand Numba")
    ratio("while_newton", "t_ref", 1.5, "while_newton within 1.5x of hand Numba")
    ratio("mlp_grad", "t_ref", 1.0, "mlp_grad no slower than hand NumPy backprop")
    ratio("per_example_grad", "t_ref", 1.0, "per_example_grad no slower than NumPy 1 - tanh(x)**2")
    for name in ("scalar_loop", "rnn", "while_newton"):
        if name == "while_newton" and r[name]["t_JAX"] is None:
            out.append(("while_newton faster than JAX", r[name]["JAX"], "JAX has no number"))
            continue
        ratio(name, "t_JAX", 1.0, f"{name} faster than jax.jit(jax.grad)")
    for name in ("mlp_grad", "per_example_grad"):
        ratio(name, "t_JAX", 1.1, f"{name} within 1.1x of jax.jit(jax.grad)")
    ratio("per_example_mlp", "t_ref", 1.0, "per_example_mlp no slower than hand batched NumPy")
    ratio("per_example_mlp", "t_JAX", 1.2,
          "per_example_mlp within 1.2x of jax.jit(jax.vmap(jax.grad))")
    for label, seconds, limit in compile_times:
        if seconds is None:
            out.append((label, "jit not available", "—"))
        else:
            out.append((label, fmt(seconds), "holds" if seconds < limit else "does not hold"))
    return out


# ------------------------------------------------------------------ compile time

_FIRST_CALL_SCRIPT = r"""
import json, os, sys, time
sys.path.insert(0, {root!r})
t0 = time.perf_counter()
import numpy as np
import tangent_x as tx
t_import = time.perf_counter() - t0
sys.path.insert(0, os.path.join({root!r}, "examples"))
import mlp
rng = np.random.default_rng(0)
params = mlp.init_params([784, 64, 10])
x, y = rng.normal(size=(128, 784)), rng.normal(size=(128, 10))
g = tx.jit(tx.grad(mlp.loss)) if hasattr(tx, "jit") else tx.grad(mlp.loss)
t0 = time.perf_counter()
g(params, x, y)
print(json.dumps({{"import": t_import, "first_call": time.perf_counter() - t0,
                   "jit": hasattr(tx, "jit")}}))
"""


def bench_first_call():
    """First call of jit(grad(mlp loss)) in a new process with empty caches
    (cold), then in a second process with the caches the first one wrote
    (warm: Numba's on-disk cache of the generated module), then cold with
    the kernels compiled in the process (reported, no target)."""
    base = tempfile.mkdtemp(prefix="tx-bench-cold-")
    script = _FIRST_CALL_SCRIPT.format(root=ROOT)
    results = []
    try:
        # cold, then warm on the caches it wrote; then cold again in fresh
        # caches with the kernels compiled in the process itself, as on a
        # one-CPU machine (numba_stage/beside.py)
        for caches, alone in (("a", "1"), ("a", "1"), ("b", "0")):
            env = dict(os.environ, TANGENT_X_CACHE_DIR=os.path.join(base, caches, "tangent_x"),
                       NUMBA_CACHE_DIR=os.path.join(base, caches, "numba"),
                       TANGENT_X_BACKGROUND_COMPILE=alone)
            proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                                  text=True, timeout=600)
            if proc.returncode != 0:
                raise RuntimeError(f"first-call subprocess failed:\n{proc.stderr[-2000:]}")
            results.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    finally:
        shutil.rmtree(base, ignore_errors=True)
    cold, warm, alone = results
    if not cold["jit"]:
        return [("jit(grad(mlp loss)) first call, cold, < 3 s", None, 3.0),
                ("jit(grad(mlp loss)) first call, warm cache, < 0.5 s", None, 0.5)], \
            (f"eager grad first call (no jit): {fmt(cold['first_call'])} cold, "
             f"{fmt(warm['first_call'])} warm; import tangent_x {fmt(cold['import'])}")
    return [("jit(grad(mlp loss)) first call, cold, < 3 s", cold["first_call"], 3.0),
            ("jit(grad(mlp loss)) first call, warm cache, < 0.5 s", warm["first_call"], 0.5)], \
        (f"import tangent_x: {fmt(cold['import'])} cold, {fmt(warm['import'])} warm; "
         f"first call, cold, kernels compiled in the process (TANGENT_X_BACKGROUND_COMPILE=0, "
         f"what one CPU gets): {fmt(alone['first_call'])}")


# ------------------------------------------------------------------ output

def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="smoke run: all equal-results checks, few repeats, small "
                             "per-example input, no first-call subprocesses")
    parser.add_argument("--only", help="comma-separated issue #7 workloads to run")
    parser.add_argument("--pin", type=int, metavar="CPU",
                        help="also bind the process to this CPU (read before imports)")
    options = parser.parse_args(argv)
    harness.QUICK = options.quick

    print(f"Machine: {machine(globals().get('PINNED_CPU'))}")
    print(f"tangent_x: {'jit' if HAS_JIT else 'no jit (eager)'}, "
          f"{'vmap' if HAS_VMAP else 'no vmap'}; peers: " +
          ", ".join(f"{p} {'installed' if bench_peers.installed(p) else 'not installed'}"
                    for p in PEERS) + ("  [--quick: smoke run, times are not meaningful]"
                                       if harness.QUICK else ""))
    print()

    specs = workloads()
    names = options.only.split(",") if options.only else list(specs)
    rows = [bench_workload(name, specs[name]) for name in names]
    keys = ["workload", "tangent_x", "first", "steady", "reference", "vs_ref", "primal",
            "vs_primal", "JAX", "vs_jax", "autograd", "tangent-ad"]
    headers = ["workload", "tangent_x", "first call", "steady", "reference (steady)",
               "tx / reference", "compiled primal", "tx / primal", "JAX jit(grad)",
               "tx / JAX", "autograd", "tangent-ad"]
    print(table(rows, keys, headers))
    print()

    if not options.only:
        if harness.QUICK:
            compile_times, note = [], "first-call subprocesses skipped (--quick)"
        else:
            compile_times, note = bench_first_call()
        chain_rows, chain_target = bench_elementwise.rows(interleaved_steady, check,
                                                          harness.QUICK)
        print(table([dict(zip(("target", "measured", "status"), t))
                     for t in targets(rows, compile_times) + [chain_target]],
                    ["target", "measured", "status"]))
        print(f"\n{note}\n")

        old = chain_rows + [
            bench_costs.bench_transform(), bench_costs.bench_mlp_eager(),
            bench_costs.bench_loop_cost(), bench_costs.bench_tape_memory(),
            bench_per_example.eager_and_jit(median_time, check)]
        old += bench_costs.bench_forward_and_hvp()
        print(table(old, ["workload", "tangent_x", "reference", "ratio"]))
        parallel = bench_pmap.bench_pmap(harness.QUICK)
        harness.CHECKS.extend(("pmap", r["workload"], r["ok"], r["check"]) for r in parallel)
        print(f"\n{bench_pmap.table(parallel + [bench_pmap.control(harness.QUICK)])}\n")

    ours = [c for c in harness.CHECKS if c[1] not in PEERS]
    peers = [c for c in harness.CHECKS if c[1] in PEERS]
    print(f"Equal-results checks of tangent_x and the references: {len(ours)} run, "
          f"{sum(not c[2] for c in ours)} failed" +
          "".join(f"\n- {w}: {i}: {d}" for w, i, ok, d in ours if not ok))
    print(f"Equal-results checks of the peers: {len(peers)} run, "
          f"{sum(not c[2] for c in peers)} failed" +
          "".join(f"\n- {w}: {i}: {d}" for w, i, ok, d in peers if not ok))
    return 0 if all(c[2] for c in ours) else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    finally:
        shutil.rmtree(CACHE_BASE, ignore_errors=True)
