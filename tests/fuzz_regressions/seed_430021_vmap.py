"""Found by tools/fuzz.py (seed 430021, mode vmap), shrunk: ValueError: operands could not be broadcast together with shapes (4,1) (4,3) (4,)  [at lanes.py:108]"""
import numpy as np

from tangent_x import lax


def f(x, y, p):
    pb = p['b']
    zipped4 = list(zip(pb, pb))
    lst3 = [u1 * u2 for u1, u2 in zipped4]
    k5 = lst3[2] * lst3[-1]
    acc6 = y
    acc7 = y[-1]
    w10 = np.tanh(np.max(y))
    k15 = 0
    while w10 < 0.6 and k15 < 2:
        a11, *rest12, z13 = (pb, acc7, acc6)
        k14 = a11 * z13 + sum(rest12) * 0.5 + len(rest12)
        k15 += 1
    items16 = []
    for i17 in range(3):
        items16.append(k5)
    k18 = items16[2] * items16[-3]
    return k18


def loss(x, y, p):
    return f(x, y, p)


SEED = 430021
MODE = 'vmap'
ARGS = [np.array([0.3365615318759656, 0.3853839888502295, -1.246935872294231]), np.array([[0.21090596817006402, 0.9565190858704442, 0.5696023242743546], [0.5171523901197466, -1.369656152190322, 1.111181633890221]]), {'w': np.array([[-0.9648059040145607, 0.5219402473362929, 0.9341169725396659], [0.8434989528391543, 0.03128600853918595, -0.13507405518216076]]), 'b': np.array([0.7102510956552313, 0.09760689631345221, -0.9709926743185902])}]
