"""Finite-difference checking of derivatives, as ``jax.test_util.check_grads``.

A derivative implementation is only trustworthy when it agrees with a
numerical derivative, so this module compares ``tangent_x.jvp`` and
``tangent_x.vjp`` against central differences, to any order:

* forward mode: ``jvp(f, primals, t)`` must match
  ``(f(p + eps*t) - f(p - eps*t)) / (2*eps)`` for a random direction ``t``;
* reverse mode (the "dot-product test"): for random ``v`` and cotangent
  ``ct``, ``<vjp_fun(ct), v>`` must match ``<ct, numerical_jvp(f, p, v)>``,
  which checks the whole transposed Jacobian with a single pullback;
* for ``order > 1`` the same checks are applied to the derivative functions
  themselves, exactly as JAX does: the forward derivative function is
  ``lambda primals, tangents: jvp(f, primals, tangents)`` checked at
  ``(args, args)``, and the reverse one is ``lambda *p: vjp(f, *p)[1](out)``
  whose cotangent is the primal output ``out = f(*p)`` itself (so the
  second-order pass also differentiates through the cotangent).

Defaults follow JAX: tolerances by dtype (float64: 1e-5, float32: 2e-3,
float16: 1e-2), multiplied by the number of elements of the compared array,
with random directions from ``np.random.RandomState(0)``.  Unlike JAX, the
default step ``eps`` depends on the lowest float precision among the
arguments (1e-4 for float64, 1e-3 for float32, 1e-2 for float16): central
differences lose about ``machine_eps / eps`` to rounding, so float32 needs a
larger step than float64 to stay inside its tolerance.

``tangent_x`` is imported lazily so this module works (and can be tested)
before the transforms exist.
"""
import numpy as np

from .tree_paths import _leaf_paths
from .tree_util import tree_flatten, tree_map, tree_structure

__all__ = ["check_grads", "numerical_jvp", "default_eps",
           "default_gradient_tolerance"]

# Per-dtype tolerance for comparing derivatives (JAX's table).
default_gradient_tolerance = {
    np.dtype(np.float16): 1e-2,
    np.dtype(np.float32): 2e-3,
    np.dtype(np.float64): 1e-5,
    np.dtype(np.complex64): 1e-3,
    np.dtype(np.complex128): 1e-5,
}

# Per-dtype finite-difference step: roughly the cube root of machine epsilon
# (which balances truncation against rounding error), rounded to a power of
# ten, and never smaller than JAX's fixed 1e-4.
_DEFAULT_EPS = {
    np.dtype(np.float16): 1e-2,
    np.dtype(np.float32): 1e-3,
    np.dtype(np.float64): 1e-4,
    np.dtype(np.complex64): 1e-3,
    np.dtype(np.complex128): 1e-4,
}


# ---------------------------------------------------------------------------
# Leaf helpers
# ---------------------------------------------------------------------------

def _is_python_scalar(x):
    return isinstance(x, (bool, int, float, complex)) and not isinstance(
        x, np.generic)


def _dtype(x):
    return np.asarray(x).dtype


def _is_inexact(dtype):
    return np.issubdtype(dtype, np.inexact)


def _like(x, value):
    """``value`` cast to ``x``'s dtype; a Python float if ``x`` is one.

    Keeping Python scalars as Python scalars matters because the functions
    under test may branch on ``isinstance(x, float)``.
    """
    result = np.asarray(value, dtype=_dtype(x))
    if _is_python_scalar(x):
        return result.item()
    return result[()] if isinstance(x, np.generic) else result


def _rand_like(rng, x):
    """Standard normal noise with ``x``'s shape and dtype."""
    shape, dtype = np.shape(x), _dtype(x)
    noise = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        noise = noise + 1j * rng.standard_normal(shape)
    return _like(x, noise)


def _conj(tree):
    # Only complex leaves change; real ones are returned untouched so their
    # types (Python float, 0-d array, ...) are preserved.
    return tree_map(
        lambda x: np.conj(x) if np.iscomplexobj(x) else x, tree)


def _tolerance(dtype, tol):
    """Resolve a user tolerance (None, number or {dtype: number}) for dtype."""
    if tol is not None and not isinstance(tol, dict):
        return tol
    table = dict(default_gradient_tolerance)
    if tol:
        table.update({np.dtype(k): v for k, v in tol.items()})
    return table.get(np.dtype(dtype), 0)


def default_eps(args):
    """Finite-difference step for ``args``: set by the least precise dtype."""
    inexact = [_dtype(x) for x in tree_flatten(args)[0]
               if _is_inexact(_dtype(x))]
    if not inexact:
        return _DEFAULT_EPS[np.dtype(np.float64)]
    return max(_DEFAULT_EPS.get(d, 1e-2) for d in inexact)


# ---------------------------------------------------------------------------
# Numerical derivative
# ---------------------------------------------------------------------------

def _central_difference(pos, neg, eps):
    """``(pos - neg) / (2 eps)`` in the output's dtype, with inf - inf = 0.

    Outputs that are not floating point (integers, booleans) have zero
    derivative.
    """
    dtype = _dtype(pos)
    if not _is_inexact(dtype):
        return np.zeros(np.shape(pos))
    p, n = np.asarray(pos), np.asarray(neg)
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.where(p == n, np.zeros((), dtype),
                        np.subtract(p, n, dtype=dtype))
        return _like(pos, diff * dtype.type(0.5 / eps))


def numerical_jvp(f, primals, tangents, eps=None):
    """Central-difference directional derivative of ``f`` at ``primals``.

    Returns ``(f(*(primals + eps*tangents)) - f(*(primals - eps*tangents)))
    / (2*eps)``, leafwise over ``f``'s output pytree, in the output dtypes
    (Python float outputs give Python floats).  ``primals`` and ``tangents``
    are sequences of argument pytrees of the same structure; ``eps``
    defaults to :func:`default_eps` of the primals.
    """
    primals, tangents = tuple(primals), tuple(tangents)
    if eps is None:
        eps = default_eps(primals)

    def shifted(sign):
        return tree_map(lambda p, t: _like(p, p + sign * eps * np.asarray(t)),
                        primals, tangents)

    out_pos = f(*shifted(+1))
    out_neg = f(*shifted(-1))
    return tree_map(lambda a, b: _central_difference(a, b, eps),
                    out_pos, out_neg)


def _inner_product(xs, ys, what):
    """``sum over leaves of Re <x, y>``; a ``None`` leaf in ``ys`` is zero."""
    total = 0.0
    paths = _leaf_paths(tree_structure(xs))
    for path, x, y in zip(paths, *_matched_leaves(xs, ys, what)):
        if y is None:
            continue
        x, y = np.asarray(x), np.asarray(y)
        if x.shape != y.shape:
            raise AssertionError(
                f"{what} at leaf {path or '(root)'}: shape mismatch: expected "
                f"{x.shape}, got {y.shape}")
        total = total + np.real(np.vdot(x.reshape(-1), y.reshape(-1)))
    return total


# ---------------------------------------------------------------------------
# Comparison with readable failures
# ---------------------------------------------------------------------------

class _Context:
    """What is being checked, for the failure message."""

    def __init__(self, order, mode, label):
        self.order, self.mode, self.label = order, mode, label

    def __str__(self):
        mode = "forward (jvp)" if self.mode == "fwd" else "reverse (vjp)"
        return f"order {self.order}, {mode} mode, checking {self.label}"


def _matched_leaves(expected, got, what):
    """Leaves of ``expected`` and the matching subtrees of ``got``."""
    exp_leaves, treedef = tree_flatten(expected)
    try:
        got_leaves = treedef.flatten_up_to(got)
    except ValueError as e:
        raise AssertionError(
            f"{what}: structure mismatch: expected {treedef}, got "
            f"{tree_structure(got)} ({e})") from None
    return exp_leaves, got_leaves


def _fmt(a):
    text = np.array2string(np.asarray(a), precision=6, threshold=20,
                           edgeitems=3, separator=", ")
    return text.replace("\n", "\n            ")  # align under "expected: "


def _assert_close(got, expected, atol, rtol, what):
    """Assert ``got`` matches ``expected`` leafwise (``None`` in got = 0)."""
    exp_leaves, got_leaves = _matched_leaves(expected, got, what)
    paths = _leaf_paths(tree_structure(expected))
    for path, e, g in zip(paths, exp_leaves, got_leaves):
        where = f" at output leaf {path}" if path else ""
        e = np.asarray(e)
        g = np.zeros_like(e) if g is None else np.asarray(g)
        if g.shape != e.shape:
            raise AssertionError(
                f"{what}{where}: shape mismatch: expected {e.shape}, "
                f"got {g.shape}")
        # JAX scales the tolerance with the number of elements.
        a = max(_tolerance(e.dtype, atol), _tolerance(g.dtype, atol)) * e.size
        r = max(_tolerance(e.dtype, rtol), _tolerance(g.dtype, rtol)) * e.size
        with np.errstate(invalid="ignore", over="ignore"):
            ok = np.isclose(g, e, atol=a, rtol=r, equal_nan=True)
        if np.all(ok):
            continue
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            err = np.abs(g.astype(np.result_type(g, e, np.float64))
                         - e.astype(np.result_type(g, e, np.float64)))
            rel = np.where(e != 0, err / np.abs(e), np.inf)
        bad = ~ok
        first = tuple(int(i) for i in np.argwhere(bad)[0]) if e.ndim else ()
        raise AssertionError(
            f"{what}{where}: {int(np.count_nonzero(bad))} of {np.size(ok)} "
            f"elements differ beyond tolerance (atol={a:.3g}, rtol={r:.3g})\n"
            f"  among those, max abs error: {np.nanmax(err[bad]):.6g}, "
            f"max rel error: {np.nanmax(rel[bad]):.6g}\n"
            + (f"  first bad element {first}: expected {e[first].item()!r}, "
               f"got {g[first].item()!r}\n" if e.ndim else "") +
            f"  expected: {_fmt(e)}\n"
            f"  got:      {_fmt(g)}")


def _assert_dtypes_match(got, expected, what):
    """Tangents must keep the primal's float dtype (no silent promotion)."""
    exp_leaves, got_leaves = _matched_leaves(expected, got, what)
    paths = _leaf_paths(tree_structure(expected))
    for path, e, g in zip(paths, exp_leaves, got_leaves):
        if g is None:
            continue
        de, dg = _dtype(e), _dtype(g)
        if _is_inexact(de) and _is_inexact(dg) and de != dg:
            where = f" at output leaf {path}" if path else ""
            raise AssertionError(
                f"{what}{where}: dtype mismatch: the primal output is {de} "
                f"but its derivative is {dg}")


# ---------------------------------------------------------------------------
# The transforms under test (imported lazily)
# ---------------------------------------------------------------------------

class _ModeUnavailable(NotImplementedError):
    """A transform needed by check_grads is not implemented yet."""


def _transform(name, mode):
    # local import: this module imports without the transforms (they are what it tests)
    import tangent_x
    fn = getattr(tangent_x, name, None)
    if fn is None:
        raise _ModeUnavailable(
            f"check_grads: {mode} mode is not available yet "
            f"(tangent_x.{name} does not exist)")
    return fn


def _derivative(fn, mode, n, plain=None):
    """The next order's function: tangent_x builds it with real source so it
    can be transformed again (a closure calling jvp/vjp could not be)."""
    # local import: this module imports without the transforms (they are what it tests)
    import tangent_x

    if mode == "fwd":
        def fallback(primals, tangents):
            return _jvp(fn, primals, tangents)
    else:
        def fallback(*primals):
            out, pullback = _vjp(fn, *primals)
            return pullback(out)
    derivatives = getattr(getattr(tangent_x, "api", None), "derivatives", None)
    if derivatives is None or not hasattr(derivatives, "derivative_function"):
        return fallback
    return derivatives.derivative_function(fn, mode, n, plain)


def _jvp(f, primals, tangents):
    jvp = _transform("jvp", "forward")
    try:
        return jvp(f, primals, tangents)
    except _ModeUnavailable:
        raise
    except NotImplementedError as e:
        raise _ModeUnavailable(
            f"check_grads: forward mode is not available yet "
            f"(tangent_x.jvp raised NotImplementedError: {e})") from e


def _vjp(f, *primals):
    vjp = _transform("vjp", "reverse")
    try:
        return vjp(f, *primals)
    except _ModeUnavailable:
        raise
    except NotImplementedError as e:
        raise _ModeUnavailable(
            f"check_grads: reverse mode is not available yet "
            f"(tangent_x.vjp raised NotImplementedError: {e})") from e


# ---------------------------------------------------------------------------
# The checks
# ---------------------------------------------------------------------------

def _check_jvp(f, args, atol, rtol, eps, ctx):
    rng = np.random.RandomState(0)
    tangents = tree_map(lambda x: _rand_like(rng, x), args)
    out, out_tangent = _jvp(f, args, tangents)
    expected_out = f(*args)
    _assert_close(out, expected_out, atol, rtol, f"{ctx}: primal output")
    _assert_dtypes_match(out_tangent, expected_out,
                         f"{ctx}: output tangent")
    expected_tangent = numerical_jvp(f, args, tangents, eps)
    _assert_close(out_tangent, expected_tangent, atol, rtol,
                  f"{ctx}: output tangent (jvp vs central difference)")


def _check_vjp(f, args, atol, rtol, eps, ctx):
    rng = np.random.RandomState(0)
    out, vjp_fun = _vjp(f, *args)
    expected_out = f(*args)
    _assert_close(out, expected_out, atol, rtol, f"{ctx}: primal output")

    v = tree_map(lambda x: _rand_like(rng, x), args)
    jv = numerical_jvp(f, args, v, eps)
    ct = tree_map(lambda x: _rand_like(rng, x), out)
    ct_in = _conj(vjp_fun(_conj(ct)))
    if not isinstance(ct_in, tuple) or len(ct_in) != len(args):
        raise AssertionError(
            f"{ctx}: vjp_fun must return a tuple with one cotangent per "
            f"primal ({len(args)}), got {tree_structure(ct_in)}")
    _assert_dtypes_match(ct_in, args, f"{ctx}: input cotangent")
    # <vjp_fun(ct), v> = <ct, J v> for the true Jacobian J.
    got = _inner_product(v, ct_in, f"{ctx}: input cotangent")
    expected = _inner_product(jv, ct, f"{ctx}: numerical jvp")
    _assert_close(got, expected, atol, rtol,
                  f"{ctx}: cotangent projection <vjp_fun(ct), v> "
                  f"vs <ct, numerical_jvp(v)>")


def check_grads(f, args, order, modes=("fwd", "rev"), atol=None, rtol=None,
                eps=None):
    """Check every derivative of ``f`` at ``args`` up to ``order`` numerically.

    ``args`` is a sequence of positional arguments (pytrees of float arrays
    and Python floats).  ``modes`` selects forward (``"fwd"``, via
    ``tangent_x.jvp``) and/or reverse (``"rev"``, via ``tangent_x.vjp``)
    checks.  ``atol``/``rtol`` are numbers or ``{dtype: tol}`` dicts (default
    by dtype, see the module docstring); ``eps`` is the finite-difference
    step.  Raises ``AssertionError`` describing the order, mode, output leaf
    and errors on mismatch, and ``NotImplementedError`` when a needed mode is
    not implemented yet.
    """
    args = tuple(args)
    modes = tuple(modes)
    unknown = set(modes) - {"fwd", "rev"}
    if unknown:
        raise ValueError(f"check_grads: unknown modes {sorted(unknown)}; "
                         "use 'fwd' and/or 'rev'")
    for x in tree_flatten(args)[0]:
        if not _is_inexact(_dtype(x)):
            raise TypeError(
                "check_grads needs floating-point arguments, got a leaf of "
                f"dtype {_dtype(x)}: {x!r}")
    eps = eps or default_eps(args)
    name = getattr(f, "__name__", "f")

    def check(fn, fn_args, remaining, label):
        done = order - remaining + 1
        if "fwd" in modes:
            fwd_label = f"JVP of {label}"
            _check_jvp(fn, fn_args, atol, rtol, eps,
                       _Context(done, "fwd", fwd_label))
            if remaining > 1:
                fn_jvp = _derivative(fn, "fwd", len(fn_args))
                check(fn_jvp, (fn_args, fn_args), remaining - 1, fwd_label)
        if "rev" in modes:
            rev_label = f"VJP of {label}"
            _check_vjp(fn, fn_args, atol, rtol, eps,
                       _Context(done, "rev", rev_label))
            if remaining > 1:
                fn_vjp = _derivative(fn, "rev", len(fn_args), tuple(
                    isinstance(a, (float, np.ndarray)) for a in fn_args))
                check(fn_vjp, fn_args, remaining - 1, rev_label)

    check(f, args, order, name)
