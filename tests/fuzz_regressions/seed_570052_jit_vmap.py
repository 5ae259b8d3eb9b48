"""Found by tools/fuzz.py (seed 570052, mode jit_vmap), shrunk: TypeError: expected array(bool, 1d, C), got None [at compile.py:155]"""
import numpy as np

from tangent_x import lax


def f(x):
    if np.sum(x):
        b2 = 0.5
    else:
        b2 = 0.5
    acc6 = 0.5
    w7 = np.tanh((b2 * (np.linspace(-1.0, 1.0, 3) * (-1.08)))[1])
    k8 = 0
    while w7 < 0.03 and k8 < 2:
        acc6 = 0.7 * acc6 + 0.3 * np.sin(acc6)
        b2 = 0.7 * b2 + 0.3 * np.sin(b2)
        w7 = w7 + 0.3 + 0.1 * np.sin(np.sqrt(1.0 + b2 * b2))
        k8 += 1
    c9 = ((np.linspace(-1.0, 1.0, 3) * 1.23) * 0.97) * 1.0
    t10 = {"w": c9, "s": np.maximum(w7, 0.1)}
    a11 = t10["w"]
    a11 -= np.exp(np.tanh(w7))
    k12 = np.sum(t10["w"]) * 0.5 + np.sum(c9)
    if c9.max() < 0.55:
        return ((w7) * (b2) + w7) - -0.99
    return b2


def loss(x):
    return f(x)


SEED = 570052
MODE = 'jit_vmap'
ARGS = [np.array([1.0048315525054932, -0.5505849123001099], dtype=np.float32)]
