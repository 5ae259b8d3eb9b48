"""Found by tools/fuzz.py (seed 500648, mode hvp), shrunk: TypeError: The numpy boolean negative, the `-` operator, is not supported, use the `~` operator or the logical_not function instead. [at grad_loss_jvp"""
import numpy as np

from tangent_x import lax


def f(x, y):
    for i4, j5 in zip(np.linspace(-1.0, 1.0, 3) * 0.5, np.linspace(-1.0, 1.0, 3) * 0.5):
        x = 0.7 * x + 0.3 * j5
    if np.sum(y):
        return 0.5 - np.maximum(x, 0.1)
    w8 = w8 + 0.3 + 0.1 * np.sin(0.5)
    return w8


def loss(x, y):
    return f(x, y)


SEED = 500648
MODE = 'hvp'
ARGS = [-1.144, np.array([[-0.22101529323720492, -1.1094697479448565, 0.08822981135620012], [-0.9570373679570535, 0.8728806501183319, -0.14962140082071151]])]
