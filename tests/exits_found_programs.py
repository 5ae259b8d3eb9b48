"""Programs (cut down by hand from fuzz seeds) whose break/continue the
exits rewrite used to miss.  A real module: transforms read its source."""
import numpy as np


def break_in_for_under_if(x, y):
    # seed 37: a loop that breaks, inside an `if` that does not return
    if np.sum(y) > -100.0:
        for v in x:
            if v > 0.5:
                break
            y = 0.7 * y + 0.3 * np.sin(y) * v
    return np.sum(y * y)


def continue_in_for_under_if(x, y):
    # seed 56: a loop that continues, inside an `if` that does not return
    if np.sum(x) < 100.0:
        for v in x:
            y = 0.7 * y + 0.3 * np.cos(y)
            if v < 0.0:
                continue
            y = y * v
    return np.sum(y)


def while_under_if(x, y):
    # seed 27: no exit in the user's code, but grad's generated code for
    # this while (under an `if`) breaks: hvp and vmap(grad) transform it again
    if np.sum(x) > -100.0:
        w = np.tanh(np.sum(x))
        k = 0
        while w < 0.99 and k < 3:
            y = 0.7 * y + 0.3 * np.sin(y * x)
            w = w + 0.3
            k += 1
    return np.sum(y * y)


def while_break_under_else(x, y):
    # seeds 81, 94, 121: a user break in a while under the `else` branch
    if np.sum(x) < -100.0:
        y = y * 2.0
    else:
        k = 0
        while k < 4:
            y = np.tanh(y + x)
            if np.sum(y) > 10.0:
                break
            k += 1
    return np.sum(y ** 3)


def function_after_continue(x):
    # seed 64: a lambda bound after a `continue` (bound on one path only)
    for i in range(3):
        x = x + 0.1 * i
        if i >= 1:
            continue
        g = lambda p: 1.0 / (1.0 + np.exp(-np.cos(p)))
        x = x + g(x)
    return np.sum(x * x)
