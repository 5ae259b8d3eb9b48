"""Found by tools/fuzz.py (seed 420508, mode vmap), shrunk: vmap in_axes=(0,): leaf 0 has dtype float64, expected float32"""
import numpy as np

from tangent_x import lax


def f(x):
    pairs27 = []
    for i28 in range(2):
        pairs27.append((x, i28))
    k30 = sum(np.sum(t29[0]) - t29[1] for t29 in pairs27[::-1])
    return k30


def loss(x):
    return f(x)


SEED = 420508
MODE = 'vmap'
ARGS = [np.array([0.8889824748039246, 1.3716603517532349, 0.5546574592590332], dtype=np.float32)]
