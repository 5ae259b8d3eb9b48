"""Rules for products and contractions: dot, outer, inner, tensordot,
matmul, einsum and trace, and the adjoint helpers their rules emit.

The adjoint of a contraction is another contraction of the cotangent with
the other operand.  When the einsum subscripts are a literal without
``...``, that contraction is written out at transform time
(``np.einsum('ik,jk->ij', g, w)``); otherwise helpers in ``runtime`` work it
out from the ranks at run time.  Under vmap a contraction becomes a
batched matmul or an einsum with the batch letter in front.
"""
import copy
import string

import gast
import numpy as np

from ..core import ir, primitives as P
from ..errors import TransformError
from ..runtime import (dot_adjoint_lhs, dot_adjoint_rhs, einsum_adjoint,  # noqa: F401
                       einsum_specs, inner_adjoint_lhs, inner_adjoint_rhs,
                       matmul_adjoint_lhs, matmul_adjoint_rhs, tensordot_adjoint_lhs,
                       tensordot_adjoint_rhs, undiagonal, unreduce)
from .registry import adjoint, adjoint_maker, batching, tangent, tangent_maker
from .batching_util import call, elementwise, respell, static_value
from .forward_util import linear, product_rule


@adjoint(np.dot)
def _(g, ans, a, b, out=None):
    a_bar = dot_adjoint_lhs(g, a, b)
    b_bar = dot_adjoint_rhs(g, a, b)


@adjoint(np.inner)
def _(g, ans, a, b):
    a_bar = inner_adjoint_lhs(g, a, b)
    b_bar = inner_adjoint_rhs(g, a, b)


@adjoint(np.outer)
def _(g, ans, a, b, out=None):
    """np.outer ravels its operands first."""
    a_bar = np.reshape(np.dot(g, np.ravel(b)), np.shape(a))
    b_bar = np.reshape(np.dot(np.ravel(a), g), np.shape(b))


@adjoint(np.tensordot)
def _(g, ans, a, b, axes=2):
    a_bar = tensordot_adjoint_lhs(g, a, b, axes=axes)
    b_bar = tensordot_adjoint_rhs(g, a, b, axes=axes)


@adjoint(np.trace)
def _(g, ans, a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    diagonal = np.diagonal(a, offset=offset, axis1=axis1, axis2=axis2)
    diagonal_bar = unreduce(g, diagonal, axis=-1)
    a_bar = undiagonal(diagonal_bar, a, offset=offset, axis1=axis1, axis2=axis2)


# --- einsum ----------------------------------------------------------------------

def _static_adjoint_spec(subscripts, k):
    """The einsum that gives operand k's cotangent, if it is a plain einsum.

    It is ``'<out>,<other inputs>-><input k>'`` when input k's letters are
    distinct and each occurs in the output or another input; otherwise
    (``'ii->i'``, ``'ij->i'``, ``...``) None, and a runtime helper does it.
    """
    if "." in subscripts:
        return None
    specs, out = einsum_specs(subscripts, [None] * (subscripts.count(",") + 1))
    target = specs[k]
    others = specs[:k] + specs[k + 1:]
    available = set(out).union(*others)
    if len(set(target)) != len(target) or not set(target) <= available:
        return None
    return ",".join([out] + others) + "->" + target


@adjoint_maker(np.einsum)
def _(g, eqn, rev=None):
    """Operand k's cotangent: the einsum of ``g`` with the other operands."""
    subscripts, operands = eqn.args[0], eqn.args[1:]
    literal = isinstance(subscripts, gast.Constant) and isinstance(subscripts.value, str)
    outputs = {}
    for k in range(len(operands)):
        others = operands[:k] + operands[k + 1:]
        spec = _static_adjoint_spec(subscripts.value.replace(" ", ""), k) if literal else None
        if spec is not None:
            outputs[k + 1] = _call("np.einsum", [ir.const(spec), copy.deepcopy(g)] + others)
        else:
            outputs[k + 1] = _call("einsum_adjoint",
                                   [copy.deepcopy(g), subscripts, ir.const(k)] + operands)
    return outputs


@adjoint_maker(einsum_adjoint)
def _(g, eqn, rev=None):
    """``einsum_adjoint(g, subscripts, k, *operands)`` is the transpose of
    the einsum's map from operand k: its own transpose is that einsum with
    the cotangent in slot k, and operand j's cotangent is einsum_adjoint
    for slot j with the cotangent standing in for operand k (operand k
    gives only its shape: no cotangent)."""
    g_in, subscripts, k = eqn.args[:3]
    operands = list(eqn.args[3:])
    if not (isinstance(k, gast.Constant) and isinstance(k.value, int)):
        raise TransformError("einsum_adjoint needs a literal operand number", eqn.origin,
                             "call np.einsum instead")
    swapped = operands[:k.value] + [copy.deepcopy(g)] + operands[k.value + 1:]
    outputs = {0: _call("np.einsum", [subscripts] + swapped)}
    for j in range(len(operands)):
        if j != k.value:
            outputs[3 + j] = _call("einsum_adjoint", [g_in, subscripts, ir.const(j)]
                                   + [copy.deepcopy(a) for a in swapped])
    return outputs


def _call(spelling, args):
    parts = spelling.split(".")
    func = ir.name(parts[0])
    for part in parts[1:]:
        func = gast.Attribute(value=func, attr=part, ctx=gast.Load())
    return gast.Call(func=func, args=list(args), keywords=[])


# --- the helpers product rules emit, so derivative code can be differentiated ---
# Each is bilinear: the cotangent of a contraction's operand is linear in the
# cotangent g_in and in the other operand.  With <c, lhs(g, b)> = <g, dot(c, b)>,
# its own adjoints are the forward product and the other helper.

@adjoint(dot_adjoint_lhs)
def _(g, ans, g_in, a, b):
    g_in_bar = np.dot(g, b)
    b_bar = dot_adjoint_rhs(g_in, g, b)


@adjoint(dot_adjoint_rhs)
def _(g, ans, g_in, a, b):
    g_in_bar = np.dot(a, g)
    a_bar = dot_adjoint_lhs(g_in, a, g)


@adjoint(inner_adjoint_lhs)
def _(g, ans, g_in, a, b):
    g_in_bar = np.inner(g, b)
    b_bar = inner_adjoint_rhs(g_in, g, b)


@adjoint(inner_adjoint_rhs)
def _(g, ans, g_in, a, b):
    g_in_bar = np.inner(a, g)
    a_bar = inner_adjoint_lhs(g_in, a, g)


@adjoint(tensordot_adjoint_lhs)
def _(g, ans, g_in, a, b, axes=2):
    g_in_bar = np.tensordot(g, b, axes=axes)
    b_bar = tensordot_adjoint_rhs(g_in, g, b, axes=axes)


@adjoint(tensordot_adjoint_rhs)
def _(g, ans, g_in, a, b, axes=2):
    g_in_bar = np.tensordot(a, g, axes=axes)
    a_bar = tensordot_adjoint_lhs(g_in, a, g, axes=axes)


@adjoint(matmul_adjoint_lhs)
def _(g, ans, g_in, a, b):
    g_in_bar = g @ b
    b_bar = matmul_adjoint_rhs(g_in, g, b)


@adjoint(matmul_adjoint_rhs)
def _(g, ans, g_in, a, b):
    g_in_bar = a @ g
    a_bar = matmul_adjoint_lhs(g_in, a, g)


# --- forward mode ------------------------------------------------------------
# A product's tangent is the product rule, one term per operand; trace is
# linear.


linear(np.trace)


@tangent(np.dot)
def _(ans, a, b, out=None):
    ans_dot = np.dot(a_dot, b) + np.dot(a, b_dot)


@tangent(np.inner)
def _(ans, a, b):
    ans_dot = np.inner(a_dot, b) + np.inner(a, b_dot)


@tangent(np.outer)
def _(ans, a, b, out=None):
    ans_dot = np.outer(a_dot, b) + np.outer(a, b_dot)


@tangent(np.tensordot)
def _(ans, a, b, axes=2):
    ans_dot = np.tensordot(a_dot, b, axes=axes) + np.tensordot(a, b_dot, axes=axes)


@tangent_maker(np.einsum)
def _(eqn, fwd):
    """One einsum per operand with a tangent (an operand passed twice gets two)."""
    return product_rule(eqn, fwd, range(1, len(eqn.args)))


@tangent_maker(einsum_adjoint)
def _(eqn, fwd):
    """``einsum_adjoint(g, subscripts, k, *operands)`` is linear in ``g`` and
    in each operand but the k-th (whose shape only it reads)."""
    k = eqn.args[2]
    if not (isinstance(k, gast.Constant) and isinstance(k.value, int)):
        raise TransformError("einsum_adjoint needs a literal operand number", eqn.origin,
                             "call np.einsum instead")
    operands = [3 + j for j in range(len(eqn.args) - 3) if j != k.value]
    return product_rule(eqn, fwd, [0] + operands)


# --- the helpers: each is linear in the cotangent and in the other operand -------

@tangent(dot_adjoint_lhs)
def _(ans, g_in, a, b):
    ans_dot = dot_adjoint_lhs(g_in_dot, a, b) + dot_adjoint_lhs(g_in, a, b_dot)


@tangent(dot_adjoint_rhs)
def _(ans, g_in, a, b):
    ans_dot = dot_adjoint_rhs(g_in_dot, a, b) + dot_adjoint_rhs(g_in, a_dot, b)


@tangent(inner_adjoint_lhs)
def _(ans, g_in, a, b):
    ans_dot = inner_adjoint_lhs(g_in_dot, a, b) + inner_adjoint_lhs(g_in, a, b_dot)


@tangent(inner_adjoint_rhs)
def _(ans, g_in, a, b):
    ans_dot = inner_adjoint_rhs(g_in_dot, a, b) + inner_adjoint_rhs(g_in, a_dot, b)


@tangent(tensordot_adjoint_lhs)
def _(ans, g_in, a, b, axes=2):
    ans_dot = tensordot_adjoint_lhs(g_in_dot, a, b, axes=axes) \
        + tensordot_adjoint_lhs(g_in, a, b_dot, axes=axes)


@tangent(tensordot_adjoint_rhs)
def _(ans, g_in, a, b, axes=2):
    ans_dot = tensordot_adjoint_rhs(g_in_dot, a, b, axes=axes) \
        + tensordot_adjoint_rhs(g_in, a_dot, b, axes=axes)


@tangent(matmul_adjoint_lhs)
def _(ans, g_in, a, b):
    ans_dot = matmul_adjoint_lhs(g_in_dot, a, b) + matmul_adjoint_lhs(g_in, a, b_dot)


@tangent(matmul_adjoint_rhs)
def _(ans, g_in, a, b):
    ans_dot = matmul_adjoint_rhs(g_in_dot, a, b) + matmul_adjoint_rhs(g_in, a_dot, b)


# --- batching: contractions become batched matmuls or einsums ------------------

def _einsum(b, eqn, spec, operands):
    b.mark(eqn.out)
    return [gast.Assign(targets=[ir.name(eqn.out, gast.Store())],
                        value=call("np.einsum", ir.const(spec), *operands),
                        type_comment=None)]


@batching("matmul")
def batch_matmul(eqn, b):
    a, c = eqn.args
    ra, rc = b.rank(a), b.rank(c)
    if ra is None or rc is None or ra == 0 or rc == 0:
        return None
    return _matmul(eqn, b, a, c, ra, rc)


def _matmul(eqn, b, a, c, ra, rc):
    ba, bc = b.batched(a), b.batched(c)
    out = eqn.out
    if ba and not bc and (rc <= 2 or ra >= rc) and ra >= 1:
        b.mark(out)
        return respell(eqn, [a, c])
    if bc and not ba:
        if rc == 1 and ra <= 2:     # W @ x for each x: x @ W.T
            other = a if ra == 1 else gast.Attribute(value=a, attr="T", ctx=gast.Load())
            b.mark(out)
            return [gast.Assign(targets=[ir.name(out, gast.Store())],
                                value=gast.BinOp(left=c, op=gast.MatMult(), right=other),
                                type_comment=None)]
        if rc >= 2 and ra <= rc:
            b.mark(out)
            return respell(eqn, [a, c])
        return None
    if ba and bc and ra == rc and ra >= 2:
        b.mark(out)
        return respell(eqn, [a, c])
    lhs = "z..." + ("ij" if ra >= 2 else "j") if ra >= 2 else "zj"
    rhs = "z..." + ("jk" if rc >= 2 else "j") if rc >= 2 else "zj"
    res = "z..." + ("i" if ra >= 2 else "") + ("k" if rc >= 2 else "")
    if not ba:
        lhs = lhs[1:]
    if not bc:
        rhs = rhs[1:]
    if res == "z...":
        res = "z"
    return _einsum(b, eqn, f"{lhs},{rhs}->{res}", [a, c])


@batching("dot")
def batch_dot(eqn, b):
    a, c = eqn.args[:2]
    ra, rc = b.rank(a), b.rank(c)
    if ra is None or rc is None or len(eqn.args) > 2 or eqn.kwargs:
        return None
    if ra == 0 or rc == 0:
        return elementwise(ir.Eqn(eqn.outs, P.get("mul"), [a, c], origin=eqn.origin), b)
    if ra <= 2 and rc <= 2:
        return _matmul(ir.Eqn(eqn.outs, P.get("matmul"), [a, c], origin=eqn.origin), b,
                       a, c, ra, rc)
    return None


@batching("einsum")
def batch_einsum(eqn, b):
    spec = static_value(b, eqn.args[0])
    if not isinstance(spec, str) or eqn.kwargs:
        return None
    operands = eqn.args[1:]
    spec = spec.replace(" ", "")
    if "->" in spec:
        inputs, output = spec.split("->")
    else:
        inputs = spec
        letters = [ch for ch in inputs if ch.isalpha()]
        output = ("..." if "..." in inputs else "") + "".join(
            sorted(ch for ch in set(letters) if letters.count(ch) == 1))
    free = [ch for ch in string.ascii_letters if ch not in spec]
    z = free[0]
    specs = inputs.split(",")
    specs = [z + s if b.batched(o) else s for s, o in zip(specs, operands)]
    return _einsum(b, eqn, ",".join(specs) + "->" + z + output, operands)


# (spec of the first operand, of the second, of the result)
_MATMUL_LHS = {(1, 1): ("", "j", "j"), (1, 2): ("k", "jk", "j"),
               (2, 1): ("i", "j", "ij"), (2, 2): ("ik", "jk", "ij")}
_MATMUL_RHS = {(1, 1): ("j", "", "j"), (1, 2): ("i", "k", "ik"),
               (2, 1): ("ij", "i", "j"), (2, 2): ("ij", "ik", "jk")}


def _matmul_adjoint(table, pick):
    def rule(eqn, b):
        if eqn.kwargs or len(eqn.args) != 3:
            return None
        g, a, c = eqn.args
        ranks = (b.rank(a), b.rank(c))
        if ranks not in table:
            return None
        first, second = pick(g, a, c)
        if not b.batched(first) and not b.batched(second):
            # only the operand giving the shape is batched: per example
            return None
        s1, s2, out = table[ranks]
        s1 = "z" + s1 if b.batched(first) else s1
        s2 = "z" + s2 if b.batched(second) else s2
        return _einsum(b, eqn, f"{s1},{s2}->z{out}", [first, second])
    return rule


batching("matmul_adjoint_lhs", "dot_adjoint_lhs")(
    _matmul_adjoint(_MATMUL_LHS, lambda g, a, c: (g, c)))
batching("matmul_adjoint_rhs", "dot_adjoint_rhs")(
    _matmul_adjoint(_MATMUL_RHS, lambda g, a, c: (a, g)))
