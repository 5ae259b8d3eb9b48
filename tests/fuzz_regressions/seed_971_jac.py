"""Found by tools/fuzz.py (seed 971, mode jac), shrunk: IndexError: index 2 is out of bounds for axis 0 with size 2 [at lanes.py:61]"""
import numpy as np

from tangent_x import lax


def f(x, y):
    l1, ys4 = lax.scan(lambda a2, xi3: (0.6 * a2 + 0.4 * a2, np.sum(a2) * xi3), np.array([0.5, -0.25]) * 0.5, x)
    if 0.5:
        return ys4
    return l1 > 0.5


def loss(x, y):
    return np.sum(np.sin(f(x, y)))


SEED = 971
MODE = 'jac'
ARGS = [np.array([-1.2298978907672666, 0.10522444118476715, -1.44368877943743]), np.array([[0.5269596170938184, -0.3934178090161531, 1.2205226226960004], [0.5843837480013048, -0.38495411735748597, -0.9763276554944206]])]
