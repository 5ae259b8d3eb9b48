"""Print JAX's numbers for the ported programs of ``tests/jax_corpus/``.

Runs where JAX is installed (the numbers in ``tests/test_jax_programs.py``
came from JAX 0.10.2, jaxlib 0.10.2, NumPy 2.4.6, CPU, in a venv made by
``python -m venv --system-site-packages /tmp/venv-jax && /tmp/venv-jax/bin/pip
install jax``):

    /tmp/venv-jax/bin/python tools/jax_corpus_reference.py [PROGRAM ...]

Each program's import block (between its two ``# imports`` lines) is taken
with ``tangent_x`` replaced by ``jax`` -- ``import jax as tx``, ``import
jax.numpy as jnp``, ``from jax import lax, random`` -- and the rest of the
file is run unchanged: the port is the import block and nothing else.  JAX
runs in float64 (``jax_enable_x64``), its default threefry settings, with
four CPU devices for ``pmap``.  ``run()`` is called as written (jitted by
JAX); results named in the module's ``JAX_SKIP`` are left out (``run(skip=...)``).  The output
is a Python dict literal per program, ``name: (value, dtype name)``, floats printed with Python's round-trip digits, to paste
into the test.
"""
import os
import pprint
import sys
import types

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=4")

import jax  # noqa: E402
import numpy as np  # noqa: E402

jax.config.update("jax_enable_x64", True)

CORPUS = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "tests",
                      "jax_corpus")
PROGRAMS = ("mlp_sgd", "per_example", "recursion", "log1pexp", "scan_rnn",
            "while_counter", "mlp_float32", "masks", "linear_regression", "collectives")


def ported_source(path):
    """The program's source with ``tangent_x`` replaced by ``jax`` in its
    import block, and only there."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    marks = [i for i, line in enumerate(lines) if line.strip() == "# imports"]
    if len(marks) != 2:
        raise SystemExit(f"{path}: expected two '# imports' marker lines, found {len(marks)}")
    first, last = marks
    for i in range(first + 1, last):
        lines[i] = lines[i].replace("tangent_x", "jax")
    body = "\n".join(lines[last + 1:])
    if "tangent_x" in body:
        raise SystemExit(f"{path}: names tangent_x outside its import block")
    return "\n".join(lines)


def load(name):
    path = os.path.join(CORPUS, name + ".py")
    module = types.ModuleType("jax_port_" + name)
    module.__file__ = path
    exec(compile(ported_source(path), path, "exec"), module.__dict__)
    return module


def literal(value):
    array = np.asarray(value)
    if array.dtype.kind in "iub":
        return repr(array.tolist())
    if array.ndim == 0:
        return repr(float(array))
    # Python's shortest round-trip digits, wrapped to fit the test file
    return pprint.pformat(np.asarray(array, np.float64).tolist(), width=84, compact=True)


def main(names):
    print(f"# jax {jax.__version__}, numpy {np.__version__}, x64, "
          f"{jax.device_count()} CPU devices")
    for name in names or PROGRAMS:
        module = load(name)
        skip = getattr(module, "JAX_SKIP", ())
        results = module.run(skip=skip) if skip else module.run()
        print(f"{name.upper()} = {{")
        for key, value in results.items():
            if key in skip:
                continue
            dtype = np.asarray(value).dtype
            text = literal(value).replace("\n", "\n" + " " * (len(repr(key)) + 7))
            print(f"    {key!r}: ({text}, {dtype.name!r}),")
        print("}")


if __name__ == "__main__":
    main(sys.argv[1:])
