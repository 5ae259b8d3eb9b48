"""Found by tools/fuzz.py (seed 430453, mode vmap), shrunk: vmap in_axes=(None, 1, 0): leaf 0 has dtype float64, expected float32"""
import numpy as np

from tangent_x import lax


def f(x, y, z):
    l7 = lax.fori_loop(0, 1, lambda i9, a8: 0.6 * a8 + 0.4 * a8, (0.5 if y.max() else 0.5))
    l7 += l7
    v10 = x[-1] - -l7
    return (v10, x)


def loss(x, y, z):
    first, second = f(x, y, z)
    return first * 2.0 + np.sum(second)


SEED = 430453
MODE = 'vmap'
ARGS = [np.array([0.9858111143112183, -0.8163309693336487, -0.03485799580812454], dtype=np.float32), np.array([0.3662779629230499, -0.3589102029800415], dtype=np.float32), np.array([[-1.3259738683700562, 1.232468605041504, 1.4131613969802856], [1.0898313522338867, 1.1357215642929077, 1.4582463502883911]], dtype=np.float32)]
