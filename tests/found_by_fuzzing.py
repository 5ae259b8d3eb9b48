"""Programs the generator found wrong or crashing, cut down by hand or by
its shrinker (tests/test_fuzz_found.py runs them); they live in a real file
because tangent_x reads source."""
import numpy as np


def negative_constant_power(x):
    return np.sqrt(x + (-0.87) ** 2)


def zip_with_break(x, y):
    s = x
    for a, b in zip(y, y * 2.0):
        s = s * a + b
        if s > 0.5:
            break
    return s


def enumerate_reversed_with_break(x, y):
    s = x
    for i, a in enumerate(reversed(y)):
        s = s * a + i
        if s > 0.5:
            break
    return s


def zip_enumerate_with_return(x, y):
    s = x
    for a, (i, b) in zip(y, enumerate(y * 2.0)):
        s = s * a + b * i
        if s > 5.5:
            return s * 2.0
    return s


def update_argument_in_place(x, y):
    x *= x * (-0.42) ** 2
    return np.sin(np.mean(x)) * y
