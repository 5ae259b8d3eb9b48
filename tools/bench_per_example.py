"""Per-example MLP gradients (issue #19), eager against jit: a row of
tools/bench.py's second table.

Each implementation is timed on its own, not interleaved with the others
as the first table's rows are: eager code allocating its temporaries just
after compiled code freed its results page-faults on every call (glibc
hands the freed blocks back to the kernel in between; measured here, ~1,700
minor faults per pair of calls, none when either runs alone), which would
charge the pairing to whichever runs second.
"""
import bench_refs
import tangent_x as tx


def eager_and_jit(median_time, check):
    """The table row: eager ``vmap(grad)`` and its ``jit``, each against the
    hand-written batched NumPy backprop (``median_time(fn, repeat)``:
    seconds per call; ``check(workload, impl, got, want, required)``)."""
    params, xs, ys = bench_refs.per_example_mlp_inputs()
    fun = tx.vmap(tx.grad(bench_refs.per_example_mlp_loss), in_axes=(None, 0, 0))
    compiled = tx.jit(fun)
    want = bench_refs.per_example_mlp_grads_numpy(params, xs, ys)
    name = "per_example_mlp eager"
    check(name, "tangent_x vmap(grad)", fun(params, xs, ys), want, required=True)
    check(name, "tangent_x jit(vmap(grad))", compiled(params, xs, ys), want, required=True)
    t_eager = median_time(lambda: fun(params, xs, ys), repeat=50)
    t_jit = median_time(lambda: compiled(params, xs, ys), repeat=50)
    t_ref = median_time(lambda: bench_refs.per_example_mlp_grads_numpy(params, xs, ys),
                        repeat=50)
    return {"workload": "per_example_mlp, 32-64-4, batch 256: eager vmap(grad) | jit",
            "tangent_x": f"{t_eager * 1e3:.2f} ms | {t_jit * 1e3:.2f} ms",
            "reference": f"{t_ref * 1e3:.2f} ms (hand batched NumPy)",
            "ratio": f"{t_eager / t_ref:.2f}x | {t_jit / t_ref:.2f}x; jit / eager "
                     f"{t_jit / t_eager:.2f}x"}
