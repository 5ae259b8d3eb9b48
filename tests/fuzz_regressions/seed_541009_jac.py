"""Found by tools/fuzz.py (seed 541009, mode jac), shrunk: IndexError: index 3 is out of bounds for axis 0 with size 3 [at lanes.py:75]"""
import numpy as np

from tangent_x import lax


def f(x, y):
    acc1 = y
    lst15 = [x * (1.0 + u13) for u13 in range(4) if u13 % 2 == 0]
    k16 = lst15[1] * lst15[-1]
    return (acc1, k16)
    return acc2


def loss(x, y):
    first, second = f(x, y)
    return first * 2.0 + np.sum(second)


SEED = 541009
MODE = 'jac'
ARGS = [np.array([0.43060043454170227, -0.8193278312683105, 0.5570879578590393], dtype=np.float32), np.array(-0.3269999921321869, dtype=np.float32)]
