"""Found by tools/fuzz.py (seed 125117; grad, jvp, vjp, vmap), shrunk: a helper subtracting in place from its argument and returning it, `x -= helper1(x, x)`: the value was x - (x - 0.34) = 0.34 where NumPy gives 0 (the in-place subtraction reads the array after the helper changed it)"""
import numpy as np

from tangent_x import lax


def helper1(q2, q3):
    q2 -= (np.ones((2, 3)) * 0.34)[0]
    v4 = np.cos((np.ones((2, 3)) * (-1.39)) - (-0.29))
    return q2


def f(x, y):
    x -= helper1(x, x)
    return (0.5, x)


def loss(x, y):
    first, second = f(x, y)
    return first * 2.0 + np.sum(second)


SEED = 125117
MODES = ('grad', 'jvp', 'vjp', 'vmap', 'vmap_grad', 'grad_vmap')
ARGS = [np.array([-0.03279079749805769, 0.8649854364895102, 0.8461091787935997]), np.array([[1.2970831307177995, 1.251312783277176, 0.4715238057989761], [-1.0470694842607662, 0.6738580169361836, 0.19159959303234642]])]
