"""Pytree arguments (list of dicts, dict, tuple, NamedTuple, nested), argnums, has_aux."""
from typing import NamedTuple

import numpy as np

from . import C, F, N, P, case, each


class Params(NamedTuple):
    w: np.ndarray
    b: np.ndarray


def _mlp_params(sizes):
    def make(rng):
        return [{"W": rng.standard_normal((m, n)) * 0.5, "b": rng.standard_normal(n)}
                for m, n in zip(sizes[:-1], sizes[1:])]
    make.__name__ = f"mlp_params{tuple(sizes)}"
    return make


def _tree(fn, name):
    fn.__name__ = name
    return F(fn)


def _randn(rng, *shape):
    x = rng.standard_normal(shape)
    return float(x) if shape == () else x


@case((F(_mlp_params([3, 4, 1])), N((5, 3))), (F(_mlp_params([2, 3, 2])), N((2,))))
def mlp_list_of_dicts(params, x):
    h = np.tanh(x @ params[0]["W"] + params[0]["b"])
    out = h @ params[1]["W"] + params[1]["b"]
    return np.sum(out ** 2)


@case((_tree(lambda r: {"a": _randn(r, 3), "b": _randn(r)}, "dict_3_scalar"),),
      (_tree(lambda r: {"a": _randn(r, 2, 3), "b": _randn(r, 3)}, "dict_23_3"),))
def dict_params(p):
    return np.sum(np.sin(p["a"]) * p["b"] + p["b"] * p["b"])


@case((_tree(lambda r: (_randn(r, 3), _randn(r)), "tuple_3_scalar"), N((3,))),
      (_tree(lambda r: (_randn(r, 2, 3), _randn(r, 3)), "tuple_23_3"), N((4, 2))))
def tuple_params_unpacked(params, x):
    w, b = params
    return np.sum(np.tanh(x @ w + b) ** 2)


@case((_tree(lambda r: Params(_randn(r, 3), _randn(r)), "params_3_scalar"), N((3,))),
      (_tree(lambda r: Params(_randn(r, 3, 2), _randn(r, 2)), "params_32_2"), N((4, 3))))
def namedtuple_params(params, x):
    return np.sum((x @ params.w + params.b) ** 2)


@case((_tree(lambda r: Params(_randn(r, 3), _randn(r, 3)), "params_3_3"),),
      (_tree(lambda r: Params(_randn(r), _randn(r)), "params_scalars"),))
def namedtuple_indexed_and_unpacked(params):
    w, b = params
    return np.sum(params[0] * b + w * params.b * params[1])


def _nested(r):
    return {"enc": (_randn(r, 3, 2), _randn(r, 2)),
            "dec": [_randn(r, 2), {"bias": _randn(r), "scale": _randn(r, 2)}]}


def _nested_small(r):
    return {"enc": (_randn(r, 1, 3), _randn(r, 3)),
            "dec": [_randn(r, 3), {"bias": _randn(r, 1), "scale": _randn(r, 3)}]}


@case((F(_nested), N((3,))), (F(_nested_small), N((2, 1))))
def nested_containers(p, x):
    W, b = p["enc"]
    h = np.tanh(x @ W + b)
    v, rest = p["dec"]
    return np.sum(h * v * rest["scale"] + rest["bias"])


@case((_tree(lambda r: {"w": _randn(r, 3), "unused": None}, "with_none_3"),),
      (_tree(lambda r: {"w": _randn(r), "unused": None}, "with_none_scalar"),))
def dict_with_none_leaf(p):
    return np.sum(p["w"] ** 3)


@case((_tree(lambda r: {"a": _randn(r), "b": _randn(r, 3)}, "float_and_array"),),
      (_tree(lambda r: {"a": _randn(r), "b": _randn(r)}, "two_floats"),))
def python_float_leaf(p):
    return np.sum(p["a"] * p["b"] * p["b"] + p["a"] ** 2)


@case((_tree(lambda r: [_randn(r, 3), _randn(r, 3), _randn(r, 3)], "list_of_3"),),
      (_tree(lambda r: [_randn(r), _randn(r), _randn(r)], "list_of_floats"),))
def list_params(xs):
    return np.sum(xs[0] * xs[1] + xs[2] * xs[0] * xs[0])


@case((N(), N()), (N((3,)), N((2, 3))), argnums=1)
def argnums_int_second(x, y):
    return np.sum(x * np.sin(y))


@case((N(), N(), N()), (N((3,)), N(()), N((3,))), argnums=(0, 2))
def argnums_tuple_skip_middle(x, y, z):
    return np.sum(x * y * z + z * z)


@case((N(), N()), (N((3,)), N((3,))), argnums=-1)
def argnums_negative(x, y):
    return np.sum(x * y * y)


@case((N(), N()), (N((3,)), N((2, 2))), argnums=(0, 1))
def unused_argument_gets_zeros(x, y):
    return np.sum(x * x)


@case((N((2, 3)), P((2, 3)), C(2)), (N((3,)), P((3,)), C(3)), argnums=(0, 1))
def argnums_with_integer_argument(x, y, n):
    return np.sum(x ** n / y)


@case(*each(N, (), (3,)), has_aux=True)
def has_aux_dict(x):
    y = np.sin(x)
    return np.sum(y * y), {"y": y, "mean": np.mean(x)}


@case(*each(N, (3,), (2, 3)), has_aux=True)
def has_aux_tuple_of_arrays(x):
    loss = np.sum(x ** 2)
    return loss, (x * 2.0, np.cos(x))


@case((F(_mlp_params([3, 2, 1])), N((4, 3))), (F(_mlp_params([2, 2, 1])), N((2,))),
      has_aux=True)
def has_aux_mlp_predictions(params, x):
    h = np.tanh(x @ params[0]["W"] + params[0]["b"])
    pred = h @ params[1]["W"] + params[1]["b"]
    return np.sum(pred ** 2), pred


@case((N(), N()), (N((3,)), N((3,))), argnums=(0, 1), has_aux=True)
def has_aux_with_argnums_tuple(x, y):
    return np.sum(x * y), x - y


@case(*each(N, (), (3,)))
def dict_built_inside(x):
    d = {"s": np.sin(x), "c": np.cos(x)}
    return np.sum(d["s"] * d["c"] + d["s"])


@case(*each(N, (), (3,)))
def list_and_tuple_built_inside(x):
    parts = [x, x * x, x * x * x]
    pair = (np.sin(x), parts[1])
    return np.sum(parts[0] + parts[2] * pair[0] + pair[1])


@case(*each(N, (), (3,)))
def namedtuple_built_inside(x):
    p = Params(w=x, b=2.0 * x)
    q = Params(np.sin(x), p.b)
    return np.sum(p.w * p.b + q.w * q.b)
