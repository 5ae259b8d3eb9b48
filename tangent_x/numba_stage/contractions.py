"""Contractions compiled by Numba: einsum, tensordot, stacked matmul, and
their adjoints, all as one kind of loop nest.

Numba's NumPy has no ``np.einsum`` or ``np.tensordot`` and its ``@`` takes
1-d and 2-d operands only.  Each of these is an einsum whose subscripts are
known when Numba types the call (the subscripts string is a literal, the
operands' ranks are part of their types), so one generator covers them:
for subscripts such as ``'ij,jk->ik'`` it writes the loop nest

    for i in range(n_i):
        for j in range(n_j):
            for k in range(n_k):
                out[i, k] += o0[i, j] * o1[j, k]

and compiles it once per (subscripts, ranks).  The adjoint of operand ``k``
is the same loop nest accumulating ``g[out letters] * (the other operands)``
into an array shaped like operand ``k``, which is everything the eager
``runtime.einsum_adjoint`` spells separately: a letter only operand ``k``
has is broadcast, an axis it broadcast (size 1) is summed over, a repeated
letter (``'ii->i'``) writes the diagonal.  Sizes of 1 broadcast in every
operand (NumPy's rule for ``...`` axes and for ``matmul``'s batch axes), so
stacked matmul with broadcast batch axes is the einsum
``'...ij,...jk->...ik'``.

Loops, not BLAS: correctness and one mechanism first; the 2-d products that
dominate real programs keep Numba's own ``@`` (BLAS).
"""
import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable
from numba.np.numpy_support import as_dtype

from .. import runtime
from ..runtime.contractions import contracted_axes

__all__ = ["einsum", "tensordot"]

_CACHED = {"cache": True}
_KERNELS = {}


def _is_array(t):
    return isinstance(t, types.Array)


def _dtype_of(ts):
    """NumPy's result dtype of operands of Numba types ``ts``."""
    dtypes = [as_dtype(t.dtype) if _is_array(t) else as_dtype(t) for t in ts
              if _is_array(t) or isinstance(t, (types.Number, types.Boolean))]
    return np.result_type(*dtypes).type if dtypes else np.float64


def _loop_nest(ins, out, arrays, target):
    """Source of ``kernel(o0, o1, ...)``: the einsum ``ins -> out`` as loops.

    ``arrays[j]``: whether operand j is an array (else a number).
    ``target``: None to return the einsum; an operand index to return the
    adjoint of that operand, whose cotangent is the last argument ``g``
    (shaped like the output; a number broadcasts)."""
    names = [f"o{j}" for j in range(len(ins))]
    params = list(names) + (["g"] if target is not None else [])
    specs = list(ins) + ([out] if target is not None else [])
    is_array = list(arrays)
    lines = [f"def kernel({', '.join(params)}):"]
    letters = list(dict.fromkeys("".join(ins) + out))
    # each letter's extent: the largest extent of an axis it labels (size-1 axes broadcast)
    sizes = {c: [] for c in letters}
    for name, spec, arr in zip(params, specs, is_array):
        for d, c in enumerate(spec):
            if arr:
                sizes[c].append(f"{name}.shape[{d}]")
    for c in letters:
        extents = sizes[c] or ["1"]
        expr = extents[0]
        for e in extents[1:]:
            expr = f"max({expr}, {e})"
        lines.append(f"    n_{c} = {expr}")
    # per axis: 1, or 0 where a size-1 axis broadcasts
    for name, spec, arr in zip(params, specs, is_array):
        if arr:
            for d in range(len(spec)):
                lines.append(f"    m_{name}_{d} = 0 if {name}.shape[{d}] == 1 else 1")

    def item(name, spec, arr):
        if not arr:
            return name
        if not spec:
            return f"{name}[()]"
        return f"{name}[{', '.join(f'{c} * m_{name}_{d}' for d, c in enumerate(spec))}]"

    if target is None:
        result_spec, result_like = out, None
    else:
        result_spec, result_like = ins[target], names[target]
    if result_like is not None:
        shape = f"{result_like}.shape" if is_array[target] else "()"
    else:
        shape = "(" + "".join(f"n_{c}, " for c in out) + ")"
    lines.append(f"    acc = np.zeros({shape}, DT)")
    # result letters outermost, each loop once
    order = list(dict.fromkeys(result_spec)) + [c for c in letters if c not in result_spec]
    indent = "    "
    for c in order:
        lines.append(f"{indent}for {c} in range(n_{c}):")
        indent += "    "
    factors = [item(n, s, a) for j, (n, s, a) in enumerate(zip(names, ins, is_array))
               if j != target]
    if target is not None:
        factors = [item("g", out, is_array[-1])] + factors
    product = " * ".join(factors) if factors else "1.0"
    if result_like is not None and not is_array[target]:
        target_item = "acc[()]"
    elif result_like is not None:
        target_item = item(result_like, result_spec, True).replace(result_like + "[", "acc[", 1)
    else:
        target_item = f"acc[{', '.join(result_spec)}]" if result_spec else "acc[()]"
    lines.append(f"{indent}{target_item} += {product}")
    if target is None and not out or target is not None and not is_array[target]:
        lines.append("    return acc[()]")
    else:
        lines.append("    return acc")
    return "\n".join(lines)


def _kernel(ins, out, arrays, target, dtype):
    key = (tuple(ins), out, tuple(arrays), target, dtype)
    if key not in _KERNELS:
        source = _loop_nest(ins, out, arrays, target)
        namespace = {"np": np, "DT": dtype}
        exec(compile(source, f"<tangent_x einsum kernel {','.join(ins)}->{out}>", "exec"),
             namespace)
        _KERNELS[key] = register_jitable(namespace["kernel"])
    return _KERNELS[key]


def _ndim(t):
    return t.ndim if _is_array(t) else 0


def _specs(subscripts, operand_types):
    if not isinstance(subscripts, types.StringLiteral):
        return None
    try:
        return runtime.einsum_specs(subscripts.literal_value, [_ndim(t) for t in operand_types])
    except Exception as exc:       # a malformed string: NumPy's error, at typing time
        raise TypingError(f"einsum {subscripts.literal_value!r}: {exc}") from None


def einsum(subscripts, *operands):
    """``np.einsum(subscripts, *operands)``; compiled by Numba too (a loop
    nest per subscripts string, which must be a constant)."""
    return np.einsum(subscripts, *operands)


@overload(einsum, jit_options=_CACHED)
def _einsum(subscripts, *operands):
    specs = _specs(subscripts, operands)
    if specs is None:
        return None           # Numba retries with the string as a literal
    ins, out = specs
    kernel = _kernel(ins, out, [_is_array(t) for t in operands], None, _dtype_of(operands))
    return lambda subscripts, *operands: kernel(*operands)


@overload(runtime.einsum_adjoint, jit_options=_CACHED)
def _einsum_adjoint(g, subscripts, k, *operands):
    specs = _specs(subscripts, operands)
    if specs is None or not isinstance(k, types.IntegerLiteral):
        return None
    ins, out = specs
    target = k.literal_value % len(operands)
    arrays = [_is_array(t) for t in operands] + [_is_array(g)]
    kernel = _kernel(ins, out, arrays, target, _dtype_of(list(operands) + [g]))
    return lambda g, subscripts, k, *operands: kernel(*operands, g)


# --- tensordot: an einsum whose subscripts follow from the ranks and axes ------

_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _tensordot_specs(na, nb, axes):
    a_axes, b_axes = contracted_axes(na, nb, axes)
    a = list(_LETTERS[:na])
    b = list(_LETTERS[na:na + nb])
    for i, j in zip(a_axes, b_axes):
        b[j] = a[i]
    out = [c for d, c in enumerate(a) if d not in a_axes] + \
        [c for d, c in enumerate(b) if d not in b_axes]
    return ["".join(a), "".join(b)], "".join(out)


def _static_axes(axes):
    if isinstance(axes, types.IntegerLiteral):
        return axes.literal_value
    if isinstance(axes, (types.Omitted,)):
        return axes.value
    if isinstance(axes, int):
        return axes
    return None


def tensordot(a, b, axes=2):
    """``np.tensordot(a, b, axes)``; compiled by Numba too for an integer
    ``axes`` (a constant)."""
    return np.tensordot(a, b, axes)


@overload(tensordot, jit_options=_CACHED)
def _tensordot(a, b, axes=2):
    n = _static_axes(axes)
    if n is None:
        if isinstance(axes, types.Integer):
            return None       # retried with the literal
        raise TypingError("tensordot: compiled for an integer axes (a constant)")
    ins, out = _tensordot_specs(_ndim(a), _ndim(b), n)
    kernel = _kernel(ins, out, [_is_array(a), _is_array(b)], None, _dtype_of([a, b]))
    return lambda a, b, axes=2: kernel(a, b)


def _tensordot_adjoint(side):
    def typer(g, a, b, axes=2):
        n = _static_axes(axes)
        if n is None:
            if isinstance(axes, types.Integer):
                return None
            raise TypingError("tensordot adjoint: compiled for an integer axes (a constant)")
        ins, out = _tensordot_specs(_ndim(a), _ndim(b), n)
        kernel = _kernel(ins, out, [_is_array(a), _is_array(b), _is_array(g)], side,
                         _dtype_of([a, b, g]))
        return lambda g, a, b, axes=2: kernel(a, b, g)
    return typer


overload(runtime.tensordot_adjoint_lhs, jit_options=_CACHED)(_tensordot_adjoint(0))
overload(runtime.tensordot_adjoint_rhs, jit_options=_CACHED)(_tensordot_adjoint(1))


# --- matmul of stacks of matrices (Numba's own ``@`` takes 1-d and 2-d) --------

def _matmul_specs(na, nb):
    """NumPy's matmul as einsum subscripts (1-d operands promoted and the
    added axis dropped; batch axes broadcast)."""
    a = "...ij" if na >= 2 else "j"
    b = "...jk" if nb >= 2 else "j"
    out = "..." + ("i" if na >= 2 else "") + ("k" if nb >= 2 else "")
    return runtime.einsum_specs(f"{a},{b}->{out}", [na, nb])


def _stacked(a, b):
    return _is_array(a) and _is_array(b) and (a.ndim > 2 or b.ndim > 2) and \
        a.ndim >= 1 and b.ndim >= 1


import operator  # noqa: E402


@overload(operator.matmul, jit_options=_CACHED)
def _matmul(a, b):
    if not _stacked(a, b):
        return None           # Numba's own (BLAS) for 1-d and 2-d
    ins, out = _matmul_specs(a.ndim, b.ndim)
    kernel = _kernel(ins, out, [True, True], None, _dtype_of([a, b]))
    return lambda a, b: kernel(a, b)


def _matmul_adjoint(side):
    def typer(g, a, b):
        if not _stacked(a, b):
            return None       # overloads.products': 1-d and 2-d
        ins, out = _matmul_specs(a.ndim, b.ndim)
        kernel = _kernel(ins, out, [True, True, _is_array(g)], side, _dtype_of([a, b, g]))
        return lambda g, a, b: kernel(a, b, g)
    return typer


overload(runtime.matmul_adjoint_lhs, jit_options=_CACHED)(_matmul_adjoint(0))
overload(runtime.matmul_adjoint_rhs, jit_options=_CACHED)(_matmul_adjoint(1))
