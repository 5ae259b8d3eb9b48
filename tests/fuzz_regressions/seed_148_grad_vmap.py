"""Found by tools/fuzz.py (seed 148, mode grad_vmap), shrunk: TypeError: unsupported operand type(s) for +: 'float' and 'NoneType' [at runtime.py:165]"""
import numpy as np

from tangent_x import lax


def helper1(q2, q3):
    if np.sum(q3) > 0.42:
        return 0.71
    return q2 - np.exp(np.tanh(q2))


def f(x, y, z, p):
    pw = p['w']
    pb = p['b']
    if 0.5 <= (-0.81):
        b4 = x
    elif pb < 0.19:
        return (x, pw @ y)
    else:
        b4 = pb
    acc12 = np.array([0.5, -0.25]) * (-0.69)
    acc13 = (pw) ** 3
    w14 = np.tanh(acc13[0, 1])
    while w14 < 0.59:
        c15 = np.arctan(y) * 1.0
        c15[1:] -= acc12 * c15[1:]
        acc12 = 0.7 * acc12 + 0.3 * (acc12 if b4 < 0.76 else acc12)
        acc13 = 0.7 * acc13 + 0.3 * np.sin(pw)
        w14 = w14 + 0.3 + 0.1 * np.sin(pb)
    l16, ys19 = lax.scan(lambda a17, xi18: (0.6 * a17 + 0.4 * a17, np.sum(a17) * xi18), x - acc12, np.sqrt(1.0 + (pb * y) * (pb * y)))
    y = ys19
    return (pb + (-0.57), pw @ y)


def loss(x, y, z, p):
    first, second = f(x, y, z, p)
    return first * 2.0 + np.sum(second)


SEED = 148
MODE = 'grad_vmap'
ARGS = [-0.086, np.array([-0.30708684148146737, -1.2926063331143767, 0.9557170578768535]), np.array([[0.8406683985700552, 0.5026744985113458, 0.9307494651522803], [-0.5407884158599295, -1.1191768023726665, -0.5323406336198592]]), {'w': np.array([[0.8795241090429489, -0.6183681059323825, -0.2231644534783721], [-0.08921519157848223, -0.10914479494156115, 0.27863139081224086]]), 'b': np.array(-0.5813959933870987)}]
