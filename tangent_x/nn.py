"""Neural-network activations with ``jax.nn`` semantics, as plain NumPy.

These are not primitives: tangent_x parses and differentiates their source
like any user function.  So each one is a short, straight-line composition
of NumPy calls that already have derivative rules (``np.exp``, ``np.log1p``,
``np.where``, ``np.max``, ``np.sum``, ...), with no ``try``, no in-place
updates, and Python ``if`` only on static arguments (``b is None``,
``keepdims``, ``approximate``), which the transformer resolves per call.

Numerical stability is written into the formulas rather than added by
special-case derivative rules, which matters because the *derivative* of a
naive formula can be ``nan`` where its value is fine (``1 / (1 + exp(-x))``
at ``x = -1000`` has value 0 but derivative ``inf / inf``).  Where a formula
has two regimes, both regimes are evaluated on inputs clamped into their
safe range (``np.where(positive, x, 0.0)``), so neither the values nor the
derivatives of the unselected regime can overflow; and the derivative at the
seam comes out right without relying on any convention for ``abs'(0)`` or
``maximum`` at ties.

Differences from JAX: ``softmax``, ``log_softmax`` and ``logsumexp`` do not
take ``where=``; ``gelu(approximate=False)`` uses ``scipy.special.erfc``
(needs a derivative rule for it); results are NumPy arrays in NumPy's dtypes
(a Python float computes in float64), except ``one_hot``, which follows
JAX's default ``float32``.
"""
import math

import numpy as np
from scipy import special

from . import lax

__all__ = ["gelu", "log_softmax", "logsumexp", "one_hot", "relu", "sigmoid",
           "softmax", "softplus", "tanh"]

# Python floats (weak), so float32 inputs stay float32 (np.sqrt would give a
# strong float64 scalar and promote them).
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_SQRT_HALF = math.sqrt(0.5)

#: ``jax.nn.tanh`` is ``jnp.tanh`` itself; aliasing (not wrapping) keeps it
#: the NumPy primitive, with its own rules, for the transformer.
tanh = np.tanh


def relu(x):
    """``max(x, 0)``, with JAX's derivative 0 at ``x == 0``.

    Written with ``where`` on ``x <= 0`` (not ``np.maximum``) so the
    derivative at 0 is JAX's 0 under any tie convention, and ``nan``
    still propagates.
    """
    return np.where(x <= 0, 0, x)


def sigmoid(x):
    """Logistic ``1 / (1 + exp(-x))``, accurate and overflow-free for all x.

    ``e = exp(-|x|)`` never overflows; for ``x > 0`` the result is
    ``1 / (1 + e)`` and otherwise ``e / (1 + e)``, which keeps full relative
    precision in the negative tail (``sigmoid(-40)`` is 4.2e-18, not 0).
    """
    positive = x > 0
    e = np.exp(np.where(positive, -x, x))
    return np.where(positive, 1.0, e) / (1.0 + e)


def softplus(x):
    """``log(1 + exp(x))`` (JAX: ``logaddexp(x, 0)``), stable at large |x|.

    ``max(x, 0) + log1p(exp(-|x|))``, with the max and the ``-|x|`` built from
    two clamped copies of x, so ``softplus(1000) == 1000`` and the derivative
    is ``sigmoid(x)`` everywhere, 0.5 at 0.
    """
    positive = x > 0
    x_pos = np.where(positive, x, 0.0)
    x_neg = np.where(positive, 0.0, x)
    return x_pos + np.log1p(np.exp(x_neg - x_pos))


def softmax(x, axis=-1):
    """``exp(x) / sum(exp(x))`` along ``axis``; shifted by the max to avoid overflow.

    The shift is wrapped in ``stop_gradient`` as in JAX: it cancels exactly,
    so the derivative need not flow through ``max``.
    """
    unnormalized = np.exp(x - lax.stop_gradient(np.max(x, axis=axis, keepdims=True)))
    return unnormalized / np.sum(unnormalized, axis=axis, keepdims=True)


def log_softmax(x, axis=-1):
    """``x - logsumexp(x)`` along ``axis``, computed on max-shifted inputs."""
    shifted = x - lax.stop_gradient(np.max(x, axis=axis, keepdims=True))
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    """``log(sum(b * exp(a)))`` over ``axis``, as ``jax.scipy.special.logsumexp``.

    Shifting by the (finite part of the) max keeps ``exp`` in range, so
    ``logsumexp([1000, 1000]) == 1000 + log(2)``.  With ``b``, a negative sum
    gives ``nan`` unless ``return_sign=True``, which returns
    ``(log|sum|, sign)``; entries with ``b == 0`` are ignored even if
    ``a`` is infinite there.  When every term is zero (all ``a`` are
    ``-inf``) the result is ``-inf`` and NumPy warns about ``log(0)``.
    """
    if b is not None:
        a = np.where(np.not_equal(b, 0), a, -np.inf)
    amax = np.max(a, axis=axis, keepdims=True)
    amax = lax.stop_gradient(np.where(np.isfinite(amax), amax, 0.0))
    exp_a = np.exp(a - amax)
    if b is not None:
        exp_a = exp_a * b
    sumexp = np.sum(exp_a, axis=axis, keepdims=True)
    sign = np.sign(sumexp)
    out = np.log(np.abs(sumexp)) + amax
    if not keepdims:
        out = np.squeeze(out, axis=axis)
        sign = np.squeeze(sign, axis=axis)
    if return_sign:
        return out, sign
    if b is not None:
        out = np.where(sign < 0, np.nan, out)
    return out


def one_hot(x, num_classes, *, dtype=np.float32, axis=-1):
    """One-hot encode integer ``x`` along a new axis ``axis`` of size ``num_classes``.

    Indices outside ``[0, num_classes)`` give all-zero rows, as in JAX.  The
    default dtype is JAX's default float, ``float32`` (``dtype=None`` too);
    pass ``dtype=np.float64`` to match NumPy's default instead.
    """
    dtype = np.float32 if dtype is None else dtype
    hits = np.asarray(x)[..., np.newaxis] == np.arange(num_classes)
    return np.moveaxis(hits, -1, axis).astype(dtype)


def gelu(x, approximate=True):
    """Gaussian error linear unit, ``x * Phi(x)``.

    ``approximate=True`` (JAX's default) is the tanh approximation; False is
    exact, ``x * erfc(-x / sqrt 2) / 2`` (erfc, not ``1 + erf``, keeps
    precision for very negative x).
    """
    if approximate:
        cdf = 0.5 * (1.0 + np.tanh(_SQRT_2_OVER_PI * (x + 0.044715 * x ** 3)))
        return x * cdf
    return 0.5 * x * special.erfc(-x * _SQRT_HALF)
