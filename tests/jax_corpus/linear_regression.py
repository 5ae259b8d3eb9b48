"""Linear regression trained for 1,000 jitted steps, as in JAX's
"JAX 101" linear-regression example; the data are drawn from ``tx.random``."""
# imports
import tangent_x as tx
import tangent_x.numpy as jnp
from tangent_x import random
# imports


def model(theta, x):
    w, b = theta
    return w * x + b


def loss_fn(theta, x, y):
    prediction = model(theta, x)
    return jnp.mean((prediction - y) ** 2)


def update(theta, x, y, lr=0.1):
    return theta - lr * tx.grad(loss_fn)(theta, x, y)


def run():
    key = random.PRNGKey(42)
    x_key, noise_key = random.split(key)
    xs = random.normal(x_key, (100,), dtype=jnp.float64)
    noise = random.normal(noise_key, (100,), dtype=jnp.float64)
    ys = 3.0 * xs - 1.0 + 0.1 * noise
    theta = jnp.array([1.0, 1.0])
    step = tx.jit(update)
    for _ in range(1000):
        theta = step(theta, xs, ys)
    return {"theta": theta, "loss": loss_fn(theta, xs, ys), "xs_head": xs[:4]}
