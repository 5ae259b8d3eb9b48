"""jvp, split vjp, jacfwd/jacrev/hessian and derivatives of derivatives."""
import numpy as np
import pytest

import tangent_x as tx


def tanh(x):
    y = np.tanh(x)
    return y


def cube(x):
    return 2.0 * x ** 3


def test_tanh_derivatives_at_half():
    d1 = tx.grad(tanh)
    d2 = tx.grad(d1)
    d3 = tx.grad(d2)
    t = np.tanh(0.5)
    s = 1.0 - t * t
    assert d1(0.5) == pytest.approx(s, abs=1e-12)
    assert d2(0.5) == pytest.approx(-2.0 * t * s, abs=1e-12)
    assert d3(0.5) == pytest.approx(-2.0 * s * (s - 2.0 * t * t), abs=1e-12)
    # the numbers JAX prints in float32
    assert np.float32(d1(0.5)) == pytest.approx(0.7864477, abs=1e-7)
    assert np.float32(d2(0.5)) == pytest.approx(-0.7268620, abs=1e-7)
    assert d3(0.5) == pytest.approx(-0.5652091, abs=3e-7)


def test_cube_derivatives_orders_one_to_three():
    d = cube
    values = []
    for _ in range(3):
        d = tx.grad(d)
        values.append(d(1.0))
    assert values == pytest.approx([6.0, 12.0, 12.0])


def newton_sqrt(a):
    y = a
    while abs(y * y - a) > 1e-12:
        y = 0.5 * (y + a / y)
    return y


def recurrence(x):
    for _ in range(6):
        x = np.sin(x) * 0.99 + 0.01
    return x


def piecewise(x):
    if x < 1.0:
        y = x * x * x
    else:
        y = 3.0 * x - 2.0
    return y


@pytest.mark.parametrize("fn, x", [(newton_sqrt, 2.0), (recurrence, 0.5), (piecewise, 0.5),
                                   (piecewise, 1.7)])
def test_second_derivative_through_control_flow(fn, x):
    g = tx.grad(fn)
    eps = 1e-5
    expected = (g(x + eps) - g(x - eps)) / (2 * eps)
    assert tx.grad(g)(x) == pytest.approx(expected, rel=1e-5, abs=1e-8)
    # forward over reverse agrees with reverse over reverse
    assert tx.jvp(g, (x,), (1.0,))[1] == pytest.approx(tx.grad(g)(x), rel=1e-10)


def test_jvp_matches_grad_and_finite_differences():
    def f(x, y):
        z = x * y + x / y
        return np.sum(z ** 2 - y)

    x, y = np.array([0.3, 1.2]), np.array([2.0, 3.0])
    tx_, ty = np.array([1.0, -0.5]), np.array([0.25, 0.1])
    out, tangent = tx.jvp(f, (x, y), (tx_, ty))
    gx, gy = tx.grad(f, argnums=(0, 1))(x, y)
    assert out == pytest.approx(f(x, y))
    assert tangent == pytest.approx(np.vdot(gx, tx_) + np.vdot(gy, ty), rel=1e-12)


def test_jvp_through_while_loop():
    out, tangent = tx.jvp(newton_sqrt, (2.0,), (1.0,))
    assert out == pytest.approx(np.sqrt(2.0))
    assert tangent == pytest.approx(1.0 / (2.0 * np.sqrt(2.0)))


def test_jvp_errors():
    with pytest.raises(TypeError, match="tuples or lists"):
        tx.jvp(tanh, 0.5, 1.0)
    with pytest.raises(TypeError, match="different primal and tangent counts"):
        tx.jvp(tanh, (0.5,), (1.0, 2.0))


def test_vjp_forward_runs_once_and_pullback_is_reusable():
    def rnn(W, xs):
        h = np.zeros(W.shape[0])
        for x in xs:
            h = np.tanh(W @ h + x)
        return h

    rng = np.random.default_rng(0)
    W, xs = 0.5 * rng.normal(size=(3, 3)), rng.normal(size=(4, 3))
    out, pullback = tx.vjp(rnn, W, xs)
    np.testing.assert_allclose(out, rnn(W, xs))
    ct = np.array([1.0, -2.0, 0.5])
    first = pullback(ct)
    second = pullback(ct)
    np.testing.assert_allclose(first[0], second[0])
    expected = tx.grad(lambda W, xs: np.sum(rnn(W, xs) * ct), argnums=(0, 1))(W, xs)
    np.testing.assert_allclose(first[0], expected[0], rtol=1e-12)
    np.testing.assert_allclose(first[1], expected[1], rtol=1e-12)
    text = tx.source(pullback)
    assert "def vjp_fwd_rnn" in text and "def vjp_bwd_rnn" in text


def f_vec(x, y):
    return np.sin(x) * y ** 2


def test_jacobians_shapes_and_values():
    x, y = np.array([0.1, 0.5, 1.0]), np.array([2.0, 3.0, 4.0])
    jf, jr = tx.jacfwd(f_vec)(x, y), tx.jacrev(f_vec)(x, y)
    np.testing.assert_allclose(jf, np.diag(np.cos(x) * y ** 2), atol=1e-14)
    np.testing.assert_allclose(jr, jf, atol=1e-14)
    both = tx.jacrev(f_vec, argnums=(0, 1))(x, y)
    assert isinstance(both, tuple) and [b.shape for b in both] == [(3, 3), (3, 3)]
    np.testing.assert_allclose(both[1], np.diag(2 * np.sin(x) * y), atol=1e-14)
    matrix_in = tx.jacfwd(lambda m: m @ np.ones(2))(np.ones((3, 2)))
    assert matrix_in.shape == (3, 3, 2)


def test_hessian_equals_finite_differences_of_the_gradient():
    def loss(w, x):
        return np.sum(np.tanh(x @ w) ** 2)

    rng = np.random.default_rng(1)
    w, x = rng.normal(size=3), rng.normal(size=(5, 3))
    H = tx.hessian(loss)(w, x)
    g = tx.grad(loss)
    eps = 1e-5
    fd = np.stack([(g(w + eps * e, x) - g(w - eps * e, x)) / (2 * eps) for e in np.eye(3)], 1)
    assert H.shape == (3, 3)
    np.testing.assert_allclose(H, fd, atol=1e-6)
    np.testing.assert_allclose(H, H.T, atol=1e-10)


def test_hessian_of_mlp_loss_wrt_last_layer():
    import importlib.util
    import os
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        "examples", "mlp.py")
    spec = importlib.util.spec_from_file_location("mlp_for_hessian", path)
    mlp = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mlp)
    params = mlp.init_params([3, 4, 2], seed=2)
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=(6, 3)), rng.normal(size=(6, 2))

    def last_layer_loss(W2):
        return mlp.loss([params[0], {"W": W2, "b": params[1]["b"]}], x, y)

    W2 = params[1]["W"]
    H = tx.hessian(last_layer_loss)(W2)
    assert H.shape == W2.shape + W2.shape
    g = tx.grad(last_layer_loss)
    eps = 1e-5
    fd = np.zeros_like(H)
    for idx in np.ndindex(W2.shape):
        e = np.zeros_like(W2)
        e[idx] = eps
        fd[(Ellipsis,) + idx] = (g(W2 + e) - g(W2 - e)) / (2 * eps)
    np.testing.assert_allclose(H, fd, atol=1e-6)


def rnn(W, U, xs):
    h = np.zeros(W.shape[0])
    for x in xs:
        h = np.tanh(W @ h + U @ x)
    return np.sum(h)


@pytest.mark.parametrize("steps", [5, 1])
def test_jacrev_of_grad_through_a_loop(steps):
    """jacrev runs the vjp of grad's code batched over the one-hot
    cotangents.  grad's code assigns a body value in the forward loop and
    again in the backward loop, so the second-order code carries it into
    the first loop unassigned: its residuals hold an Unbound placeholder,
    which vmap must pass through untouched (it is never read)."""
    rng = np.random.default_rng(0)
    W, U, xs = 0.5 * rng.normal(size=(4, 4)), rng.normal(size=(4, 3)), \
        rng.normal(size=(steps, 3))
    J = tx.jacrev(tx.grad(rnn))(W, U, xs)
    assert J.shape == (4, 4, 4, 4)
    g = tx.grad(rnn)
    eps = 1e-5
    fd = np.zeros_like(J)
    for idx in np.ndindex(W.shape):
        e = np.zeros_like(W)
        e[idx] = eps
        fd[(Ellipsis,) + idx] = (g(W + e, U, xs) - g(W - e, U, xs)) / (2 * eps)
    np.testing.assert_allclose(J, fd, atol=1e-6)
    np.testing.assert_allclose(J, tx.hessian(rnn)(W, U, xs), atol=1e-12)
    JU = tx.jacrev(tx.grad(rnn, argnums=1), argnums=(0, 1))(W, U, xs)
    HU = tx.jacfwd(tx.grad(rnn, argnums=1), argnums=(0, 1))(W, U, xs)
    for a, b in zip(JU, HU):
        np.testing.assert_allclose(a, b, atol=1e-12)


RUNS = [0]


def counted_sin_times_first(x):
    RUNS[0] += 1
    return np.sin(x) * x[0]


@pytest.mark.parametrize("jac", [tx.jacfwd, tx.jacrev])
def test_jacobian_source_form_is_built_only_when_asked(jac):
    """A plain call of a Jacobian runs the function no more often on a new
    argument shape than on one seen before (its source form, a batched jvp,
    is built when a transform or tx.source asks); the form is then for the
    latest call's shapes and gives the right second derivative."""
    g = jac(counted_sin_times_first)
    for n in (3, 4):
        x = np.linspace(0.3, 1.2, n)
        runs = []
        for _ in range(2):
            RUNS[0] = 0
            value = g(x)
            runs.append(RUNS[0])
        assert runs[0] == runs[1], f"a new shape ran the function {runs[0]} times, a seen one {runs[1]}"
        expected = np.diag(np.cos(x) * x[0])
        expected[:, 0] += np.sin(x)
        np.testing.assert_allclose(value, expected, rtol=1e-12, atol=1e-12)
    text = tx.source(g)
    assert f"def {jac.__name__}_of_counted_sin_times_first(p0):" in text
    assert "np.eye(4)" in text           # the latest call's shape
    second = tx.jacfwd(g)(x)
    h = 1e-6
    numeric = np.stack([(g(x + h * e) - g(x - h * e)) / (2 * h) for e in np.eye(4)], axis=-1)
    assert second.shape == (4, 4, 4)
    np.testing.assert_allclose(second, numeric, rtol=1e-6, atol=1e-7)
