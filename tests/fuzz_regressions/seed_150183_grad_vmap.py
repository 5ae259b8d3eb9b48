"""Found by tools/fuzz.py (seed 150183, mode grad_vmap), shrunk: ValueError: tree_map: pytree structure mismatch between the first tree and tree argument 2, at key path tree[0]: Expected tuple, got None. [at tree_ut"""
import numpy as np

from tangent_x import lax


def f(x, y, z):
    en10 = list(enumerate(x))
    lst9 = [0.5 * (0.5 + u7) for u7, u8 in en10]
    k12 = sum(t11 * 0.5 for t11 in lst9[1:])
    v17 = k12
    return (v17, z)


def loss(x, y, z):
    first, second = f(x, y, z)
    return first * 2.0 + np.sum(second)


SEED = 150183
MODE = 'grad_vmap'
ARGS = [np.array([1.3517659902572632, -1.2750767469406128, -0.3901008069515228], dtype=np.float32), np.array(0.47200000286102295, dtype=np.float32), np.array([0.008014914579689503, -0.14666272699832916, 1.1514416933059692], dtype=np.float32)]
