"""``tangent-x``: print the source tangent_x generates for a function.

    tangent-x grad examples/basics.py:tanh
    tangent-x grad model.py:loss --argnums 0,1 --has-aux
    tangent-x show examples/basics.py:tanh --stage canonical
    tangent-x jit examples/mlp.py:loss --transform grad

Highlighted on a terminal, plain when piped.  Anything that cannot be
transformed exits with status 2 and one line naming FILE:LINE.
"""
import argparse
import importlib.util
import os
import sys

from .api import derivatives as api, jacobians, jit as api_jit, pmap as api_pmap, \
    vmap as vmapping
from .api.transformed import cached
from .errors import TransformError

_TRANSFORMS = ("grad", "value_and_grad", "vjp", "jvp", "hessian", "grad2", "grad3", "vmap")


class CLIError(Exception):
    pass


def load_target(target):
    """'path/to/file.py:func' -> the function object."""
    path, sep, name = target.rpartition(":")
    if not sep or not path or not name:
        raise CLIError(f"{target}: expected FILE:FUNCTION, e.g. examples/basics.py:tanh")
    if not os.path.isfile(path):
        raise CLIError(f"{path}: no such file")
    directory = os.path.dirname(os.path.abspath(path))
    sys.path.insert(0, directory)
    modname = "tangent_x_cli_" + os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(modname, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[modname] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        raise CLIError(f"{path}: importing it failed: {type(exc).__name__}: {exc}") from exc
    obj = module
    for part in name.split("."):
        if not hasattr(obj, part):
            raise CLIError(f"{path}: no function named {name!r}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise CLIError(f"{path}:{name} is not a function")
    return obj


def _argnums(text):
    try:
        nums = tuple(int(t) for t in text.split(",") if t.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"--argnums wants integers like 0,1, got {text!r}")
    return nums[0] if len(nums) == 1 else nums


def highlight(text, stream):
    if not stream.isatty() or os.environ.get("NO_COLOR"):
        return text
    try:
        from pygments import highlight as pyg
        from pygments.formatters import TerminalFormatter
        from pygments.lexers import PythonLexer
    except ImportError:   # pragma: no cover - pygments is a dependency
        return text
    return pyg(text, PythonLexer(), TerminalFormatter())


def build_parser():
    parser = argparse.ArgumentParser(
        prog="tangent-x", description="Print the source tangent_x generates for FILE:FUNC.")
    sub = parser.add_subparsers(dest="command", required=True)
    helps = {"jit": "the numba stage: the source jit hands to Numba",
             "pmap": "the per-shard source of pmap(FUNC), with its collectives"}
    for name in _TRANSFORMS + ("jit", "pmap"):
        p = sub.add_parser(name, help=helps.get(name, f"source of {name}(FUNC)"))
        p.add_argument("target", metavar="FILE:FUNC")
        p.add_argument("--argnums", type=_argnums, default=0)
        p.add_argument("--has-aux", action="store_true")
        p.add_argument("--in-axes", default="0",
                       help="vmap: one axis per argument, e.g. 0,None")
        p.add_argument("--example-args", default=None, metavar="EXPR",
                       help="example arguments to specialise for: a Python expression "
                            "(NumPy as np), e.g. '(np.ones((128, 3)), {\"w\": 1.0})'; vmap "
                            "specialises on their ranks (default: 0.5 per example), jit "
                            "on their structure and dtypes (default: one array or number each)")
        p.add_argument("--method", choices=("vectorize", "loop"), default="vectorize",
                       help="vmap: batching rules, or one call per example")
        p.add_argument("--transform", default=None,
                       help="jit, vmap and pmap: apply to this transform of FUNC (grad, "
                            "value_and_grad, jvp, hessian, grad2, grad3)")
        if name == "jit":
            p.add_argument("--static-argnums", type=_argnums, default=())
            p.add_argument("--target", dest="backend", choices=("cpu", "cuda"), default="cpu",
                           help="cuda: the kernel of jit(vmap(FUNC), target='cuda'), one "
                                "GPU thread per example (needs tangent_x[cuda])")
        if name == "pmap":
            p.add_argument("--axis-name", default="i",
                           help="the mapped axis' name, for the collectives (default: i)")
    show = sub.add_parser("show", help="any pipeline stage of FUNC itself")
    show.add_argument("target", metavar="FILE:FUNC")
    show.add_argument("--stage", choices=api.STAGES, default="python")
    return parser


def run(args):
    fn = load_target(args.target)
    if args.command == "show":
        return api.source(fn, stage=args.stage)
    if args.command == "vmap":
        return vmap_source(fn, args.in_axes, args.example_args, args.method, args.transform)
    if args.command == "jit":
        return jit_source(fn, args)
    if args.command == "pmap":
        target = transformed_for(fn, args.transform, args.argnums, args.has_aux) \
            if args.transform else fn
        return api.source(api_pmap.pmap(target, axis_name=args.axis_name))
    return api.source(transformed_for(fn, args.command, args.argnums, args.has_aux))


def cuda_source(target, args):
    """The kernel of ``jit(vmap(TARGET, in_axes), target="cuda")``: for the
    example arguments (a batch), else for 8 examples of 0.5 each."""
    import inspect

    import numpy as np
    in_axes = _in_axes(args.in_axes)
    vmapped = vmapping.vmap(target, in_axes=in_axes)
    if args.example_args is None:
        n = len([p for p in inspect.signature(target).parameters.values()
                 if p.default is p.empty])
        axes = in_axes if isinstance(in_axes, tuple) else (in_axes,) * n
        example = tuple(0.5 if ax is None else np.full(8, 0.5) for ax in axes)
    else:
        example = _example_args(args.example_args)
    try:
        return api_jit.jit(vmapped, target="cuda").cuda_source(*example)
    except ImportError as exc:
        raise CLIError(str(exc)) from None


def jit_source(fn, args):
    """The numba stage of ``jit(FUNC)`` or ``jit(TRANSFORM(FUNC))``."""
    target = fn
    if args.transform:
        if args.transform not in _TRANSFORMS or args.transform in ("vjp", "vmap"):
            raise CLIError(f"--transform {args.transform}: choose one of "
                           f"{', '.join(t for t in _TRANSFORMS if t not in ('vjp', 'vmap'))}")
        target = transformed_for(fn, args.transform, args.argnums, args.has_aux)
    static = args.static_argnums
    static = static if isinstance(static, tuple) else (static,)
    if args.backend == "cuda":
        return cuda_source(target, args)
    jitted = api_jit.jitted(target, static_argnums=static)
    if args.example_args is None:
        return jitted.numba_source()
    if args.transform == "hessian" and not static:
        # with example arguments, what jit(hessian(f)) really compiles: the
        # jvp of the gradient batched over every one-hot tangent
        jitted = api_jit.jit(jacobians.hessian(fn, argnums=args.argnums))
    return jitted.numba_source(*_example_args(args.example_args))


def _example_args(text):
    """``--example-args``: a Python expression (``np`` in scope) for the
    arguments, a tuple of them or one argument."""
    import numpy as np
    try:
        example = eval(text, {"np": np, "numpy": np})
    except Exception as exc:
        raise CLIError(f"--example-args: {type(exc).__name__}: {exc}") from exc
    return example if isinstance(example, tuple) else (example,)


def transformed_for(fn, command, argnums=0, has_aux=False):
    """The transformed callable whose source a command prints.

    jvp and vjp differentiate every positional argument (as JAX's do);
    hessian prints forward-over-reverse (the jvp of the gradient);
    grad2/grad3 print the second and third derivatives (grad of grad)."""
    import inspect
    n = len([p for p in inspect.signature(fn).parameters.values()
             if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)])
    every = tuple(range(n))
    finish = lambda out, a: out  # noqa: E731
    if command == "grad":
        return api.grad(fn, argnums=argnums, has_aux=has_aux)
    if command == "value_and_grad":
        return api.value_and_grad(fn, argnums=argnums, has_aux=has_aux)
    if command == "vjp":
        return cached(fn, "vjp_split", every, finish, has_aux)
    if command == "jvp":
        return cached(fn, "jvp", every, finish)
    if command == "hessian":
        return cached(api.grad(fn, argnums=argnums), "jvp", _as_tuple(argnums), finish)
    if command in ("grad2", "grad3"):
        d = fn
        for _ in range(int(command[-1])):
            d = api.grad(d, argnums=argnums)
        return d
    raise CLIError(f"unknown transform {command!r}")


def _in_axes(text):
    parts = [t.strip() for t in text.split(",") if t.strip()]
    try:
        axes = tuple(None if t == "None" else int(t) for t in parts)
    except ValueError:
        raise CLIError(f"--in-axes wants integers or None like 0,None, got {text!r}")
    return axes[0] if len(axes) == 1 else axes


def vmap_source(fn, in_axes_text, example_text, method, transform=None):
    """The vectorised source of ``fn``, specialised (as vmap is at first call)
    for example arguments: ``--example-args``, else 0.5 in every example of
    a batch of 2 (the ranks then are those of scalars)."""
    import inspect

    import numpy as np
    target = transformed_for(fn, transform) if transform else fn
    in_axes = _in_axes(in_axes_text)
    if example_text:
        try:
            examples = eval(example_text, {"np": np})   # the user's own command line
        except Exception as exc:
            raise CLIError(f"--example-args: {type(exc).__name__}: {exc}") from exc
        examples = examples if isinstance(examples, tuple) else (examples,)
    else:
        n = len([p for p in inspect.signature(fn).parameters.values()
                 if p.default is p.empty])
        axes = in_axes if isinstance(in_axes, tuple) else (in_axes,) * n
        examples = tuple(0.5 if ax is None else np.full(2, 0.5) for ax in axes)
    vf = vmapping.vmap(target, in_axes=in_axes, method=method)
    try:
        return vf.specialize(*examples).text
    except (ValueError, TypeError) as exc:
        raise CLIError(f"vmap: {exc}") from exc


def _as_tuple(n):
    return n if isinstance(n, tuple) else (n,)


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        text = run(args)
    except (CLIError, TransformError) as exc:
        print(f"tangent-x: error: {exc}", file=sys.stderr)
        return 2
    sys.stdout.write(highlight(text, sys.stdout))
    return 0


if __name__ == "__main__":   # pragma: no cover
    sys.exit(main())
