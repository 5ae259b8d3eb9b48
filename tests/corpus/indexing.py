"""Reading by index: integers, negative indices, slices, columns, integer arrays
with repeated indices, boolean masks, newaxis, indexing containers."""
import numpy as np

from . import C, F, N, case, each

MASK = np.array([True, False, True])
IDX = np.array([0, 0, 2])


@case(*each(N, (3,), (2, 3)))
def index_first(x):
    return np.sum(x[0] * x[1] + x[0])


@case(*each(N, (3,), (4, 2)))
def index_negative(x):
    return np.sum(x[-1] * x[-2] * 3.0)


@case(*each(N, (4,), (3, 2)))
def slice_1_3(x):
    return np.sum(x[1:3] ** 2)


@case(*each(N, (2, 3), (4, 1)))
def column_zero(x):
    return np.sum(np.sin(x[:, 0]) * x[:, -1])


@case(*each(N, (2, 2, 3), (3, 2)))
def ellipsis_last(x):
    return np.sum(x[..., -1] * x[..., 0])


@case(*each(N, (5,), (4, 2)))
def strided_and_reversed_slices(x):
    return np.sum(x[::2] ** 2) + np.sum(x[::-1] * x)


@case(*each(N, (3, 3), (2, 4)))
def slice_2d(x):
    return np.sum(x[1:, :-1] * x[:-1, 1:])


@case(*each(N, (3, 3), (2, 4)))
def index_pair(x):
    return x[1, 2 % x.shape[1]] * x[0, 0] + x[-1, -1] ** 2


@case(*each(N, (3, 2), (2, 3)))
def chained_indexing(x):
    return x[1][0] * x[0][1]


@case(*each(N, (3,), (4, 2)))
def integer_array_repeated_indices(x):
    return np.sum(x[np.array([0, 0, 2])] ** 2)


@case(*each(N, (3,), (3, 2)))
def integer_array_global_index(x):
    y = x[IDX]
    return np.sum(y * y * y)


@case(*each(N, (4,), (3, 2)))
def list_index(x):
    return np.sum(x[[0, 2, 2]] * x[[1, 1, 0]])


@case(*each(N, (5,), (2, 3)))
def boolean_mask_from_values(x):
    return np.sum(x[x > 0.0] ** 2)


@case(*each(N, (3,), (3, 2)))
def boolean_mask_global(x):
    return np.sum(np.exp(x[MASK]))


@case(*each(N, (3,), (4,)))
def newaxis_outer(x):
    return np.sum(np.sin(x[:, None] * x[None, :]))


@case((N((4,)), C(1)), (N((3, 2)), C(-1)))
def index_from_integer_argument(x, i):
    return np.sum(x[i] * x[i] + x[i - 1])


@case(*each(N, (4,), (2, 3)))
def index_computed_value(x):
    return np.sum(np.sin(x)[1:] * np.cos(x)[:-1])


def _list_of_arrays(shape):
    def make(rng):
        return [rng.standard_normal(shape) for _ in range(3)]
    make.__name__ = f"list_of_arrays{shape}"
    return make


@case((F(_list_of_arrays((3,))),), (F(_list_of_arrays((2, 2))),))
def index_list_argument(xs):
    return np.sum(xs[0] * xs[1] - xs[-1] * xs[0])
