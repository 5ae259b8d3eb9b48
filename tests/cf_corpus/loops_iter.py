"""Loops over things other than ``range``: rows of a matrix, elements of a
vector, slices of a 3-D array, ``zip`` (two and three sequences),
``enumerate`` (with and without nested unpacking), Python containers of
static length (a list of parameter dicts, a list of arrays, a tuple of
constants, a list of functions, a dict), ``X.T`` columns, and ``for ... else``."""
import numpy as np

from . import F, N, V, case, each


def _mlp_params(sizes):
    def make(rng):
        return [{"W": rng.standard_normal((n, m)) * 0.7, "b": rng.standard_normal(n) * 0.3}
                for m, n in zip(sizes[:-1], sizes[1:])]
    make.__name__ = f"mlp_params{tuple(sizes)}"
    return F(make)


def _array_list(*shapes):
    def make(rng):
        return [rng.standard_normal(s) for s in shapes]
    make.__name__ = f"array_list{shapes}"
    return F(make)


@case(*each(N, (3, 2), (4, 3)))
def for_row_in_matrix(x):
    s = 0.0
    for row in x:
        s += np.sum(np.tanh(row)) ** 2
    return s


@case((N((4, 3)), N((3,))), (N((2, 2)), N((2,))), argnums=(0, 1))
def for_row_with_carried_state(x, w):
    h = w
    for row in x:
        h = np.tanh(row * h + row)
    return np.sum(h * w)


@case(*each(N, (4,), (6,)))
def for_element_in_vector(x):
    s = 0.0
    for v in x:
        s = s * 0.5 + v * v + np.sin(v)
    return s


@case(*each(N, (2, 3, 3), (3, 2, 2)))
def for_matrix_in_3d_array(x):
    s = 0.0
    for m in x:
        s = s + np.sum(m @ m.T) * 0.1
    return s


@case(*each(N, (3, 2), (2, 4)))
def for_column_in_transpose(x):
    s = 0.0
    for col in x.T:
        s += np.sum(col) * np.cos(col[0])
    return s


@case((N((4,)), N((4,))), (N((2, 3)), N((2, 3))), argnums=(0, 1))
def for_zip_two(xs, ys):
    s = 0.0
    for a, b in zip(xs, ys):
        s = s + np.sum(a * np.sin(b))
    return s


@case((N((3,)), N((3,)), N((3,))), (N((5,)), N((5,)), N((5,))), argnums=(0, 1, 2))
def for_zip_three(xs, ys, zs):
    s = 0.0
    for a, b, c in zip(xs, ys, zs):
        s += a * b + np.exp(c * 0.5) * a
    return s


@case((N((4,)), N((3,))), (N((2,)), N((5,))), argnums=(0, 1))
def for_zip_unequal_lengths(xs, ys):
    s = 0.0
    for a, b in zip(xs, ys):
        s += a * b * b
    return s


@case(*each(N, (3,), (5,)))
def for_enumerate(x):
    s = 0.0
    for i, v in enumerate(x):
        s += (i + 1) * v ** 2 + np.sin(v) * i
    return s


@case(*each(N, (3, 3), (4, 2)))
def for_enumerate_rows(x):
    s = 0.0
    for i, row in enumerate(x):
        s += row[i % row.shape[0]] * np.sum(row * row)
    return s


@case((N((3,)), N((3,))), (N((4,)), N((4,))), argnums=(0, 1))
def for_enumerate_zip_nested_unpacking(xs, ys):
    s = 0.0
    for i, (a, b) in enumerate(zip(xs, ys)):
        s = s + (i + 1.0) * a * np.cos(b)
    return s


@case((_mlp_params([3, 4, 2]), N((3,))), (_mlp_params([2, 3, 3, 1]), N((2,))),
      argnums=(0, 1))
def for_layer_in_param_dicts(params, x):
    for layer in params:
        x = np.tanh(layer["W"] @ x + layer["b"])
    return np.sum(x ** 2)


@case((_mlp_params([3, 4, 2]), N((3,))), (_mlp_params([2, 3, 3, 1]), N((2,))),
      argnums=(0, 1))
def for_enumerate_layers_last_is_linear(params, x):
    for i, layer in enumerate(params):
        x = layer["W"] @ x + layer["b"]
        if i < len(params) - 1:
            x = np.tanh(x)
    return np.sum(x ** 2)


@case((_array_list((3,), (3,), (3,)), N((3,))), (_array_list((2,), (2,)), N((2,))),
      argnums=(0, 1))
def for_over_list_of_arrays(ws, x):
    for w in ws:
        x = np.sin(w * x) + x
    return np.sum(x)


@case(*each(N, (), (3,)))
def for_over_tuple_of_constants(x):
    s = 0.0
    for c in (0.5, 1.0, 2.0):
        s = s + np.sin(c * x) * c
    return np.sum(s)


@case(*each(N, (), (3,)))
def for_over_list_of_functions(x):
    s = x
    for fn in [np.sin, np.cos, np.tanh]:
        s = fn(s) + x
    return np.sum(s)


@case((F(lambda rng: {"a": rng.standard_normal(3), "b": rng.standard_normal((2, 2))}),),
      (F(lambda rng: {"a": rng.standard_normal(2), "b": rng.standard_normal(1),
                      "c": rng.standard_normal(())}),))
def for_over_dict_keys(params):
    s = 0.0
    for key in params:
        s = s + np.sum(np.sin(params[key]) ** 2)
    return s


@case((V(0.5, 1.0, -0.3),), (V(0.5, 4.0, 1.0),))
def for_else_search(x):
    s = 0.0
    for v in x:
        if v > 3.0:
            s = s + v * 10.0
            break
        s = s + v * v
    else:
        s = s * np.sum(np.sin(x))
    return s


@case((V(0.5, 1.0, -0.3, 0.2),), (V(0.5, -1.0, 2.5, 0.7),))
def for_range_else_break_on_total(x):
    total = 0.0
    for i in range(len(x)):
        total += x[i] ** 2
        if total > 5.0:
            break
    else:
        total = total * 2.0 + np.sum(x)
    return total * x[0]
