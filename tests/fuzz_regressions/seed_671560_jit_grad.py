"""Found by tools/fuzz.py (seed 671560, mode jit_grad), shrunk: jit(grad): leaf 2 differs by 0.314: got [[0.0, 0.0, 0.0], [-0.720952, -0.416467, -1.105597]], expected [[0.0, 0.0, 0.0], [-0.516097, -0.29813, -0.7914"""
import numpy as np

from tangent_x import lax


def f(x, y, z):
    zipped4 = list(zip(x, x))
    lst3 = [u1 * u2 for u1, u2 in zipped4]
    k5 = lst3[1] * lst3[-3]
    acc6 = z
    w7 = np.tanh(np.abs((-0.42)))
    while w7 < 0.64:
        for i8 in (x) * (1.25) + x:
            c9 = z[:, ::-1] * 1.0
            def g10():
                return c9[1]
            v11 = g10()
            c9[0] = w7 * c9[-1]
            k13 = np.sum(v11) + np.sum(c9)
            x = 0.7 * x + 0.3 * c9[-1]
            k5 = 0.7 * k5 + 0.3 * i8
            if np.sum(acc6) > 0.32:
                break
        acc6 = 0.7 * acc6 + 0.3 * z[:, ::-1]
        z = 0.7 * z + 0.3 * (z + z)
        w7 = w7 + 0.3 + 0.1 * np.sin((w7) ** 3)
    c14 = (w7 * x) * 1.0
    t15 = (c14, w7 - k5)
    c14[0] = k5 * c14[-1]
    k16 = np.sum(t15[0]) * 0.5 + np.sum(c14)
    items17 = []
    for i18 in range(3):
        items17.append((c14 if np.mean(y) >= 0.8 else x) * (1.0 + 0.25 * i18))
    k19 = np.sum(np.stack(items17) ** 2)
    k16 = k16
    return (((-1.28)) * (k19) + (-1.28)) * k5


def loss(x, y, z):
    return f(x, y, z)


SEED = 671560
MODE = 'jit_grad'
ARGS = [np.array([-0.5862860417999489, -0.7671115284550847, -1.0736871772352607]), np.array([-0.020369336808397254, 0.5841407727896955]), np.array([[-0.7298309837099549, 0.11590526383536304, 1.227738486737275], [0.6738666153265442, 0.7319948889818098, -1.440499013895685]])]
