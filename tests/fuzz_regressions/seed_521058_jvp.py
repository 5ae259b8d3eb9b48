"""Found by tools/fuzz.py (seed 521058, mode jvp), shrunk: jvp value: leaf 0 differs by 0.5: got [0.5, 0.5, 0.5], expected [1.0, 1.0, 1.0]"""
import numpy as np

from tangent_x import lax


def f(x):
    v4 = np.ones((2, 3)) * 0.5
    v5 = v4[::-1][0]
    v4 += v4
    return v5


def loss(x):
    return np.sum(np.sin(f(x)))


SEED = 521058
MODE = 'jvp'
ARGS = [np.array([0.13556134700775146, 1.4211026430130005, -1.455649971961975], dtype=np.float32)]
