"""Found by tools/fuzz.py (seed 300021, modes jit, jit_grad, jit_vmap), shrunk: np.stack of a list a loop filled was refused under jit ('No implementation of function stack(list(array))')"""
import numpy as np

from tangent_x import lax


def f(x, y, z):
    items4 = []
    for i5 in range(3):
        items4.append(x)
    k6 = np.sum(np.stack(items4) ** 2)
    w10 = np.tanh(k6)
    k11 = 0
    while w10 < 1.1 and k11 < 2:
        k11 += 1
    return 0.5


def loss(x, y, z):
    return np.sum(np.sin(f(x, y, z)))


SEED = 300021
MODES = ('jit', 'jit_grad', 'jit_vmap')
ARGS = [np.array([0.38144798529333857, 1.2066334151275901, -0.6547743220617112]), np.array([[1.067995703416658, 0.26012197936288795, -0.4401570383647684], [1.4805492656148407, -1.3497414509682115, 1.4548851132537246]]), np.array([-0.8490958165957051, 0.9398945529514746, 0.5287695837782072])]
