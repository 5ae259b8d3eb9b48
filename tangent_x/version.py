"""tangent_x's version: stamped into every generated module's header."""
__version__ = "0.1.0"
