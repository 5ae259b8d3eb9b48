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

from . import api
from .errors import TransformError

_TRANSFORMS = ("grad", "value_and_grad", "vjp", "jvp", "hessian", "grad2", "grad3")
_LATER = ("vmap",)


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
    for name in _TRANSFORMS + _LATER + ("jit",):
        p = sub.add_parser(name, help=f"source of {name}(FUNC)" if name != "jit" else
                           "the numba stage: the source jit hands to Numba")
        p.add_argument("target", metavar="FILE:FUNC")
        p.add_argument("--argnums", type=_argnums, default=0)
        p.add_argument("--has-aux", action="store_true")
        p.add_argument("--in-axes", default="0")
        p.add_argument("--transform", default=None,
                       help="jit: compile this transform of FUNC (grad, value_and_grad, jvp, "
                       "hessian, grad2, grad3)")
        if name == "jit":
            p.add_argument("--example-args", default=None, metavar="EXPR",
                           help="a Python tuple of example arguments (NumPy as np) to "
                           "specialise for, e.g. '(np.ones(3), {\"w\": 1.0})'; without it "
                           "every argument is one array or number")
            p.add_argument("--static-argnums", type=_argnums, default=())
    show = sub.add_parser("show", help="any pipeline stage of FUNC itself")
    show.add_argument("target", metavar="FILE:FUNC")
    show.add_argument("--stage", choices=api.STAGES, default="python")
    return parser


def run(args):
    fn = load_target(args.target)
    if args.command == "show":
        return api.source(fn, stage=args.stage)
    if args.command == "jit":
        return jit_source(fn, args)
    if args.command in _LATER:
        raise CLIError(f"{args.command} is not implemented yet in tangent_x "
                       f"{__import__('tangent_x').__version__}")
    return api.source(transformed_for(fn, args.command, args.argnums, args.has_aux))


def jit_source(fn, args):
    """The numba stage of ``jit(FUNC)`` or ``jit(TRANSFORM(FUNC))``."""
    from .numba_stage import Jitted
    target = fn
    if args.transform:
        if args.transform not in _TRANSFORMS or args.transform == "vjp":
            raise CLIError(f"--transform {args.transform}: choose one of "
                           f"{', '.join(t for t in _TRANSFORMS if t != 'vjp')}")
        target = transformed_for(fn, args.transform, args.argnums, args.has_aux)
    static = args.static_argnums
    static = static if isinstance(static, tuple) else (static,)
    jitted = Jitted(target, static_argnums=static)
    if args.example_args is None:
        return jitted.numba_source()
    import numpy as np
    try:
        example = eval(args.example_args, {"np": np, "numpy": np})
    except Exception as exc:
        raise CLIError(f"--example-args: {type(exc).__name__}: {exc}") from exc
    if not isinstance(example, tuple):
        example = (example,)
    return jitted.numba_source(*example)


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
        return api._cached(fn, "vjp_split", every, finish, has_aux)
    if command == "jvp":
        return api._cached(fn, "jvp", every, finish)
    if command == "hessian":
        return api._cached(api.grad(fn, argnums=argnums), "jvp", _as_tuple(argnums), finish)
    if command in ("grad2", "grad3"):
        d = fn
        for _ in range(int(command[-1])):
            d = api.grad(d, argnums=argnums)
        return d
    raise CLIError(f"unknown transform {command!r}")


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
