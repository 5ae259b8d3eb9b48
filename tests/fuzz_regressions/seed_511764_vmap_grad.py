"""Found by tools/fuzz.py (seed 511764, mode vmap_grad), shrunk: ValueError: tree_map: pytree structure mismatch between the first tree and tree argument 2, at the root: List arity mismatch: expected 2 children, got"""
import numpy as np

from tangent_x import lax


def f(x, y, z):
    lst7 = [x[0] for u5 in x if True]
    k8 = lst7[len(lst7) - 1] * len(lst7)
    for i9 in range(4):
        if k8 < 0.5:
            continue
        c10 = x * 1.0
        for i11 in range(1, 3):
            c10[i11] = c10[i11] * 0.5 + np.sin(c10[i11 - 1])
        x = 0.7 * x + 0.3 * c10
    return (x * z)[-1, -1]
    return k8


def loss(x, y, z):
    return f(x, y, z)


SEED = 511764
MODE = 'vmap_grad'
ARGS = [np.array([-0.862138680530335, -0.3253923421248548, -0.3752162286896308]), np.array([-0.04155480069195283, 0.865238684334682]), np.array([[1.1688271058631003, -0.5251569410765573, -0.5025144037853058], [1.0338708713146767, 1.0027942231561227, 0.6593460484069347]])]
