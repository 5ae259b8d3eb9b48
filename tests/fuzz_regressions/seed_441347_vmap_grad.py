"""Found by tools/fuzz.py (seed 441347, mode vmap_grad), shrunk: ValueError: setting an array element with a sequence. The requested array has an inhomogeneous shape after 2 dimensions. The detected shape was (3, 3)"""
import numpy as np

from tangent_x import lax


def f(x, y):
    if y <= 0.5:
        return (y, x[0])
    acc12 = y
    pairs15 = []
    for i16 in range(3):
        pairs15.append((x[1, :], acc12, i16))
    k19 = pairs15[0][1] * 0.0 + pairs15[0][0] * 0.0
    for a17, b18, *_ in pairs15:
        k19 = k19 + a17 * b18
    return (0.5, k19)


def loss(x, y):
    first, second = f(x, y)
    return first * 2.0 + np.sum(second)


SEED = 441347
MODE = 'vmap_grad'
ARGS = [np.array([[1.005168325118285, 1.0343352465079056, 0.34366755963539264], [1.0773119969141915, 0.6994001301620241, 1.3729116111807103]]), -0.322]
