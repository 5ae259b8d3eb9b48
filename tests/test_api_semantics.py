"""JAX's calling semantics at the API boundary (issue #17, items 3, 5, 6, 7):
keyword-only parameters, complex values, masked arrays and has_aux.

Reference values are facts worked out by hand (d/dx s*x**p = s*p*x**(p-1)),
NumPy's own results, or central differences (tests/_fd.py)."""
import os

import numpy as np
import pytest

import tangent_x as tx
from _fd import assert_tree_allclose, numerical_grad

HERE = os.path.basename(__file__)


# --- item 3: keyword-only parameters ---------------------------------------

def scaled_cube(x, scale=2.0, *, power=3):
    return scale * x ** power


def cube_kw(x, *, power=3):
    return x ** power


def power_required(x, *, power):
    return x ** power


def sum_power_kw(x, *, power=3, weight):
    return weight * np.sum(x ** power)


def test_positional_default_does_not_land_on_a_keyword_only_parameter():
    # d/dx 2 x^3 at 1.5 = 6 * 2.25
    assert tx.grad(scaled_cube)(1.5, 2.0) == pytest.approx(13.5)
    assert tx.grad(scaled_cube)(1.5) == pytest.approx(13.5)
    # power=2: d/dx 2 x^2 = 4 x
    assert tx.grad(scaled_cube)(1.5, 2.0, power=2) == pytest.approx(6.0)
    assert tx.grad(scaled_cube)(1.5, power=2) == pytest.approx(6.0)


def test_keyword_only_parameter_with_default_under_every_transform():
    assert tx.grad(cube_kw)(1.5) == pytest.approx(3 * 1.5 ** 2)
    assert tx.grad(cube_kw)(1.5, power=2) == pytest.approx(3.0)
    value, g = tx.value_and_grad(cube_kw)(1.5, power=4)
    assert (value, g) == pytest.approx((1.5 ** 4, 4 * 1.5 ** 3))
    out, tangent = tx.jvp(cube_kw, (1.5,), (2.0,))
    assert (out, tangent) == pytest.approx((3.375, 2.0 * 6.75))
    out, pullback = tx.vjp(cube_kw, 1.5)
    assert out == pytest.approx(3.375)
    assert pullback(1.0)[0] == pytest.approx(6.75)
    x = np.array([0.5, 1.0, 2.0])
    np.testing.assert_allclose(tx.vmap(cube_kw)(x), x ** 3)
    np.testing.assert_allclose(tx.vmap(tx.grad(scaled_cube))(x), 6.0 * x ** 2)
    np.testing.assert_allclose(tx.jacfwd(cube_kw)(x), np.diag(3 * x ** 2))
    np.testing.assert_allclose(tx.jacrev(cube_kw)(x), np.diag(3 * x ** 2))
    assert tx.hessian(scaled_cube)(1.5) == pytest.approx(12.0 * 1.5)
    assert tx.grad(tx.grad(cube_kw))(1.5) == pytest.approx(6 * 1.5)
    assert tx.grad(tx.grad(scaled_cube))(1.5, power=2) == pytest.approx(4.0)


def test_keyword_only_parameter_without_default():
    assert tx.grad(power_required)(1.5, power=2) == pytest.approx(3.0)
    assert tx.value_and_grad(power_required)(2.0, power=3) == pytest.approx((8.0, 12.0))
    with pytest.raises(TypeError, match="power"):
        tx.grad(power_required)(1.5)
    x = np.array([0.3, -0.4])
    expected = numerical_grad(lambda v: sum_power_kw(v, weight=1.5), (x,))
    assert_tree_allclose(tx.grad(sum_power_kw)(x, weight=1.5), expected)


def test_keyword_arguments_pass_through_the_jacobians_undifferentiated():
    x = np.array([1.0, 2.0])
    # x^3 elementwise: Jacobian diag(3 x^2); sum(x^3): Hessian diag(6 x)
    np.testing.assert_allclose(tx.jacfwd(power_required)(x, power=3), np.diag(3 * x ** 2))
    np.testing.assert_allclose(tx.jacrev(power_required)(x, power=3), np.diag(3 * x ** 2))
    np.testing.assert_allclose(tx.hessian(lambda v, *, power: np.sum(v ** power))(x, power=3),
                               np.diag(6 * x))


def test_vmap_keyword_argument_error_suggests_what_works():
    x = np.array([1.0, 2.0])
    with pytest.raises(TypeError, match=r"vmap\(power_required\).*lambda x: power_required"):
        tx.vmap(power_required)(x, power=2)
    np.testing.assert_allclose(tx.vmap(lambda v: power_required(v, power=2))(x), x ** 2)


def test_argnums_count_positional_parameters_only():
    # d/d scale (scale x^3) = x^3
    assert tx.grad(scaled_cube, argnums=1)(1.5, 2.0) == pytest.approx(3.375)
    with pytest.raises(tx.TransformError, match="2 positional parameter"):
        tx.grad(scaled_cube, argnums=2)(1.5, 2.0, 3.0)


def test_jit_of_keyword_only_parameters():
    assert tx.jit(scaled_cube)(1.5, 2.0) == pytest.approx(6.75)
    assert tx.jit(scaled_cube)(1.5, power=2) == pytest.approx(4.5)
    assert tx.jit(tx.grad(scaled_cube))(1.5, 2.0) == pytest.approx(13.5)
    assert tx.jit(tx.grad(power_required))(1.5, power=2) == pytest.approx(3.0)


def scaled_cube_plus(x, scale=2.0):
    return scale * x ** 3 + x


def test_a_defaulted_parameter_is_not_taken_for_the_cotangent():
    """vjp code takes its cotangent after the chosen primals: a parameter
    left at its default never receives it (jacrev, check_grads order 2)."""
    x = np.array([0.5, 2.0])
    expected = np.diag(6.0 * x ** 2 + 1.0)
    np.testing.assert_allclose(tx.jacrev(scaled_cube_plus)(x), expected)
    # jit(jacrev) runs the vjp code (before: [[3.5, 2], [2, 26]])
    np.testing.assert_allclose(tx.jit(tx.jacrev(scaled_cube_plus))(x), expected)
    # check_grads' order-2 helper: the pullback of the output itself
    from tangent_x.api.derivatives import derivative_function
    (pulled,) = derivative_function(scaled_cube_plus, "rev", 1)(x)
    np.testing.assert_allclose(pulled, scaled_cube_plus(x) * (6.0 * x ** 2 + 1.0))


# --- item 5: complex values are refused by derivatives ---------------------

def norm_via_conj(z):
    return np.real(z * np.conj(z))


def norm_via_abs(z):
    return np.abs(z) ** 2


def square(x):
    return x * x


def uses_1j(x):
    return np.real(np.exp(1j * x))


PHASES = np.array([1j, 2.0])


def uses_complex_global(x):
    return np.sum(np.real(PHASES * x))


def casts_to_complex(x):
    return np.sum(np.real(x.astype(np.complex128)))


@pytest.mark.parametrize("fn", [norm_via_conj, norm_via_abs])
def test_grad_of_complex_input_is_refused_at_the_call(fn):
    # JAX gives 2 - 4j for both (its convention for f: C -> R); tangent_x
    # refuses complex values rather than give another number
    for transform in (tx.grad, tx.value_and_grad, tx.jacfwd, tx.jacrev, tx.hessian):
        with pytest.raises(tx.TransformError, match=r"argument 0 \(z\) is complex") as info:
            transform(fn)(1 + 2j)
        assert HERE in str(info.value)


def test_jvp_and_vjp_refuse_complex_primals_tangents_and_cotangents():
    with pytest.raises(tx.TransformError, match="primal 0 is complex"):
        tx.jvp(square, (1 + 2j,), (1.0 + 0j,))
    with pytest.raises(tx.TransformError, match="tangent 0 is complex"):
        tx.jvp(square, (1.0,), (1j,))
    with pytest.raises(tx.TransformError, match="is complex"):
        tx.vjp(square, 1 + 2j)
    _, pullback = tx.vjp(square, 1.5)
    with pytest.raises(tx.TransformError, match="cotangent 0 is complex"):
        pullback(1j)
    with pytest.raises(tx.TransformError, match=r"argument 1 \(c\) is complex"):
        tx.grad(lambda x, c: np.real(c * x))(1.0, 2j)


@pytest.mark.parametrize("fn, what", [(uses_1j, "1j"), (uses_complex_global, "PHASES"),
                                      (casts_to_complex, "complex128")])
def test_complex_values_in_the_code_are_refused_at_their_line(fn, what):
    with pytest.raises(tx.TransformError, match=what) as info:
        tx.grad(fn)(np.ones(2) if fn is not uses_1j else 1.0)
    message = str(info.value)
    assert HERE in message and "real and imaginary parts" in message


def test_vmap_and_jit_of_complex_values_keep_working():
    z = np.array([1 + 2j, -0.5 + 0.25j])
    np.testing.assert_allclose(tx.vmap(square)(z), z * z)
    np.testing.assert_allclose(tx.jit(square)(z), z * z)
    assert tx.jit(uses_1j)(0.5) == pytest.approx(np.cos(0.5))


def names_a_key_complex(x):
    parts = {"complex": x, "F": 2.0}
    return np.sum(parts["complex"] ** 2) * parts["F"]


def test_real_code_is_unaffected():
    x = np.array([0.3, -1.2])
    assert_tree_allclose(tx.grad(lambda v: np.sum(np.abs(v) ** 2))(x), 2 * x)
    # strings that happen to name complex dtypes, outside a dtype position
    assert_tree_allclose(tx.grad(names_a_key_complex)(x), 4 * x)


# --- item 6: masked arrays are refused --------------------------------------

MASKED = np.ma.array([1.0, 2.0], mask=[0, 1])


def sum_squares(x):
    return np.sum(x * x)


def weighted(params, x):
    return np.sum(params["w"] * x)


@pytest.mark.parametrize("name, call", [
    ("grad", lambda: tx.grad(sum_squares)(MASKED)),
    ("value_and_grad", lambda: tx.value_and_grad(sum_squares)(MASKED)),
    ("vjp", lambda: tx.vjp(sum_squares, MASKED)),
    ("vmap", lambda: tx.vmap(sum_squares)(MASKED)),
    ("jit", lambda: tx.jit(sum_squares)(MASKED)),
    ("jacfwd", lambda: tx.jacfwd(sum_squares)(MASKED)),
    ("jacrev", lambda: tx.jacrev(sum_squares)(MASKED)),
])
def test_masked_array_arguments_are_refused_like_jax(name, call):
    # the gradient would be [2, 4] with the mask ignored, [2, 0] honoured
    with pytest.raises(ValueError, match=r"argument 0 \(x\) is a numpy masked array") as info:
        call()
    assert name in str(info.value) and "filled" in str(info.value)


def test_masked_array_errors_name_the_leaf_and_the_role():
    with pytest.raises(ValueError, match=r"argument 0 \(params\) at \['w'\]"):
        tx.grad(weighted)({"w": MASKED}, np.ones(2))
    with pytest.raises(ValueError, match=r"argument 1 \(x\)"):
        tx.grad(weighted)({"w": np.ones(2)}, MASKED)
    with pytest.raises(ValueError, match="tangent 0 is a numpy masked array"):
        tx.jvp(sum_squares, (np.ones(2),), (MASKED,))
    with pytest.raises(ValueError, match="keyword argument 'x'"):
        tx.jit(sum_squares)(x=MASKED)


def test_filled_masked_array_is_differentiated():
    np.testing.assert_allclose(tx.grad(sum_squares)(MASKED.filled(0.0)), [2.0, 0.0])


# --- item 7: has_aux needs a pair -------------------------------------------

def three_outputs(x):
    return np.sum(x * x), x, 2.0 * x


def no_pair(x):
    return np.sum(x * x)


def pair(x):
    return np.sum(x * x), {"double": 2.0 * x}


def pair_as_list(x):
    return [np.sum(x * x), x[0]]


def three_from_cond(x):
    return tx.lax.cond(x[0] > 0, lambda v: (np.sum(v), v, v),
                       lambda v: (np.sum(2.0 * v), v, v), x)


AUX_MESSAGE = "expected function with aux output to return a two-element tuple"


def test_has_aux_with_three_outputs_raises_jax_type_error_at_the_return():
    x = np.array([1.0, 2.0])
    for transform in (tx.grad, tx.value_and_grad):
        with pytest.raises(TypeError, match=AUX_MESSAGE) as info:
            transform(three_outputs, has_aux=True)(x)
        assert f"{HERE}:" in str(info.value)
    with pytest.raises(TypeError, match=AUX_MESSAGE):
        tx.vjp(three_outputs, x, has_aux=True)


def test_has_aux_with_a_single_output_raises_jax_type_error():
    x = np.array([1.0, 2.0])
    for call in (lambda: tx.grad(no_pair, has_aux=True)(x),
                 lambda: tx.value_and_grad(no_pair, has_aux=True)(x),
                 lambda: tx.vjp(no_pair, x, has_aux=True),
                 lambda: tx.jit(tx.grad(no_pair, has_aux=True))(x)):
        with pytest.raises(TypeError, match=AUX_MESSAGE):
            call()


def test_has_aux_output_known_only_when_it_runs():
    x = np.array([1.0, 2.0])
    with pytest.raises(TypeError, match=AUX_MESSAGE):
        tx.grad(three_from_cond, has_aux=True)(x)
    with pytest.raises(TypeError, match=AUX_MESSAGE):
        tx.jit(tx.grad(three_from_cond, has_aux=True))(x)


def test_has_aux_with_a_pair_still_works():
    x = np.array([1.0, 2.0])
    g, aux = tx.grad(pair, has_aux=True)(x)
    np.testing.assert_allclose(g, 2 * x)
    np.testing.assert_allclose(aux["double"], 2 * x)
    (value, aux), g = tx.value_and_grad(pair_as_list, has_aux=True)(x)
    assert value == pytest.approx(5.0) and aux == pytest.approx(1.0)
    np.testing.assert_allclose(g, 2 * x)
