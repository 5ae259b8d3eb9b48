"""Programs the generator found wrong or crashing, cut down by hand or by
its shrinker (tests/test_fuzz_found.py runs them); they live in a real file
because tangent_x reads source."""
import numpy as np

from tangent_x import lax


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


def lambda_argument_then_update(x, y):
    """The lambda's parameter names y while it runs, and no longer after."""
    chosen = lax.cond(np.sum(x) > 0, lambda a: np.sin(a), lambda a: a * 2.0, y)
    y -= 0.5 * x
    return np.sum(chosen * y)


def branch_passes_an_array_through_then_update(x, y):
    if np.sum(x) > 0:
        chosen = y
    else:
        chosen = y * 2.0
    y -= 0.5 * x
    return np.sum(chosen * y)


def branch_passes_an_owned_array_through_then_write(x, y):
    y = y * 1.0
    if np.sum(x) > 0:
        chosen = y
    else:
        chosen = y * 2.0
    y[0] = 3.0 * x[1]
    return np.sum(chosen * y)


def branch_passes_an_array_through_then_rebind(x, y):
    y = y * 1.0
    chosen = y if np.sum(x) > 0 else y * 2.0
    y = y - 0.5 * x
    return np.sum(chosen * y)


def augmented_after_nested_branch(x, y):
    """Seed 126156, cut down: ``b -= v`` after an ``if`` that binds ``b`` on
    every path, ``b`` read no more after it (it was refused as read before
    assignment: the liveness of the ``if`` took ``b -= v`` for no read)."""
    s = np.sum(y)
    if s < 5.0:
        if np.sum(x) < 0.3:
            b = 2.0 * x
        else:
            b = x * y
        b -= np.arctan(y)
        s = s + np.sum(b)
    return s * np.sum(x * y)


def branch_passes_argument_then_augmented(x, y):
    """``b`` is ``x`` on one path of a nested ``if``: ``b -= v`` changes ``x``
    there only (the gradient ignored the change: wrong on that path)."""
    if np.sum(y) < 5.0:
        if np.sum(x) < 0.3:
            b = 2.0 * x
        else:
            b = x
        b -= np.arctan(y)
    return np.sum(x * y)


def branch_passes_argument_then_item_write(x, y):
    """As above with ``b[0] = v`` (the gradient ignored the write)."""
    if np.sum(x) < 0.3:
        b = 2.0 * x
    else:
        b = x
    b[0] = y[1]
    return np.sum(x * y)


def loop_changes_its_argument_then_rebinds(x, y):
    for i in range(3):
        y *= x          # the first turn changes the array it was passed
        y = 0.7 * y + 0.3 * x
    return np.sum(y * y)


def caller_done_with_its_array(x, y):
    """Seeds 125167, 125275 and 125299, cut down: the array the helper's
    loop changes is not read by the caller after the call (it was refused)."""
    return loop_changes_its_argument_then_rebinds(x, y)


def caller_reads_its_array_after(x, y):
    s = loop_changes_its_argument_then_rebinds(x, y)
    return s + np.sum(y)
