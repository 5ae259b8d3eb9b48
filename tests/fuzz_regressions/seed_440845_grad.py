"""Found by tools/fuzz.py (seed 440845, mode grad), shrunk: value: leaf 0 differs by 0.693: got -0.3543680012226105, expected -1.047635"""
import numpy as np

from tangent_x import lax


def helper1(q2):
    q2 -= 1.23 * q2
    return q2


def f(x, y, z):
    c3 = y * 1.0
    for i4 in range(1, 2):
        c3[i4] = c3[i4] * helper1(z) + np.sin(c3[i4 - 1])
    return (x, z)


def loss(x, y, z):
    first, second = f(x, y, z)
    return first * 2.0 + np.sum(second)


SEED = 440845
MODE = 'grad'
ARGS = [np.array(-0.45899999141693115, dtype=np.float32), np.array([[0.3732895255088806, -0.5041244029998779, -0.4303726851940155], [-0.15569257736206055, 1.1943302154541016, 0.8938233256340027]], dtype=np.float32), np.array([-0.3216293156147003, 0.5346448421478271, 0.35061612725257874], dtype=np.float32)]
