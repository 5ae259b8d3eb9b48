"""Found by tools/fuzz.py (seed 451764, mode vmap_grad), shrunk: IndexError: index 3 is out of bounds for axis 0 with size 3 [at lanes.py:75]"""
import numpy as np

from tangent_x import lax


def f(x, y, z):
    if np.sum(x * (np.linspace(-1.0, 1.0, 3) * 0.5)):
        return x
    zipped7 = list(zip(np.linspace(-1.0, 1.0, 3) * 0.5, x * (np.linspace(-1.0, 1.0, 3) * 0.5)))
    lst6 = [u4 * u5 for u4, u5 in zipped7]
    tup8 = tuple(lst6)
    k9 = tup8[0] + 2.0 * tup8[-1]
    return k9


def loss(x, y, z):
    return f(x, y, z)


SEED = 451764
MODE = 'vmap_grad'
ARGS = [-0.857, np.array([[-0.6928756880832941, 1.1815610465358466, 0.9635753814394161], [-0.790471064236446, -1.4772078622470786, -1.4557498934691266]]), np.array([[0.6236306059185894, -0.696473763763809, -0.6419573082293569], [0.5059843381860358, -0.9538920959057251, 0.6443034026055661]])]
