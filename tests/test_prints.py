"""``print`` inside transformed functions: each print the function runs
prints once, as the untransformed function does.

- grad, jvp: in the forward pass only (a loop's adjoint replays its body
  to recompute values, and leaves its prints out);
- vmap: a print of a batched value prints once per example, with that
  example's values (as JAX's ``debug.print`` does under vmap, and as a loop
  over examples does); a print of shared values only, once.  Inside a
  branch or a loop whose condition differs between examples, only for the
  examples that get there.  The lines come in the order the vectorised
  code runs, one print statement for every example before the next
  statement's: the tests compare them with a loop over examples as
  multisets;
- a branch that binds nothing but prints is kept.
vmap's first-call probe (one example run to learn ranks) prints nothing."""
import numpy as np
import pytest

import tangent_x as tx


def straight(x, y):
    z = x * 2.0
    print("z is", z)
    print("y is", y, "at", x[0])
    return np.sum(z) * y


def in_branches(x, y):
    z = x * 1.0
    for i in range(3):
        if z[i] > y:
            print("row", i, "over", z[i])
            z[i] = y
        elif z[i] < 0.0:
            print("negative at", i, z[i])      # the branch binds nothing
    return np.sum(z * z)


def in_a_while(x, y):
    z = x * 2.0
    if np.sum(x) > 5.0:
        print(f"big {np.sum(z)}")
        z = z + 1.0
    i = 0
    while np.sum(z) < 20.0:
        z = z * 2.0
        print("step", i, z[0], y)
        i += 1
    return np.sum(z) * y


X = np.array([[0.5, 2.0, -1.0], [3.0, 0.1, 0.2], [0.4, 0.3, 0.2]])
CASES = [straight, in_branches, in_a_while]


def printed(capsys, fn, *args):
    capsys.readouterr()
    value = fn(*args)
    return value, capsys.readouterr().out.splitlines()


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_grad_and_jvp_print_what_the_function_prints(f, capsys):
    assert any(printed(capsys, f, x, 1.0)[1] for x in X)     # every case prints
    for x in X:
        _, expected = printed(capsys, f, x, 1.0)
        _, got = printed(capsys, tx.grad(f), x, 1.0)
        assert got == expected
        _, got = printed(capsys, tx.jvp, f, (x, 1.0), (np.ones(3), 0.0))
        assert got == expected


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("transform", ["vmap", "vmap_grad"])
def test_vmap_prints_once_per_example_that_gets_there(f, transform, capsys):
    fn = f if transform == "vmap" else tx.grad(f)
    expected, lines = [], []
    for x in X:
        value, out = printed(capsys, fn, x, 1.0)
        expected.append(value)
        lines += out
    mapped = tx.vmap(fn, in_axes=(0, None))
    value, got = printed(capsys, mapped, X, 1.0)
    np.testing.assert_allclose(value, expected, rtol=1e-12)
    assert sorted(got) == sorted(lines)
    _, got = printed(capsys, mapped, X, 1.0)      # the second call too (no probe)
    assert sorted(got) == sorted(lines)


def test_a_print_of_shared_values_prints_once(capsys):
    def f(x, y):
        print("y is", y)
        print("x is", x)
        return x * y
    _, got = printed(capsys, tx.vmap(f, in_axes=(0, None)), X, 1.5)
    assert got[0] == "y is 1.5"
    assert got[1:] == [f"x is {x}" for x in X]


def test_the_branch_that_only_prints_is_kept(capsys):
    def f(x):
        if x > 0.0:
            print("positive")
        return x * 2.0
    _, got = printed(capsys, tx.grad(f), 1.0)
    assert got == ["positive"]
    _, got = printed(capsys, tx.grad(f), -1.0)
    assert got == []
    with tx.disable_jit():
        _, got = printed(capsys, tx.jit(f), 3.0)
    assert got == ["positive"]
    _, got = printed(capsys, tx.vmap(f), np.array([1.0, -1.0, 2.0]))
    assert got == ["positive"]     # shared values: once, as some example gets there
    _, got = printed(capsys, tx.vmap(f), np.array([-1.0, -1.0, -2.0]))
    assert got == []
