"""Found by tools/fuzz.py (seed 481989, mode grad_vmap), shrunk: UFuncTypeError: Cannot cast ufunc 'add' output from dtype('float64') to dtype('int64') with casting rule 'same_kind' [at lanes.py:194]"""
import numpy as np

from tangent_x import lax


def f(x, y, p):
    pw = p['w']
    en9 = list(enumerate(pw))
    lst8 = [pw * (0.5 + u6) for u6, u7 in en9]
    k10 = lst8[-1] - lst8[0]
    rows11 = []
    for i13 in range(2):
        row12 = []
        for j14 in range(3):
            row12.append((j14 if np.sum(0.5) else k10) + 0.1 * j14 * i13)
        rows11.append(row12)
    k15 = np.array(rows11)
    return np.sum(k15)


def loss(x, y, p):
    return f(x, y, p)


SEED = 481989
MODE = 'grad_vmap'
ARGS = [np.array([-0.31819819840256214, -0.8188570232447419, -0.9204046237566721]), np.array([0.29342430378127715, 0.6018629343190529]), {'w': np.array([-0.9796957804637489, -0.355765461010481, 0.712948227588641]), 'b': np.array([0.6991566324209804, 0.7268623693356453, -0.3729414395409514])}]
