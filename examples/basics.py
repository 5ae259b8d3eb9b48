"""Small functions and their derivatives: run ``python examples/basics.py``,
or print one derivative's source with ``tangent-x grad examples/basics.py:tanh``
(``grad2``/``grad3`` for the 2nd/3rd derivative, ``jvp``, ``vjp``, ``hessian``)."""
import numpy as np

import tangent_x as tx


def tanh(x):
    """The hello-world of autodiff: d/dx tanh(x) = 1 - tanh(x)^2."""
    y = np.tanh(x)
    return y


def product(x, y):
    """Product rule: d/dx (x*y) = y, d/dy = x."""
    return x * y * np.sin(x)


def cubic(x):
    """2x^3: first derivative 6x^2."""
    return 2.0 * x ** 3


def polynomial(x):
    """A polynomial in a vector: sum_i (3 x_i^2 - 2 x_i + 1)."""
    return np.sum(3.0 * x ** 2 - 2.0 * x + 1.0)


def softplus_loss(w, x):
    """A smooth loss: log(1 + exp(w . x))."""
    z = np.dot(w, x)
    return np.logaddexp(0.0, z)


def with_stop_gradient(x):
    """stop_gradient: the second factor is treated as a constant."""
    return x * tx.stop_gradient(x)


if __name__ == "__main__":
    d1 = tx.grad(tanh)
    d2 = tx.grad(d1)
    d3 = tx.grad(d2)
    print("tanh derivatives at 0.5 (orders 1, 2, 3):", d1(0.5), d2(0.5), d3(0.5))
    print("jvp of tanh at 0.5 along 1.0:", tx.jvp(tanh, (0.5,), (1.0,)))
    print("d/dx 2x^3 at 1, orders 1..3:", tx.grad(cubic)(1.0), tx.grad(tx.grad(cubic))(1.0),
          tx.grad(tx.grad(tx.grad(cubic)))(1.0))
    print("grad of product at (2, 3):", tx.grad(product, argnums=(0, 1))(2.0, 3.0))
    print("grad of x * stop_gradient(x) at 3:", tx.grad(with_stop_gradient)(3.0))
    print()
    print(tx.source(tx.grad(tanh)))
