"""Found by tools/fuzz.py (seed 124298, mode grad_vmap), shrunk: ValueError: cannot reshape array of size 2 into shape () [at fromnumeric.py:54]"""
import numpy as np

from tangent_x import lax


def f(x):
    l1, ys4 = lax.scan(lambda a2, xi3: (0.6 * a2 + 0.4 * x, np.sum(a2) * xi3), x, np.linspace(-1.0, 1.0, 3) * 0.5)
    if (0.5 <= (-0.56)) or (0.5 > 0.5):
        return 1.1
    acc5 = 0.5
    w6 = np.tanh(1.46)
    return (w6, w6 * l1)


def loss(x):
    first, second = f(x)
    return first * 2.0 + np.sum(second)


SEED = 124298
MODE = 'grad_vmap'
ARGS = [np.array([0.24811384281201798, 0.504866029007335])]
