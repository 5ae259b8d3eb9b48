"""Transforms composed: every outer(inner(f)) of two transforms, and a few
three deep, on small functions, against references that do not trust the
composition.

The transforms are grad, value_and_grad (its gradient part), jvp (as a
function of x, with a fixed tangent), vjp (with a fixed cotangent), jacfwd,
jacrev, hessian and vmap.  Each row of the matrix checks ``outer(g)`` where
``g = inner(f)`` is tangent_x's own inner transform, run eagerly: the
reference applies ``outer`` to ``g`` numerically -- central finite
differences in float64 for the derivatives, a Python loop over examples for
vmap.  ``g`` itself is checked the same way against ``f`` (the one-deep
rows), so a pass means the composition equals the derivative of the
derivative.  Shapes and pytree structure are JAX's: the Jacobian of an
output ``o`` with respect to an input ``i`` has shape ``o + i`` (so
jacfwd(jacfwd(f)) has shape ``out + in + in``), the output's structure
outside, the input's inside.

grad and value_and_grad need a scalar output: they differentiate
``total(g)``, a plain user function summing ``sin`` of every leaf of ``g``'s
output (as a JAX user writes ``grad(lambda x: jnp.sum(...))``).
"""
import numpy as np
import pytest

import tangent_x as tx
from tangent_x import tree_util

from _fd import _leaves, _rebuild, assert_tree_allclose

W = np.array([[0.3, -0.7], [1.1, 0.4], [-0.5, 0.9]])
ROWS = np.array([[1.0], [2.0]])
XC = np.array([0.4, -1.2, 0.7])


# ---- the functions --------------------------------------------------------

def elementwise(x):
    return np.sin(x) * ROWS + x ** 2


def matmul(x):                 # x has shape (1, 3): a size-1 axis
    return np.tanh(x @ W)


def loop(x):
    y = x
    i = 0
    while np.sum(y * y) < 6.0 and i < 30:
        y = y * 1.3 + 0.2 * np.sin(y)
        i += 1
    return y


def branch(x):
    if np.sum(x) > 0.0:
        y = np.sin(x) * x[0]
    else:
        y = np.cos(x) - x[1]
    return y


def two(x, y):
    return np.sin(x) * y[0] + np.cos(x * y[1])


def params(p):
    return np.tanh(p["w"] @ XC + p["b"])


# name: (function, args, argnums)
CASES = {
    "elementwise": (elementwise, (np.array([0.3, -0.8, 1.1]),), 0),
    "matmul": (matmul, (np.array([[0.5, -0.3, 0.8]]),), 0),
    "loop": (loop, (np.array([0.6, -0.4]),), 0),
    "branch": (branch, (np.array([0.7, -0.2, 0.4]),), 0),
    "two": (two, (np.array([0.3, -0.5]), np.array([1.2, 0.7])), (0, 1)),
    "params": (params, ({"w": np.array([[0.2, -0.4, 0.6], [0.1, 0.5, -0.3]]),
                         "b": np.array([0.05, -0.1])},), 0),
}
TRANSFORMS = ["grad", "value_and_grad", "jvp", "vjp", "jacfwd", "jacrev", "hessian", "vmap"]


def _nums(argnums):
    return argnums if isinstance(argnums, tuple) else (argnums,)


def _pick(args, argnums):
    """The differentiated arguments, as the transforms return them."""
    if isinstance(argnums, tuple):
        return tuple(args[i] for i in argnums)
    return args[argnums]


def _pattern(tree, seed):
    """A fixed pseudo-random pytree shaped like ``tree`` (tangents, cotangents)."""
    rng = np.random.default_rng(seed)
    return _rebuild(tree, [rng.uniform(-1.0, 1.0, np.shape(leaf)) + 0.0 * np.asarray(leaf)
                           if np.ndim(leaf) else float(rng.uniform(-1.0, 1.0))
                           for leaf in _leaves(tree)])


def _summed(g, n):
    """A scalar function of ``g``'s ``n`` arguments: the sum of sin of every
    leaf of ``g``'s output."""
    if n == 1:
        def total(x):
            s = 0.0
            for leaf in tree_util.tree_leaves(g(x)):
                s = s + np.sum(np.sin(leaf))
            return s
    else:
        def total(x, y):
            s = 0.0
            for leaf in tree_util.tree_leaves(g(x, y)):
                s = s + np.sum(np.sin(leaf))
            return s
    return total


# ---- the transforms, as tangent_x applies them -----------------------------
# Every case differentiates all its arguments (argnums 0, or (0, 1) for two).

def apply(name, g, args, argnums):
    """``name`` applied to ``g``: a function of the same arguments."""
    n = len(args)
    if name == "grad":
        return tx.grad(_summed(g, n), argnums=argnums)
    if name == "jacfwd":
        return tx.jacfwd(g, argnums=argnums)
    if name == "jacrev":
        return tx.jacrev(g, argnums=argnums)
    if name == "hessian":
        return tx.hessian(g, argnums=argnums)
    if name == "vmap":
        return tx.vmap(g)
    if name == "value_and_grad":
        vg = tx.value_and_grad(_summed(g, n), argnums=argnums)
        if n == 1:
            def grad_part(x):
                return vg(x)[1]
        else:
            def grad_part(x, y):
                return vg(x, y)[1]
        return grad_part
    if name == "jvp":
        t = [_pattern(a, 10 + i) for i, a in enumerate(args)]
        if n == 1:
            def jvp_part(x):
                return tx.jvp(g, (x,), (t[0],))[1]
        else:
            def jvp_part(x, y):
                return tx.jvp(g, (x, y), (t[0], t[1]))[1]
        return jvp_part
    if name == "vjp":
        ct = _pattern(_eval(g, args), 20)
        if n == 1:
            def vjp_part(x):
                pullback = tx.vjp(g, x)[1]
                return pullback(ct)[0]
        else:
            def vjp_part(x, y):
                pullback = tx.vjp(g, x, y)[1]
                return pullback(ct)
        return vjp_part
    raise ValueError(name)


def _eval(g, args):
    return g(*[_copy(a) for a in args])


def _copy(tree):
    return _rebuild(tree, [np.array(leaf, dtype=float) if np.ndim(leaf) else float(leaf)
                           for leaf in _leaves(tree)])


# ---- the references: finite differences and loops ---------------------------

H = 1e-6


def _shifted(args, argnums, k, delta):
    """``args`` with element ``k`` of the flattened differentiated leaves moved by ``delta``."""
    nums = _nums(argnums)
    args = [_copy(a) for a in args]
    for i in nums:
        leaves = _leaves(args[i])
        for j, leaf in enumerate(leaves):
            size = int(np.size(leaf))
            if k < size:
                if np.ndim(leaf):
                    leaf.reshape(-1)[k] += delta
                else:
                    leaves[j] = leaf + delta
                args[i] = _rebuild(args[i], leaves)
                return args
            k -= size
    raise IndexError(k)


def _size(args, argnums):
    return sum(int(np.size(leaf)) for i in _nums(argnums) for leaf in _leaves(args[i]))


def _columns(g, args, argnums, h=H):
    """Central differences of ``g``'s flattened output, one per input element."""
    cols = []
    for k in range(_size(args, argnums)):
        up = [np.ravel(leaf) for leaf in _leaves(_eval(g, _shifted(args, argnums, k, h)))]
        down = [np.ravel(leaf) for leaf in _leaves(_eval(g, _shifted(args, argnums, k, -h)))]
        cols.append(np.concatenate([(u - d) / (2 * h) for u, d in zip(up, down)]))
    return np.stack(cols, axis=-1)        # (out size, in size)


def _jacobian_tree(flat, out, args, argnums):
    """A flat (out size, in size) Jacobian in JAX's structure: ``out``'s tree
    outside, the differentiated arguments' tree (a tuple for tuple argnums) inside."""
    in_leaves = [leaf for i in _nums(argnums) for leaf in _leaves(args[i])]
    blocks, r = [], 0
    for o in _leaves(out):
        c, per_in = 0, []
        for leaf in in_leaves:
            block = flat[r:r + np.size(o), c:c + np.size(leaf)]
            per_in.append(block.reshape(np.shape(o) + np.shape(leaf)))
            c += int(np.size(leaf))
        r += int(np.size(o))
        blocks.append(_rebuild(_pick(args, argnums), per_in))
    return _rebuild(out, blocks) if isinstance(out, (dict, list, tuple)) else blocks[0]


def reference(name, g, args, argnums):
    """``name`` applied to the numerical function ``g`` at ``args``."""
    nums = _nums(argnums)
    if name in ("grad", "value_and_grad"):
        s = _summed(g, len(args))
        flat = _columns(lambda *a: np.array([s(*a)]), args, argnums)[0]
        return _rebuild(_pick(args, argnums), _split(flat, args, argnums))
    if name == "jvp":
        tangents = [_pattern(args[i], 10 + i) for i in nums]
        t = np.concatenate([np.ravel(leaf) for tr in tangents for leaf in _leaves(tr)])
        out = _eval(g, args)
        flat = _columns(g, args, argnums) @ t
        return _rebuild(out, _split(flat, [out], 0))
    if name == "vjp":
        out = _eval(g, args)
        ct = np.concatenate([np.ravel(leaf) for leaf in _leaves(_pattern(out, 20))])
        flat = ct @ _columns(g, args, argnums)
        return _rebuild(_pick(args, argnums), _split(flat, args, argnums))
    if name in ("jacfwd", "jacrev"):
        return _jacobian_tree(_columns(g, args, argnums), _eval(g, args), args, argnums)
    if name == "hessian":
        def jac(*a):
            return _jacobian_tree(_columns(g, a, argnums, h=1e-4), _eval(g, a), a, argnums)
        # the Jacobian of the (finite-difference) Jacobian: second differences
        return _jacobian_tree(_columns(jac, args, argnums, h=1e-4), jac(*args), args, argnums)
    if name == "vmap":
        per = [_eval(g, [_index(a, b) for a in args]) for b in range(_batch(args))]
        return _rebuild(per[0], [np.stack(ls) for ls in zip(*[_leaves(p) for p in per])])
    raise ValueError(name)


def _split(flat, args, argnums):
    """A flat vector cut into the differentiated leaves' shapes."""
    out, c = [], 0
    for i in _nums(argnums):
        for leaf in _leaves(args[i]):
            n = int(np.size(leaf))
            out.append(flat[c:c + n].reshape(np.shape(leaf)) if np.ndim(leaf) else flat[c])
            c += n
    return out


def _index(tree, b):
    return _rebuild(tree, [leaf[b] for leaf in _leaves(tree)])


def _batch(args):
    return np.shape(_leaves(args[0])[0])[0]


def _batched(args, sizes):
    """Each argument stacked into batches (sizes from outermost), varied per example."""
    for depth, size in enumerate(reversed(sizes)):
        args = tuple(_rebuild(a, [np.stack([leaf * (1.0 + 0.1 * b * (depth + 1))
                                            for b in range(size)])
                                  for leaf in _leaves(a)]) for a in args)
    return args


# ---- the matrix ----------------------------------------------------------------

def check(names, case, tol=None):
    """Compare ``outer(inner(...))`` with ``outer`` applied numerically to tangent_x's inner."""
    f, args, argnums = CASES[case]
    top_args = _batched(args, [2 + k for k in range(names.count("vmap"))])
    # arguments seen at each level: a vmap strips one batch axis going inwards
    level_args, a = [], top_args
    for name in names:
        level_args.append(a)
        if name == "vmap":
            a = tuple(_index(x, 0) for x in a)
    inner = f
    for name, la in zip(reversed(names[1:]), reversed(level_args[1:])):
        inner = apply(name, inner, la, argnums)
    outer = apply(names[0], inner, level_args[0], argnums)
    actual = outer(*top_args)
    expected = reference(names[0], inner, top_args, argnums)
    rtol, atol = tol or ((2e-4, 2e-5) if "hessian" in names[:1] else (1e-5, 1e-6))
    assert_tree_allclose(actual, expected, rtol=rtol, atol=atol,
                         err_msg=f"{'('.join(names)}({case})")


# Compositions tangent_x refuses, with a located TransformError saying what
# to write instead (matched here): a Jacobian of a Jacobian (a hessian) of
# several or pytree arguments, transformed again.  (A Jacobian of several or
# pytree arguments has a source form: test_jacobians_again.py; a pullback
# made inside a function transformed again works: test_vjp_inside.py.)
REFUSED_JACOBIAN = r"is transformed again, and it is a Jacobian of a Jacobian"
JACOBIANS = ("jacfwd", "jacrev", "hessian")


def refusal(names, case):
    """A pattern of the messages a refused composition may raise, or None.
    hessian is jacfwd of jacrev for a non-scalar output (every use here), so
    it transforms a Jacobian itself."""
    reasons = set()
    for k, name in enumerate(names):
        of_jacobian = k + 1 < len(names) and names[k + 1] in JACOBIANS
        of_a_jacobian = name == "hessian" or (name in JACOBIANS and of_jacobian)
        again = (k > 0 and names[k - 1] != "vmap") or (name == "hessian" and of_jacobian)
        if of_a_jacobian and again and case in ("two", "params"):
            reasons.add(REFUSED_JACOBIAN)
    return "|".join(sorted(reasons)) or None


def check_or_refused(names, case):
    expected = refusal(names, case)
    if expected is None:
        check(names, case)
        return
    with pytest.raises(tx.TransformError, match=expected) as info:
        check(names, case)
    # located: the user's file and line, and a suggestion
    assert "test_nested_transforms.py:" in str(info.value)
    assert info.value.hint


PAIRS = [(o, i) for o in TRANSFORMS for i in TRANSFORMS]


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("name", TRANSFORMS)
def test_one_deep(name, case):
    check_or_refused([name], case)


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("outer,inner", PAIRS, ids=[f"{o}-{i}" for o, i in PAIRS])
def test_two_deep(outer, inner, case):
    check_or_refused([outer, inner], case)


THREE = [("vmap", "grad", "grad"), ("jacfwd", "jacrev", "jacfwd"), ("grad", "vmap", "grad")]


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("names", THREE, ids=["-".join(t) for t in THREE])
def test_three_deep(names, case):
    check_or_refused(list(names), case)


# ---- under jit: the whole composition wrapped, a few of them (each compiles) ---

JITTED = [("jacfwd", "jacrev", "elementwise"), ("hessian", None, "matmul"),
          ("vmap", "grad", "branch")]


@pytest.mark.parametrize("outer,inner,case", JITTED,
                         ids=[f"{o}-{i}-{c}" for o, i, c in JITTED])
def test_jit_of_composition(outer, inner, case):
    """jit(outer(inner(f))) equals the eager composition and the reference."""
    f, args, argnums = CASES[case]
    names = [outer] + ([inner] if inner else [])
    top = _batched(args, [2 + k for k in range(names.count("vmap"))])
    level = tuple(_index(x, 0) for x in top) if outer == "vmap" else top
    g = apply(inner, f, level, argnums) if inner else f
    composed = apply(outer, g, top, argnums)
    expected = reference(outer, g, top, argnums)
    eager = composed(*top)
    compiled = tx.jit(composed)(*top)
    assert_tree_allclose(compiled, eager, rtol=1e-12, atol=1e-12)
    assert_tree_allclose(compiled, expected, rtol=2e-4, atol=2e-5)
