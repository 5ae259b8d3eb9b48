"""Every elementwise NumPy function with a derivative rule, each on its domain."""
import numpy as np

from . import G, N, P, U, case, each


@case(*each(N, (), (3,), (2, 3)))
def abs_(x):
    return np.sum(np.abs(x) * x)


@case(*each(P, (), (3,), (2, 3)))
def sqrt(x):
    return np.sum(np.sqrt(x))


@case(*each(N, (), (4,)))
def cbrt(x):
    return np.sum(np.cbrt(x * x + 0.5) * x)


@case(*each(N, (), (3,), (2, 3)))
def square(x):
    return np.sum(np.square(x) * x)


@case(*each(P, (), (3,)))
def reciprocal(x):
    return np.sum(np.reciprocal(x))


@case(*each(N, (), (3,), (2, 3)))
def exp(x):
    return np.sum(np.exp(x))


@case(*each(N, (), (3,)))
def exp2(x):
    return np.sum(np.exp2(x))


@case(*each(N, (), (3,)))
def expm1(x):
    return np.sum(np.expm1(x) * x)


@case(*each(P, (), (3,), (2, 3)))
def log(x):
    return np.sum(np.log(x))


@case(*each(P, (), (3,)))
def log2(x):
    return np.sum(np.log2(x))


@case(*each(P, (), (3,)))
def log10(x):
    return np.sum(np.log10(x) * x)


@case(*each(P, (), (3,)))
def log1p(x):
    return np.sum(np.log1p(x))


@case(*each(N, (), (3,), (2, 3)))
def sin(x):
    return np.sum(np.sin(x))


@case(*each(N, (), (3,)))
def cos(x):
    return np.sum(np.cos(x) * x)


@case(*each(U, (), (3,)))
def tan(x):
    return np.sum(np.tan(x))


@case(*each(U, (), (3,)))
def arcsin(x):
    return np.sum(np.arcsin(x))


@case(*each(U, (), (3,)))
def arccos(x):
    return np.sum(np.arccos(x))


@case(*each(N, (), (3,)))
def arctan(x):
    return np.sum(np.arctan(x))


@case((N(), P()), (N((3,)), P((3,))), (N((2, 3)), P((3,))), argnums=(0, 1))
def arctan2(y, x):
    return np.sum(np.arctan2(y, x))


@case(*each(N, (), (3,)))
def sinh(x):
    return np.sum(np.sinh(x))


@case(*each(N, (), (3,)))
def cosh(x):
    return np.sum(np.cosh(x))


@case(*each(N, (), (3,), (2, 3)))
def tanh(x):
    return np.sum(np.tanh(x))


@case(*each(N, (), (3,)))
def arcsinh(x):
    return np.sum(np.arcsinh(x))


@case(*each(G, (), (3,)))
def arccosh(x):
    return np.sum(np.arccosh(x))


@case(*each(U, (), (3,)))
def arctanh(x):
    return np.sum(np.arctanh(x))


@case((N(), N()), (N((3,)), N((3,))), (N((2, 3)), N((3,))), argnums=(0, 1))
def maximum(x, y):
    return np.sum(np.maximum(x, y) * x)


@case((N(), N()), (N((3,)), N((3,))), (N((2, 3)), N((3,))), argnums=(0, 1))
def minimum(x, y):
    return np.sum(np.minimum(x, y) * y)


@case(*each(N, (), (5,)))
def relu_via_maximum(x):
    return np.sum(np.maximum(x, 0.0) ** 2)


@case(*each(N, (), (5,), (2, 3)))
def clip(x):
    return np.sum(np.clip(x, -0.5, 0.5) * x)


@case(*each(N, (), (5,), (2, 3)))
def where(x):
    return np.sum(np.where(x > 0.0, x * x, -x))


@case((N((4,)), N((4,))), (N((2, 3)), N((2, 3))), argnums=(0, 1))
def where_two_inputs(x, y):
    return np.sum(np.where(x > y, np.sin(x), y * y))


@case((P(), N()), (P((3,)), N((3,))), argnums=(0, 1))
def power(x, y):
    return np.sum(np.power(x, y) + np.power(x, 3.0))


@case((N(), N()), (N((3,)), N((3,))), (N((2, 3)), N((3,))), argnums=(0, 1))
def logaddexp(x, y):
    return np.sum(np.logaddexp(x, y))


@case(*each(N, (), (3,)))
def sign_has_zero_derivative(x):
    return np.sum(np.sign(x) * x * x)


@case((N((3,)), N((3,))), (N((2, 3)), N((3,))), argnums=(0, 1))
def ufunc_function_forms(x, y):
    z = np.add(x, y) * np.subtract(x, y)
    return np.sum(np.multiply(z, np.negative(x)) + np.divide(z, 2.0))


@case(*each(N, (), (4,)))
def softplus(x):
    return np.sum(np.log1p(np.exp(x)))


@case(*each(N, (), (4,)))
def sigmoid(x):
    return np.sum(1.0 / (1.0 + np.exp(-x)))


@case(*each(N, (), (3,), (2, 3)))
def gaussian(x):
    return np.sum(np.exp(-x * x / 2.0) / np.sqrt(2.0 * np.pi))


@case(*each(N, (), (3,)))
def nested_elementwise(x):
    return np.sum(np.sin(np.cos(np.tanh(x)) * np.exp(-np.abs(x))))


@case(*each(P, (), (3,)))
def log_of_exp_of_sqrt(x):
    return np.sum(np.log(np.exp(np.sqrt(x)) + np.log1p(x)))
