"""NumPy calls respelled for Numba (see ``registry``): options Numba's
NumPy lacks (``axis=``, ``keepdims=``) passed positionally to
``numba_runtime`` helpers, contractions, ``np.squeeze`` with its size-1
axes made explicit, and the vectorised ``vmath`` ufuncs."""
import ast

import numpy as np

from .. import contractions, unit_axes, vmath
from .registry import REWRITES, rewrites, runtime_helper
from .values import Const, Dyn, Expr, is_namedtuple


def _reduction(name):
    def rewrite(s, args, kwargs):
        kwargs = dict(kwargs)
        positional = ["a", "axis", "dtype", "out", "keepdims"]
        for k, v in zip(positional, args):
            kwargs[k] = v
        extra = set(kwargs) - {"a", "axis", "keepdims"}
        if extra and not all(isinstance(kwargs[k], Const) and kwargs[k].value is None
                             for k in extra):
            return NotImplemented
        axis = kwargs.get("axis", Const(None))
        keepdims = kwargs.get("keepdims", Const(False))
        if not isinstance(axis, Const) or not isinstance(keepdims, Const):
            return NotImplemented
        if axis.value is None and not keepdims.value:
            if name in ("all", "any"):
                return NotImplemented
            if name in ("var", "std"):       # in NumPy's dtype (Numba's is float64)
                return Expr(ast.Call(func=runtime_helper(s, f"{name}_all"),
                                     args=[s.render(kwargs["a"])], keywords=[]))
            return Expr(ast.Call(func=_numpy(s, name), args=[s.render(kwargs["a"])],
                                 keywords=[]))
        axes = axis.value
        axes = None if axes is None else ((int(axes),) if np.ndim(axes) == 0 else
                                          tuple(int(a) for a in axes))
        helper = f"{name}_axes" + ("_keepdims" if keepdims.value else "")
        return Expr(ast.Call(func=runtime_helper(s, helper),
                             args=[s.render(kwargs["a"]), s.render(Const(axes))], keywords=[]))
    return rewrite


def _numpy(s, name):
    return ast.Attribute(value=s.global_name(np, "np"), attr=name, ctx=ast.Load())


for _name in ("sum", "mean", "max", "min", "prod", "var", "std", "amax", "amin"):
    if hasattr(np, _name):
        REWRITES[getattr(np, _name)] = _reduction(
            {"amax": "max", "amin": "min"}.get(_name, _name))


def _by_helper(name):
    """Calls spelled as a ``numba_runtime`` helper of the same meaning."""
    def rewrite(s, args, kwargs):
        names = _SIGNATURES[name]
        bound = dict(zip(names, args))
        bound.update(kwargs)
        if set(bound) - set(names):
            return NotImplemented
        optional = _DEFAULTS.get(name, {})
        if optional and all(isinstance(bound.get(n, Const(None)), Const) and
                            bound.get(n, Const(None)).value is None for n in optional):
            return NotImplemented      # Numba's own NumPy has the plain form
        values = []
        for n in names:
            if n in bound:
                values.append(bound[n])
            elif n in _DEFAULTS.get(name, {}):
                values.append(Const(_DEFAULTS[name][n]))
            else:
                return NotImplemented
        rendered = []
        for v in values:
            if name == "array" and isinstance(v, (list, tuple)) and not is_namedtuple(v):
                rendered.append(ast.Tuple(elts=[s.render(s.materialize(c)) for c in v],
                                          ctx=ast.Load()))
            else:
                rendered.append(s.render(s.materialize(v)))
        return Expr(ast.Call(func=runtime_helper(s, name), args=rendered, keywords=[]))
    return rewrite


_SIGNATURES = {
    "transpose": ["a", "axes"],
    "squeeze": ["a", "axis"],
    "expand_dims": ["a", "axis"],
    "moveaxis": ["a", "source", "destination"],
    "broadcast_to": ["array", "shape"],
    "einsum2": ["subscripts", "a", "b"],
    "cumsum": ["a", "axis"],
    "flip": ["m", "axis"],
    "dot": ["a", "b"],
    "matmul": ["x1", "x2"],
    "reshape": ["a", "shape"],
    "clip": ["a", "a_min", "a_max"],
    "ndim": ["a"],
    "size": ["a"],
    "inner": ["a", "b"],
    "array": ["object"],
    "add_at": ["a", "indices", "b"],
    "minimum_at": ["a", "indices", "b"],
    "maximum_at": ["a", "indices", "b"],
    "multiply_at": ["a", "indices", "b"],
}


_DEFAULTS = {"transpose": {"axes": None}, "squeeze": {"axis": None},
             "cumsum": {"axis": None}, "flip": {"axis": None}}

for _name in ("transpose", "squeeze", "expand_dims", "moveaxis", "broadcast_to", "cumsum",
              "flip", "dot", "matmul", "reshape", "clip", "ndim", "size", "array", "inner"):
    REWRITES[getattr(np, _name)] = _by_helper(_name)
REWRITES[np.add.at] = _by_helper("add_at")
for _name in ("minimum", "maximum", "multiply"):
    REWRITES[getattr(np, _name).at] = _by_helper(f"{_name}_at")


def _contraction_helper(s, name):
    return s.global_name(getattr(contractions, name), name)


@rewrites(np.einsum)
def _einsum(s, args, kwargs):
    """``np.einsum('ij,jk->ik', a, b)`` with a constant subscripts string
    (and no options): the loop-nest helper of the same meaning."""
    if kwargs or not args or not isinstance(args[0], Const) or \
            not isinstance(args[0].value, str):
        return NotImplemented
    operands = [s.render(s.materialize(a)) for a in args[1:]]
    return Expr(ast.Call(func=_contraction_helper(s, "einsum"),
                         args=[ast.Constant(args[0].value)] + operands, keywords=[]))


@rewrites(np.tensordot)
def _tensordot(s, args, kwargs):
    """``np.tensordot(a, b, axes=n)`` with a constant integer ``n``."""
    bound = dict(zip(["a", "b", "axes"], args))
    bound.update(kwargs)
    axes = bound.get("axes", Const(2))
    if set(bound) - {"a", "b", "axes"} or "a" not in bound or "b" not in bound or \
            not isinstance(axes, Const) or not isinstance(axes.value, (int, np.integer)):
        return NotImplemented
    return Expr(ast.Call(func=_contraction_helper(s, "tensordot"),
                         args=[s.render(s.materialize(bound["a"])),
                               s.render(s.materialize(bound["b"])),
                               ast.Constant(int(axes.value))], keywords=[]))


def _filled_like(fill):
    def rewrite(s, args, kwargs):
        """``np.zeros_like(x)`` / ``np.ones_like(x)`` / ``np.full_like(x, v)``
        without options: ``numba_runtime.full_like``, a number for a number."""
        names = ["a"] if fill is not None else ["a", "fill_value"]
        bound = dict(zip(names, args))
        bound.update(kwargs)
        if set(bound) != set(names) or len(args) > len(names):
            return NotImplemented
        value = Const(fill) if fill is not None else bound["fill_value"]
        return Expr(ast.Call(func=runtime_helper(s, "full_like"),
                             args=[s.render(s.materialize(bound["a"])),
                                   s.render(s.materialize(value))], keywords=[]))
    return rewrite


rewrites(np.zeros_like)(_filled_like(0))
rewrites(np.ones_like)(_filled_like(1))
rewrites(np.full_like)(_filled_like(None))


@rewrites(np.tile)
def _tile(s, args, kwargs):
    bound = dict(zip(["A", "reps"], args))
    bound.update(kwargs)
    if set(bound) != {"A", "reps"}:
        return NotImplemented
    return Expr(ast.Call(func=runtime_helper(s, "tile"),
                         args=[s.render(s.materialize(bound["A"])),
                               s.render(s.materialize(bound["reps"]))], keywords=[]))


@rewrites(np.diagonal)
def _diagonal(s, args, kwargs):
    names = ["a", "offset", "axis1", "axis2"]
    bound = dict(zip(names, args))
    bound.update(kwargs)
    if set(bound) - set(names) or "a" not in bound:
        return NotImplemented
    defaults = {"offset": 0, "axis1": 0, "axis2": 1}
    rendered = [s.render(s.materialize(bound["a"]))] + [
        s.render(s.materialize(bound.get(n, Const(defaults[n])))) for n in names[1:]]
    return Expr(ast.Call(func=runtime_helper(s, "diagonal"), args=rendered, keywords=[]))


_squeeze_by_helper = REWRITES[np.squeeze]


@rewrites(np.squeeze)
def _squeeze(s, args, kwargs):
    """``np.squeeze(a)`` without ``axis``: the axes known to have size 1
    (``unit_axes``) made explicit, ``squeeze(a, (0, 2))``."""
    bound = dict(zip(["a", "axis"], args))
    bound.update(kwargs)
    axis = bound.get("axis", Const(None))
    if s.units is None or set(bound) - {"a", "axis"} or "a" not in bound or \
            not (isinstance(axis, Const) and axis.value is None):
        return _squeeze_by_helper(s, args, kwargs)
    a = s.materialize(bound["a"], "a")
    if not isinstance(a, Dyn):
        return _squeeze_by_helper(s, args, kwargs)
    used = set()
    fact = unit_axes.infer(s, ast.Name(a.name, ast.Load()), used)
    if fact is None or None in fact:
        s.fail("np.squeeze without axis of an array whose size-1 axes are not known "
               "here (they are followed from the arguments through arithmetic, ufuncs, "
               "expand_dims and squeeze): the result's rank is not known",
               "pass axis= to np.squeeze")
    for name in used:
        s.units_used.setdefault(name, s.where())
    axes = tuple(d for d, unit in enumerate(fact) if unit)
    if not axes:
        return a
    return Expr(ast.Call(func=runtime_helper(s, "squeeze"),
                         args=[s.render(a), s.render(Const(axes))], keywords=[]))


@rewrites(np.repeat)
def _repeat(s, args, kwargs):
    """``np.repeat`` along an axis (Numba's own takes none)."""
    bound = dict(zip(["a", "repeats", "axis"], args))
    bound.update(kwargs)
    axis = bound.get("axis", Const(None))
    if set(bound) - {"a", "repeats", "axis"} or "a" not in bound or \
            "repeats" not in bound or (isinstance(axis, Const) and axis.value is None):
        return NotImplemented
    return Expr(ast.Call(func=runtime_helper(s, "repeat"),
                         args=[s.render(s.materialize(bound[n]))
                               for n in ("a", "repeats", "axis")], keywords=[]))


def _vectorisable(name):
    """``np.tanh(x)`` ... spelled ``vmath.tanh(x)``: the same function as a
    Numba ufunc whose loop LLVM vectorises (Numba's own ``np.tanh`` calls
    scalar libm per element).  Calls with ``out=``/``dtype=`` keep NumPy's."""
    def rewrite(s, args, kwargs):
        if len(args) != 1 or kwargs:
            return NotImplemented
        func = ast.Attribute(value=s.global_name(vmath, "vmath"), attr=name, ctx=ast.Load())
        return Expr(ast.Call(func=func, args=[s.render(s.materialize(args[0]))], keywords=[]))
    return rewrite


def _register_vectorisable():
    for numpy_fn, kernel in vmath.KERNELS.items():
        REWRITES[numpy_fn] = _vectorisable(kernel.__name__)


_register_vectorisable()
