"""Found by tools/fuzz.py (seed 480284, mode grad), shrunk: IndexError: too many indices for array: array is 0-dimensional, but 1 were indexed [at indexing.py:41]"""
import numpy as np

from tangent_x import lax


def f(x, y):
    def g1(p2):
        return p2
    v3 = g1(0.5)
    acc4 = x
    for i5 in range(3):
        i5 -= acc4
        if 0.5:
            break
        acc4 = 0.7 * acc4 + 0.3 * i5
    x -= acc4
    return (x, v3)


def loss(x, y):
    first, second = f(x, y)
    return first * 2.0 + np.sum(second)


SEED = 480284
MODE = 'grad'
ARGS = [0.724, np.array([-1.3275678366633477, 1.2828131146133654])]
