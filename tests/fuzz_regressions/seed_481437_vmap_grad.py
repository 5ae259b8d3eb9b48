"""Found by tools/fuzz.py (seed 481437, mode vmap_grad), shrunk: UnboundLocalError: local variable 'v10' is used but was not assigned on the path the code took [at values.py:26]"""
import numpy as np

from tangent_x import lax


def f(x, y):
    acc8 = y
    for i9 in range(3):
        if np.sum(np.log(1.0 + x * x)) >= 0.5:
            v10 = 0.5
            x = 0.5
        acc8 = 0.7 * acc8 + 0.3 * v10
    return x


def loss(x, y):
    return np.sum(np.sin(f(x, y)))


SEED = 481437
MODE = 'vmap_grad'
ARGS = [np.array([[-0.16592362727442533, -0.784076403202459, 0.8563952528166681], [1.1196681021226347, 0.6881942054733159, 0.8928438522001767]]), np.array([[-0.5295943153424253, -0.33800812216613974, -1.000472539837819], [0.701910157586167, -0.28481270624657595, 0.06516908556213874]])]
