"""``for i in range(...)``: every range form (stop; start, stop; step;
negative step; bounds from ``x.shape[0]``, ``len(x)`` or an int argument,
zero trips), accumulations, several carried variables, nested and
triangular loops, subscript assignment and augmented subscript assignment
inside loops (including reading values the loop itself wrote), matrix
recurrences, and the 1000-step scalar recurrence."""
import numpy as np

from . import C, N, P, Pos, V, case, each


@case(*each(N, (), (3,), (2, 2)))
def sum_range_stop(x):
    s = 0.0
    for i in range(5):
        s += x * i + np.sin(x) ** 2
    return np.sum(s)


@case(*each(P, (), (3,)))
def range_start_stop(x):
    s = np.zeros_like(x)
    for i in range(2, 6):
        s = s + x ** i / i
    return np.sum(s)


@case(*each(N, (), (4,)))
def range_with_step(x):
    s = x * 0.0
    for k in range(1, 10, 3):
        s = s + np.cos(k * x) * k
    return np.sum(s)


@case((N((5,)), N()), (N((5,)), P()), argnums=(0, 1))
def horner_negative_step(c, x):
    y = 0.0
    for i in range(4, -1, -1):
        y = y * x + c[i]
    return y


@case(*each(N, (3,), (6,)))
def range_over_shape_bound(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i] * x[i - 1] + np.tanh(x[i])
    return s


@case(*each(N, (2,), (5,)))
def range_over_len_bound(x):
    s = 1.0
    for i in range(len(x)):
        s = s * np.cos(x[i]) + x[i]
    return s


@case((N(), C(3)), (N(), C(7)), (N((2,)), C(1)))
def range_int_argument(x, n):
    for i in range(n):
        x = np.cos(x) * 0.8 + x * 0.1
    return np.sum(x)


@case((N((3,)), C(0)), (N((3,)), C(4)))
def range_zero_trips_possible(x, n):
    y = x * 2.0
    for i in range(n):
        y = np.sin(y) + x
    return np.sum(y * y)


@case((N(), C(1), C(8), C(2)), (N(), C(6), C(-1), C(-2)), (N(), C(3), C(3), C(1)),
      (N(), C(0), C(5), C(1)))
def range_all_bounds_from_arguments(x, start, stop, step):
    s = x
    for i in range(start, stop, step):
        s = s * 0.9 + np.sin(x * (i + 1))
    return s


@case((N((4,)), C(7)), (N((4,)), C(2)))
def range_bound_computed_from_int(x, n):
    s = 0.0
    for i in range(n // 2 + 1):
        s = s + np.sum(x ** 2) * (i + 1) + x[i % 4]
    return s


@case(*each(N, (3,), (2, 3)))
def accumulate_array_rebinding(x):
    acc = np.zeros_like(x)
    for i in range(4):
        acc = acc + x ** i * np.sin(x + i)
    return np.sum(acc)


@case(*each(N, (3,), (2, 3)))
def accumulate_array_in_place(x):
    acc = np.zeros_like(x)
    for i in range(3):
        acc += np.exp(x * 0.3 * i) * x
    return np.sum(acc * acc)


@case(*each(N, (3,), (5,)))
def product_over_elements(x):
    p = 1.0
    for i in range(len(x)):
        p *= x[i] + 2.0
    return p


@case((N(), N()), (N((3,)), N((3,))), argnums=(0, 1))
def two_carried_variables(x, y):
    a, b = x, y
    for _ in range(6):
        a, b = b, a * 0.5 + np.sin(b)
    return np.sum(a * b)


@case(*each(N, (3, 3), (2, 2)))
def nested_range_loops(x):
    s = 0.0
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            s += x[i, j] * x[j, i] + np.sin(x[i, j]) * i
    return s


@case(*each(N, (4,), (6,)))
def triangular_nested_loops(x):
    s = 0.0
    for i in range(len(x)):
        for j in range(i):
            s += x[i] * x[j] * (j + 1)
    return s


@case(*each(N, (3,), (5,)))
def subscript_set_in_loop(x):
    y = np.zeros_like(x)
    for i in range(len(x)):
        y[i] = np.sin(x[i]) * x[i - 1]
    return np.sum(y * y)


@case(*each(N, (3,), (6,)))
def subscript_aug_reads_previous_write(x):
    acc = x.copy()
    for i in range(1, len(x)):
        acc[i] += acc[i - 1] * 0.5 + acc[i] * acc[i - 1]
    return np.sum(acc)


@case(*each(N, (4,), (7,)))
def cumsum_by_loop(x):
    out = np.zeros_like(x)
    total = 0.0
    for i in range(x.shape[0]):
        total += x[i]
        out[i] = total * x[i]
    return np.sum(out ** 2)


@case(*each(N, (3, 2), (4, 3)))
def row_recurrence_subscript(x):
    y = x.copy()
    for i in range(1, x.shape[0]):
        y[i] = np.tanh(y[i - 1] + x[i])
    return np.sum(y * x)


@case(*each(N, (4,), (5,)))
def subscript_update_with_modulo_index(x):
    y = x.copy()
    n = len(y)
    for i in range(n):
        y[i] = y[i] * y[(i + 1) % n] + 0.1
    return np.sum(y)


@case(*each(N, (4,), (3,)))
def subscript_mult_and_sub_updates(x):
    y = np.ones_like(x)
    for i in range(len(x)):
        y[i] *= x[i] + 1.5
        y[i] -= np.sin(x[i]) * y[i - 1]
    return np.sum(y)


@case((N((2, 2)),), (N((3, 3)),))
def matrix_power_by_loop(a):
    m = np.eye(a.shape[0])
    for _ in range(3):
        m = m @ a
    return np.sum(m)


@case(*each(N, (), (3,)))
def loop_index_in_float_math(x):
    s = 0.0
    for i in range(4):
        s = s + np.sin(x * (i + 1.0)) / (i + 1.0)
    return np.sum(s)


@case((V(0.3, scalar=True),), (V(-1.2, scalar=True),), (N((3,)),))
def recurrence_1000_steps(x):
    for _ in range(1000):
        x = np.sin(x) * 0.99 + 0.01
    return np.sum(x)


@case((V(0.3, scalar=True), V(0.99, scalar=True)), (N((3,)), V(0.8, scalar=True)),
      (V(-2.0, scalar=True), V(1.02, scalar=True)), argnums=(0, 1))
def recurrence_1000_steps_with_parameter(x, a):
    for _ in range(1000):
        x = np.sin(x) * a + 0.01
    return np.sum(x)


@case((N((3,)), Pos()), (N((2,)), V(0.5, scalar=True)), argnums=(0, 1))
def euler_integration_100_steps(x0, k):
    x = x0
    dt = 0.01
    for _ in range(100):
        x = x + dt * (-k * x + np.sin(x))
    return np.sum(x * x)


@case((N((3, 3)),), (N((4, 4)),))
def power_iteration(a):
    s = a @ a.T + np.eye(a.shape[0]) * 0.5
    v = np.ones(a.shape[0])
    for _ in range(30):
        v = s @ v
        v = v / np.linalg.norm(v)
    return v @ s @ v


@case(*each(N, (3,), (2, 3)))
def loop_variable_unused_underscore(x):
    y = x
    for _ in range(3):
        y = y * np.cos(y) + x
    return np.sum(y)
