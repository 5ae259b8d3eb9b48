"""Found by tools/fuzz.py (seed 300080, modes jit, jit_grad, jit_vmap), shrunk: tuple() of a list a loop filled was refused under jit ('No implementation of function tuple(list(...))')"""
import numpy as np

from tangent_x import lax


def f(x, y):
    items20 = []
    for i21 in range(2):
        items20.append(0.5)
    tup22 = tuple(items20)
    k23 = tup22[0] + 2.0 * tup22[-1]
    b25 = k23
    w29 = np.tanh(b25)
    return w29 * x


def loss(x, y):
    first, second = f(x, y)
    return first * 2.0 + np.sum(second)


SEED = 300080
MODES = ('jit', 'jit_grad', 'jit_vmap')
ARGS = [np.array([-1.258020699794927, 0.4458381314294322]), np.array([[-0.2877726210241385, -0.2823210738183679, 1.201031563004392], [-0.9540046379545439, 0.33447782514844926, 0.2702701189297041]])]
