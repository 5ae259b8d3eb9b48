"""Cases the program generator (tests/fuzzing) found, each pinned against
its reference: finite differences, the untransformed function, a loop over
examples, eager against jit."""
import numpy as np
import pytest

import found_by_fuzzing as progs
import tangent_x as tx
from fuzzing import oracles


def _fd(f, args):
    return oracles.stable_fd(lambda eps: tuple(oracles.fd_grad(
        oracles._on_copies(f), oracles.as64(list(args)), eps)))


def test_a_negative_constant_raised_to_a_power_keeps_its_sign():
    f = progs.negative_constant_power
    assert tx.jvp(f, (0.3,), (1.0,))[0] == pytest.approx(f(0.3))
    assert tx.grad(f)(0.3) == pytest.approx(_fd(f, [0.3])[0], rel=1e-6)
    assert tx.jit(tx.grad(f))(0.3) == pytest.approx(_fd(f, [0.3])[0], rel=1e-6)
    assert "(-0.87) ** 2" in tx.source(tx.grad(f))


@pytest.mark.parametrize("name", ["zip_with_break", "enumerate_reversed_with_break",
                                  "zip_enumerate_with_return"])
@pytest.mark.parametrize("x", [0.2, 1.0, 3.0])
def test_loops_over_zip_enumerate_reversed_that_exit_early(name, x):
    f = getattr(progs, name)
    y = np.array([0.4, 0.7, 0.9])
    expected = _fd(f, [x, y])
    got = tx.grad(f, argnums=(0, 1))(x, y)
    oracles.compare(got, expected, 1e-6, 1.0, "grad")
    oracles.compare(tx.jit(tx.grad(f, argnums=(0, 1)))(x, y), got, 1e-9, 1.0, "jit(grad)")
    ys = np.array([[0.4, 0.7, 0.9], [0.1, -0.5, 2.0]])
    oracles.compare(tx.vmap(f, in_axes=(None, 0))(x, ys), np.array([f(x, r) for r in ys]),
                    1e-9, 1.0, "vmap")


@pytest.mark.parametrize("argnums", [(0,), (1,)])
def test_a_one_element_argnums_tuple_gives_a_one_element_tuple(argnums):
    """grad(f, argnums=(0,)) returned x_bar bare from its generated code,
    and the finishing step read it as a tuple of its elements."""
    f = progs.update_argument_in_place
    x, y = np.array([-0.76, -0.1, -0.99]), 1.3
    expected = _fd(f, [x, y])
    want = tuple(expected[i] for i in argnums)
    for g in (tx.grad(f, argnums=argnums), tx.jit(tx.grad(f, argnums=argnums))):
        oracles.compare(g(x.copy(), y), want, 1e-6, 1.0, "grad")
    value, grads = tx.value_and_grad(f, argnums=argnums)(x.copy(), y)
    oracles.compare(grads, want, 1e-6, 1.0, "value_and_grad")
    xs = np.array([x, x * 0.5, -x])
    batched = tx.vmap(tx.grad(f, argnums=argnums), in_axes=(0, None))(xs, y)
    per_example = [tx.grad(f, argnums=argnums)(r.copy(), y) for r in xs]
    oracles.compare(batched, oracles.stack_tree(per_example), 1e-9, 1.0, "vmap(grad)")


def test_a_finished_lambda_argument_is_no_alias():
    """After lax.cond returns, its lambda's parameter names nothing: the
    update of y is refused no more, and the gradient is right."""
    f = progs.lambda_argument_then_update
    x, y = np.array([0.3, 0.4]), np.array([0.5, -0.2])
    oracles.compare(tx.grad(f, argnums=(0, 1))(x, y.copy()), _fd(f, [x, y]), 1e-6, 1.0, "grad")


def _right_on_both_paths(f):
    """grad equal to central differences, jit and vmap to the function on
    copies, for inputs that take each path of the branch."""
    xs = np.array([[0.1, 0.2, 0.3], [-0.3, 0.1, -0.4]])
    y = np.array([1.0, 2.0, 0.5])
    for x in xs:
        oracles.compare(tx.grad(f, argnums=(0, 1))(x.copy(), y.copy()), _fd(f, [x, y]),
                        1e-6, 1.0, "grad")
        oracles.compare(tx.jit(f)(x.copy(), y.copy()), f(x.copy(), y.copy()), 1e-12, 1.0, "jit")
    oracles.compare(tx.vmap(f, in_axes=(0, None))(xs.copy(), y.copy()),
                    np.array([f(x.copy(), y.copy()) for x in xs]), 1e-12, 1.0, "vmap")


@pytest.mark.parametrize("name", ["branch_passes_an_array_through_then_update",
                                  "branch_passes_an_owned_array_through_then_write"])
def test_an_array_a_branch_may_pass_through_is_changed_where_it_was_passed(name):
    """l = y on one path only, then y changed in place: whether l sees it is
    decided at run time.  This gave the gradient of the copy semantics (a
    wrong value on the path that passes y through), then a located refusal;
    now ``l`` follows by a join on the branch's own test (``rejoins``)."""
    _right_on_both_paths(getattr(progs, name))


def test_a_rebind_after_a_branch_that_passes_an_array_through_is_right():
    f = progs.branch_passes_an_array_through_then_rebind
    for x in (np.array([0.3, 0.4]), np.array([-0.3, 0.1])):
        y = np.array([0.5, -0.2])
        oracles.compare(tx.grad(f, argnums=(0, 1))(x, y), _fd(f, [x, y]), 1e-6, 1.0, "grad")


def test_an_augmented_assignment_after_a_branch_reads_its_target():
    f = progs.augmented_after_nested_branch
    y = np.array([1.0, 2.0, 0.5])
    for x in (np.array([0.1, 0.2, 0.3]), np.array([-0.3, 0.1, 0.05])):     # both inner paths
        oracles.compare(tx.grad(f, argnums=(0, 1))(x, y), _fd(f, [x, y]), 1e-6, 1.0, "grad")
    xs = np.array([[0.1, 0.2, 0.3], [-0.3, 0.1, 0.05], [0.4, -0.2, 0.6]])
    oracles.compare(tx.vmap(f, in_axes=(0, None))(xs, y), np.array([f(r, y) for r in xs]),
                    1e-9, 1.0, "vmap")


@pytest.mark.parametrize("name", ["branch_passes_argument_then_augmented",
                                  "branch_passes_argument_then_item_write"])
def test_a_write_into_a_value_a_branch_may_pass_through_changes_it_there(name):
    """``b = x`` on one path, then ``b`` changed in place and ``x`` read: the
    gradient ignored the change of ``x`` (wrong on that path), then it was
    refused; now ``x`` follows by a join on the branch's own test."""
    _right_on_both_paths(getattr(progs, name))


def test_a_helper_loop_changing_an_array_its_caller_reads_no_more_runs():
    f = progs.caller_done_with_its_array
    x, y = np.array([0.3, -0.6, 0.9]), np.array([0.5, 0.2, -0.4])
    oracles.compare(tx.grad(f, argnums=(0, 1))(x, y.copy()), _fd(f, [x, y]), 1e-6, 1.0, "grad")
    ys = np.array([[0.5, 0.2, -0.4], [-0.1, 0.7, 0.3]])
    want = [tx.grad(f, argnums=(0, 1))(x, r.copy()) for r in ys]
    oracles.compare(tx.vmap(tx.grad(f, argnums=(0, 1)), in_axes=(None, 0))(x, ys.copy()),
                    oracles.stack_tree(want), 1e-9, 1.0, "vmap(grad)")
    # where the caller reads the array after the call: the helper's loop is
    # peeled, its first turn changes the caller's 'y' in straight-line code
    # (it was refused; and a caller's variable named like the helper's
    # parameter missed an augmented change: a wrong value)
    _right_on_both_paths(progs.caller_reads_its_array_after)


def _doubles_a_0d_array(y):
    alias = (lambda p: y)(y)      # the same 0-d array
    y += alias                    # in place: alias doubles too
    return alias


def test_directional_differences_keep_0d_arrays_arrays():
    """Fuzz seed 410164 reported jvp wrong: the oracle's ``x + eps * t`` of
    a 0-d array is a NumPy scalar, which ``y += v`` rebinds instead of
    changing in place, so its differences were those of another function.
    The perturbed argument is a 0-d array again; jvp equals them."""
    y = np.array(-0.934, dtype=np.float32)
    assert isinstance(oracles._add(y, np.array(1.0), 1e-6), np.ndarray)
    fd = oracles.fd_directional(_doubles_a_0d_array, [y], [np.array(1.0)], 1e-6)
    np.testing.assert_allclose(fd, 2.0, rtol=1e-6)
    _, t = tx.jvp(_doubles_a_0d_array, (np.array(-0.934),), (np.array(1.0),))
    np.testing.assert_allclose(t, 2.0, rtol=1e-12)
