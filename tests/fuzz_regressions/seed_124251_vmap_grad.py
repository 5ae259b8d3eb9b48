"""Found by tools/fuzz.py (seed 124251, mode vmap_grad), shrunk: ValueError: tree_map: pytree structure mismatch between the first tree and tree argument 2, at the root: List arity mismatch: expected 2 children, got"""
import numpy as np

from tangent_x import lax


def helper1(q2, q3):
    if np.sum((np.linspace(-1.0, 1.0, 3) * (-0.69) if (np.sum(q2 * (np.linspace(-1.0, 1.0, 3) * (-0.52))) < (-0.48)) and (q2 > 0.7) else np.linspace(-1.0, 1.0, 3) * 1.42)) < (-0.65):
        b4 = ((q2 * (np.linspace(-1.0, 1.0, 3) * 0.04)) * (np.linspace(-1.0, 1.0, 3) * (-1.1)))[-1]
    else:
        v5 = -(q3 + q3)
        b4 = np.log(1.0 + (np.ones((2, 3)) * (-1.26)) * (np.ones((2, 3)) * (-1.26)))[0, 1]
    if (-(np.ones((2, 3)) * 0.61)).max() <= (-0.99):
        b4 *= (-1.15) + q2
        b6 = (np.ones((2, 3)) * (-1.21))[1, :] - -q2
    else:
        v7 = ((q2 * (np.ones((2, 3)) * 0.98)) / (1.0 + (q2 * (np.ones((2, 3)) * 0.98)) * (q2 * (np.ones((2, 3)) * 0.98))))[:, -1]
        b6 = np.maximum(b4 * (np.ones((2, 3)) * 1.0), 0.1)[-1]
    return ((1.13) * (b6) + 1.13)[-1]


def f(x, p):
    pw = p['w']
    pb = p['b']
    if np.sum(pw) > 0.37:
        return 0.5
    acc8 = pb
    w9 = np.tanh(x)
    while w9 < 0.61:
        if np.sum(np.arctan(pw)) <= 0.94:
            pw = w9 * pw
        else:
            v10 = np.sin((w9 * (np.array([0.5, -0.25]) * (-0.51))) * (-0.12) ** 2)
            pw = ((pw + (-0.58))) * ((-0.13)) + (pw + (-0.58))
        x = 0.7 * x + 0.3 * (1.0 / (1.0 + np.exp(-w9)))
        acc8 = 0.7 * acc8 + 0.3 * ((pb) * (w9) + pb)
        w9 = w9 + 0.3 + 0.1 * np.sin((x if w9 > 0.37 else w9))
    c11 = (1.0 / (1.0 + np.exp(-pw))) * 1.0
    c11[:, 1] -= (np.cos(x)) ** 2
    _, l12 = lax.while_loop(lambda c: c[0] < 2, lambda c: (c[0] + 1, 0.6 * c[1] + 0.4 * ((x) * (c[1]) + x)), (0, pw[:, 0]))
    if (-1.38) <= (-0.86):
        return np.arctan(-x)
    return np.sin(1.0 / (1.0 + np.exp(-0.06)))


def loss(x, p):
    return f(x, p)


SEED = 124251
MODES = ('vmap_grad', 'grad', 'grad_vmap')
ARGS = [np.array(-0.2590000033378601, dtype=np.float32), {'w': np.array([[0.6114070415496826, 0.25238916277885437, -0.38976436853408813], [-0.9449234008789062, 0.11649904400110245, -0.7763010859489441]], dtype=np.float32), 'b': np.array([0.769282877445221, -0.48826032876968384, 0.3890354335308075], dtype=np.float32)}]
