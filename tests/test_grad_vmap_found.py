"""grad of vectorised code (``grad(lambda *a: np.sum(vmap(f)(*a)))``) on
programs the fuzzer found, against finite differences of a per-example loop."""
import numpy as np
import pytest

import tangent_x as tx
from fuzzing.oracles import compare_fd, fd_grad

import grad_vmap_found_programs as P

B = 3


def _example(x, b, ax):
    return x if ax is None else np.take(x, b, axis=ax)


def check_grad_vmap(f, total, args, in_axes):
    argnums = tuple(range(len(args)))
    got = tx.grad(total, argnums=argnums)(*args)

    def by_loop(*a):
        return sum(float(f(*[_example(x, b, ax) for x, ax in zip(a, in_axes)]))
                   for b in range(B))
    args64 = tuple(np.asarray(a, np.float64) for a in args)
    compare_fd(tuple(got), lambda eps: tuple(fd_grad(by_loop, args64, eps)), 1e-5, B,
               f"grad of a vmapped sum of {f.__name__}")


def _normal(*shape, seed=0):
    return np.random.default_rng(seed).normal(size=shape)


CASES = {
    "scan_outputs": (lambda: (_normal(B, 2), _normal(B, 4, seed=1)), (0, 0)),
    "scan_outputs_shared_carry": (lambda: (_normal(2), _normal(B, 4, seed=1)), (None, 0)),
    "loop_over_rows": (lambda: (_normal(B, 3, 2),), (0,)),
    "scan_over_slices": (lambda: (_normal(B, 4, 2), _normal(B, 2, seed=1)), (0, 0)),
    "early_return_in_while": (lambda: (np.array([0.5, -0.7, -0.2]), _normal(B, 2, seed=2) * 0.3),
                              (0, 0)),
    # y a shared Python number: its gradient is a number summed over the lanes
    "shared_tuple_returned": (lambda: (_normal(2, B, 3), 0.7), (1, None)),
    "shared_tuple_returned_negative": (lambda: (_normal(2, B, 3), -0.7), (1, None)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_grad_vmap_found(name):
    make, in_axes = CASES[name]
    program = name.replace("_shared_carry", "").replace("_negative", "")
    fn = getattr(P, "loss_" + program, None) or getattr(P, program)
    check_grad_vmap(fn, getattr(P, "total_" + name.replace("_negative", "")), make(), in_axes)
