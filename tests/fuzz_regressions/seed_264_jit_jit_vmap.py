"""Found by tools/fuzz.py (seed 264, modes jit and jit_vmap), shrunk: jit: leaf 0 has dtype float64, expected float32"""
import numpy as np

from tangent_x import lax


def f(x, y, z):
    items10 = []
    for i11 in range(3):
        items10.append(x)
    k12 = 0.0
    for t13 in items10:
        k12 = 0.5 * k12 + np.sum(t13)
    return (k12, z)


def loss(x, y, z):
    first, second = f(x, y, z)
    return first * 2.0 + np.sum(second)


SEED = 264
MODES = ('jit', 'jit_vmap')
ARGS = [np.array([-0.9984490275382996, -0.4808715581893921], dtype=np.float32), np.array(0.49900001287460327, dtype=np.float32), np.array([-0.9219409227371216, 1.3386225700378418, 0.5020318627357483], dtype=np.float32)]
