"""Found by tools/fuzz.py (seed 510792, mode vmap), shrunk: vmap in_axes=(-1, 0, 0, 0): leaf 0 differs by 0.336: got [[0.491878, 0.110944, 0.422309], [-0.404374, 0.510672, 0.513603], [0.489179, 0.594955, -0.410"""
import numpy as np

from tangent_x import lax


def helper1(q2):
    q2 *= (-0.72) + q2
    return np.array([0.5, -0.25]) * 0.83


def f(x, y, z, p):
    pw = p['w']
    pb = p['b']
    g3 = lambda p4: pb
    v5 = g3(helper1(pb))
    pw = 0.7 * pw + 0.3 * pb
    return pw


def loss(x, y, z, p):
    return np.sum(np.sin(f(x, y, z, p)))


SEED = 510792
MODE = 'vmap'
ARGS = [np.array([0.9835724911972252, 0.5490438470738663]), np.array([0.7781559903782482, -0.22728040347669953]), np.array([0.07788118959368973, -0.5885301096170947, -0.9361511196284354]), {'w': np.array([0.4776171763335093, 0.29244042915601676, -0.2649822356198308]), 'b': np.array(-0.4715233306018347)}]
