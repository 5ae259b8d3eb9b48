"""Found by tools/fuzz.py (seed 219, mode vmap_grad), shrunk: TypeError: 'float' object is not subscriptable [at lanes.py:58]"""
import numpy as np

from tangent_x import lax


def f(x, y):
    v13 = y
    lst19 = [u17 for u17 in v13]
    a20, *rest21 = lst19
    k22 = a20 - sum(rest21)
    return k22


def loss(x, y):
    return f(x, y)


SEED = 219
MODE = 'vmap_grad'
ARGS = [np.array([1.0882675647735596, 0.3487146496772766], dtype=np.float32), np.array([-0.15701502561569214, -0.6918127536773682, 0.459428608417511], dtype=np.float32)]
