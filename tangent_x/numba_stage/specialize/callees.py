"""Calls of user functions that the python stage keeps as calls, compiled
as Numba functions of their own.

Nearly every user function is inlined by the canonical stage.  What is
left as a call are the primal functions and rules of ``custom_jvp`` /
``custom_vjp`` (``f_fwd(x, y)``, ``f_bwd(res, g)``, ``log1pexp(x)``, the
jvp rule) and the transposed tangent map of a custom_jvp
(``runtime.custom_jvp_cotangents``): eager code calls them as Python
functions, which Numba cannot.  Here each such call is specialised like
a ``jit`` of the callee on the caller's abstract arguments (its python
stage, its numba stage, loaded and compiled by ``compile_callee``, a
function the caller of the specialiser gives), and the compiled code
calls the callee's dispatcher with the arguments' leaves; the callee's
flat results are put back into the structure its plan describes.
"""
import ast
import inspect
import types

import numpy as np

from ...core.custom import _Custom
from ...core.naming import sanitize
from .values import Const, Dyn, Expr, Steps, Tape, Zero, children, is_container, rebuild

# Modules whose functions are never compiled as callees: NumPy's and
# tangent_x's own (Numba knows them or numba_runtime overloads them).
_LIBRARY_PREFIXES = ("numpy", "numba", "scipy", "math", "tangent_x.", "tangent_x_")


def callee_of(fn):
    """The function to compile for a call of ``fn``, or None: a custom
    function's primal, or a plain user function (a rule)."""
    if isinstance(fn, _Custom):
        return fn.fun
    if isinstance(fn, types.FunctionType):
        module = fn.__module__ or ""
        if module == "tangent_x" or module.startswith(_LIBRARY_PREFIXES):
            return None
        return fn
    return None


class Callees:
    """Mixin of ``Specializer``: calls of compiled callees."""

    # (function or transform, abstract args, ranks) -> its Compiled; the
    # caller of the specialiser sets it (render.numba_stage)
    compile_callee = None

    def compiled_call(self, fn, args, kwargs, label=None):
        """The abstract result of ``fn(*args, **kwargs)``, run as the
        compiled callee specialised on these arguments."""
        if self.compile_callee is None:
            return NotImplemented
        # an identifier: a lambda's ``<lambda>`` names its dispatcher too
        label = sanitize(label or getattr(fn, "__name__", "callee"))
        # (a transform's generated function, for a transformed callee)
        signature = inspect.signature(getattr(fn, "function", fn))
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as exc:
            self.fail(f"{label}(): {exc}")
        bound.apply_defaults()
        params = signature.parameters
        leaves, ranks, avs = [], {}, []
        taken = set()
        for name, param in params.items():
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                self.fail(f"{label}() takes *args or **kwargs, which compiled code cannot "
                          "pass on", "give it named parameters")
            value = bound.arguments[name]
            if not isinstance(value, (Const, Dyn, Expr, Zero, Tape, Steps)) and \
                    not is_container(value):
                value = Const(value)          # a default
            avs.append(self._callee_av(value, name, leaves, ranks, taken, label))
        compiled = self.compile_callee(fn, avs, ranks)
        plan = compiled.plan
        hidden = [ast.Name(self.hidden_arg(value, hint), ast.Load())
                  for hint, value in plan.hidden]
        n_out = sum(isinstance(leaf, Dyn) for leaf in _leaves(plan.out))
        if n_out == 0:      # every result known now: nothing to run
            return _rebuilt(plan.out, {})
        callee = self.global_name(compiled.dispatcher, _dispatcher_name(label, compiled))
        call = ast.Call(func=callee, args=leaves + hidden, keywords=[])
        result = self.fresh(f"{label}_result" if n_out > 1 else label)
        self.assign(result, call)
        if plan.bare:
            return _rebuilt(plan.out, {0: Dyn(result)})
        items = {i: self.materialize(Expr(ast.Subscript(
            value=ast.Name(result, ast.Load()), slice=ast.Constant(i), ctx=ast.Load())),
            f"{label}_{i}") for i in range(n_out)}
        return _rebuilt(plan.out, items)

    def _callee_av(self, av, hint, leaves, ranks, taken, label):
        """The callee's abstract argument for the caller's ``av``: run-time
        leaves become its parameters (their expressions appended to
        ``leaves``), values known now stay known (the callee folds them)."""
        if isinstance(av, (Tape, Steps)):
            self.fail(f"a list built in a loop cannot be passed to {label}() in "
                      "compiled code")
        if is_container(av):
            keys = list(av.keys()) if isinstance(av, dict) else range(len(av))
            return rebuild(av, [self._callee_av(c, f"{hint}_{k}", leaves, ranks, taken, label)
                                for k, c in zip(keys, children(av))])
        if isinstance(av, Const) and isinstance(av.value, (list, tuple, dict)) and \
                not isinstance(av.value, np.ndarray):
            return av
        if isinstance(av, Const) and not isinstance(av.value, np.ndarray):
            return av
        if isinstance(av, Zero):
            av = self.materialize(Expr(self.render(av)), "zeros")
        elif isinstance(av, Expr):
            av = self.materialize(av, hint)
        name = _fresh(hint, taken)
        if isinstance(av, Const):            # an array known now: passed, not frozen in
            ranks[name] = av.value.ndim
            leaves.append(ast.Name(self.hidden_arg(av.value, hint), ast.Load()))
        else:
            if av.name in self.ranks:
                ranks[name] = self.ranks[av.name]
            leaves.append(ast.Name(av.name, ast.Load()))
        return Dyn(name)


def _fresh(hint, taken):
    name, i = str(hint), 1
    while name in taken:
        name, i = f"{hint}_{i}", i + 1
    taken.add(name)
    return name


def _dispatcher_name(label, compiled):
    """The compiled callee's name in the caller's module: with the hash of
    its text (its file's name), so the caller's text, and so Numba's
    on-disk cache of it, changes whenever the callee's code does."""
    digest = compiled.path.rsplit("_", 1)[-1].split(".")[0][:8]
    return f"{label}_{digest}"


def _leaves(av):
    if is_container(av):
        return [leaf for c in children(av) for leaf in _leaves(c)]
    return [av]


def _rebuilt(out, items):
    """The callee's result structure with its compiled leaves (``Dyn('#i')``)
    replaced by ``items[i]``; a symbolic zero it returns is None (a zero
    cotangent, as eager code's)."""
    if is_container(out):
        return rebuild(out, [_rebuilt(c, items) for c in children(out)])
    if isinstance(out, Dyn):
        return items[int(out.name[1:])]
    if isinstance(out, Zero):
        return Const(None)
    return out
