"""Found by tools/fuzz.py (seed 300101, every mode), shrunk by hand: refused: local variable 'c10' is used before it is assigned (read by a lambda given to lax.scan, on a path the code never takes); under jit then an UnboundLocalError raised inside the specialiser"""
import numpy as np

from tangent_x import lax


def f(x, p):
    pb = p['b']
    if (np.array([0.5, -0.25]) * 0.71).max() >= (-0.14):
        c10 = ((np.linspace(-1.0, 1.0, 3) * 1.18) - -(np.linspace(-1.0, 1.0, 3) * (-0.42))) * 1.0
        c10[0] -= x[1][2]
        if np.mean(np.array([0.5, -0.25]) * (-0.37)) <= 0.59:
            return pb * np.sum(x)
    l11, ys14 = lax.scan(lambda a12, xi13: (0.6 * a12 + 0.4 * (c10 - -c10), np.sum(a12) * xi13), x[-1], c10)
    return pb


def loss(x, p):
    return f(x, p)


SEED = 300101
MODES = ('grad', 'vmap', 'jit', 'jit_grad', 'jit_vmap')
ARGS = [np.array([[1.336528369217591, -0.20116119421605694, 0.20907619740515004], [0.9517333806392538, -1.0698301379456532, -1.059392584341452]]), {'w': np.array([[0.901940559189818, -0.22444092069559485, 0.6539670123387371], [0.46129330101841015, 0.43381093405595217, -0.31557612721064365]]), 'b': np.array(-0.4844847559749317)}]
