"""Rules for Python's arithmetic operators (and their NumPy ufuncs).

Broadcasting is not handled here: the reverse transform sums each
contribution back to its operand's shape for every primitive marked
``broadcasting`` (see primitives.py).
"""
import numpy as np

from ..runtime import unbroadcast  # noqa: F401
from . import adjoint


@adjoint("add")
def _(g, ans, x, y):
    x_bar = g
    y_bar = g


@adjoint("sub")
def _(g, ans, x, y):
    x_bar = g
    y_bar = -g


@adjoint("mul")
def _(g, ans, x, y):
    x_bar = g * y
    y_bar = g * x


@adjoint("truediv")
def _(g, ans, x, y):
    x_bar = g / y
    y_bar = -g * ans / y


@adjoint("neg")
def _(g, ans, x):
    x_bar = -g


@adjoint("pow")
def _(g, ans, x, y):
    x_bar = g * y * x ** (y - 1)
    y_bar = g * ans * np.log(np.where(x > 0, x, 1.0))


@adjoint("mod")
def _(g, ans, x, y):
    x_bar = g
    y_bar = -g * np.floor_divide(x, y)


@adjoint("matmul")
def _(g, ans, x, y):
    x_bar = matmul_adjoint_lhs(g, x, y)
    y_bar = matmul_adjoint_rhs(g, x, y)


from ..runtime import matmul_adjoint_lhs, matmul_adjoint_rhs  # noqa: E402,F401
