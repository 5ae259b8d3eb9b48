"""``break``, ``continue`` and early ``return`` inside loops: at the top of
the body and after work, on an element and on an accumulated value, in the
inner loop of a nested pair, in a ``while`` inside a ``for``, after a
subscript update, and loop variables read after a loop that broke early."""
import numpy as np

from . import C, N, V, case


@case((V(0.5, 1.2, -0.3, 2.0),), (V(0.5, 1.2, 0.3, 2.0),), (V(-1.0, 0.5),))
def break_on_first_negative(x):
    s = 0.0
    for i in range(len(x)):
        if x[i] < 0:
            break
        s += x[i] ** 2 * (i + 1)
    return s + x[0]


@case((V(0.5, 1.2, -0.3, 2.0),), (V(0.1, 0.2, 0.3),))
def break_on_accumulated_value(x):
    s = 0.0
    for v in x:
        s = s + v * v
        if s > 1.0:
            break
    return s * np.sin(s)


@case((V(0.5, -1.2, 0.3, -2.0),), (V(0.5, 0.2, 0.3),))
def continue_skips_negatives(x):
    s = 0.0
    for v in x:
        if v < 0:
            continue
        s = s + np.sin(v) * v
    return s + np.sum(x) * 0.1


@case((V(0.5, -1.2, 0.3, 3.0, 0.4),), (V(0.5, 0.2, -0.3),))
def continue_and_break(x):
    s = 0.0
    for v in x:
        if v < 0:
            continue
        if v > 2.0:
            break
        s = s * 0.5 + v ** 3
    return s


@case((V(0.5, 1.5, -0.3),), (V(0.5, 0.2, -0.3),))
def return_inside_loop(x):
    for i in range(len(x)):
        if x[i] > 1.0:
            return x[i] * np.sum(x * x) + i
    return np.sum(x ** 2)


@case((V(0.5, 1.5, -0.3),), (V(0.5, 0.2, -0.3),))
def return_inside_loop_after_accumulation(x):
    s = 0.0
    for v in x:
        s = s + np.exp(v)
        if v > 1.0:
            return s * v
    return -s


@case((N((2, 2)),), (C(np.array([[0.1, 0.2], [2.0, 0.3]])),), (V(0.1, 0.2, 0.3, 0.4),))
def return_inside_nested_loops(x):
    x = x.reshape(2, 2)
    s = 0.0
    for i in range(2):
        for j in range(2):
            if x[i, j] > 1.5:
                return x[i, j] * (i + j + 1.0) + s
            s = s + x[i, j] * x[j, i]
    return s


@case((V(0.5, -1.0, 0.3, 0.2, 0.7, -0.1),), (V(0.5, 1.0, 0.3, -0.2, 0.7, 0.1),))
def break_inner_loop_only(x):
    rows = x.reshape(2, 3)
    s = 0.0
    for row in rows:
        for v in row:
            if v < 0:
                break
            s += v * v
        s = s * 1.5
    return s


@case((V(0.5, -1.0, 0.3, 0.2, 0.7, -0.1),), (V(0.5, 1.0, 0.3, 0.2, 0.7, 0.1),))
def continue_in_inner_loop(x):
    rows = x.reshape(3, 2)
    s = 0.0
    for i in range(3):
        for j in range(2):
            if rows[i, j] < 0:
                continue
            s = s + rows[i, j] * (i + 1)
        s = np.sin(s)
    return s


@case((V(0.5, 1.0, 2.0),), (V(0.3, 3.0, 0.25),))
def while_with_break_inside_for(x):
    s = 0.0
    for v in x:
        y = v
        while True:
            y = y * 1.8
            if y > 2.0:
                break
        s = s + y * v
    return s


@case((V(0.5, 1.0, 2.0),), (V(0.3, 3.0, 0.25),))
def for_inside_while_with_break(x):
    s = 0.0
    k = 0
    while k < 3:
        for v in x:
            s = s + v * 0.5
            if s > 2.6:
                break
        k += 1
    return s * x[0]


@case((V(2.0, scalar=True),), (V(0.4, scalar=True),), (V(-0.5, scalar=True),))
def return_inside_while(x):
    n = 0
    while n < 10:
        x = x * 1.2 + 0.05
        if x > 3.0:
            return x * n
        n += 1
    return x + 1.0


@case((V(0.5, 1.2, 0.3),), (V(0.5, 0.2, 0.3),))
def break_after_subscript_update(x):
    y = x.copy()
    for i in range(len(y)):
        y[i] = y[i] ** 2 + y[i - 1]
        if y[i] > 1.0:
            break
    return np.sum(y * x)


@case((V(0.5, 1.2, 0.3),), (V(0.5, 0.2, 0.3),))
def loop_variable_used_after_break(x):
    for i in range(len(x)):
        if x[i] > 1.0:
            break
    return x[i] * np.sum(x) + i


@case((V(0.5, 1.2, 0.3),), (V(0.5, 0.2, 0.4),))
def value_first_assigned_in_loop_used_after(x):
    for v in x:
        last = v * v + 1.0
        if last > 2.0:
            break
    return last * np.sum(x)


@case((V(0.5, 1.2, 0.3),), (V(0.5, 0.2, 0.3),))
def for_else_search_default(x):
    for i in range(len(x)):
        if x[i] > 1.0:
            found = x[i] * 2.0
            break
    else:
        found = np.sum(x) * 0.5
    return found * x[0]


@case((V(0.5, scalar=True), V(1.0, 2.0)), (V(-0.5, scalar=True), V(1.0, 2.0)),
      argnums=(0, 1))
def early_return_before_loop(x, w):
    if x < 0:
        return x * np.sum(w)
    s = 0.0
    for v in w:
        s = s + np.sin(v * x)
    return s


@case((V(0.5, -1.0, 0.8),), (V(0.5, 1.0, 0.8),))
def return_in_else_branch_inside_loop(x):
    s = 0.0
    for v in x:
        if v > 0:
            s = s + v
        else:
            return s * v
    return s * s
