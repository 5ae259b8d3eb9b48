"""Rules for ``np.linalg``: solve, inv, det, slogdet and norm, and the
helpers solve's rules emit (``solve_transposed``, ``solve_adjoint_lhs``,
``solve_matvec``), so that its derivatives can be differentiated again.
Products and contractions (``np.dot``, ``@``, einsum...): ``products``.
"""
import gast
import numpy as np

from ..runtime import (norm_adjoint, solve_adjoint_lhs, solve_matvec,  # noqa: F401
                       solve_transposed, unbroadcast, unreduce)
from .registry import adjoint, tangent
from .arithmetic import adjoint_case, argument
from .forward_util import tangent_case


# --- np.linalg -----------------------------------------------------------------

@adjoint(np.linalg.solve)
def _(g, ans, a, b):
    """x = solve(a, b) means a @ x = b: b's cotangent y solves with a's
    transpose, and a's is -y @ x.T."""
    y = solve_transposed(a, g, b)
    b_bar = unbroadcast(y, b)
    a_bar = solve_adjoint_lhs(y, a, b, ans)


@adjoint(solve_transposed)
def _(g, ans, a, g_in, b):
    """y = solve(a.T, g_in): g_in's cotangent solves with a (the transpose of
    the transpose); a's is -y @ z.T for that solution z."""
    z = solve_transposed(np.swapaxes(a, -1, -2), g, b)
    g_in_bar = z
    a_bar = solve_adjoint_lhs(ans, a, b, z)


@adjoint(solve_adjoint_lhs)
def _(g, ans, y, a, b, x):
    """ans = -y @ x.T (an outer product for vectors): bilinear in y and x."""
    y_bar = -solve_matvec(g, x, a, b)
    x_bar = -solve_matvec(np.swapaxes(g, -1, -2), y, a, b)


@adjoint(np.linalg.inv)
def _(g, ans, a):
    ans_t = np.swapaxes(ans, -1, -2)
    a_bar = -(ans_t @ g @ ans_t)


@adjoint(np.linalg.det)
def _(g, ans, a):
    """d det(a) = det(a) * inv(a).T"""
    a_bar = np.expand_dims(g * ans, (-2, -1)) * np.swapaxes(np.linalg.inv(a), -1, -2)


@adjoint(np.linalg.slogdet)
def _(g, ans, a):
    """Only log|det| has a derivative (the sign is piecewise constant)."""
    a_bar = np.expand_dims(g[1], (-2, -1)) * np.swapaxes(np.linalg.inv(a), -1, -2)


def _euclidean(eqn):
    """norm(x) or norm(x, None / 'fro', ...): the root of the sum of squares."""
    ord_ = argument(eqn, 1, "ord")
    return ord_ is None or (isinstance(ord_, gast.Constant) and ord_.value in (None, "fro"))


@adjoint_case(np.linalg.norm, when=_euclidean)
def _(g, ans, x, ord=None, axis=None, keepdims=False):
    x_bar = unreduce(g / ans, x, axis=axis, keepdims=keepdims) * x


@adjoint_case(np.linalg.norm)
def _(g, ans, x, ord=None, axis=None, keepdims=False):
    x_bar = norm_adjoint(g, ans, x, ord=ord, axis=axis, keepdims=keepdims)


# --- forward mode ---------------------------------------------------------------
# d solve(a, b) = solve(a, db - da @ x), d inv(a) = -inv(a) @ da @ inv(a),
# d det(a) = det(a) * tr(inv(a) @ da).


@tangent(np.linalg.solve)
def _(ans, a, b):
    """x = solve(a, b): dx = solve(a, db) - solve(a, da @ x) (the second solve
    spelled with ``solve_transposed`` of a.T, which reads x as solve reads b)."""
    ans_dot = np.linalg.solve(a, b_dot) \
        - solve_transposed(np.swapaxes(a, -1, -2), solve_matvec(a_dot, ans, a, b), b)


@tangent(np.linalg.inv)
def _(ans, a):
    ans_dot = -(ans @ a_dot @ ans)


@tangent(np.linalg.det)
def _(ans, a):
    inv_t = np.swapaxes(np.linalg.inv(a), -1, -2)
    ans_dot = ans * np.sum(inv_t * a_dot, axis=(-2, -1))


if hasattr(np.linalg.slogdet(np.eye(1)), "_replace"):
    @tangent(np.linalg.slogdet)
    def _(ans, a):
        """Only log|det| has a tangent (the sign is piecewise constant)."""
        inv_t = np.swapaxes(np.linalg.inv(a), -1, -2)
        ans_dot = ans._replace(sign=np.zeros_like(ans.sign),
                               logabsdet=np.sum(inv_t * a_dot, axis=(-2, -1)))
else:       # NumPy 1: a plain tuple
    @tangent(np.linalg.slogdet)
    def _(ans, a):
        inv_t = np.swapaxes(np.linalg.inv(a), -1, -2)
        ans_dot = (np.zeros_like(ans[0]), np.sum(inv_t * a_dot, axis=(-2, -1)))


@tangent_case(np.linalg.norm, when=_euclidean)
def _(ans, x, ord=None, axis=None, keepdims=False):
    ans_dot = np.sum(x * x_dot, axis=axis, keepdims=keepdims) / ans


@tangent_case(np.linalg.norm)
def _(ans, x, ord=None, axis=None, keepdims=False):
    """The gradient of each norm (``norm_adjoint`` of a unit cotangent)
    contracted with the tangent over the reduced axes."""
    ans_dot = np.sum(norm_adjoint(np.ones_like(ans), ans, x, ord=ord, axis=axis,
                                  keepdims=keepdims) * x_dot, axis=axis, keepdims=keepdims)


# --- the solve helpers: linear in each operand ------------------------------------

@tangent(solve_matvec)
def _(ans, m, x, a, b):
    ans_dot = solve_matvec(m_dot, x, a, b) + solve_matvec(m, x_dot, a, b)


@adjoint(solve_matvec)
def _(g, ans, m, x, a, b):
    """m's cotangent is g x^T (an outer product for vectors), x's is m^T g."""
    m_bar = -solve_adjoint_lhs(g, a, b, x)
    x_bar = solve_matvec(np.swapaxes(m, -1, -2), g, a, b)


@tangent(solve_transposed)
def _(ans, a, g, b):
    """y solves a.T y = g: dy = solve_transposed(a, dg) - solve_transposed(a, da.T @ y)."""
    ans_dot = solve_transposed(a, g_dot, b) \
        - solve_transposed(a, solve_matvec(np.swapaxes(a_dot, -1, -2), ans, a, b), b)


@tangent(solve_adjoint_lhs)
def _(ans, y, a, b, x):
    ans_dot = solve_adjoint_lhs(y_dot, a, b, x) + solve_adjoint_lhs(y, a, b, x_dot)
