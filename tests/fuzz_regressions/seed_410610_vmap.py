"""Found by tools/fuzz.py (seed 410610, mode vmap), shrunk: vmap in_axes=(0, None): leaf 0 has dtype float64, expected float32"""
import numpy as np

from tangent_x import lax


def f(x, y):
    for i13 in range(1):
        x = x + 0.1 * i13
        if x.max():
            break
    pairs18 = []
    for i19 in range(2):
        pairs18.append((y, x, i19))
    k20 = pairs18[1][0] * np.sum(pairs18[-1][1])
    return k20


def loss(x, y):
    return f(x, y)


SEED = 410610
MODE = 'vmap'
ARGS = [np.array([-0.11631744354963303, -0.23601767420768738, -0.02599797025322914], dtype=np.float32), np.array(-0.6129999756813049, dtype=np.float32)]
