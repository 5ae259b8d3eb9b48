"""Found by tools/fuzz.py (seed 300015, modes jit, jit_grad, jit_vmap), shrunk by hand: refused: the structure of a loop's variables does not settle (lst7_1 change kind from one iteration to the next) (a comprehension's list popped by while lst:)"""
import numpy as np


def f(x):
    lst7 = [0.79 - u5 for u5 in (np.linspace(-1.0, 1.0, 3) * 1.2) + (-1.22) if True]
    k8 = lst7[0] * 0.0
    while lst7:
        k8 = 0.5 * k8 + lst7.pop()
    return 0.73 + np.cos(k8) + np.sum(x)


def loss(x):
    return f(x)


SEED = 300015
MODES = ('jit', 'jit_grad', 'jit_vmap')
ARGS = [np.array([[1.4602264155071372, 0.5522990775345558, 1.4013216384853462], [0.4099538920993566, 1.3852404489663663, 1.166373964086405]])]
