"""Found by tools/fuzz.py (seed 430439, mode vmap_grad), shrunk: IndexError: index 3 is out of bounds for axis 0 with size 3 [at lanes.py:75]"""
import numpy as np

from tangent_x import lax


def f(x, y, p):
    pw = p['w']
    lst17 = [pw * (1.0 + u15) for u15 in range(4) if u15 != 1]
    k18 = np.array(lst17)
    return y * np.mean(k18)


def loss(x, y, p):
    return f(x, y, p)


SEED = 430439
MODE = 'vmap_grad'
ARGS = [np.array([0.8630866408348083, 1.0829308032989502], dtype=np.float32), np.array(-0.18199999630451202, dtype=np.float32), {'w': np.array([[-0.45861464738845825, -0.7459321022033691, -0.08511415123939514], [-0.023414526134729385, 0.5045346021652222, 0.05438075214624405]], dtype=np.float32), 'b': np.array(-0.6869518160820007, dtype=np.float32)}]
