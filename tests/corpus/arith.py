"""Straight-line arithmetic: + - * / // % ** @, unary minus, Python constants."""
import math

import numpy as np

from . import C, N, P, case, each


@case(*each(N, (), (3,), (2, 3)))
def poly(x):
    return np.sum(3.0 * x * x - 2.0 * x + 1.5)


@case(*each(N, (), (4,)))
def cubic_minus_linear(x):
    return np.sum(x * x * x - 0.5 * x)


@case(*each(N, (), (3,), (2, 2)))
def unary_minus(x):
    return np.sum(-x * -x - (-x))


@case(*each(N, (), (3,)))
def double_negation(x):
    return np.sum(-(-(x * 2.0)) * x)


@case(*each(N, (), (2, 3)))
def subtract_chain(x):
    return np.sum((x - 2.5) * (1.0 - x) - x)


@case((P(), P()), (P((3,)), P((3,))), (P((2, 3)), P((3,))))
def divide_both(x, y):
    return np.sum(x / y + y / x)


@case(*each(P, (), (3,), (2, 2)))
def divide_by_constant_and_into_constant(x):
    return np.sum(1.0 / x + x / 4.0)


@case(*each(N, (), (3,)))
def power_int_constants(x):
    return np.sum(x ** 3 + x ** 2 - x ** 1)


@case(*each(P, (), (3,), (2, 3)))
def power_float_constants(x):
    return np.sum(x ** 2.5 + x ** 0.5 + x ** -1.5)


@case((P(), N()), (P((3,)), N((3,))), (P((2, 3)), N((3,))), argnums=(0, 1))
def power_variable_exponent(x, y):
    return np.sum(x ** y)


@case(*each(N, (), (3,)))
def constant_to_the_x(x):
    return np.sum(2.0 ** x + 0.5 ** (x * x))


@case(*each(N, (3,), (5,)))
def matmul_dot_self(x):
    return x @ x


@case((N((2, 3)), N((3,))), (N((4, 2)), N((2,))), argnums=(0, 1))
def matmul_matrix_vector(W, x):
    y = W @ x
    return y @ y


@case((N((2, 3)), N((3, 4))), (N((1, 2)), N((2, 2))), argnums=(0, 1))
def matmul_matrix_matrix(A, B):
    return np.sum((A @ B) * (A @ B))


@case((N((3,)), N((3, 3))), (N((2,)), N((2, 2))), argnums=(0, 1))
def quadratic_form(x, A):
    return x @ A @ x


@case((N((3,)), P((3,))), (N((5,)), P((5,))), argnums=(0, 1))
def all_operators(x, y):
    z = -(x * y - x / y) ** 2.0 + (x + y) @ (x - y)
    return z @ z / 2.0 + x @ y ** 2


@case((N((2, 3)), N((3,))), (N((4, 1)), N((1, 3))), (N((3,)), N(())), argnums=(0, 1))
def broadcast_add_sub(x, y):
    return np.sum((x + y) * (x - y))


@case((N(()), N((3,))), (N(()), N((2, 3))), argnums=(0, 1))
def scalar_times_array(a, y):
    return np.sum(a * y * y + a * a)


@case(*each(N, (), (3,)))
def fan_out(x):
    y = x * x
    z = y * y
    return np.sum(z * y + y - z)


@case(*each(N, (), (2, 3)))
def rebinding(x):
    x = x * 2.0
    x = x + 1.0
    x = x * x
    return np.sum(x)


@case(*each(N, (), (3,)))
def tuple_unpacking(x):
    a, b = x * 2.0, x + 1.0
    b, a = a, b
    return np.sum(a * b * b)


@case(*each(N, (), (3,)))
def python_int_constants(x):
    return np.sum(x * 2 + 3 - x * x * 4)


@case(*each(N, (), (4,)))
def scientific_and_named_constants(x):
    return np.sum(1e-3 * x * x + np.pi * x + math.pi * x * x + np.e)


@case(*each(N, (), (3,)))
def modulo(x):
    return np.sum((x % 1.5) * x)


@case(*each(N, (), (3,)))
def floor_divide(x):
    return np.sum((x // 0.7) * x)


@case(*each(N, (), (3,)))
def constant_contribution(x):
    return np.sum(x * 0.0 + 1.0 + x)


@case((N(()), N(()), N(())), (N((3,)), N((3,)), N((3,))), argnums=(0, 1, 2))
def three_arguments(x, y, z):
    return np.sum(x * y + y * z - z * x / 3.0)


@case((N(()), C(3)), (N((3,)), C(2)))
def integer_argument_not_differentiated(x, n):
    return np.sum(x ** n * float(n))
