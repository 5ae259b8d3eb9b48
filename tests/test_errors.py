"""Bad input gets one clear line naming the user's file and line."""
import os

import numpy as np
import pytest

import tangent_x as tx
from tangent_x import TransformError

HERE = os.path.basename(__file__)


def uses_try(x):
    try:
        y = np.sin(x)
    except ValueError:
        y = x
    return y


def uses_yield(x):
    yield np.sin(x)


counter = 0


def uses_global(x):
    global counter
    counter = 1
    return x * 2.0


def uses_unknown_name(x):
    return np.sin(x) * undefined_thing  # noqa: F821


def vector_output(x):
    return np.sin(x)


def calls_opaque(x):
    return np.sin(np.fft.fft(x).real).sum()


def recursive(x):
    return recursive(x * 0.5)


def _line_of(fn, text):
    import inspect
    lines, start = inspect.getsourcelines(fn)
    for i, line in enumerate(lines):
        if text in line:
            return start + i
    raise AssertionError(text)


@pytest.mark.parametrize("fn, marker, construct", [
    (uses_try, "try:", "`try` statement"),
    (uses_yield, "yield np", "`yield`"),
    (uses_global, "global counter", "`global` statement"),
    (uses_unknown_name, "undefined_thing", "name 'undefined_thing' is not defined"),
    (recursive, "return recursive", "recursive call to recursive"),
])
def test_unsupported_code_is_located(fn, marker, construct):
    with pytest.raises(TransformError) as info:
        tx.grad(fn)(1.0)
    message = str(info.value)
    assert "\n" not in message
    assert f"{HERE}:{_line_of(fn, marker)}" in message
    assert construct in message


def test_transform_error_is_a_type_error():
    assert issubclass(TransformError, TypeError)


def test_builtin_without_source_names_the_call_site():
    import math
    with pytest.raises(TransformError) as info:
        tx.grad(math.factorial)(1.0)
    message = str(info.value)
    assert "has no Python source" in message and HERE in message


def test_non_scalar_output_raises_type_error_like_jax():
    with pytest.raises(TypeError, match="Gradient only defined for scalar-output functions"):
        tx.grad(vector_output)(np.ones(3))


def test_integer_argument_raises_clear_error():
    with pytest.raises(TypeError, match="real- or complex-valued inputs"):
        tx.grad(vector_output)(3)
    with pytest.raises(TypeError, match="dtype int"):
        tx.grad(vector_output)(np.arange(3))


def test_no_rule_for_a_function_names_the_line():
    with pytest.raises(TransformError) as info:
        tx.grad(calls_opaque)(np.ones(4))
    assert f"{HERE}:{_line_of(calls_opaque, 'np.fft')}" in str(info.value)


def test_argnums_out_of_range():
    with pytest.raises(TypeError, match="argnums"):
        tx.grad(vector_output, argnums=3)(1.0)


def test_runtime_error_in_generated_code_names_both_lines():
    def bad_shapes(a, b):
        return np.sum(a @ b)

    with pytest.raises(ValueError) as info:
        tx.grad(bad_shapes)(np.ones((2, 3)), np.ones((2, 3)))
    notes = "\n".join(getattr(info.value, "__notes__", [])) or str(info.value)
    assert "generated code" in notes
    assert f"{HERE}:{_line_of(bad_shapes, 'a @ b')}" in notes


def _aug_alias_straight(x):
    y = x * 2.0
    z = y
    y += 1.0  # marker: aug straight
    return np.sum(z * y)


def _aug_alias_if(x):
    y = x * 2.0
    z = y
    if np.sum(x) > 0:
        y *= x  # marker: aug if
    return np.sum(z)


def _aug_view(x):
    y = x * 2.0
    row = y[0]
    row += 1.0  # marker: aug view
    return np.sum(y)


def _mutate_then_rebind_alias(x):
    # (rebinding y in every turn is followed since session 16: the loop's
    # first turn is peeled; on one path only, the later turns stay in doubt)
    y = x * 2.0
    z = y
    for i in range(3):
        y[0] = y[0] + 1.0  # marker: mutate then rebind
        if np.sum(y) > 5.0:
            y = y * 2.0
    return np.sum(z)


@pytest.mark.parametrize("fn, marker, words", [
    (_mutate_then_rebind_alias, "mutate then rebind", ["'y'", "'z'", ".copy()",
                                                        "on one path only"]),
])
def test_in_place_change_of_a_shared_array_in_a_loop_is_located(fn, marker, words):
    """In a loop that also rebinds one of two names sharing an array, which
    names share it changes from one iteration to the next: NumPy would change
    the other name too, and tangent_x says so instead of silently computing a
    different value (eagerly, under grad and under jit)."""
    x = np.arange(1.0, 4.0)
    for transform in (tx.grad, tx.jit):
        with pytest.raises(TransformError) as info:
            with tx.disable_jit():
                transform(fn)(x)
        message = str(info.value)
        assert f"{HERE}:{_line_of(fn, marker)}" in message
        for w in words:
            assert w in message
    with pytest.raises(TransformError):
        tx.jit(fn)(x)


def _aug_alias_dead(x):
    s = np.sum(x)
    prev = s
    d = s - prev
    s += 1.0          # prev is not read again: a rebind is what Python does
    return s * x[0] + d


def _aug_number_in_loop(x):
    acc = np.sum(x)
    for i in range(3):
        acc += x[i] * acc
    return acc


@pytest.mark.parametrize("fn", [_aug_alias_dead, _aug_number_in_loop])
def test_augmented_assignment_without_a_live_alias_still_works(fn):
    x = np.arange(1.0, 4.0)
    with tx.disable_jit():
        assert np.allclose(tx.jit(fn)(x), fn(x.copy()))
    assert np.allclose(tx.jit(fn)(x), fn(x.copy()))
    from tangent_x.test_util import check_grads
    check_grads(fn, (x,), order=1, modes=("rev",))
