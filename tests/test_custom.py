"""custom_jvp / custom_vjp: JAX's semantics, used by reverse mode."""
from functools import partial

import numpy as np
import pytest

import tangent_x as tx
from _fd import numerical_grad
from custom_rules import clip_gradient, log1pexp, log1pexp_in_a_loop, power, softplus_weighted


def plain_log1pexp(x):
    return np.log(1.0 + np.exp(x))


def test_custom_jvp_rule_fixes_the_classic_overflow():
    with np.errstate(over="ignore", invalid="ignore"):
        assert np.isnan(tx.grad(plain_log1pexp)(np.float32(500.0)))
        assert tx.grad(log1pexp)(np.float32(500.0)) == pytest.approx(1.0)


@pytest.mark.parametrize("x", [-3.0, 0.3, 2.5])
def test_custom_jvp_serves_reverse_mode(x):
    expected = 1.0 / (1.0 + np.exp(-x))
    assert tx.grad(log1pexp)(x) == pytest.approx(expected, rel=1e-12)


def test_custom_jvp_called_eagerly_runs_the_primal():
    assert log1pexp(0.0) == pytest.approx(np.log(2.0))


def test_custom_jvp_inside_a_loop_and_with_arrays():
    x = 0.7
    assert tx.grad(log1pexp_in_a_loop)(x) == pytest.approx(
        numerical_grad(log1pexp_in_a_loop, (x,), 0), rel=1e-6)
    v = np.array([0.2, -1.0, 3.0])
    np.testing.assert_allclose(tx.grad(lambda z: np.sum(log1pexp(z)))(v),
                               1.0 / (1.0 + np.exp(-v)), rtol=1e-12)


def test_custom_vjp_bwd_decides_the_gradient():
    def f(x):
        return np.sum(clip_gradient(x * 3.0, -1.0, 1.0))

    np.testing.assert_allclose(tx.grad(f)(np.array([0.1, 2.0])), [3.0, 3.0])

    def g(x):
        return np.sum(clip_gradient(x, -0.5, 0.5) * 4.0)

    np.testing.assert_allclose(tx.grad(g)(np.array([0.1, 2.0])), [0.5, 0.5])


def test_custom_vjp_generated_code_calls_fwd_and_bwd():
    def f(x):
        return np.sum(clip_gradient(x * 3.0, -1.0, 1.0))

    text = tx.source(tx.grad(f))
    assert "clip_fwd(" in text and "clip_bwd(" in text


@partial(tx.custom_vjp, nondiff_argnums=(0,))
def scaled(k, x):
    return k * x


def scaled_fwd(k, x):
    return k * x, None


def scaled_bwd(k, res, g):
    return (2.0 * k * g,)


scaled.defvjp(scaled_fwd, scaled_bwd)


def test_nondiff_argnums_are_passed_first_to_bwd():
    assert tx.grad(lambda x: scaled(3.0, x))(1.0) == pytest.approx(6.0)


def test_custom_jvp_with_nondiff_argnums():
    assert tx.grad(lambda x: power(x, 3.0))(2.0) == pytest.approx(12.0)


def test_missing_rule_is_a_clear_error():
    @tx.custom_vjp
    def no_rule(x):
        return x

    with pytest.raises(tx.TransformError, match="defvjp"):
        tx.grad(lambda x: no_rule(x) * 2.0)(1.0)


# --- second derivatives: JAX differentiates the rule's jvp again ------------------

@tx.custom_jvp
def sin_with_a_made_up_rule(x):
    return np.sin(x)


@sin_with_a_made_up_rule.defjvp
def _made_up_jvp(primals, tangents):
    x, = primals
    t, = tangents
    return sin_with_a_made_up_rule(x), t * x ** 2     # not sin's derivative, on purpose


def test_hessian_of_a_custom_jvp_function_by_every_route():
    """hessian, jacfwd(grad), jacrev(grad) and grad(grad) of code calling a
    custom_jvp function (they were refused: 'no derivative rule for
    custom_jvp_cotangents'), against the Hessian by hand: with s the
    softplus and s' the sigmoid, d2/dx2 [s(x) x] = s''(x) x + 2 s'(x)."""
    x = np.array([0.3, -1.2, 2.0, 0.0])
    sig = 1.0 / (1.0 + np.exp(-x))
    want = np.diag(sig * (1.0 - sig) * x + 2.0 * sig)
    for route in (tx.hessian, lambda f: tx.jacfwd(tx.grad(f)), lambda f: tx.jacrev(tx.grad(f))):
        np.testing.assert_allclose(route(softplus_weighted)(x), want, rtol=1e-12, atol=1e-15)
    for s in (-3.0, 0.3, 2.5):
        sg = 1.0 / (1.0 + np.exp(-s))
        assert tx.grad(tx.grad(log1pexp))(s) == pytest.approx(sg * (1.0 - sg), rel=1e-12)
    # the gradient's own finite differences agree too
    g = tx.grad(softplus_weighted)
    eps = 1e-6
    fd = np.stack([(g(x + eps * e) - g(x - eps * e)) / (2 * eps) for e in np.eye(len(x))])
    np.testing.assert_allclose(tx.hessian(softplus_weighted)(x), fd, rtol=1e-6, atol=1e-8)


def test_second_derivatives_differentiate_the_rule_not_the_primal():
    """As in JAX, the second derivative is the derivative of the rule's
    tangent (x**2 t here: 2x), not of the primal (sin: -sin x); with
    nondiff_argnums too, and to third order."""
    x = np.array([0.3, -1.2, 2.0])
    f = lambda x: np.sum(sin_with_a_made_up_rule(x))
    np.testing.assert_allclose(tx.hessian(f)(x), np.diag(2.0 * x), rtol=1e-14)
    np.testing.assert_allclose(tx.jacfwd(tx.grad(f))(x), np.diag(2.0 * x), rtol=1e-14)
    assert tx.grad(tx.grad(tx.grad(sin_with_a_made_up_rule)))(0.7) == pytest.approx(2.0)
    h = tx.hessian(lambda x: np.sum(power(x, 3) * 2.0))(x)
    np.testing.assert_allclose(h, np.diag(12.0 * x), rtol=1e-13)
