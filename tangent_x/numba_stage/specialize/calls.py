"""Calls evaluated on abstract values: namedtuples built now, the calls the
specialiser evaluates itself (``registry``), calls of known arguments
folded, NumPy calls respelled for Numba, the rest re-emitted."""
import ast

import random

import numpy as np

from .callees import callee_of
from .values import Const, Expr, Tape, as_av, describe, is_container

# Calls evaluated now when every argument is known (none touches memory
# the compiled code could later write into: results must not be arrays).
_FOLD_BUILTINS = {len, int, float, bool, abs, min, max, isinstance, tuple, list, dict, range,
                  slice, sum, str, round, divmod, pow, getattr, hasattr, type, zip, enumerate,
                  reversed, sorted, any, all}


def registries():
    """``HANDLERS`` and ``REWRITES`` (see ``registry``), filled."""
    # local import: the modules filling them (and the registry itself) load
    # Numba kernels, at the first specialisation rather than with tangent_x
    from . import container_calls, custom_calls, numpy_calls, scan_calls, tree_calls  # noqa: F401
    from .registry import HANDLERS, REWRITES  # local import: (as above)
    return HANDLERS, REWRITES


class Calls:
    """Mixin of ``Specializer``: calls."""

    def eval_Call(self, node):
        if isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) and \
                node.func.attr in ("append", "pop") and \
                isinstance(self.env.get(node.func.value.id), (list, Tape)):
            return self.list_method(node.func.value.id, node.func.attr, node.args)
        func = self.eval(node.func)
        args = []
        for a in node.args:
            if isinstance(a, ast.Starred):
                value = self.eval(a.value)
                if isinstance(value, Const):
                    value = as_av(value.value)
                if not isinstance(value, (tuple, list)):
                    self.fail("*args of a run-time value cannot be compiled")
                args += list(value)
            else:
                args.append(self.eval(a))
        kwargs = {}
        for k in node.keywords:
            if k.arg is None:
                self.fail("**kwargs cannot be compiled")
            kwargs[k.arg] = self.eval(k.value)
        return self.call(func, args, kwargs, node)

    def call(self, func, args, kwargs, node):
        if not isinstance(func, Const):
            if is_container(func):
                self.fail(f"{describe(func)} is not callable")
            return Expr(ast.Call(func=self.render(func), args=[self.render(a) for a in args],
                                 keywords=[ast.keyword(arg=k, value=self.render(v))
                                           for k, v in kwargs.items()]))
        fn = func.value
        if isinstance(fn, type) and issubclass(fn, tuple) and hasattr(fn, "_fields"):
            items = [self.materialize(a) for a in args]
            fields = list(fn._fields)
            values = dict(zip(fields, items))
            values.update({k: self.materialize(v) for k, v in kwargs.items()})
            defaults = getattr(fn, "_field_defaults", {})
            return fn(*[values[f] if f in values else as_av(defaults[f]) for f in fields])
        if _draws(fn):
            self.fail(f"{getattr(fn, '__name__', 'this')}() draws from NumPy's or Python's "
                      "random state, which compiled code does not share (folded, it would "
                      "give the same numbers at every call)",
                      "draw outside jit and pass the values in, or use tangent_x.random "
                      "with a key (tx.random.normal(key, shape)), or run without jit "
                      "(with tx.disable_jit(): ...)")
        handlers, rewrites = registries()
        handler = handlers.get(_key(fn))
        if handler is not None:
            result = handler(self, args, kwargs)
            if result is not NotImplemented:
                return result
        values = list(args) + list(kwargs.values())
        if all(isinstance(v, Const) for v in values) and _foldable(fn):
            return self.fold(lambda *a: fn(*a[:len(args)], **dict(zip(kwargs, a[len(args):]))),
                             values)
        # (a compiled callee takes containers: their leaves are passed)
        callee = callee_of(fn)
        if callee is not None:
            result = self.compiled_call(callee, args, kwargs, getattr(fn, "__name__", None))
            if result is not NotImplemented:
                return result
        for v in values:
            if is_container(v) and isinstance(v, dict):
                self.fail(f"{getattr(fn, '__name__', fn)}() would receive the dict "
                          f"{describe(v)} in compiled code")
        rewrite = rewrites.get(_key(fn))
        if rewrite is not None:
            result = rewrite(self, args, kwargs)
            if result is not NotImplemented:
                return result
        numpy_call = (getattr(fn, "__module__", None) or "").startswith("numpy")
        return Expr(ast.Call(func=self.render(func, getattr(fn, "__name__", "f")),
                             args=[self.render(self.materialize(a), as_tuple=numpy_call)
                                   for a in args],
                             keywords=[ast.keyword(arg=k, value=self.render(v))
                                       for k, v in kwargs.items()]))

    def fold(self, fn, values):
        """``fn`` applied to known values now (an error stays a run-time
        error, raised where Python would raise it)."""
        try:
            result = fn(*[v.value for v in values])
        except Exception as exc:
            self.fail(f"{type(exc).__name__}: {exc}", "this fails for the static values given")
        if hasattr(result, "__next__"):      # zip, enumerate, reversed: iterate once
            result = list(result)
        return Const(result)


def _key(fn):
    try:
        hash(fn)
        return fn
    except TypeError:
        return id(fn)


def _draws(fn):
    """Whether ``fn`` draws random numbers from a global or generator state
    (``np.random.normal``, ``rng.normal``, ``random.random``)."""
    owner = getattr(fn, "__self__", None)
    if isinstance(owner, (np.random.RandomState, np.random.Generator, random.Random)):
        return True
    module = getattr(fn, "__module__", None) or ""
    return module == "random" or module.startswith("numpy.random")


def _foldable(fn):
    if fn in _FOLD_BUILTINS:
        return True
    module = getattr(fn, "__module__", None) or ""
    if isinstance(fn, np.ufunc) or module.startswith("numpy"):
        return True
    if module.startswith("math"):
        return True
    return False
