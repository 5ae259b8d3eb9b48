"""Found by tools/fuzz.py (seed 410792, mode grad), shrunk: value: leaf 0 has dtype float64, expected float32"""
import numpy as np

from tangent_x import lax


def f(x, y, z):
    w10 = np.tanh(0.5)
    w12 = np.tanh(x)
    k13 = 0
    while w12 < 0.5 and k13 < 5:
        z -= w12
        w12 = w12 + 0.3 + 0.1 * np.sin(w10)
    return z


def loss(x, y, z):
    return f(x, y, z)


SEED = 410792
MODE = 'grad'
ARGS = [np.array(-0.6499999761581421, dtype=np.float32), np.array([0.4539142847061157, 1.3236401081085205], dtype=np.float32), np.array(1.0570000410079956, dtype=np.float32)]
