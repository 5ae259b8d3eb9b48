"""Import styles resolved to the same primitive, and the ``math`` module on scalars.

``import numpy`` without an alias is one of the cases that broke Tangent.
"""
import math
import numpy
import numpy as onp
from math import exp as math_exp, sin as msin
from numpy import cos as np_cos, exp, sin, tanh
from numpy import sum as nsum

import numpy as np

from . import N, P, case


# a Python float and a 0-d array (math functions accept both)
SCALARS_N = [(N(),), (N(0),)]
SCALARS_P = [(P(),), (P(0),)]


@case(*SCALARS_N)
def math_sin_cos(x):
    return math.sin(x) * math.cos(x)


@case(*SCALARS_N)
def math_exp_tanh(x):
    return math.exp(x) + math.tanh(x) * 2.0


@case(*SCALARS_P)
def math_log_sqrt(x):
    return math.log(x) * math.sqrt(x)


@case(*SCALARS_N)
def math_atan_sinh_cosh(x):
    return math.atan(x) + math.sinh(x) - math.cosh(x)


@case(*SCALARS_P)
def math_pow_and_constants(x):
    return math.pow(x, 3.0) + math.pi * x + math.e


@case((N(), P()), (N(), N()), argnums=(0, 1))
def math_atan2(x, y):
    return math.atan2(x, y) * x


@case((N(), P()), (N(), N()), argnums=(0, 1))
def math_hypot(x, y):
    return math.hypot(x, y)


@case(*SCALARS_N)
def math_from_import_alias(x):
    return msin(x) * math_exp(x)


@case(*SCALARS_N)
def math_and_numpy_mixed(x):
    return math.sin(x) + np.sin(x) * math.cos(x)


@case((N(),), (N((3,)),), (N((2, 3)),))
def numpy_without_alias(x):
    return numpy.sum(numpy.sin(x) * numpy.exp(x))


@case((N((3,)), N((3,))), (N((2,)), N((2,))), argnums=(0, 1))
def numpy_without_alias_dot(x, y):
    return numpy.dot(numpy.tanh(x), y) + numpy.square(x) @ numpy.exp(y)


@case((N(),), (N((3,)),))
def numpy_other_alias(x):
    return onp.sum(onp.cos(x) * x)


@case((N(),), (N((3,)),), (N((2, 2)),))
def from_numpy_import(x):
    return nsum(sin(x) * exp(x))


@case((N(),), (N((3,)),))
def from_numpy_import_alias(x):
    return nsum(np_cos(x) * x)


@case((N(),), (N((3,)),))
def three_import_styles_same_primitive(x):
    return np.sum(numpy.tanh(x) + np.tanh(x) * onp.tanh(x) + tanh(x))
