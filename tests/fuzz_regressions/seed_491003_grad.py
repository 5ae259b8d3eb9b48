"""Found by tools/fuzz.py (seed 491003, mode grad), shrunk: NameError: name 'arctan_v8' is not defined [at loss_value_and_grad_643daed38cd26e71.py:9]"""
import numpy as np

from tangent_x import lax


def f(x, y):
    v8 = np.cos(0.5)
    g9 = lambda p10: np.arctan(v8)
    v11 = g9(v8)
    return np.arctan(v8)
    return 0.5


def loss(x, y):
    return f(x, y)


SEED = 491003
MODE = 'grad'
ARGS = [np.array([-1.2600225571820358, 0.6265136808953113]), np.array([[-1.1402725512306808, 0.9862102373678168, 0.02567181817633446], [-0.35081490187398057, 0.2621208787656335, 0.9572493895727194]])]
