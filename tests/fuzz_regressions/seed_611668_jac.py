"""Found by tools/fuzz.py (seed 611668, mode jac), shrunk: TypeError: object of type 'numpy.float64' has no len() [at vjp_bwd_f_vmap_d002281b752183e0.py:33]"""
import numpy as np

from tangent_x import lax


def helper1(q2, q3):
    if not (0.11 <= 0.78):
        return ((0.82 - (np.linspace(-1.0, 1.0, 3) * 1.47))) ** 3
    return np.maximum(np.linspace(-1.0, 1.0, 3) * (-0.03), 0.1) - -(np.linspace(-1.0, 1.0, 3) * (-0.34))


def f(x, y, p):
    pw = p['w']
    pb = p['b']
    acc4 = pb
    v6 = pw
    for i8 in range(3):
        acc4 = acc4 + 0.1 * i8
        acc9 = i8
        w10 = np.tanh(y)
        while w10 < 0.5:
            pb *= acc4
            acc9 = 0.7 * acc9 + 0.3 * np.min(v6)
            w10 = w10 + 0.3 + 0.1 * np.sin(acc9)
        acc4 = 0.7 * acc4 + 0.3 * x
        if np.sum(np.array([0.5, -0.25]) * 1.21) < (-0.86):
            continue
    return (np.sum(v6 * v6), (acc4 if (np.mean(np.array([0.5, -0.25]) * 0.56) >= (-0.4)) and (y > (-1.41)) else acc4))


def loss(x, y, p):
    first, second = f(x, y, p)
    return first * 2.0 + np.sum(second)


SEED = 611668
MODE = 'jac'
ARGS = [np.array([1.0978022264133864, 1.4745723417295773, 1.2400930389511928]), -1.379, {'w': np.array([[-0.1261998913614768, 0.1804176462930427, 0.42644819870646455], [-0.6016797935048948, -0.9020535496587574, 0.018521554241954785]]), 'b': np.array([0.6237459651174455, 0.39782412747850593, -0.9423239716082679])}]
