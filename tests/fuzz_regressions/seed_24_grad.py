"""Found by tools/fuzz.py (seed 24, mode grad), shrunk: grad: leaf 0 differs by 0.438: got [-0.504864, -0.504864, -0.504864], expected [-0.504864, -0.066519, -0.660943]"""
import numpy as np

from tangent_x import lax


def f(x):
    x *= x
    return np.mean(x)


def loss(x):
    return f(x)


SEED = 24
MODE = 'grad'
ARGS = [np.array([-0.7572961002631404, -0.0997782479978575, -0.9914141730229153])]
