"""Write the codegen/ gallery: the source tangent_x emits for every example.

    python tools/regen_codegen.py          # rewrite codegen/
    python tools/regen_codegen.py --check  # exit 1 if codegen/ is stale

Run from the repository root.  The gallery is where readability is
reviewed: when emitted code changes, ``git diff codegen/`` shows how.
tests/test_gallery.py fails when the checked-in files differ from what the
library emits now.
"""
import argparse
import importlib.util
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GALLERY = os.path.join(ROOT, "codegen")

# (example file, function, transform, options). Every example function that
# a transform applies to is listed; "python" is the function's own lowered
# (canonical, cleaned) source.
MLP_EXAMPLE = ("[{'W': np.ones((16, 4)), 'b': np.ones(16)}, "
               "{'W': np.ones((1, 16)), 'b': np.ones(1)}], np.ones((128, 4))")
# per-example losses: each example a (1, 4) batch of one
MLP_EXAMPLE_XY = ("[{'W': np.ones((16, 4)), 'b': np.ones(16)}, "
                  "{'W': np.ones((1, 16)), 'b': np.ones(1)}], np.ones((128, 1, 4)), "
                  "np.ones((128, 1, 1))")

ENTRIES = [
    ("basics.py", "tanh", "python", {}),
    ("basics.py", "tanh", "grad", {}),
    ("basics.py", "tanh", "grad2", {}),
    ("basics.py", "tanh", "grad3", {}),
    ("basics.py", "tanh", "jvp", {}),
    ("basics.py", "tanh", "vjp", {}),
    ("basics.py", "cubic", "grad3", {}),
    ("basics.py", "product", "grad", {"argnums": (0, 1)}),
    ("basics.py", "cubic", "grad", {}),
    ("basics.py", "polynomial", "grad", {}),
    ("basics.py", "softplus_loss", "grad", {"argnums": (0, 1)}),
    ("basics.py", "with_stop_gradient", "grad", {}),
    ("mlp.py", "predict", "python", {}),
    ("mlp.py", "loss", "python", {}),
    ("mlp.py", "loss", "grad", {}),
    ("mlp.py", "loss", "value_and_grad", {}),
    ("mlp.py", "loss_and_predictions", "grad", {"has_aux": True}),
    ("mlp.py", "loss", "vjp", {}),
    ("linear_regression.py", "loss", "grad", {}),
    ("control_flow.py", "newton_sqrt", "python", {}),
    ("control_flow.py", "newton_sqrt", "grad", {}),
    ("control_flow.py", "newton_sqrt", "jvp", {}),
    ("control_flow.py", "newton_sqrt", "hessian", {}),
    ("control_flow.py", "recurrence", "grad", {}),
    ("control_flow.py", "rnn", "grad", {"argnums": (0, 1)}),
    ("control_flow.py", "piecewise", "grad", {}),
    ("control_flow.py", "first_above", "python", {}),
    ("control_flow.py", "first_above", "grad", {}),
    ("control_flow.py", "logsumexp_loop", "grad", {}),
    ("control_flow.py", "squares_of_positives", "grad", {}),
    ("batching.py", "layer", "vmap", {"example_args": "np.ones((128, 3))"}),
    ("batching.py", "tanh", "vmap_grad", {}),
    ("batching.py", "steps_to_exceed", "vmap", {"in_axes": "0,None",
                                                "example_args": "np.ones(4), 100.0"}),
    ("mlp.py", "predict", "vmap", {"in_axes": "None,0", "example_args": MLP_EXAMPLE}),
    ("mlp.py", "loss", "vmap_grad", {"in_axes": "None,0,0", "example_args": MLP_EXAMPLE_XY}),
    # the numba stage (what jit hands to Numba), for example arguments
    ("mlp.py", "loss", "jit.grad", {"example_args": (
        "([{'W': np.ones((16, 4)), 'b': np.ones(16)}, {'W': np.ones((1, 16)), "
        "'b': np.ones(1)}], np.ones((8, 4)), np.ones((8, 1)))")}),
    ("control_flow.py", "newton_sqrt", "jit.grad", {"example_args": "(2.0,)"}),
    ("control_flow.py", "rnn", "jit.grad", {"argnums": (0, 1), "example_args": (
        "(np.ones((4, 4)), np.ones((4, 3)), np.ones((6, 3)))")}),
    # pmap: the per-shard code with its collectives (one pmean per parameter)
    ("pmap_psum.py", "normalize", "pmap", {}),
    ("pmap_sgd.py", "step", "pmap", {"axis_name": "batch"}),
]


def _load(example):
    path = os.path.join(ROOT, "examples", example)
    name = "gallery_" + example[:-3]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def render(example, function, transform, options):
    import tangent_x as tx
    from tangent_x.cli import transformed_for
    fn = getattr(_load(example), function)
    if transform == "python":
        return tx.source(fn)
    if transform.startswith("vmap"):
        from tangent_x.cli import vmap_source
        inner = transform.partition("_")[2] or None
        return vmap_source(fn, options.get("in_axes", "0"), options.get("example_args"),
                           options.get("method", "vectorize"), inner)
    if transform == "pmap":
        return tx.source(tx.pmap(fn, axis_name=options.get("axis_name", "i")))
    if transform.startswith("jit."):
        import numpy as np
        options = dict(options)
        example_args = eval(options.pop("example_args"), {"np": np})
        inner = transformed_for(fn, transform[4:], **options)
        return tx.jit(inner).numba_source(*example_args)
    return tx.source(transformed_for(fn, transform, **options))


def path_of(example, function, transform):
    return os.path.join(GALLERY, example[:-3], f"{function}.{transform}.py")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report stale files")
    args = parser.parse_args(argv)
    os.chdir(ROOT)
    stale = []
    for entry in ENTRIES:
        text = render(*entry)
        path = path_of(*entry[:3])
        old = open(path).read() if os.path.exists(path) else None
        if old != text:
            stale.append(os.path.relpath(path, ROOT))
            if not args.check:
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "w") as f:
                    f.write(text)
    for path in stale:
        print(("stale: " if args.check else "wrote: ") + path)
    return 1 if (args.check and stale) else 0


if __name__ == "__main__":
    sys.exit(main())
