"""Found by tools/fuzz.py (seed 124144, mode vmap_grad), shrunk: ValueError: non-broadcastable output operand with shape (2,3) doesn't match the broadcast shape (1,4,2,3) [at indexing.py:166]"""
import numpy as np

from tangent_x import lax


def f(x, y):
    v1 = y[::-1]
    b2 = y[:, -1]
    if (v1[0].max() < 0.55) or ((v1.max() > (-0.96)) and (x > (-0.19))):
        v3 = (v1 if np.mean(x * (np.array([0.5, -0.25]) * (-0.37))) else y[::-1])
        if ((x * (np.array([0.5, -0.25]) * (-1.48))).max() > 0.21) or (not (np.mean(v3) < (-0.76))):
            v1 = ((0.7 * v1)) ** 3
        else:
            x = np.dot(((x * (np.linspace(-1.0, 1.0, 3) * 0.61))) * ((np.linspace(-1.0, 1.0, 3) * (-0.79))) + (x * (np.linspace(-1.0, 1.0, 3) * 0.61)), np.log(1.0 + (x * (np.linspace(-1.0, 1.0, 3) * (-1.42))) * (x * (np.linspace(-1.0, 1.0, 3) * (-1.42)))))
            v1 = np.maximum(y, 0.1) * v3
        b2 = v3[::-1] @ v1[-1]
    return (x if (b2.max() <= (-0.19)) or (x >= 0.77) else x)


def loss(x, y):
    return f(x, y)


SEED = 124144
MODES = ('vmap_grad', 'grad', 'grad_vmap')
ARGS = [-0.577, np.array([[-0.12081642279276217, -0.5713929411404671, 0.586925197540634], [-0.11940954414787708, -1.3320785751260316, 0.9867864318394246]])]
