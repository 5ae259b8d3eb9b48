"""JAX programs ported to tangent_x by changing their imports (issue #19).

Each module is a short program written in the idioms of JAX's documentation.
Its import block, between the two ``# imports`` marker lines, is the only
place it names tangent_x: ``tools/jax_corpus_reference.py`` replaces
``tangent_x`` by ``jax`` there, runs the very same code under JAX (float64)
and prints the numbers that ``tests/test_jax_programs.py`` records.

Every module has ``run()``, the program's driver: it builds its jitted
functions with ``tx.jit`` and returns a dict of named results (arrays and
numbers).  The test calls it twice, as written (compiled with Numba) and
under ``tx.disable_jit()`` (the generated Python), and compares both with
JAX's numbers.  ``JAX_SKIP`` names results with no JAX counterpart (NumPy's
in-place assignment, which JAX arrays refuse); those are compared with the
result they must equal.
"""
