"""Hazards of reverse mode on imperative code: values overwritten in place
after a derivative rule saved them, rebinding names through nonlinear ops,
cotangents that alias one another, masked and fancy subscript assignment,
batched matmul, keyword arguments to NumPy."""
import numpy as np

from . import N, P, case, each


@case(*each(N, (), (3,)))
def rebinding_nonlinear_chain(x):
    y = np.sin(x)
    y = np.sin(y) * y
    y = np.exp(y) * x
    return np.sum(y)


@case(*each(N, (), (3,)))
def rebinding_parameter_nonlinear(x):
    x = np.sin(x)
    x = x * x + np.cos(x)
    return np.sum(x)


@case(*each(N, (3,), (2, 3)))
def in_place_after_value_was_used(x):
    y = np.sin(x)
    z = y * y
    y *= 3.0
    return np.sum(z * y)


@case(*each(N, (3,), (2, 3)))
def in_place_input_of_nonlinear_op(x):
    y = x * 1.0
    w = np.sin(y)
    y += 1.0
    w2 = np.sin(y)
    return np.sum(w * w2 * y)


@case(*each(N, (3,), (2, 3)))
def subscript_assign_after_value_was_used(x):
    y = np.sin(x)
    z = y * y
    y[0] = 5.0
    return np.sum(z + y * x)


@case(*each(N, (3,), (2, 3)))
def indexed_accumulation_after_value_was_used(x):
    acc = x * 2.0
    saved = np.cos(acc)
    acc[1] += acc[0] * acc[1]
    return np.sum(saved * acc)


@case((N(), N()), (N((3,)), N((3,))), (N((2, 3)), N((3,))), argnums=(0, 1))
def shared_cotangent_then_accumulate(x, y):
    s = x + y
    return np.sum(s * s) + np.sum(x * 3.0) + np.sum(np.sin(y))


@case(*each(N, (), (3,)))
def alias_of_argument_used_twice(x):
    y = x
    a = np.sin(y)
    b = np.cos(x)
    return np.sum(a * b + y)


@case(*each(N, (3,), (2, 3)))
def copy_identity_then_accumulate(x):
    y = x.copy()
    z = y + x
    return np.sum(z * y + x)


@case((P(),), (N(),))
def augmented_on_float_parameter(x):
    x += 1.0
    x *= x
    x -= 0.5
    return x


@case(*each(N, (5,), (2, 3)))
def mask_assignment_relu(x):
    y = x.copy()
    y[y < 0.0] = 0.0
    return np.sum(y * y + y)


@case(*each(N, (5,), (2, 3)))
def mask_augmented_assignment(x):
    y = x * 1.0
    y[x > 0.0] *= 2.0
    y[x <= 0.0] += x[x <= 0.0] ** 2
    return np.sum(y * x)


@case(*each(N, (3,), (4, 2)))
def fancy_index_assignment(x):
    y = np.zeros_like(x)
    y[np.array([0, 2])] = x[:2] * 3.0
    return np.sum(y * x)


@case((N((2, 3, 4)), N((4, 5))), (N((3, 1, 2)), N((2, 2))), argnums=(0, 1))
def batched_matmul(a, b):
    return np.sum(np.tanh(a @ b))


@case((N((2, 3, 4)), N((4,))), (N((1, 2)), N((2,))), argnums=(0, 1))
def batched_matmul_with_vector(a, v):
    return np.sum((a @ v) ** 2)


@case(*each(N, (5,), (2, 3)))
def numpy_keyword_arguments(x):
    y = np.clip(x, a_min=-0.5, a_max=0.5)
    z = np.concatenate([x, y], axis=0)
    return np.sum(z * z, axis=None) + np.mean(a=x * y)


CONFIG = {"scale": 1.5, "shift": -0.25}


@case(*each(N, (), (3,)))
def global_dict_of_constants(x):
    return np.sum(x * x * CONFIG["scale"] + CONFIG["shift"] * x)


@case(*each(N, (5,), (2, 3)))
def infinite_bounds_and_numpy_scalars(x):
    return np.sum(np.clip(x, -np.inf, 0.5) * np.float64(3.0) + np.minimum(x, np.inf))


@case(*each(N, (3,), (4,)))
def np_array_from_elements(x):
    v = np.array([x[0], x[1] * 2.0, np.sin(x[2])])
    return v @ v


@case(*each(N, (3,), (4,)))
def np_array_nested_from_elements(x):
    m = np.array([[x[0], 0.0], [x[1] * x[2], 1.0]])
    return np.sum(m @ m)


@case(*each(N, (3,), (3, 2)))
def np_array_from_rows(x):
    m = np.array([x[0], x[1] + x[2]])
    return np.sum(m * m)


def _fill_into(buf, x):
    buf[0] = x[0] * x[1]
    buf[2] += x[2]


@case(*each(N, (3,), (4,)))
def helper_mutates_owned_buffer(x):
    y = np.zeros(3)
    _fill_into(y, x)
    return y @ y


@case(*each(N, (3,), (4,)))
def chained_subscript_assign(x):
    m = np.zeros((2, 2))
    m[0][1] = x[0] * 2.0
    m[1, :][0] = x[1]
    return np.sum(m * m) + m[0, 1]


@case(*each(N, (3,), (3, 2)))
def assign_into_array_inside_list(x):
    ys = [np.zeros_like(x[0]), np.zeros_like(x[0])]
    ys[0][...] = x[1] * x[2]
    ys[1] += x[0]
    return np.sum(ys[0] * ys[1] + ys[0])


@case(*each(N, (3,), (3, 2)))
def tuple_target_subscript_swap(x):
    y = x * 1.0
    y[0], y[1] = y[1] * 2.0, y[0].copy()   # copy: for 2-D x, y[0] is a view
    return np.sum(y * np.arange(1.0, 4.0).reshape((3,) + (1,) * (x.ndim - 1)) * x)


@case(*each(N, (5,), (4, 2)))
def strided_augmented_assign(x):
    y = x * x
    y[::2] += x[::2]
    y[1::2] -= 2.0 * x[1::2]
    return np.sum(y * x)


@case(*each(N, (3,), (2, 3)))
def ellipsis_assign(x):
    y = np.zeros_like(x)
    y[...] = np.sin(x)
    return np.sum(y * x)


@case((N((2, 2)), N((2, 2))), (N((3, 3)), N((3, 3))), argnums=(0, 1))
def matmul_augmented_assign(a, w):
    y = a * 1.0
    y @= w
    return np.sum(y * y)


@case(*each(N, (3, 2), (2, 3)))
def view_sees_later_assignment(x):
    y = x * 1.0
    row = y[0]          # a view in NumPy, so ...
    y[0] = x[1] * 2.0   # ... this assignment changes row as well
    return np.sum(row * x[0])
