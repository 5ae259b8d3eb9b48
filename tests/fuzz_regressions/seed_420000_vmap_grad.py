"""Found by tools/fuzz.py (seed 420000, mode vmap_grad), shrunk: vmap(grad) in_axes=(1, None, None): leaf 2 differs by 1: got [[[0.0, 0.0, 0.0], [0.0, 0.0, 1.0]], [[0.0, 0.0, 0.0], [0.0, 0.0, 1.0]], [[0.0, 0.0, 0.0]"""
import numpy as np

from tangent_x import lax


def f(x, y, z):
    if np.sum(x) > 0.5:
        return z[1][2]
    return 0.5


def loss(x, y, z):
    return f(x, y, z)


SEED = 420000
MODE = 'vmap_grad'
ARGS = [np.array([0.8900739162395834, -0.8752240647244767]), np.array([-0.10525208617329174, -0.21858074799936222, 0.6180045449808684]), np.array([[-1.1870480420123308, -1.412485534706664, -0.149624362589591], [1.4914266225138366, -1.3930179771461084, -0.9643094365723542]])]
