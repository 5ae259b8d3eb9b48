"""Found by tools/fuzz.py (seed 170046, mode vmap_grad), shrunk: ValueError: Too few leaves for PyTreeDef; expected 3, got 2 [at tree_util.py:133]"""
import numpy as np

from tangent_x import lax


def f(x, y):
    items5 = []
    items5.append(y)
    k7 = items5[0] * 0.0
    while items5:
        k7 = 0.5 * k7 + items5.pop()
    return k7


def loss(x, y):
    return np.sum(np.sin(f(x, y)))


SEED = 170046
MODE = 'vmap_grad'
ARGS = [-0.645, np.array([[-0.21607780505745122, -1.0806614769245932, 0.4512364690474926], [-0.5905658256613157, 1.05160258030925, -1.038230250699712]])]
