"""The python stage's passes, each one rewrite over generated code."""
