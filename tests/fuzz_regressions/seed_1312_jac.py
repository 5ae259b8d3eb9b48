"""Found by tools/fuzz.py (seed 1312, mode jac), shrunk: IndexError: index 3 is out of bounds for axis 0 with size 3 [at lanes.py:61]"""
import numpy as np

from tangent_x import lax


def f(x, y):
    l1, ys4 = lax.scan(lambda a2, xi3: (0.6 * a2 + 0.4 * a2, np.sum(a2) * xi3), 0.5, x)
    v5 = ys4
    if l1 > 0.5:
        return l1
    c6 = v5 * 1.0
    return (0.5, x)


def loss(x, y):
    first, second = f(x, y)
    return first * 2.0 + np.sum(second)


SEED = 1312
MODE = 'jac'
ARGS = [np.array([-0.5624211213035868, 0.9322620726788289, -0.3190070394009048]), np.array([[1.2097850118560745, 1.0768316431229463, -0.6856759886706499], [-1.147370292761368, 1.3267173141115833, 1.3272289818535206]])]
