"""Found by tools/fuzz.py (seed 451579, mode vmap_grad), shrunk: vmap(grad) in_axes=(-1, None, -1): leaf 2 differs by 3: got [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]], expected [[3.0, 0.0,"""
import numpy as np

from tangent_x import lax


def f(x, y, z):
    lst3 = [z[0] * (1.0 + u1) for u1 in range(4) if u1 != 1]
    k4 = lst3[-1] - lst3[0]
    return k4


def loss(x, y, z):
    return f(x, y, z)


SEED = 451579
MODE = 'vmap_grad'
ARGS = [np.array([1.350207375995506, 1.0794116424351072]), np.array([1.227319664463939, -0.13361043449779242]), np.array([0.3490217425389517, 0.09974603773235247, 0.9916632059125758])]
