"""A corpus of small functions for checking reverse mode against finite differences.

Each corpus module defines plain NumPy functions and registers them with the
``case`` decorator (or ``register`` for callables that are not ``def``s:
lambdas, bound methods).  A case lists *variants*: each variant is a tuple
of argument specs, one per parameter, and every variant is checked.  Specs
draw inputs from a ``np.random.default_rng`` seeded by the case name and
the variant number, so every run sees the same inputs:

    N(shape)  standard normal                     any argument
    P(shape)  uniform in [0.5, 2.0]               log, sqrt, reciprocal, ...
    U(shape)  uniform in [-0.8, 0.8]              arcsin, arccos, arctanh
    G(shape)  uniform in [1.2, 3.0]               arccosh
    C(value)  this value (deep-copied)            indices, flags, pytrees
    F(fn)     fn(rng)                             any structure (pytrees)

Shape ``()`` gives a Python float, shape ``0`` a 0-d float64 array, any
other shape a float64 array.

A case may give ``reference``: a plain-NumPy function with the same meaning,
used for finite differences and for the primal value when the corpus
function itself cannot run as plain NumPy (``x.at[i].set(v)``).  A case may
give ``expected``: a function of the arguments returning the gradient, used
instead of finite differences where those cannot see the intended
derivative (``stop_gradient``).
"""
import copy
import zlib

import numpy as np

CASES = []


class Spec:
    def __init__(self, kind, shape=(), value=None):
        self.kind, self.shape, self.value = kind, shape, value

    def make(self, rng):
        if self.kind == "C":
            return copy.deepcopy(self.value)
        if self.kind == "F":
            return self.value(rng)
        low_high = {"N": None, "P": (0.5, 2.0), "U": (-0.8, 0.8), "G": (1.2, 3.0)}
        bounds = low_high[self.kind]
        shape = () if self.shape == 0 else self.shape
        x = rng.standard_normal(shape) if bounds is None else \
            rng.uniform(bounds[0], bounds[1], shape)
        if self.shape == 0:
            return np.array(x, dtype=np.float64)
        return float(x) if self.shape == () else np.asarray(x, dtype=np.float64)

    def __repr__(self):
        if self.kind == "C":
            return f"C({self.value!r})"
        if self.kind == "F":
            return f"F({getattr(self.value, '__name__', 'fn')})"
        return f"{self.kind}{'(0-d)' if self.shape == 0 else self.shape}"


def N(shape=()):
    return Spec("N", shape)


def P(shape=()):
    return Spec("P", shape)


def U(shape=()):
    return Spec("U", shape)


def G(shape=()):
    return Spec("G", shape)


def C(value):
    return Spec("C", value=value)


def F(fn):
    return Spec("F", value=fn)


def each(spec, *shapes):
    """Variants for a one-argument function: ``spec`` at each shape."""
    return [(spec(s),) for s in shapes]


class Case:
    def __init__(self, fn, variants, name, argnums=0, has_aux=False, reference=None,
                 expected=None):
        self.fn, self.name = fn, name
        self.variants = [v if isinstance(v, tuple) else (v,) for v in variants]
        self.argnums, self.has_aux = argnums, has_aux
        self.reference = reference if reference is not None else fn
        self.expected = expected
        assert len(self.variants) >= 2, f"{name}: give at least two variants"

    def args(self, i):
        rng = np.random.default_rng(zlib.crc32(f"{self.name}/{i}".encode()))
        return tuple(spec.make(rng) for spec in self.variants[i])

    def describe(self, i):
        return f"{self.name} variant {i}: {self.variants[i]}"

    def __repr__(self):
        return self.name


def make_registry(cases):
    """``(register, case)`` adding to ``cases``: each corpus keeps its own list
    (so each suite counts its own cases) but registers the same way."""
    def register(fn, *variants, name=None, argnums=0, has_aux=False, reference=None,
                 expected=None):
        """Add ``fn`` to the corpus, checked at each variant (see module doc)."""
        name = name or fn.__name__
        assert name not in {c.name for c in cases}, f"duplicate case name {name}"
        cases.append(Case(fn, list(variants), name, argnums, has_aux, reference, expected))
        return fn

    def case(*variants, **options):
        """Decorator form of ``register``; returns the function unchanged."""
        def deco(fn):
            return register(fn, *variants, **options)
        return deco

    return register, case


register, case = make_registry(CASES)


_JITTED = {}


def _jitted_value_and_grad(case, args):
    """``tx.jit(tx.value_and_grad(f))`` for the case, strings among ``args``
    static (what a jit user must do: compiled code takes no strings).

    One per case, shared by its grad and primal tests: its gradient is
    ``grad``'s and its value the primal, and compiling is what a jit test
    costs (~1 s per variant), so the corpus under jit compiles each case
    once (test processes share compiled code through Numba's disk cache)."""
    import tangent_x as tx
    static = tuple(i for i, a in enumerate(args) if isinstance(a, str))
    key = (case.name, static)
    if key not in _JITTED:
        _JITTED[key] = tx.jit(tx.value_and_grad(case.fn, argnums=case.argnums,
                                                has_aux=case.has_aux), static_argnums=static)
    return _JITTED[key]


def check_grad(case, jit=False):
    """``tx.grad`` of every variant equals finite differences (or the case's
    ``expected``), with the argument's structure, leaving the arguments as
    they were.  ``jit``: the same, compiled (the gradient of the compiled
    ``value_and_grad``, see ``_jitted_value_and_grad``)."""
    import copy
    import tangent_x as tx
    from _fd import assert_tree_allclose, assert_tree_equal, numerical_grad
    reference = case.reference
    scalar = (lambda *a: reference(*a)[0]) if case.has_aux else reference
    for i in range(len(case.variants)):
        args = case.args(i)
        before = copy.deepcopy(args)
        if jit:
            grad = _jitted_value_and_grad(case, args)(*args)[1]
        else:
            out = tx.grad(case.fn, argnums=case.argnums, has_aux=case.has_aux)(*args)
            grad = out[0] if case.has_aux else out
        assert_tree_equal(args, before, f"{case.describe(i)}: grad mutated its arguments")
        expected = case.expected(*args) if case.expected else \
            numerical_grad(scalar, args, case.argnums)
        assert_tree_allclose(grad, expected, rtol=1e-5, atol=1e-6, err_msg=case.describe(i))


def check_primal(case, jit=False):
    """The value from ``tx.value_and_grad`` (and the aux) equals what the
    original function returns, for every variant (``jit``: compiled)."""
    import tangent_x as tx
    from _fd import assert_tree_allclose
    for i in range(len(case.variants)):
        args = case.args(i)
        transformed = _jitted_value_and_grad(case, args) if jit else \
            tx.value_and_grad(case.fn, argnums=case.argnums, has_aux=case.has_aux)
        value, _ = transformed(*args)
        expected = case.reference(*case.args(i))
        assert_tree_allclose(value, expected, rtol=1e-10, atol=1e-12,
                             err_msg=f"{case.describe(i)}: primal value")


def _float_tree(x):
    from tangent_x import tree_util
    leaves = tree_util.tree_leaves(x)
    return bool(leaves) and all(
        isinstance(leaf, (float, np.floating)) or
        (isinstance(leaf, np.ndarray) and np.issubdtype(leaf.dtype, np.floating))
        for leaf in leaves)


def second_order_checkable(case):
    """Whether ``check_second_order`` applies: not for cases whose derivative
    is not the derivative of their values (an ``expected`` gradient for
    stop_gradient, a separate ``reference`` for ``.at[]`` updates), nor for
    cases without a float argument."""
    return case.expected is None and case.reference is case.fn and \
        any(_float_tree(a) for a in case.args(0))


def check_second_order(case):
    """``check_grads(order=2, modes=("fwd", "rev"))`` (JAX's algorithm) on the
    first variant, differentiating every float argument (the others bound)."""
    import linecache
    from tangent_x.test_util import check_grads
    args = case.args(0)
    floats = [i for i, a in enumerate(args) if _float_tree(a)]
    fixed = {i: a for i, a in enumerate(args) if i not in floats}
    names = [f"a{i}" for i in floats]
    call = ", ".join(f"a{i}" if i in floats else f"fixed[{i}]" for i in range(len(args)))
    out = "fn(" + call + ")" + ("[0]" if case.has_aux else "")
    # real source, so that tangent_x can transform the wrapper
    source = f"def wrapped({', '.join(names)}):\n    return {out}\n"
    filename = f"<check_grads corpus {case.name}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"fn": case.fn, "fixed": fixed}
    exec(compile(source, filename, "exec"), namespace)
    check_grads(namespace["wrapped"], tuple(args[i] for i in floats), order=2,
                modes=("fwd", "rev"), atol=1e-4, rtol=1e-4)
# Corpus cases that jit cannot compile yet, with the reason (tx.jit raises a
# located JitError for each; these are strict xfails: fixing one fails the
# suite until it is removed from this list).  None at present.
JIT_KNOWN_FAILURES = {}


def jit_params(cases, known_failures=JIT_KNOWN_FAILURES, rest="slow"):
    """``(case, jit)`` parameters: every case eagerly, and cases under
    ``tx.jit``.  Compiling takes ~1 s per case and signature, so the default
    run compiles the first case of each corpus module (a representative of
    each theme); the other cases under jit are marked ``slow`` (``rest="slow"``:
    CI's slow step runs them) or left to ``TANGENT_X_JIT_CORPUS=all``
    (``rest="env"``; ``python tools/jit_corpus.py`` sets it and runs every
    case of both corpora under jit)."""
    import os
    import pytest
    every = os.environ.get("TANGENT_X_JIT_CORPUS") == "all"
    first = {}
    for c in cases:
        first.setdefault(c.fn.__module__ if hasattr(c.fn, "__module__") else "", c.name)
    params = []
    for c in cases:
        params.append(pytest.param(c, False, id=c.name))
        marks = []
        if not every and c.name not in first.values():
            if rest != "slow":
                continue
            marks.append(pytest.mark.slow)
        if c.name in known_failures:
            marks.append(pytest.mark.xfail(reason=known_failures[c.name], strict=True))
        params.append(pytest.param(c, True, id=f"{c.name}-jit", marks=marks))
    return params


def all_cases():
    """Import every corpus module (which registers its cases) and return them."""
    from . import (arith, elementwise, imports, helpers, methods,  # noqa: F401
                   pytrees, indexing, assign, reductions, edge, hazards)
    return list(CASES)
