"""Found by tools/fuzz.py (seed 300106, modes jit, jit_vmap), shrunk by hand: refused: the list 'items1_3' is filled differently on two paths (a list appended to under an if in a loop, read back reversed: the python stage kept its appends functional)"""
import numpy as np


def f(x, y):
    items1 = []
    i2 = 0
    while i2 < 3:
        if np.sum(x) > 0.16:
            items1.append((y / (1.0 + y * y)) * (1.0 + 0.25 * i2))
        i2 += 1
    k4 = len(items1) * 0.1 + sum(np.sum(t3) for t3 in items1[::-1])
    return np.sin(k4)


def loss(x, y):
    return f(x, y)


SEED = 300106
MODES = ('jit', 'jit_vmap')
ARGS = [np.array([1.4318354003752671, -0.12623197729248004, -0.8337835440849378]), np.array([-1.2917047386170537, 1.3597919378287218, 0.17669065737557177])]
