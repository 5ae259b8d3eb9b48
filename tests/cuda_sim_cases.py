"""The CUDA target's acceptance cases, run in Numba's CUDA simulator.

``python tests/cuda_sim_cases.py`` (with ``NUMBA_ENABLE_CUDASIM=1`` set
before anything imports ``numba.cuda``: ``tests/test_cuda.py`` runs it in a
subprocess) runs each case as ``jit(vmap(f), target="cuda")`` and as the
CPU's ``jit(vmap(f))`` loop over examples, and prints one JSON line per
case: the largest absolute difference of every result leaf, and whether
the integer results (step counts) are equal.  ``CASES`` is also used by the
PTX check (``test_cuda.py``); ``tools/bench_cuda.py`` times ``tanh_out``
and ``newton_sqrt``.
"""
import json
import os
import sys

import numpy as np

import tangent_x as tx
import tangent_x.random as txr
from tangent_x import tree_util


def tanh_out(x):
    return np.tanh(x)


def newton_sqrt(a):
    y = a
    while abs(y * y - a) > 1e-12:
        y = 0.5 * (y + a / y)
    return y


def walk_to_barrier(key, barrier):
    """A random walk of normal steps until it leaves (-barrier, barrier):
    how many steps it took, and where it stopped."""
    pos = 0.0
    steps = 0
    while abs(pos) < barrier:
        key, sub = txr.split(key)
        pos = pos + txr.normal(sub, ())
        steps = steps + 1
    return steps, pos


def mlp_loss(params, x, y):
    """A 3-4-2 tanh network, written per weight (a thread computes it with
    scalar loops; shared parameters, one example's x and y)."""
    W1, b1, W2, b2 = params["W1"], params["b1"], params["W2"], params["b2"]
    loss = 0.0
    for o in range(2):
        out = b2[o]
        for j in range(4):
            pre = b1[j]
            for i in range(3):
                pre = pre + W1[j, i] * x[i]
            out = out + W2[o, j] * np.tanh(pre)
        loss = loss + (out - y[o]) ** 2
    return loss


def matrix_mlp_loss(params, x, y):
    """The same kind of network with matrix products: a thread computes
    them (and their gradients) as loops over local arrays of fixed shape."""
    W1, b1, W2 = params
    h = np.tanh(W1 @ x + b1)
    return np.sum((W2 @ h - y) ** 2)


def carried_arrays(x, y):
    """Local arrays carried around a loop and rebound to themselves: each
    statement's local storage is rewritten while its old value is read."""
    z = x * 1.0
    for i in range(3):
        z = z * 0.5 + y
    w = x
    w = w + 1.0
    return np.sum(z) + np.sum(w) + np.sum(x[1:3])


def _matrix_mlp_args(n):
    rng = np.random.default_rng(4)
    return ((rng.normal(size=(4, 3)), rng.normal(size=4), rng.normal(size=(2, 4))),
            rng.normal(size=(n, 3)), rng.normal(size=(n, 2)))


def _mlp_args(n):
    rng = np.random.default_rng(3)
    params = {"W1": rng.normal(size=(4, 3)), "b1": rng.normal(size=4),
              "W2": rng.normal(size=(2, 4)), "b2": rng.normal(size=2)}
    return params, rng.normal(size=(n, 3)), rng.normal(size=(n, 2))


def pair_loss(P, x):
    return np.tanh(P[0] * x[0] + P[1] * x[1]) ** 2


per_example_grads = tx.vmap(tx.grad(pair_loss), in_axes=(None, 0))
per_example_losses = tx.vmap(pair_loss, in_axes=(None, 0))
matrix_mlp_losses = tx.vmap(matrix_mlp_loss, in_axes=(None, 0, 0))
mlp_grads = tx.vmap(tx.grad(mlp_loss), in_axes=(None, 0, 0))


def summed_grads(P, X):
    """The gradient of the batch's total loss: a sum over the batch, which
    the kernel adds up with atomics (no array of per-example gradients)."""
    return np.sum(per_example_grads(P, X), axis=0)


def reductions(n=64):
    """name -> (function whose body reduces a vmapped call over the batch,
    its arguments, the CPU reference: the CPU jit of the vmapped call,
    reduced by NumPy)."""
    rng = np.random.default_rng(5)
    P, X = np.array([0.3, -0.7]), rng.normal(size=(n, 2))
    return {
        "sum_of_grads": (summed_grads, (P, X),
                         lambda: np.sum(tx.jit(per_example_grads)(P, X), axis=0)),
        "mean_loss": (lambda P, X: np.mean(per_example_losses(P, X), axis=0), (P, X),
                      lambda: np.mean(tx.jit(per_example_losses)(P, X), axis=0)),
        "grad_of_summed_loss": (tx.grad(lambda P, X: np.sum(per_example_losses(P, X))), (P, X),
                                lambda: np.sum(tx.jit(per_example_grads)(P, X), axis=0)),
        "grad_of_mean_loss": (tx.grad(lambda P, X: np.mean(per_example_losses(P, X), axis=0)),
                              (P, X),
                              lambda: np.mean(tx.jit(per_example_grads)(P, X), axis=0)),
        "grad_of_summed_matrix_mlp_loss": (
            tx.grad(lambda p, X, Y: np.sum(matrix_mlp_losses(p, X, Y))), _matrix_mlp_args(n),
            lambda: tree_util.tree_map(lambda g: np.sum(g, axis=0), tx.jit(tx.vmap(
                tx.grad(matrix_mlp_loss), in_axes=(None, 0, 0)))(*_matrix_mlp_args(n)))),
        "sum_of_walk_steps": (lambda key, b: np.sum(walks(key, b), axis=0),
                              (txr.split(txr.PRNGKey(7), n), 2.0),
                              lambda: np.sum(tx.jit(walks)(txr.split(txr.PRNGKey(7), n),
                                                           2.0), axis=0)),
    }


walks = tx.vmap(lambda key, b: walk_to_barrier(key, b)[0], in_axes=(0, None))


def compare_reduction(name, fn, args, reference):
    gpu = tx.jit(fn, target="cuda")(*args)
    cpu = reference()
    assert tree_util.tree_structure(gpu) == tree_util.tree_structure(cpu), (gpu, cpu)
    pairs = list(zip(tree_util.tree_leaves(gpu), tree_util.tree_leaves(cpu)))
    return {"case": name,
            "max_abs_diff": max(float(np.max(np.abs(np.asarray(g, float) -
                                                    np.asarray(c, float)))) for g, c in pairs),
            "shapes_equal": all(np.shape(g) == np.shape(c) for g, c in pairs),
            "dtypes_equal": all(np.asarray(g).dtype == np.asarray(c).dtype for g, c in pairs),
            "integers_equal": all(np.array_equal(g, c) for g, c in pairs
                                  if np.asarray(c).dtype.kind in "iub"),
            "finite": all(bool(np.all(np.isfinite(np.asarray(g, float)))) for g, _ in pairs)}


def cases(n=64):
    """name -> (per-example function, in_axes, batched arguments)."""
    xs = np.linspace(-3.0, 3.0, n)
    keys = txr.split(txr.PRNGKey(42), n)
    return {
        "grad_tanh": (tx.grad(tanh_out), 0, (xs,)),
        "newton_sqrt": (newton_sqrt, 0, (np.linspace(0.5, 900.0, n),)),
        "grad_newton_sqrt": (tx.grad(newton_sqrt), 0, (np.linspace(0.5, 900.0, n),)),
        "walk_to_barrier": (walk_to_barrier, (0, None), (keys, 3.0)),
        "mlp_per_example_grads": (tx.grad(mlp_loss), (None, 0, 0), _mlp_args(n)),
        "carried_arrays": (carried_arrays, 0, (np.linspace(-1.0, 1.0, 3 * n).reshape(n, 3),
                                               np.linspace(2.0, 0.5, 3 * n).reshape(n, 3))),
        "matrix_mlp_per_example_grads": (tx.grad(matrix_mlp_loss), (None, 0, 0),
                                         _matrix_mlp_args(n)),
    }


def compare(name, fn, in_axes, args, reference=None):
    """The kernel's results against ``reference()``, by default the CPU's
    jit of the same vmap as a loop over examples."""
    gpu = tx.jit(tx.vmap(fn, in_axes=in_axes), target="cuda")(*args)
    cpu = reference() if reference else tx.jit(tx.vmap(fn, in_axes=in_axes, method="loop"))(*args)
    g_leaves, c_leaves = tree_util.tree_leaves(gpu), tree_util.tree_leaves(cpu)
    assert tree_util.tree_structure(gpu) == tree_util.tree_structure(cpu), (gpu, cpu)
    return {"case": name,
            "max_abs_diff": max(float(np.max(np.abs(np.asarray(g, float) - np.asarray(c, float))))
                                for g, c in zip(g_leaves, c_leaves)),
            "shapes_equal": all(np.shape(g) == np.shape(c) for g, c in zip(g_leaves, c_leaves)),
            "dtypes_equal": all(np.asarray(g).dtype == np.asarray(c).dtype
                                for g, c in zip(g_leaves, c_leaves)),
            "integers_equal": all(np.array_equal(g, c) for g, c in zip(g_leaves, c_leaves)
                                  if np.asarray(c).dtype.kind in "iub"),
            "finite": all(np.all(np.isfinite(np.asarray(g, float))) for g in g_leaves)}


def untransformed_loop(fn, examples):
    """``fn`` itself called once per example, its results stacked leaf by leaf."""
    outs = [fn(*example) for example in examples]
    return tree_util.tree_map(lambda *leaves: np.stack([np.asarray(x) for x in leaves]), *outs)


def corpus_rows(only=()):
    """Every case of tests/vmap_corpus that the CUDA stage takes, run in the
    simulator against the untransformed function called once per example (a
    case refused with a located error is a row saying so:
    tools/cuda_corpus.py counts those).  Not against the CPU's jit of the
    vmap, as the acceptance cases above are: compiling it took most of the
    corpus's time (38 s of CPU for elementwise_more alone), and the function
    itself is the better reference.  (tools/jit_corpus.py runs the corpus
    under the CPU's jit; tests/test_jit_vmap.py its loop cases.)"""
    from vmap_corpus import BATCH, CASES, stack_examples
    for name, (fn, make) in CASES.items():
        if only and name not in only:
            continue
        examples = [make() for _ in range(BATCH)]
        args = tuple(stack_examples([e[i] for e in examples], 0)
                     for i in range(len(examples[0])))
        try:
            row = compare(f"corpus:{name}", fn, 0, args,
                          lambda: untransformed_loop(fn, examples))
        except tx.TransformError as exc:
            row = {"case": f"corpus:{name}", "refused": True,
                   "located": exc.origin is not None and "target='cpu'" in str(exc)}
        except Exception as exc:      # reported, and the test fails on it
            row = {"case": f"corpus:{name}", "error": f"{type(exc).__name__}: {exc}"}
        yield row


def checks():
    """What else the simulator shows, name -> (passed, detail): device arrays
    in and out, and a tape too small for a thread's loop as a located error."""
    from numba import cuda
    out = {}
    a = np.linspace(0.5, 900.0, 16)
    on_device = cuda.to_device(a)
    g = tx.jit(tx.vmap(tx.grad(newton_sqrt)), target="cuda")
    res = g(on_device)
    cpu = tx.jit(tx.vmap(tx.grad(newton_sqrt), method="loop"))(a)
    out["device_arrays"] = (not isinstance(res, np.ndarray) and
                            float(np.max(np.abs(res.copy_to_host() - cpu))) <= 1e-12,
                            type(res).__name__)
    small = tx.jit(tx.vmap(tx.grad(newton_sqrt)), target="cuda", tape_capacity=3)
    try:
        small(a)
        out["tape_overflow"] = (False, "no error")
    except tx.TransformError as exc:
        text = str(exc)
        out["tape_overflow"] = ("cuda_sim_cases.py:" in text and "tape_capacity" in text, text)
    table = np.array([1.0, 2.0, 3.0])
    look = tx.jit(tx.vmap(lambda i: table[i] * 2.0), target="cuda")
    try:
        look(np.array([0, 2, 5, 1]))
        out["index_out_of_range"] = (False, "no error")
    except IndexError as exc:
        text = str(exc) + " ".join(getattr(exc, "__notes__", []))
        out["index_out_of_range"] = ("example 2" in text, text)
    out["index_in_range"] = (np.array_equal(look(np.array([0, 2, -1, 1])),
                                            [2.0, 6.0, 6.0, 4.0]), "")
    return out


# ``python cuda_sim_cases.py --without-corpus``: every case, reduction and
# check but the corpus (``test_cuda.py`` runs the corpus, ``corpus``, in a
# second process beside it).
WITHOUT_CORPUS = "--without-corpus"


def main(names=None):
    if os.environ.get("NUMBA_ENABLE_CUDASIM") != "1":
        sys.exit("set NUMBA_ENABLE_CUDASIM=1 (before numba.cuda is imported)")
    if names == [WITHOUT_CORPUS]:
        without_corpus, names = True, None
    else:
        without_corpus = False
    for name, (fn, in_axes, args) in cases().items():
        if names and name not in names:
            continue
        try:
            print(json.dumps(compare(name, fn, in_axes, args)), flush=True)
        except Exception as exc:      # reported, and the test fails on it
            print(json.dumps({"case": name, "error": f"{type(exc).__name__}: {exc}"}),
                  flush=True)
    for name, (fn, args, reference) in reductions().items():
        if names and name not in names:
            continue
        try:
            print(json.dumps(compare_reduction(name, fn, args, reference)), flush=True)
        except Exception as exc:      # reported, and the test fails on it
            print(json.dumps({"case": name, "error": f"{type(exc).__name__}: {exc}"}),
                  flush=True)
    if not without_corpus and (not names or "corpus" in names or
                               any(n.startswith("corpus:") for n in names)):
        for row in corpus_rows([n[7:] for n in names or () if n.startswith("corpus:")]):
            print(json.dumps(row), flush=True)
    if not names:
        for name, (passed, detail) in checks().items():
            print(json.dumps({"check": name, "passed": bool(passed), "detail": detail}),
                  flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
