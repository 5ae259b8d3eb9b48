"""Found by tools/fuzz.py (seed 300047, modes jit, jit_grad, jit_vmap), shrunk: np.concatenate of a list of arrays was refused under jit ('No implementation of function concatenate(list(array))')"""
import numpy as np

from tangent_x import lax


def f(x, y, z):
    acc18 = np.ones((2, 3)) * 0.5
    items28 = []
    while len(items28) < 2:
        items28.append(acc18)
    k30 = np.sum(np.sin(np.concatenate([np.ravel(t) for t in items28])))
    return k30


def loss(x, y, z):
    return f(x, y, z)


SEED = 300047
MODES = ('jit', 'jit_grad', 'jit_vmap')
ARGS = [0.144, np.array([1.4622704561415834, 0.3972204463859732, -1.4844154311831348]), np.array([-1.1206014915868472, 0.35071741541754653, -0.8401595174257429])]
