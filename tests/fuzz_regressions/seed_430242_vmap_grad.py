"""Found by tools/fuzz.py (seed 430242, mode vmap_grad), shrunk: vmap(grad) in_axes=(None, 0): leaf 0 differs by 1: got [[[0.0, 0.0, 0.0], [0.0, 0.0, 1.0]], [[0.0, 0.0, 0.0], [0.0, 0.0, 1.0]], [[0.0, 0.0, 0.0], [0.0"""
import numpy as np

from tangent_x import lax


def f(x, y):
    if y >= 0.5:
        return y
    if np.mean(x):
        return x[1][2]
    v5 = y
    return v5


def loss(x, y):
    return f(x, y)


SEED = 430242
MODE = 'vmap_grad'
ARGS = [np.array([[1.10580316546986, -0.6521189888060743, -1.4126366951082932], [-0.11837804679968222, 0.10236897002628309, 0.33419457810688]]), 1.418]
