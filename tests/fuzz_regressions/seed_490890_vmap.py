"""Found by tools/fuzz.py (seed 490890, mode vmap), shrunk: UnboundLocalError: local variable 't14' is used but was not assigned on the path the code took [at values.py:26]"""
import numpy as np

from tangent_x import lax


def f(x, y):
    c1 = x * 1.0
    a2, b3 = c1
    a2 += y
    k4 = np.sum(c1 * c1) + np.sum(a2) - np.sum(b3)
    s7 = np.sum(k4)
    l5 = lax.switch(0 if s7 < -0.5 else (1 if s7 < 0.5 else 2), [lambda a6: a6, lambda a6: a6, lambda a6: a6], np.linspace(-1.0, 1.0, 3) * 0.5)
    acc9 = l5
    for i10 in acc9:
        w12 = np.tanh(i10)
        while w12 < 0.5:
            c13 = c1 * 1.0
            t14 = (c13, y)
            k15 = np.sum(t14[0]) * 0.5 + np.sum(c13)
            w12 = w12 + 0.3 + 0.1 * np.sin(w12)
    return k4


def loss(x, y):
    return f(x, y)


SEED = 490890
MODE = 'vmap'
ARGS = [np.array([[-0.1209467817183767, -0.3372417698359933, 0.07973498714614013], [-0.8464255950227266, 0.7528391885961057, 0.2086032079862723]]), 0.934]
