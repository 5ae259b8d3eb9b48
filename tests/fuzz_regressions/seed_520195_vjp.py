"""Found by tools/fuzz.py (seed 520195, mode vjp), shrunk: ValueError: too many values to unpack (expected 7) [at f_vjp_split_161f7d00ffa24963.py:26]"""
import numpy as np

from tangent_x import lax


def f(x, y, p):
    pw = p['w']
    pb = p['b']
    for i13, j14 in zip(x, x):
        pw -= y
    acc16 = pb
    if np.sum(acc16):
        return np.min(x - -0.5)
    return pb


def loss(x, y, p):
    return f(x, y, p)


SEED = 520195
MODE = 'vjp'
ARGS = [np.array([0.8260479479958676, -0.21820341949377653, -0.6679529533255035]), np.array([[-0.9810922601882583, -0.9631554072371559, -0.8498954213229285], [-0.6470204310663318, 0.3488578767369388, -0.9488541025714197]]), {'w': np.array([[-0.7538062141147908, -0.04188545146171574, -0.9972821826283296], [-0.8985875435875246, -0.4251846224758282, 0.6238290213971114]]), 'b': np.array(-0.7971725994305974)}]
