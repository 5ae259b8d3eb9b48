"""Python stage: lowering to real Python, the cleanup passes run by a named
pipeline, rendering and loading generated modules."""
