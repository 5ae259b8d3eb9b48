"""The public transforms: grad, jvp, vjp, vmap, the Jacobians, custom rules, jit."""
