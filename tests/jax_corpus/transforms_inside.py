"""JAX idioms that meet at a transform: a network applied by recursion over
its tuple of layers (the depth is the tuple's length), a Hessian-vector
product written as ``jvp(grad(f))`` inside ``jit``, and the Hessian of a
loss through a ``custom_jvp`` softplus (JAX differentiates the rule again)."""
# imports
import tangent_x as tx
import tangent_x.numpy as jnp
# imports

LAYERS = (jnp.array([[0.5, -0.2, 0.1], [0.1, 0.3, -0.4]]),
          jnp.array([[0.7, -0.6]]))


def layer(w, x):
    return jnp.tanh(w @ x)


def apply(layers, x):
    return x if not layers else apply(layers[1:], layer(layers[0], x))


def net(x):
    return jnp.sum(apply(LAYERS, x))


@tx.custom_jvp
def softplus(x):
    return jnp.log1p(jnp.exp(x))


@softplus.defjvp
def softplus_jvp(primals, tangents):
    x, = primals
    x_dot, = tangents
    return softplus(x), x_dot / (1.0 + jnp.exp(-x))


def loss(x):
    return jnp.sum(softplus(x) * x) + net(x)


@tx.jit
def hvp(x, v):
    return tx.jvp(tx.grad(loss), (x,), (v,))[1]


def run():
    x = jnp.array([0.3, -1.2, 2.0])
    v = jnp.array([1.0, 0.5, -2.0])
    return {"net_grad": tx.jit(tx.grad(net))(x), "hvp": hvp(x, v),
            "hessian": tx.jit(tx.hessian(loss))(x)}
