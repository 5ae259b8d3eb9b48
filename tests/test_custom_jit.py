"""custom_jvp / custom_vjp under jit: every transform of a function with a
custom rule compiles, and gives eager mode's numbers (and, where the rule
is the true derivative, finite differences').

Under jit the primal and the rules are compiled as Numba functions of
their own, called from the compiled code (numba_stage/callees.py)."""
from functools import partial

import numpy as np
import pytest

import tangent_x as tx
from tangent_x import lax
from _fd import assert_tree_allclose, numerical_grad
from custom_rules import clip_gradient, log1pexp, log1pexp_in_a_loop, power, softplus_weighted


@tx.custom_vjp
def sin_times(x, y):
    return np.sin(x) * y


def sin_times_fwd(x, y):
    return sin_times(x, y), (np.cos(x), np.sin(x), y)


def sin_times_bwd(res, g):
    cos_x, sin_x, y = res
    return (cos_x * g * y, sin_x * g)


sin_times.defvjp(sin_times_fwd, sin_times_bwd)


@partial(tx.custom_vjp, nondiff_argnums=(0,))
def scaled(k, x):
    return k * x


def scaled_fwd(k, x):
    return k * x, x


def scaled_bwd(k, res, g):
    return (k * g + 0.0 * res,)


scaled.defvjp(scaled_fwd, scaled_bwd)


# --- functions using them ---------------------------------------------------

def layer(W, x):
    return np.sum(log1pexp(W @ x) * 0.5)


def in_scan(xs):
    def body(c, xi):
        c = c * 0.5 + log1pexp(c * xi)
        return c, log1pexp(xi) * c
    c, ys = lax.scan(body, 0.1, xs)
    return c + np.sum(ys)


def in_while(x):
    y = x
    while y < 5.0:
        y = y + log1pexp(y)
    return y


def uses_sin_times(x, y):
    return np.sum(sin_times(x, y) * x)


def uses_nondiff(x):
    return scaled(3.0, x) * power(x, 3.0)


W = np.array([[0.3, -0.2, 0.5], [1.0, 0.1, -0.7]])
X = np.array([0.2, -0.4, 0.9])
XS = np.array([0.3, -0.5, 0.8, 0.1])

# (name, function, arguments, argnums): the rule of each is the true
# derivative, so finite differences check the compiled gradient
FD_CASES = [
    ("layer", layer, (W, X), (0, 1)),
    ("python_loop", log1pexp_in_a_loop, (0.7,), 0),
    ("scan", in_scan, (XS,), 0),
    ("while", in_while, (0.3,), 0),
    ("custom_vjp_residuals", uses_sin_times, (X, W[0]), (0, 1)),
    ("nondiff_argnums", uses_nondiff, (1.3,), 0),
]


@pytest.mark.parametrize("name, fun, args, argnums", FD_CASES, ids=[c[0] for c in FD_CASES])
def test_jit_grad_of_custom_rules_matches_eager_and_finite_differences(name, fun, args,
                                                                      argnums):
    g = tx.grad(fun, argnums=argnums)
    compiled = tx.jit(g)(*args)
    assert_tree_allclose(compiled, g(*args), rtol=1e-12, atol=1e-14)
    assert_tree_allclose(compiled, numerical_grad(fun, args, argnums), rtol=1e-6, atol=1e-8)
    assert tx.jit(fun)(*args) == pytest.approx(fun(*args), rel=1e-12)


def test_issue_19_log1pexp_under_jit_grad_and_vmap():
    """The three calls of issue #19, item 5."""
    assert tx.jit(log1pexp)(3.0) == pytest.approx(np.log1p(np.exp(3.0)), rel=1e-14)
    assert tx.jit(tx.grad(log1pexp))(3.0) == pytest.approx(1.0 / (1.0 + np.exp(-3.0)),
                                                            rel=1e-14)
    xs = np.arange(3.0)
    np.testing.assert_allclose(tx.jit(tx.vmap(tx.grad(log1pexp)))(xs),
                               1.0 / (1.0 + np.exp(-xs)), rtol=1e-14)


def test_issue_19_custom_vjp_under_jit():
    x, y = 1.0, 2.0
    assert tx.jit(sin_times)(x, y) == pytest.approx(np.sin(x) * y, rel=1e-14)
    gx, gy = tx.jit(tx.grad(sin_times, argnums=(0, 1)))(x, y)
    assert (gx, gy) == (pytest.approx(np.cos(x) * y, rel=1e-14),
                        pytest.approx(np.sin(x), rel=1e-14))
    xs, ys = np.linspace(-1.0, 1.0, 5), np.linspace(0.5, 2.0, 5)
    np.testing.assert_allclose(tx.jit(tx.vmap(tx.grad(sin_times)))(xs, ys),
                               np.cos(xs) * ys, rtol=1e-14)


def test_the_rule_decides_under_jit():
    """custom_vjp's bwd is not the derivative of the primal: jit must call
    it too (the clipped cotangent, not 3.0)."""
    def f(x):
        return np.sum(clip_gradient(x * 3.0, -1.0, 1.0) * 4.0)

    x = np.array([0.1, 2.0])
    np.testing.assert_allclose(tx.jit(tx.grad(f))(x), [3.0, 3.0])
    np.testing.assert_allclose(tx.jit(tx.grad(f))(x), tx.grad(f)(x))


def test_the_custom_jvp_rule_is_used_under_jit_where_the_primal_overflows():
    """JAX's motivating example: the primal's own derivative is nan at 500
    in float32, the rule's is 1."""
    with np.errstate(over="ignore", invalid="ignore"):
        g = tx.jit(tx.grad(log1pexp))(np.float32(500.0))
    assert g == pytest.approx(1.0)


def test_forward_mode_and_jacobians_of_custom_jvp_under_jit():
    def f(x):
        return log1pexp(x) * 2.0

    expected = np.diag(2.0 / (1.0 + np.exp(-X)))
    np.testing.assert_allclose(tx.jit(tx.jacfwd(f))(X), expected, rtol=1e-13)
    np.testing.assert_allclose(tx.jit(tx.jacrev(f))(X), expected, rtol=1e-13)


def test_per_example_gradients_of_a_custom_layer_under_jit():
    xs = np.stack([X, 2.0 * X, X - 1.0])
    g = tx.vmap(tx.grad(layer), in_axes=(None, 0))
    per_example = np.stack([numerical_grad(layer, (W, x), 0) for x in xs])
    np.testing.assert_allclose(tx.jit(g)(W, xs), per_example, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(tx.jit(g)(W, xs), g(W, xs), rtol=1e-12)


@tx.custom_vjp
def sine(x):
    return np.sin(x)


def sine_fwd(x):
    return np.sin(x), {"cos": np.cos(x), "label": "cosine"}


def sine_bwd(res, g):
    return (res["cos"] * g,)


sine.defvjp(sine_fwd, sine_bwd)


def test_residuals_in_a_dict_with_a_string_under_jit():
    """A dict of residuals reaches bwd: its arrays as arguments of the
    compiled bwd, its string folded in."""
    x = np.array([0.3, 1.2])
    f = lambda v: np.sum(sine(v) * v)          # noqa: E731
    np.testing.assert_allclose(tx.jit(tx.grad(f))(x), np.cos(x) * x + np.sin(x), rtol=1e-14)


@tx.custom_vjp
def spectral(x):
    return np.sin(x)


def spectral_fwd(x):
    return np.sin(x), np.cos(x)


def spectral_bwd(c, g):
    return (np.real(np.fft.fft(c * g)),)


spectral.defvjp(spectral_fwd, spectral_bwd)


def test_a_rule_numba_cannot_compile_is_a_located_error():
    x = np.array([1.0, 2.0])
    f = lambda v: np.sum(spectral(v))          # noqa: E731
    tx.grad(f)(x)                              # eagerly it runs
    with pytest.raises(tx.TransformError) as info:
        tx.jit(tx.grad(f))(x)
    message = str(info.value)
    assert "spectral_bwd" in message and "fft" in message
    # located at the rule's line, the caller's named too
    origin = info.value.origin
    assert origin.filename == __file__ and "np.fft.fft(c * g)" in origin.text
    assert "called from test_custom_jit.py:" in message


@tx.custom_jvp
def squared_norm(p):
    return np.sum(p["a"] ** 2) + np.sum(p["b"] ** 2)


@squared_norm.defjvp
def squared_norm_jvp(primals, tangents):
    p, = primals
    t, = tangents
    return squared_norm(p), 2.0 * np.sum(p["a"] * t["a"]) + 2.0 * np.sum(p["b"] * t["b"])


def test_custom_jvp_of_a_dict_argument_under_jit():
    """The transposed tangent map takes the dict's leaves (its tangents at
    zero, leaf by leaf)."""
    def loss(p):
        return squared_norm(p) * 3.0

    p = {"a": np.array([1.0, 2.0]), "b": np.array([0.5])}
    assert_tree_allclose(tx.jit(tx.grad(loss))(p), numerical_grad(loss, (p,), 0),
                         rtol=1e-6, atol=1e-8)
    assert_tree_allclose(tx.jit(tx.grad(loss))(p), {"a": 6.0 * p["a"], "b": 6.0 * p["b"]},
                         rtol=1e-14)


def test_hessian_of_a_custom_jvp_function_under_jit():
    """hessian of code calling a custom_jvp function compiles, the rule
    differentiated again (as JAX does), equal to the Hessian by hand:
    d2/dx2 [s(x) x] = s''(x) x + 2 s'(x) (test_custom.py has the other
    routes, eagerly)."""
    sig = 1.0 / (1.0 + np.exp(-X))
    want = np.diag(sig * (1.0 - sig) * X + 2.0 * sig)
    np.testing.assert_allclose(tx.jit(tx.hessian(softplus_weighted))(X), want,
                               rtol=1e-12, atol=1e-15)
