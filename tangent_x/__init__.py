"""tangent_x: JAX's function transformations for plain NumPy code."""
__version__ = "0.1.0"
