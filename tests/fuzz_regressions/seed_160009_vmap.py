"""Found by tools/fuzz.py (seed 160009, mode vmap), shrunk: ValueError: could not broadcast input array from shape (4,1) into shape (4,) [at f_vmap_535368230388a0df.py:36]"""
import numpy as np

from tangent_x import lax


def f(x, y):
    c11 = y * 1.0
    if x.max() >= 0.11:
        pass
    else:
        if not (x.max() > 0.38):
            return 0.5
        c11[2] *= 0.5 * c11[1::2]
    return (c11 * (np.ones((2, 3)) * 0.5))[0, 1]


def loss(x, y):
    return f(x, y)


SEED = 160009
MODES = ('vmap', 'vmap_grad', 'grad_vmap')
ARGS = [np.array([0.7995240354074271, 0.12121576868258566]), np.array([-0.7174029301160321, 1.230050145576692, -0.765193709132217])]
