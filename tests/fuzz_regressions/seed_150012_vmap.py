"""Found by tools/fuzz.py (seed 150012, mode vmap), shrunk: the transform changed the caller's arguments"""
import numpy as np

from tangent_x import lax


def f(x, y, z):
    a8, *rest9 = (0.5, z, 0.5, 0.5)
    k11 = a8 + sum(rest9)
    y *= y
    return y


def loss(x, y, z):
    first, second = f(x, y, z)
    return first * 2.0 + np.sum(second)


SEED = 150012
MODE = 'vmap'
ARGS = [np.array([[0.7244031982274315, -1.4823962926003786, -0.6612878555234247], [-1.1035606586684055, -1.1848314255164158, 0.20516113554149973]]), np.array([-0.17844393720632024, 0.2679460027061016]), np.array([[-1.0502416776392747, -1.126040434897242, 0.14572186683904742], [1.1358269518083421, 0.6326100909512316, -0.9153268483773168]])]
