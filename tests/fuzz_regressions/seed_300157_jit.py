"""Found by tools/fuzz.py (seed 300157, modes jit, jit_grad, jit_vmap), shrunk by hand: refused: Numba cannot compile this: No implementation of function getitem(Tuple(float64, array(float64, 1d, C)), int64) (a list of (number, array) tuples read reversed, pairs1[::-1])"""
import numpy as np


def f(x):
    pairs1 = []
    for i2 in range(2):
        pairs1.append((np.tanh(x) * (1.0 + 0.25 * i2), -(x * (np.linspace(-1.0, 1.0, 3) * (-1.22)))))
    k4 = sum(t3[0] - np.sum(t3[1]) for t3 in pairs1[::-1])
    return k4


def loss(x):
    return f(x)


SEED = 300157
MODES = ('jit', 'jit_grad', 'jit_vmap')
ARGS = [-0.299]
