"""Control flow combined: ifs inside loops, loops inside ifs, the two
reverse-mode failures known from Tangent (a logsumexp loop whose gradient
came out all zeros; augmented subscript assignment under an ``if`` inside a
loop), ReLU and clipping by loops, RNN-style recurrences with gradients for
the weights, loops calling helpers (which have control flow of their own),
nested defs with loops, bubble sort by subscript swaps, argmax by loop,
integer counters carried next to float state, piecewise functions by loops
over knots."""
import numpy as np

from . import A, C, F, N, Pos, SumSign, V, case


def _step(x, i):
    return np.tanh(x * (1.0 + 0.1 * i)) + 0.5 * x


def _soft_clip(x):
    if x > 1.0:
        return 1.0 + np.log(x)
    elif x < -1.0:
        return -1.0 - np.log(-x)
    return x


def _poly_sum(x, n):
    s = 0.0
    for k in range(n):
        s = s + x ** (k + 1) / (k + 1.0)
    return s


def _rnn_inputs(t, d, k):
    def make(rng):
        return rng.standard_normal((t, k))
    make.__name__ = f"xs{(t, k)}"
    return F(make)


def _small(shape, scale=0.5):
    def make(rng):
        return rng.standard_normal(shape) * scale
    make.__name__ = f"small{shape}"
    return F(make)


@case((V(1.3, scalar=True),), (V(-0.9, scalar=True),))
def if_inside_loop_on_carried_scalar(x):
    for i in range(6):
        if x > 0:
            x = x * 0.8 + 0.05
        else:
            x = x * 0.7 - 0.05
    return x * x


@case((A((4,)),), (A((6,)),), (V(0.5, -0.3, 1.1),))
def if_inside_loop_on_elements(x):
    s = 0.0
    for i in range(len(x)):
        if x[i] > 0:
            s += x[i] ** 2
        else:
            s -= np.sin(x[i])
    return s


@case((SumSign((3,), 1),), (SumSign((3,), -1),))
def loop_inside_if(x):
    s = 0.0
    if np.sum(x) > 0:
        for i in range(3):
            s = s + np.sum(x ** (i + 1))
    else:
        for v in x:
            s = s * 0.5 + np.cos(v)
    return s


@case((SumSign((4,), 1),), (SumSign((4,), -1),))
def loop_inside_if_without_else(x):
    y = x * 1.0
    if np.sum(x) > 0:
        for i in range(len(y)):
            y[i] = y[i] * y[i - 1]
    return np.sum(y)


@case((N((4,)),), (N((6,)),), (V(3.0, 1.0, -2.0, 3.0),))
def logsumexp_loop_tangent_failure(x):
    m = x[0]
    for v in x:
        if v > m:
            m = v
    s = 0.0
    for v in x:
        s += np.exp(v - m)
    return m + np.log(s)


@case((N((4,)),), (N((2, 3)),))
def logsumexp_loop_np_maximum(x):
    m = x.ravel()[0]
    for v in x.ravel():
        m = np.maximum(m, v)
    s = 0.0
    for i in range(x.size):
        s = s + np.exp(x.ravel()[i] - m)
    return m + np.log(s)


@case((A((4,)),), (A((6,)),), (V(0.5, -0.3, 1.1),))
def aug_subscript_under_if_in_loop_tangent_failure(x):
    acc = np.zeros_like(x)
    for i in range(x.shape[0]):
        if x[i] > 0:
            acc[i] += x[i] ** 2
    return np.sum(acc * x)


@case((A((4,)),), (A((3, 2)),))
def aug_subscript_under_if_else_rows(x):
    acc = np.ones_like(x)
    for i in range(x.shape[0]):
        if np.sum(x[i]) > 0:
            acc[i] *= np.exp(x[i])
        else:
            acc[i] -= x[i] * x[i]
    return np.sum(acc)


@case((A((5,)),), (A((2, 3)),))
def relu_by_loop(x):
    y = x.ravel().copy()
    for i in range(y.shape[0]):
        if y[i] < 0:
            y[i] = 0.0
    return np.sum(y * y * np.arange(1.0, y.shape[0] + 1.0))


@case((V(-2.0, -0.5, 0.3, 1.5, 0.8),), (A((4,)),))
def leaky_clip_by_loop_elif(x):
    y = x.copy()
    for i in range(len(y)):
        if y[i] > 1.0:
            y[i] = 1.0 + 0.1 * (y[i] - 1.0)
        elif y[i] < -1.0:
            y[i] = -1.0 + 0.1 * (y[i] + 1.0)
        elif y[i] < 0:
            y[i] = 0.3 * y[i]
    return np.sum(np.sin(y) * x)


@case((_small((3, 3)), _small((3, 2)), _rnn_inputs(5, 3, 2), N((3,))),
      (_small((4, 4)), _small((4, 3)), _rnn_inputs(3, 4, 3), N((4,))),
      argnums=(0, 1))
def rnn_tanh_weights(W, U, xs, h0):
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + U @ xs[t])
    return np.sum(h ** 2)


@case((_small((3, 3)), _small((3, 2)), _small((1, 3)), _rnn_inputs(4, 3, 2)),
      (_small((2, 2)), _small((2, 2)), _small((1, 2)), _rnn_inputs(6, 2, 2)),
      argnums=(0, 1, 2))
def rnn_loss_over_all_steps(W, U, Wy, xs):
    h = np.zeros(W.shape[0])
    loss = 0.0
    for x in xs:
        h = np.tanh(W @ h + U @ x)
        y = Wy @ h
        loss = loss + np.sum((y - 0.5) ** 2)
    return loss


@case((_small((3, 3)), _small((3, 2)), _rnn_inputs(5, 3, 2)),
      (_small((2, 2)), _small((2, 2)), _rnn_inputs(3, 2, 2)),
      argnums=2)
def rnn_gradient_wrt_inputs(W, U, xs):
    h = np.zeros(W.shape[0])
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + U @ xs[t])
    return np.sum(h)


@case((_small((3, 3)), _small((3, 3)), _rnn_inputs(4, 3, 3)),
      (_small((2, 2)), _small((2, 2)), _rnn_inputs(5, 2, 2)),
      argnums=(0, 1))
def gated_recurrence(Wz, Wh, xs):
    h = np.zeros(Wz.shape[0])
    for x in xs:
        z = 1.0 / (1.0 + np.exp(-(Wz @ h + x)))
        cand = np.tanh(Wh @ h + x)
        h = z * h + (1.0 - z) * cand
    return np.sum(h * h)


@case((N(),), (N((3,)),))
def helper_called_in_loop(x):
    for i in range(4):
        x = _step(x, i)
    return np.sum(x)


@case((V(0.5, 2.0, -3.0),), (V(-0.2, 1.5),))
def helper_with_branches_called_in_loop(x):
    s = 0.0
    for v in x:
        s = s + _soft_clip(v * 1.5) ** 2
    return s


@case((Pos(), C(3)), (N(), C(4)), (N(), C(-1)))
def helper_with_loop_called_under_if(x, n):
    if n > 0:
        return _poly_sum(x, n) * x
    return np.sin(x)


@case((N(),), (N((3,)),))
def nested_def_with_loop(x):
    def inner(v, k):
        for _ in range(k):
            v = np.cos(v) + 0.3 * v
        return v
    return np.sum(inner(x, 3) * inner(x * 2.0, 2))


@case((A(),), (A((3,)),))
def nested_def_with_branch_closure(x):
    scale = np.sum(x * x)

    def act(v):
        if np.sum(v) > 0:
            return v * scale
        return np.tanh(v)
    return np.sum(act(x) + act(-x * 0.5))


@case((V(0.3, -1.2, 2.5, 0.7),), (N((5,)),))
def bubble_sort_weighted(x):
    y = x.copy()
    n = len(y)
    for i in range(n):
        for j in range(n - 1 - i):
            if y[j] > y[j + 1]:
                y[j], y[j + 1] = y[j + 1], y[j]
    return np.sum(y * np.arange(1.0, n + 1.0)) + y[0] ** 2


@case((V(0.3, -1.2, 2.5, 0.7),), (V(2.0, 0.3, 1.0),))
def argmax_by_loop(x):
    m = x[0]
    idx = 0
    for i in range(1, len(x)):
        if x[i] > m:
            m = x[i]
            idx = i
    return m * x[idx] + np.sum(x) * idx


@case((A((5,)),), (V(0.5, 0.3),))
def integer_counter_next_to_float_state(x):
    count = 0
    s = 0.0
    for v in x:
        if v > 0:
            count += 1
        s = s + v * v
    return s * (count + 1)


@case((V(-0.5, scalar=True),), (V(0.7, scalar=True),), (V(2.3, scalar=True),))
def piecewise_by_loop_over_knots(x):
    s = x
    for k in (0.0, 1.0, 2.0):
        if x > k:
            s = s + (x - k) ** 2
    return s


@case((A((4,)),), (V(0.5, -0.3),))
def conditional_expression_in_loop(x):
    s = 0.0
    for v in x:
        s += v * v if v > 0 else -0.5 * v
    return s


@case((V(0.5, -0.3, 1.5, -2.0),), (V(1.2, 0.4),))
def and_or_in_loop_condition(x):
    s = 0.0
    for i in range(len(x)):
        if x[i] > 0 and x[i] < 1.0 or x[i] < -1.0:
            s = s + x[i] ** 3
        elif not x[i] > 0:
            s = s - x[i]
    return s


@case((Pos(),), (V(0.3, 1.0),))
def while_inside_for(x):
    s = 0.0
    for i in range(3):
        y = x * (i + 1.0)
        while np.sum(y) < 4.0:
            y = y * 1.5 + 0.1
        s = s + np.sum(y * x)
    return s


@case((V(1.0, -2.0, 0.5),), (N((3,)),))
def softmax_cross_entropy_by_loops(z):
    m = z[0]
    for i in range(1, len(z)):
        m = z[i] if z[i] > m else m
    e = np.zeros_like(z)
    total = 0.0
    for i in range(len(z)):
        e[i] = np.exp(z[i] - m)
        total += e[i]
    p = e / total
    return -np.log(p[1])


@case((C([0.5, 0.8, 1.2]), N((3,))), (C([1.0, 0.9]), N((2,))), argnums=1)
def loop_over_static_python_list_argument(scales, x):
    s = 0.0
    for c in scales:
        x = np.tanh(x * c)
        s = s + np.sum(x)
    return s


@case((N((3,)),), (N((1,)),))
def alias_sees_subscript_update_in_for(x):
    # z = y names one array: y[0] = ... in the loop changes z too
    y = x * 2.0
    z = y
    for i in range(3):
        y[0] = y[0] * x[0] + 1.0
    return np.sum(z * z)


@case((N((4,)),), (N((2, 3)),))
def alias_sees_subscript_update_in_while(x):
    y = x * 2.0
    z = y
    i = 0
    while i < 3:
        y[1:] = y[1:] * x[1:]
        i += 1
    return np.sum(z * y)


@case((N((3,)),), (N((2, 3)),))
def alias_sees_ellipsis_augmented_update_in_loop(x):
    # y[...] += v is the way to say "change the shared array" (y += v raises)
    y = x * 2.0
    z = y
    for i in range(3):
        y[...] += np.sin(x)
    return np.sum(z * z)


@case((N((3,)),), (SumSign((3,), -1),))
def alias_sees_subscript_update_under_if(x):
    y = x * 2.0
    z = y
    if np.sum(x) > 0:
        y[0] = y[0] * x[1]
    return np.sum(z * x)


@case((N((3,)),), (N((2, 3)),))
def alias_copied_before_loop_then_rebound(x):
    # the loop rebinds y (a fresh copy) before changing it: a0 is untouched
    y = x * 2.0
    a0 = y
    for i in range(2):
        y = np.copy(y)
        y[0] = y[0] * x[1]
    return np.sum(a0 * y)
