"""Found by tools/fuzz.py (seed 150092, mode grad_vmap), shrunk: """
import numpy as np

from tangent_x import lax


def f(x, p):
    pw = p['w']
    pb = p['b']
    c1 = np.tanh(np.ones((2, 3)) * (-1.08)) * 1.0
    c1[:, :2] += np.dot(c1[1, :], pw)
    if np.sum(0.57 - x) > -0.0:
        pb += np.dot(pw, pb * pw)
        a3, *rest4 = (c1 * (-1.35), np.tanh(c1), np.sin(c1))
        k6 = a3 + sum(rest4)
        b2 = -(0.15 + k6)
    else:
        b2 = np.sin(c1)
    items7 = []
    for i8 in range(3):
        items7.append(x * (1.0 + 0.25 * i8))
    a9, *rest10 = items7
    k11 = a9 - sum(rest10)
    items12 = []
    for i13 in range(3):
        items12.append(b2[:, 0] * (1.0 + 0.25 * i13))
    k14 = items12[0] * 0.0
    while items12:
        k14 = 0.5 * k14 + items12.pop()
    return ((pb) * ((-1.02)) + pb, np.arctan(pw))


def loss(x, p):
    first, second = f(x, p)
    return first * 2.0 + np.sum(second)


SEED = 150092
MODE = 'grad_vmap'
ARGS = [np.array([1.2081359983590048, -1.2166641330897527]), {'w': np.array([-0.41191538456756915, -0.6823346326245543, 0.2191981587481846]), 'b': np.array(0.41532147030072886)}]
