"""Found by tools/fuzz.py (seed 491467, mode vmap), shrunk: vmap in_axes=(-1,): leaf 0 differs by 0.936: got [[0.936482, -0.069975, 0.382768], [-0.078774, -0.845677, -0.171133], [0.123197, -0.147682, -0.269481]"""
import numpy as np

from tangent_x import lax


def f(x):
    if np.mean(0.5) <= (-0.76):
        x = 0.7 * x + 0.3 * x
    elif 0.5 > 0.5:
        pass
    else:
        b4 = x
    x -= x
    return b4


def loss(x):
    return np.sum(np.sin(f(x)))


SEED = 491467
MODE = 'vmap'
ARGS = [np.array([1.1778096524527593, 0.025843909461652492, 0.5751423995750731])]
