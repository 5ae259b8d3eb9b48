"""Calls into user functions: helpers, defaults and keywords, nested defs,
closures, module globals, lambdas (including two on one line)."""
import numpy as np

from . import N, P, case, each, register
from .elementwise import sigmoid as _sigmoid_from_other_module

W_GLOBAL = np.array([0.5, -1.0, 2.0])
SCALE_GLOBAL = 1.5


def _square(x):
    return x * x


def _scale(x, a=2.0, b=1.0):
    return a * x + b


def _kwonly(x, *, power=2.0, shift=0.0):
    return (x - shift) ** power


def _square_of_scaled(x):
    return _square(_scale(x, b=0.5))


def _polar(x, y):
    return np.sqrt(x * x + y * y), np.arctan2(y, x)


def _apply(fn, x):
    return fn(x)


def _apply_twice(fn, x):
    return fn(fn(x))


def _sum_all(*xs):
    return xs[0] + xs[1] * xs[2]


@case(*each(N, (), (3,), (2, 3)))
def module_helper(x):
    return np.sum(_square(np.sin(x)))


@case(*each(N, (), (3,)))
def helper_called_twice(x):
    return np.sum(_square(x) * _square(np.cos(x)))


@case(*each(N, (), (3,)))
def helper_default_args(x):
    return np.sum(_scale(x) * _scale(x, 3.0) * _scale(x, b=-1.0))


@case(*each(N, (), (3,)))
def helper_keyword_args_differentiable(x):
    return np.sum(_scale(x, b=x * x, a=np.sin(x)))


@case(*each(N, (), (3,)))
def helper_keyword_only_args(x):
    return np.sum(_kwonly(x, power=3.0, shift=0.5) + _kwonly(x))


@case(*each(N, (), (3,)))
def helper_calls_helper(x):
    return np.sum(_square_of_scaled(x) + _square(_square(x)))


@case((N(), P()), (N((3,)), P((3,))), argnums=(0, 1))
def helper_returning_tuple(x, y):
    r, theta = _polar(x, y)
    return np.sum(r * theta + r)


@case((N(), N(), N()), (N((3,)), N((3,)), N(())), argnums=(0, 1, 2))
def helper_varargs(x, y, z):
    return np.sum(_sum_all(x, y, z) * x)


@case(*each(N, (), (3,)))
def helper_from_other_module(x):
    return np.sum(_sigmoid_from_other_module(x) * x)


@case(*each(N, (), (3,)))
def helper_defined_later(x):
    return np.sum(_later_helper(x) * 2.0)


def _later_helper(x):
    return np.tanh(x) * x


@case(*each(N, (), (3,)))
def nested_def(x):
    def inner(t):
        return t * t + 1.0
    return np.sum(inner(x) * inner(np.sin(x)))


@case(*each(N, (), (3,)))
def nested_def_closing_over_argument(x):
    def inner(t):
        return t * x + x * x
    return np.sum(inner(x) * inner(2.0 * x))


@case(*each(N, (), (3,)))
def nested_def_closing_over_local(x):
    y = np.exp(x)

    def inner(t):
        return t * y
    return np.sum(inner(x) + inner(1.0))


@case(*each(N, (), (3,)))
def nested_def_calls_nested_def(x):
    def a(t):
        return np.sin(t) * 2.0

    def b(t):
        return a(t) * a(t * t)
    return np.sum(b(x))


def _make_scaled(a):
    def scaled(x):
        return np.sum(a * x * x)
    return scaled


def _make_affine(w, c):
    def affine(x):
        return np.sum(np.tanh(w * x + c) * x)
    return affine


closure_scalar = register(_make_scaled(2.5), *each(N, (), (3,)), name="closure_scalar")
closure_array = register(_make_affine(np.array([0.3, -1.2, 2.0]), 0.5),
                         *each(N, (3,), (2, 3)), name="closure_array")


@case(*each(N, (3,), (2, 3)))
def closure_module_global_array(x):
    return np.sum(np.sin(x * W_GLOBAL) + x * SCALE_GLOBAL)


@case(*each(N, (3,), (4, 3)))
def closure_module_global_matmul(x):
    y = x @ W_GLOBAL
    return np.sum(y * y)


cube = lambda x: np.sum(x * x * x)  # noqa: E731
register(cube, *each(N, (), (3,)), name="lambda_module_level")

dbl, tpl = lambda x: x * 2.0, lambda x: x * 3.0  # noqa: E731
register(dbl, (N(),), (P(),), name="two_lambdas_one_line_first")
register(tpl, (N(),), (P(),), name="two_lambdas_one_line_second")

lam_sum_a, lam_sum_b = lambda x: np.sum(x * x), lambda x: np.sum(np.sin(x))  # noqa: E731
register(lam_sum_a, *each(N, (), (3,)), name="two_array_lambdas_one_line_first")
register(lam_sum_b, *each(N, (), (3,)), name="two_array_lambdas_one_line_second")


@case(*each(N, (), (3,)))
def calls_two_lambdas_from_one_line(x):
    return np.sum(dbl(x) * tpl(x) + dbl(tpl(x)))


register(lambda x, y: np.sum(np.sin(x) * y + x), (N(), N()), (N((3,)), N((3,))),
         name="inline_lambda", argnums=(0, 1))


@case(*each(N, (), (3,)))
def lambda_assigned_inside(x):
    sq = lambda t: t * t  # noqa: E731
    return np.sum(sq(x) + sq(np.sin(x)))


@case(*each(N, (), (3,)))
def two_lambdas_one_line_inside(x):
    a, b = lambda t: t * 2.0, lambda t: t * t  # noqa: E731
    return np.sum(a(x) + b(x) * a(b(x)))


@case(*each(N, (), (3,)))
def lambda_passed_to_helper(x):
    return np.sum(_apply(lambda t: np.exp(t) * t, x))


@case(*each(N, (), (3,)))
def lambda_closing_over_argument_passed_to_helper(x):
    return np.sum(_apply(lambda t: t * x + np.cos(t), x * 2.0))


@case(*each(N, (), (3,)))
def helper_passed_to_helper(x):
    return np.sum(_apply_twice(_square, np.sin(x)) + _apply(np.tanh, x))
