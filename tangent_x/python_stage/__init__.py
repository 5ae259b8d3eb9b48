"""Python stage: the optimisation passes (``passes/``) run by a named
pipeline, rendering and loading generated modules."""
