"""Edge cases for the rewriting itself: names that collide with generated or
template names, shadowing, docstrings and annotations, 0-d arrays, trivial
and constant outputs, iteration-free unpacking of arrays, array constructors,
ties, helpers taking pytrees or assigning into their own arrays."""
import numpy
import numpy as np

from . import C, F, N, P, case, each


@case((N(),), (N(0),))
def identity(x):
    return x


@case((N(),), (N((3,)),), (N((2, 3)),))
def constant_output(x):
    return 3.0


@case(*each(N, (), (4,)))
def output_through_non_differentiable_ops(x):
    return np.sum(np.where(x > 0.0, 1.0, 0.0) + np.sign(x)) + 0.0 * np.sum(x)


@case((N(0),), (N((3,)),), (P(0),))
def zero_d_array_inputs(x):
    return np.sum(np.exp(x) * x + np.sqrt(x * x + 1.0))


@case((N(), N(0)), (N(0), N((2,))), argnums=(0, 1))
def python_float_and_zero_d(x, y):
    return np.sum(x * y + np.sin(x) * y * y)


@case(*each(N, (), (3,)))
def locals_named_like_generated_names(x):
    x_bar = x * 2.0
    tanh_x = np.tanh(x_bar)
    times_tanh_x = tanh_x * x
    out_bar = times_tanh_x + x_bar
    return np.sum(out_bar * tanh_x)


@case((N(), N(), N()), (N((3,)), N((3,)), N((3,))), argnums=(0, 1, 2))
def parameters_named_like_template_names(g, ans, x_bar):
    return np.sum(np.tanh(g) * ans + np.exp(x_bar) * g)


@case((N(), N()), (N((3,)), N((2, 3))), argnums=(0, 1))
def parameters_named_x_y_swapped(y, x):
    return np.sum(x / (1.0 + y * y) + np.arctan2(y, 2.0 + x * x))


@case(*each(N, (), (3,)))
def local_shadows_numpy_function_name(x):
    sin = np.sin(x)
    exp = np.exp(sin)
    tanh = exp * sin
    return np.sum(tanh + sin)


@case(*each(N, (), (3,)))
def local_shadows_helper_name(x):
    _double = x * 3.0
    return np.sum(_double * _double)


def _double(x):
    return x * 2.0


@case(*each(N, (), (3,)))
def same_value_as_two_arguments(x):
    return np.sum(_mul(x, x) + _mul(np.sin(x), x))


def _mul(a, b):
    return a * b


@case(*each(N, (), (3,)))
def docstring_and_annotations(x: np.ndarray) -> float:
    """A docstring must not confuse the transform."""
    y: np.ndarray = x * x
    return np.sum(y * np.cos(x))


@case((N(),), (N((3,)),))
def default_parameter_not_passed(x, scale=2.5):
    return np.sum(x * x * scale)


@case(*each(N, (3,), (3, 2)))
def unpack_array_rows(x):
    a, b, c = x
    return np.sum(a * b + c * c * a)


@case(*each(N, (3,), (5,)))
def builtin_len(x):
    return np.sum(x * x) / len(x)


@case(*each(N, (), (3,)))
def builtin_abs_and_pow(x):
    return np.sum(abs(x) * pow(x, 2) + abs(x - 0.1))


@case(*each(N, (3,), (2, 3)))
def array_constructors(x):
    a = np.ones(x.shape) * x
    b = np.zeros(x.shape[-1]) + np.ones_like(x) * x
    c = np.arange(x.shape[-1]) * 0.5 + np.linspace(0.0, 1.0, x.shape[-1])
    return np.sum(a * b * c + np.eye(x.shape[-1])[0] * x)


@case(*each(N, (3,), (2, 3)))
def full_like_and_empty_like(x):
    y = np.full_like(x, 2.0) * x
    z = np.empty_like(x)
    z[...] = x * x
    return np.sum(y * z)


@case(*each(N, (3,), (4,)))
def argmax_index(x):
    return x[np.argmax(x)] * 2.0 + x[np.argmin(x)]


@case(*each(N, (), (3,)))
def maximum_of_tie(x):
    return np.sum(np.maximum(x, x) * 2.0 + np.minimum(x, x))


@case(*each(N, (4,), (2, 3)))
def where_with_compound_mask(x):
    return np.sum(np.where((x > -0.5) & (x < 0.5), x * x, np.sin(x)))


@case((N((4,)), N(())), (N((2, 3)), N((3,))), argnums=(0, 1))
def clip_with_differentiable_bound(x, hi):
    return np.sum(np.clip(x, None, hi) * x) + np.sum(np.clip(x, -1.0, None))


@case(*each(N, (), (3,)))
def float_power_of_negative_base(x):
    return np.sum(x ** 2.0 + np.power(x, 3.0) + np.square(x) ** 1.5)


@case(*each(N, (4,), (3,)))
def newaxis_and_matmul_shapes(x):
    col = x[:, np.newaxis]
    return np.sum(col @ col.T) + np.sum(np.matmul(x, x))


def _layer(p, x):
    return np.tanh(x @ p["W"] + p["b"])


def _make_layer(n_in, n_out):
    def make(rng):
        return {"W": rng.standard_normal((n_in, n_out)), "b": rng.standard_normal(n_out)}
    make.__name__ = f"layer{n_in}x{n_out}"
    return make


@case((C(None), N((3,))), (C(None), N((2, 3))), argnums=1)
def helper_with_pytree_argument(_unused, x):
    p = {"W": np.array([[0.5, -1.0], [1.5, 0.2], [-0.3, 0.8]]), "b": np.array([0.1, -0.2])}
    return np.sum(_layer(p, x) ** 2)


def _fill(x):
    out = np.zeros(3)
    out[0] = x[0] * x[1]
    out[2] += x[2]
    return out


@case(*each(N, (3,), (4,)))
def helper_assigns_into_own_array(x):
    y = _fill(x)
    return y @ y + np.sum(_fill(x * 2.0))


@case(*each(N, (4,), (3, 2)))
def overlapping_slice_assign(x):
    y = x.copy()
    y[1:] = y[:-1]
    return np.sum(y * y * x)


@case(*each(N, (3,), (3, 2)))
def swap_with_fancy_index(x):
    y = x * 1.0
    y[[0, 1]] = y[[1, 0]]
    return np.sum(y * np.arange(1.0, 4.0).reshape((3,) + (1,) * (x.ndim - 1)))


@case(*each(N, (2, 3), (4, 2)))
def column_augmented_assign(x):
    y = x * 1.0
    y[:, 0] += x[:, 1] * 2.0
    y[:, -1] *= x[:, 0]
    return np.sum(y * y)


@case(*each(N, (3,), (5,)))
def numpy_no_alias_accumulation_chain(x):
    acc = numpy.zeros(2)
    acc[0] += x[0] * x[1]
    acc[1] += numpy.sin(x[0])
    return acc.reshape(2, 1).sum(axis=1).mean() + acc @ acc


@case(*each(N, (2, 3), (3, 3)))
def method_chain_on_helper_result(x):
    return _double(x).T.reshape(-1).sum() + _double(x).sum(axis=0).max()


@case(*each(N, (2, 3), (4, 3)))
def positional_axis_and_tuple_shapes(x):
    return np.sum(np.sum(x, 0) ** 2) + x.sum(0).mean() + np.sum(x.reshape((-1, 1)) ** 3)


@case(*each(N, (3,), (4,)))
def alias_then_subscript_assign(x):
    y = np.zeros(3)
    z = y
    y[0] = x[0] * x[1]
    z[1] = x[2]
    return z @ z + y[1]


@case(*each(N, (3,), (2, 3)))
def read_between_assignments(x):
    y = np.zeros_like(x)
    y[0] = x[0]
    a = y * 1.0
    y[1] = a[0] * x[1]
    return np.sum(y * y + a)


@case(*each(N, (3,), (3, 2)))
def index_variable_rebound(x):
    y = np.zeros_like(x)
    i = 0
    y[i] = x[1] * 2.0
    i = 1
    y[i] = x[0] * x[2]
    return np.sum(y * x)


@case(*each(N, (), (3,)))
def closure_late_binding(x):
    y = x * 2.0

    def g():
        return y * y
    y = np.sin(x)
    return np.sum(g())


@case(*each(N, (), (3,)))
def lambda_default_captures_value(x):
    f = lambda t, a=x * 2.0: t * a  # noqa: E731
    return np.sum(f(x) + f(1.0, 3.0))


@case(*each(N, (), (3,)))
def nested_def_shadows_parameter(x):
    def inner(x):
        return x * 2.0 + 1.0
    return np.sum(inner(x * x) * x)


def _nested_pair(x):
    return (x * 2.0, np.sin(x)), x * x


@case(*each(N, (), (3,)))
def nested_tuple_unpacking(x):
    (a, b), c = _nested_pair(x)
    return np.sum(a * b * c)


@case(*each(N, (), (3,)))
def starred_unpacking(x):
    first, *rest = (x, x * 2.0, np.cos(x))
    return np.sum(first * rest[0] + rest[1])


@case(*each(N, (), (3,)))
def chained_assignment(x):
    a = b = x * 2.0
    b = b * a
    return np.sum(a + b)


@case(*each(N, (), (3,)))
def list_item_assign(x):
    parts = [x, x * x]
    parts[0] = parts[0] * 2.0
    parts[1] += x
    return np.sum(parts[0] * parts[1])


@case(*each(N, (), (3,)))
def dict_item_assign(x):
    d = {"a": x}
    d["b"] = np.sin(x)
    d["a"] = d["a"] * d["b"]
    return np.sum(d["a"] + d["b"])


def _params_tree(rng):
    return {"W": rng.standard_normal((3, 2)), "b": rng.standard_normal(2)}


class _Net:
    def __init__(self):
        self.layers = [{"W": np.array([[0.5, -1.0], [1.5, 0.2], [-0.3, 0.8]]),
                        "b": np.array([0.1, -0.2])}]

    def loss(self, x):
        layer = self.layers[0]
        return np.sum(np.tanh(x @ layer["W"] + layer["b"]) ** 2) + np.sum(layer["W"].T[0])


NET = _Net()


@case(*each(N, (3,), (2, 3)))
def method_with_pytree_attribute(x):
    return NET.loss(x) * 2.0


@case((F(_params_tree), N((3,))), (F(_params_tree), N((4, 3))))
def transpose_of_pytree_leaf(params, x):
    return np.sum((params["W"].T @ x.T) ** 2) + np.sum(params["b"] * params["W"])
