"""Found by tools/fuzz.py (seed 150010, mode grad_vmap), shrunk: ValueError: tree_map: pytree structure mismatch between the first tree and tree argument 2, at the root: Tuple arity mismatch: expected 4 children, go"""
import numpy as np

from tangent_x import lax


def f(x, y, z, p):
    pb = p['b']
    b7 = np.cos(x) / (1.0 + np.cos(x) * np.cos(x))
    a8, *rest9, z10 = (np.sum((np.ones((2, 3)) * 0.91) * (np.ones((2, 3)) * 0.91)), pb - pb, np.mean(b7), pb)
    k11 = a8 * z10 + sum(rest9) * 0.5 + len(rest9)
    return (np.log(1.0 + k11 * k11), x)


def loss(x, y, z, p):
    first, second = f(x, y, z, p)
    return first * 2.0 + np.sum(second)


SEED = 150010
MODE = 'grad_vmap'
ARGS = [np.array([1.3273417203141689, -1.319178460992212]), np.array([0.8720536115798705, 1.2769142641645361, 0.6056847153457046]), np.array([-0.7185028174139949, 0.32769214009076997, 0.14466433192135053]), {'w': np.array([-0.8085948827848557, -0.666587002742135, -0.9578790755976645]), 'b': np.array(0.31492476834795236)}]
