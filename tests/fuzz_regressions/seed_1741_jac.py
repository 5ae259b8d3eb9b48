"""Found by tools/fuzz.py (seed 1741, mode jac), shrunk: IndexError: invalid index to scalar variable. [at runtime.py:741]"""
import numpy as np

from tangent_x import lax


def f(x, y, z):
    l22, ys25 = lax.scan(lambda a23, xi24: (0.6 * a23 + 0.4 * x, np.sum(a23) * xi24), x, y[0])
    if 0.5 < 0.5:
        return x
    b28 = l22
    c30 = ys25 * 1.0
    return (0.5, b28)


def loss(x, y, z):
    first, second = f(x, y, z)
    return first * 2.0 + np.sum(second)


SEED = 1741
MODE = 'jac'
ARGS = [1.266, np.array([[1.2902372168033085, 1.2098645738099978, -0.23884513385958517], [0.9445721493436321, 1.4399502664882649, -0.6231501068234937]]), np.array([[1.3657081970490057, -1.2355508135555242, -0.05653391319225154], [-1.1596315764396121, -1.1539523287853566, 0.05705492928958966]])]
