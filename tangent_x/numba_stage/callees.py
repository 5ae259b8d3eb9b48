"""Compiling the functions that compiled code calls (``CalleeCompiler``).

A custom_jvp/custom_vjp function's primal and rules stay calls in the
python stage (see ``specialize.callees``).  Under jit each is compiled as
``jit`` compiles a function: its python stage (given by the api layer,
``python_stage``), specialised for the abstract arguments of the call
(``render.numba_stage``, with this compiler again for the calls inside
it), and loaded as a Numba dispatcher (``loading``).  One compilation per
function and argument signature, for the process.
"""
import ast

from .compile_errors import JitError
from .loading import load
from .render import numba_stage
from .specialize import Const, Dyn, children, is_container
from .unit_axes import needs_unit_axes

__all__ = ["CalleeCompiler"]

# (function, signature of its abstract arguments, weak) -> (generated, Compiled)
_COMPILED = {}


class CalleeCompiler:
    """``compile(fn, avs, ranks)``: the ``Compiled`` of ``fn`` (a function,
    or a transform with generated code) specialised for ``avs``
    (``ranks``: leaf name -> an array argument's rank)."""

    def __init__(self, python_stage, call_site=None, weak=False):
        self.python_stage = python_stage
        self.call_site = call_site
        self.weak = weak

    def __call__(self, fn, avs, ranks):
        stage = fn if hasattr(fn, "generated") else self.python_stage(fn)
        generated = stage.generated
        key = (_identity(fn), _signature(avs, ranks), self.weak)
        entry = _COMPILED.get(key)
        if entry is not None and entry[0] is generated:
            return entry[1]
        if needs_unit_axes(ast.parse(generated.text)):
            raise JitError(f"{getattr(fn, '__name__', fn)} squeezes size-1 axes without "
                           "naming them (np.squeeze(x)), which a function called from "
                           "compiled code cannot do", generated.canonical.origin,
                           "name the axes: np.squeeze(x, axis=...)")
        text, linemap, plan, name = numba_stage(generated, avs, self.call_site, ranks,
                                                None, self.weak, self)
        compiled = load(name, text, linemap, plan, generated.canonical.origin)
        compiled.name = name
        _COMPILED[key] = (generated, compiled)
        return compiled


def _identity(fn):
    try:
        hash(fn)
        return fn
    except TypeError:
        return id(fn)


def _signature(av, ranks):
    """A hashable summary of abstract arguments: structure, known values,
    and the ranks of run-time leaves."""
    if isinstance(av, dict):
        return (dict, tuple(av), tuple(_signature(c, ranks) for c in children(av)))
    if is_container(av):        # list, tuple, namedtuple
        return (type(av), tuple(_signature(c, ranks) for c in children(av)))
    if isinstance(av, Dyn):
        return ("dyn", ranks.get(av.name))
    if isinstance(av, Const):
        try:
            hash(av.value)
            return ("const", type(av.value), av.value)
        except TypeError:           # a list or dict of numbers
            return ("const", type(av.value), repr(av.value))
    return ("other", repr(av))
